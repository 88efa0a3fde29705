"""Rankings from pairwise outcomes: Bradley–Terry (maximum likelihood), online Elo, separability-weighted
Elo, and style-controlled Bradley–Terry, each with seeded bootstrap confidence intervals.

One module serves every method: human votes, judge verdicts, persona verdicts and reference scores all
become `Outcome`s. Ratings are on the Elo scale, P(i beats j) = 1 / (1 + 10^((R_j − R_i)/400)), anchored
so that the mean rating is 1000. The tie rule is explicit and reported: "half" counts a tie as half a win
for both sides (Chatbot Arena's convention), "drop" leaves ties out (Vibe-Eval's).

Bootstrap intervals resample the independent unit, not single outcomes: one prompt rated for m models gives
C(m, 2) outcomes that share the prompt, so every outcome carries its `unit` (prompt, battle, persona item) and
a bootstrap round draws units with replacement and keeps all of a drawn unit's outcomes. With `one_per_unit`
(generation separability's K sample comparisons per prompt, as Ghosh et al. rank them) a round instead keeps
one outcome drawn from each drawn unit, and the point estimate is the mean over rounds of fits on one outcome
drawn from every unit: each prompt counts once, however many comparisons it holds.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import minimize

from engine import derived

# bootstrap rounds drawn and fitted together: as many as keep a block's draws (8 bytes an outcome) and Elo's
# schedule (4) within this, in blocks of equal size. Elo takes one step per game for a whole block, so fewer
# blocks are fewer steps: 200 rounds of 100,000 outcomes are 2 blocks, 200,000 steps
BLOCK_BYTES = 128 * 2**20
SCALE = 400 / math.log(10)  # Elo points per natural-log odds unit
ANCHOR = 1000.0


@dataclass(frozen=True)
class Outcome:
    """One comparison of two models that a ranking is fitted on."""

    model_a: str
    model_b: str
    score: float  # 1: A won, 0.5: tie, 0: B won
    delta: float | None = None  # the item's generation separability, for sep-Elo
    style: tuple[float, ...] = ()  # A's style features minus B's, for style control
    unit: str = ""  # the independent unit the outcome belongs to (a prompt, a battle); "" = its own unit


@dataclass(frozen=True)
class ModelRating:
    model: str
    rating: float
    ci_low: float
    ci_high: float
    rank: int
    rank_low: int  # best rank inside the bootstrap interval
    rank_high: int


@dataclass
class Ranking:
    """Models rated by one method (Bradley-Terry, Elo, …) with bootstrap intervals, and what it was fitted on."""

    method: str  # bradley_terry | elo | sep_elo | style_controlled
    ratings: list[ModelRating]
    n_outcomes: int
    n_ties: int
    bootstrap_rounds: int
    style_coefficients: dict[str, float] = field(default_factory=dict)
    ties: str = "half"  # how ties entered the fit: "half" a win each, or "drop"ped
    resample_unit: str = "outcome"  # what the bootstrap resampled
    n_units: int = 0
    subset: str = "all"  # the prompts it was fitted on, where an analysis ranks subsets separately
    one_per_unit: bool = False  # each round used one outcome drawn from each unit (see the module docstring)

    @property
    def interval_kind(self) -> str:
        """What the intervals are, named for what they cover: percentile intervals of a nominal 95%, as Chatbot
        Arena's, cover true ratings a little less often than that (93.7% of 1,200 in `benchmarks/coverage.py`)."""
        return (f"percentile intervals from {self.bootstrap_rounds} bootstrap rounds (nominal 95%, as Chatbot "
                "Arena's; they covered 93.7% of true ratings in the project's simulation)")


