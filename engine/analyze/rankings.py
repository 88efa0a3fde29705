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
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy.optimize import minimize

from engine import derived

SCALE = 400 / math.log(10)  # Elo points per natural-log odds unit
ANCHOR = 1000.0


@dataclass(frozen=True)
class Outcome:
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


def _prepare(outcomes: Sequence[Outcome], ties: str) -> list[Outcome]:
    if ties == "drop":
        return [o for o in outcomes if o.score != 0.5]
    if ties != "half":
        raise ValueError(f"ties must be 'half' or 'drop', not {ties!r}")
    return list(outcomes)


def bradley_terry(outcomes: Sequence[Outcome], models: Sequence[str], ties: str = "half",
                  style_names: Sequence[str] = ()) -> tuple[dict[str, float], dict[str, float]]:
    """Maximum-likelihood ratings (and style coefficients, in log-odds per standard deviation of each style
    feature, as Chatbot Arena's style control reports them)."""
    games = _prepare(outcomes, ties)
    if not games:  # nothing decided (e.g. a bootstrap draw of ties only, with ties dropped): no information
        return dict.fromkeys(models, ANCHOR), dict.fromkeys(style_names, 0.0)
    index = {m: i for i, m in enumerate(models)}
    n, k = len(models), len(style_names)
    a = np.array([index[o.model_a] for o in games])
    b = np.array([index[o.model_b] for o in games])
    y = np.array([o.score for o in games], dtype=float)
    style = np.array([o.style[:k] for o in games], dtype=float).reshape(len(games), k)
    style = scale_style(style)

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
    ratings = {m: ANCHOR + SCALE * float(strength[index[m]]) for m in models}
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
    games = _prepare(outcomes, ties)
    order = np.random.default_rng(seed).permutation(len(games))
    index = {m: i for i, m in enumerate(dict.fromkeys(models))}
    rating = [ANCHOR] * len(index)
    # the games as plain lists read in the loop: the same arithmetic in the same order, without an attribute
    # lookup, a dict lookup by name and a call of `weight` per game
    a, b = [index[o.model_a] for o in games], [index[o.model_b] for o in games]
    score, scale = [o.score for o in games], [k * weight(o) for o in games]
    for i in order.tolist():
        expected = 1 / (1 + 10 ** ((rating[b[i]] - rating[a[i]]) / 400))
        step = scale[i] * (score[i] - expected)
        rating[a[i]] += step
        rating[b[i]] -= step
    shift = ANCHOR - float(np.mean(rating))
    return {m: rating[i] + shift for m, i in index.items()}


def _ranks(ratings: dict[str, float]) -> dict[str, int]:
    ordered = sorted(ratings, key=lambda m: -ratings[m])
    return {m: ordered.index(m) + 1 for m in ratings}


def rank(method: str, outcomes: Sequence[Outcome], models: Sequence[str] | None = None, *, rounds: int = 200,
         seed: int = 0, ties: str = "half", k: float = 4.0, style_names: Sequence[str] = (),
         sep: dict[str, float] | None = None, unit: str = "outcome", one_per_unit: bool = False) -> Ranking:
    """Point estimates plus percentile bootstrap intervals (units resampled with replacement, seeded; see the
    module docstring for `one_per_unit`); `unit` names what an outcome's `unit` is, for the page.
    Deterministic, so a run reads it back from the run cache when the same outcomes were ranked the same way
    before."""
    models = list(models or sorted({o.model_a for o in outcomes} | {o.model_b for o in outcomes}))
    settings = {"method": method, "models": models, "rounds": rounds, "seed": seed, "ties": ties, "k": k,
                "style": list(style_names), "sep": sep or {}, "unit": unit, "one_per_unit": one_per_unit,
                "outcomes": [[o.model_a, o.model_b, o.score, o.delta, list(o.style), o.unit] for o in outcomes]}
    return derived.cached("ranking", settings,
                          lambda: _rank(method, outcomes, models, rounds, seed, ties, k, style_names, sep or {}, unit,
                                        one_per_unit),
                          lambda r: json.dumps(asdict(r)).encode("utf-8"), _ranking_from_json)


def _ranking_from_json(data: bytes) -> Ranking:
    record = json.loads(data)
    return Ranking(**{**record, "ratings": [ModelRating(**r) for r in record["ratings"]]})


def _rank(method: str, outcomes: Sequence[Outcome], models: list[str], rounds: int, seed: int, ties: str, k: float,
          style_names: Sequence[str], sep: dict[str, float], unit: str, one_per_unit: bool = False) -> Ranking:
    def fit(sample: Sequence[Outcome], fit_seed: int) -> tuple[dict[str, float], dict[str, float]]:
        if method in ("bradley_terry", "style_controlled"):
            return bradley_terry(sample, models, ties, style_names if method == "style_controlled" else ())
        if method == "elo":
            return elo(sample, models, k, fit_seed, ties), {}
        if method == "sep_elo":
            weight = lambda o: sep_multiplier(o.delta, **sep)  # noqa: E731
            return elo(sample, models, k, fit_seed, ties, weight), {}
        raise ValueError(f"unknown ranking method {method!r}")

    units: dict[str, list[int]] = {}
    for i, o in enumerate(outcomes):
        units.setdefault(o.unit or f"#{i}", []).append(i)
    groups = list(units.values())
    rng = np.random.default_rng(seed)

    def drawn(chosen: Sequence[int] | np.ndarray) -> list[Outcome]:
        """The outcomes of the units chosen: all of each, or one drawn from each (`one_per_unit`)."""
        if one_per_unit:
            return [outcomes[groups[g][rng.integers(len(groups[g]))]] for g in chosen]
        return [outcomes[i] for g in chosen for i in groups[g]]

    if one_per_unit:
        draws = [fit(drawn(range(len(groups))), seed + r + 1) for r in range(max(rounds, 1))]
        point = {m: float(np.mean([d[0][m] for d in draws])) for m in models}
        coefficients = {name: float(np.mean([d[1][name] for d in draws])) for name in draws[0][1]}
    else:
        point, coefficients = fit(outcomes, seed)
    boot: dict[str, list[float]] = {m: [] for m in models}
    boot_ranks: dict[str, list[int]] = {m: [] for m in models}
    for r in range(rounds):
        ratings, _ = fit(drawn(rng.integers(0, len(groups), len(groups))), seed + r + 1)
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