@dataclass(frozen=True)
class _Games:
    """Outcomes as columns, built once per ranking: a fit or a bootstrap round reads the rows it draws by index,
    never a list of `Outcome`s (building one per round from 100,000 outcomes cost more than the fits)."""

    a: np.ndarray  # model indices
    b: np.ndarray
    score: np.ndarray
    scale: np.ndarray  # Elo's K times the outcome's weight
    style: np.ndarray  # games × style features (none unless a fit uses them)

    @classmethod
    def of(cls, outcomes: Sequence[Outcome], models: Sequence[str], style_features: int = 0, k: float = 4.0,
           weight: Callable[[Outcome], float] = lambda o: 1.0) -> _Games:
        index = {m: i for i, m in enumerate(dict.fromkeys(models))}
        style = np.array([o.style[:style_features] for o in outcomes] if style_features else [], dtype=float)
        return cls(np.array([index[o.model_a] for o in outcomes], dtype=np.int64),
                   np.array([index[o.model_b] for o in outcomes], dtype=np.int64),
                   np.array([o.score for o in outcomes], dtype=float),
                   np.array([k * weight(o) for o in outcomes], dtype=float),
                   style.reshape(len(outcomes), style_features))

    def kept(self, rows: np.ndarray, ties: str) -> np.ndarray:
        """The rows a fit uses under the tie rule, in their order."""
        if ties == "drop":
            return np.asarray(rows[self.score[rows] != 0.5])
        if ties != "half":
            raise ValueError(f"ties must be 'half' or 'drop', not {ties!r}")
        return rows


def bradley_terry(outcomes: Sequence[Outcome], models: Sequence[str], ties: str = "half",
                  style_names: Sequence[str] = ()) -> tuple[dict[str, float], dict[str, float]]:
    """Maximum-likelihood ratings (and style coefficients, in log-odds per standard deviation of each style
    feature, as Chatbot Arena's style control reports them)."""
    games = _Games.of(outcomes, models, len(style_names))
    return _bradley_terry(games, np.arange(len(outcomes)), models, ties, style_names)


def _bradley_terry(games: _Games, rows: np.ndarray, models: Sequence[str], ties: str,
                   style_names: Sequence[str]) -> tuple[dict[str, float], dict[str, float]]:
    """`bradley_terry` on the given rows of `games`."""
    rows = games.kept(rows, ties)
    if not len(rows):  # nothing decided (e.g. a bootstrap draw of ties only, with ties dropped): no information
        return dict.fromkeys(models, ANCHOR), dict.fromkeys(style_names, 0.0)
    n, k = len(models), len(style_names)
    a, b, y = games.a[rows], games.b[rows], games.score[rows]
    style = scale_style(games.style[rows, :k])

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        strength, beta = theta[:n], theta[n:]
        z = strength[a] - strength[b] + style @ beta
        p = 1 / (1 + np.exp(-z))
        eps = 1e-12
        nll = -np.sum(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps)) + 1e-6 * np.sum(strength**2)
        resid = p - y
        grad_s = np.bincount(a, resid, n) - np.bincount(b, resid, n) + 2e-6 * strength
        return float(nll), np.concatenate([grad_s, style.T @ resid])

    theta = minimize(loss, np.zeros(n + k), jac=True, method="L-BFGS-B").x
    strength = theta[:n] - theta[:n].mean()
    ratings = {m: ANCHOR + SCALE * float(strength[i]) for i, m in enumerate(models)}
    return ratings, {name: float(c) for name, c in zip(style_names, theta[n:], strict=True)}


def scale_style(style: np.ndarray) -> np.ndarray:
    """Style columns divided by their standard deviation over the games, so coefficients compare across
    features; not centred: a zero difference (equal style) must stay zero, or with model A always shown first
    part of a model's strength would move into the style terms."""
    spread = style.std(axis=0)
    return style / np.where(spread > 0, spread, 1.0)


def sep_multiplier(delta: float | None, threshold: float = 0.4, alpha: float = 2.0, beta: float = 6.0) -> float:
    """K multiplier of separability-weighted Elo: 1 at δ = threshold, → α as δ → ∞; 1 when δ is unknown."""
    if delta is None:
        return 1.0
    return alpha / (1 + math.exp(-beta * (delta - threshold)))


def elo(outcomes: Sequence[Outcome], models: Sequence[str], k: float = 4.0, seed: int = 0, ties: str = "half",
        weight: Callable[[Outcome], float] = lambda o: 1.0) -> dict[str, float]:
    """Online Elo over the outcomes in a seeded random order (K=4, as Chatbot Arena), mean-anchored."""
    games = _Games.of(outcomes, models, k=k, weight=weight)
    return _elo_rounds(games, [np.arange(len(outcomes))], [seed], list(dict.fromkeys(models)), ties)[0]


STEPS_AT_ONCE = 128  # Elo steps whose games' columns are looked up in one operation (under 1 MB at 200 samples)


def _elo_rounds(games: _Games, samples: Sequence[np.ndarray], seeds: Sequence[int], models: Sequence[str],
                ties: str) -> list[dict[str, float]]:
    """Online Elo on each sample (rows of `games`), each in the random order its seed gives, every sample at
    once: a step applies each sample's next game to that sample's ratings, so one NumPy operation serves them
    all, with each sample's arithmetic in its own order as one Python loop over it would do it. A sample that
    has run out of games takes steps of 0."""
    # step × sample: the game played, -1 when none; each sample's games in its seed's order, made one at a time
    played = np.full((max((len(rows) for rows in samples), default=0), len(samples)), -1, dtype=np.int32)
    longest = 0
    for column, (rows, seed) in enumerate(zip(samples, seeds, strict=True)):
        kept = games.kept(rows, ties)
        played[:len(kept), column] = kept[np.random.default_rng(seed).permutation(len(kept))]
        longest = max(longest, len(kept))
    played = played[:longest]
    rating = np.full((len(samples), len(models)), ANCHOR)
    rows = np.arange(len(samples))
    # a sample past its end plays the game appended last (index −1): model 0 against itself with a scale of 0,
    # and rating + 0.0 is the rating unchanged
    scale = np.append(games.scale, 0.0) if len(games.scale) else np.zeros(1)
    a, b, score = (np.append(column, 0) for column in (games.a, games.b, games.score))
    for start in range(0, len(played), STEPS_AT_ONCE):  # each step's columns looked up for a block of steps
        block = played[start:start + STEPS_AT_ONCE]
        for ia, ib, game_scale, game_score in zip(a[block], b[block], scale[block], score[block], strict=True):
            expected = 1 / (1 + 10 ** ((rating[rows, ib] - rating[rows, ia]) / 400))
            step = game_scale * (game_score - expected)
            rating[rows, ia] += step
            rating[rows, ib] -= step
    return [{m: float(values[i] + (ANCHOR - float(np.mean(values.tolist())))) for i, m in enumerate(models)}
            for values in rating]


def _ranks(ratings: dict[str, float]) -> dict[str, int]:
    ordered = sorted(ratings, key=lambda m: -ratings[m])
    return {m: ordered.index(m) + 1 for m in ratings}


def rank(method: str, outcomes: Sequence[Outcome], models: Sequence[str] | None = None, *, rounds: int = 200,
         seed: int = 0, ties: str = "half", k: float = 4.0, style_names: Sequence[str] = (),
         sep: dict[str, float] | None = None, unit: str = "outcome", one_per_unit: bool = False) -> Ranking:
    """Point estimates plus percentile bootstrap intervals (units resampled with replacement, seeded; see the
    module docstring for `one_per_unit`); `unit` names what an outcome's `unit` is, for the page. A styled fit
    reads the first `len(style_names)` of each outcome's style columns; an unstyled one reads none.
    Deterministic, so a run reads it back from the run cache when the same outcomes were ranked the same way
    before."""
    models = list(models or sorted({o.model_a for o in outcomes} | {o.model_b for o in outcomes}))
    settings = {"method": method, "models": models, "rounds": rounds, "seed": seed, "ties": ties, "k": k,
                "style": list(style_names), "sep": sep or {}, "unit": unit, "one_per_unit": one_per_unit,
                "outcomes": [[o.model_a, o.model_b, o.score, o.delta, list(o.style[:len(style_names)]), o.unit]
                             for o in outcomes]}  # the style columns the fit reads, and no others
    return derived.cached("ranking", settings,
                          lambda: _one_blas_thread(_rank, method, outcomes, models, rounds, seed, ties, k, style_names,
                                                   sep or {}, unit, one_per_unit),
                          lambda r: json.dumps(asdict(r)).encode("utf-8"), _ranking_from_json)


def _one_blas_thread(fit: Callable[..., Ranking], *args: Any) -> Ranking:
    """`fit(*args)` with BLAS held to one thread. A bootstrap fits hundreds of models of a few parameters, each
    far below the sizes BLAS splits across threads, but OpenBLAS's threads still wake and spin between calls:
    on a machine whose cores were busy (another run beside it), a 60-pair VibeCheck's analysis with 2,000
    Bradley-Terry fits took 8-15 s, and 3.5-5 s with one thread. The numbers are the same (each call is
    single-threaded either way; checked on 3,000 outcomes)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return fit(*args)


def _ranking_from_json(data: bytes) -> Ranking:
    record = json.loads(data)
    return Ranking(**{**record, "ratings": [ModelRating(**r) for r in record["ratings"]]})


def _rank(method: str, outcomes: Sequence[Outcome], models: list[str], rounds: int, seed: int, ties: str, k: float,
          style_names: Sequence[str], sep: dict[str, float], unit: str, one_per_unit: bool = False) -> Ranking:
    if method not in ("bradley_terry", "style_controlled", "elo", "sep_elo"):
        raise ValueError(f"unknown ranking method {method!r}")
    style_names = style_names if method == "style_controlled" else ()
    weight = (lambda o: sep_multiplier(o.delta, **sep)) if method == "sep_elo" else (lambda o: 1.0)
    games = _Games.of(outcomes, models, len(style_names), k, weight)

    def fits(samples: list[np.ndarray], first_seed: int) -> list[tuple[dict[str, float], dict[str, float]]]:
        """The method fitted on each sample (rows of `games`); Elo's orders seeded first_seed, first_seed + 1…"""
        if method in ("elo", "sep_elo"):
            seeds = range(first_seed, first_seed + len(samples))
            return [(ratings, {}) for ratings in _elo_rounds(games, samples, seeds, models, ties)]
        return [_bradley_terry(games, rows, models, ties, style_names) for rows in samples]

    units: dict[str, list[int]] = {}
    for i, o in enumerate(outcomes):
        units.setdefault(o.unit or f"#{i}", []).append(i)
    groups = [np.array(rows, dtype=np.int64) for rows in units.values()]
    sizes = np.array([len(rows) for rows in groups])
    members = np.concatenate(groups) if groups else np.zeros(0, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if groups else members
    rng = np.random.default_rng(seed)

    def drawn(chosen: np.ndarray) -> np.ndarray:
        """The rows of the units chosen: all of each, or one drawn from each (`one_per_unit`)."""
        if one_per_unit:
            return np.array([groups[g][rng.integers(len(groups[g]))] for g in chosen.tolist()], dtype=np.int64)
        # every row of each chosen unit, unit after unit: each unit's start, then its following rows
        counts = sizes[chosen]
        offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        return np.asarray(members[np.repeat(starts[chosen], counts) + offsets])

    def fitted_rounds(count: int, draw: Callable[[], np.ndarray]) -> Iterator[tuple[dict[str, float],
                                                                                  dict[str, float]]]:
        """`count` rounds, each fitted on `draw()` seeded seed + its number: a block of rounds drawn, in order,
        then fitted together (Elo plays them side by side)."""
        most = max(1, BLOCK_BYTES // (12 * max(1, len(outcomes))))  # rounds a block may hold
        size = math.ceil(count / math.ceil(count / most)) if count else 1  # the fewest blocks, of equal size
        for block in range(0, count, size):
            yield from fits([draw() for _ in range(min(size, count - block))], seed + block + 1)

    if one_per_unit:
        draws = list(fitted_rounds(max(rounds, 1), lambda: drawn(np.arange(len(groups)))))
        point = {m: float(np.mean([d[0][m] for d in draws])) for m in models}
        coefficients = {name: float(np.mean([d[1][name] for d in draws])) for name in draws[0][1]}
    else:
        point, coefficients = fits([np.arange(len(outcomes))], seed)[0]
    boot: dict[str, list[float]] = {m: [] for m in models}
    boot_ranks: dict[str, list[int]] = {m: [] for m in models}
    for ratings, _ in fitted_rounds(rounds, lambda: drawn(rng.integers(0, len(groups), len(groups)))):
        ranks = _ranks(ratings)
        for m in models:
            boot[m].append(ratings[m])
            boot_ranks[m].append(ranks[m])
    point_ranks = _ranks(point)
    rows = []
    for m in sorted(models, key=lambda m: -point[m]):
        low, high = (np.percentile(boot[m], [2.5, 97.5]) if rounds else (point[m], point[m]))
        r_low, r_high = (np.percentile(boot_ranks[m], [2.5, 97.5]) if rounds else (point_ranks[m],) * 2)
        rows.append(ModelRating(m, point[m], float(low), float(high), point_ranks[m], math.floor(r_low),
                                math.ceil(r_high)))
    return Ranking(method, rows, len(outcomes), sum(o.score == 0.5 for o in outcomes), rounds, coefficients, ties,
                   unit if any(o.unit for o in outcomes) else "outcome", len(groups), one_per_unit=one_per_unit)
