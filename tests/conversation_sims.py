"""Seeded simulations of conversations for the calibration of every statistic computed from their turns
(`benchmarks/calibration.py` repeats them hundreds of times; the tests run a few): conversations of 2–6 turns
whose verdicts, values and lengths are correlated within a conversation, one label per conversation, each
analysis through the project's own functions.

Within a conversation, every vibe's verdicts share a latent draw (correlation `RHO` between two turns'
latents), cut into thirds so that a verdict is −1, 0 or +1 a third of the time each: no lean, separability 0.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit
from scipy.stats import norm

from engine import stats
from engine.analyze.outcomes import human_outcomes
from engine.analyze.rankings import rank
from engine.builtin_plugins.methods.rankings.options import RankingsOptions
from engine.builtin_plugins.methods.vibecheck import analysis as vibecheck
from engine.builtin_plugins.methods.vibecheck import headline, heldout, profiles
from engine.builtin_plugins.methods.vibecheck.options import Regression
from engine.builtin_plugins.methods.vibecheck.records import PairVerdicts, VibeCheckResult
from engine.builtin_plugins.methods.vibecheck.regressions import Features
from engine.datasets.items import Battle, Item
from engine.drift.shift import gate, shift_of

RHO = 0.6
THIRD = float(norm.ppf(2 / 3))
ALPHA = 0.05
ELO = {"m1": 1150.0, "m2": 1050.0, "m3": 950.0, "m4": 850.0}  # mean-anchored, as the rankings report them


def turn_counts(rng: np.random.Generator, conversations: int) -> np.ndarray:
    return rng.integers(2, 7, size=conversations)


def correlated(rng: np.random.Generator, counts: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """Standard normal latents per turn (rows) and column, correlated `RHO` within a conversation; and each
    row's conversation."""
    row = np.repeat(np.arange(len(counts)), counts)
    shared = rng.normal(size=(len(counts), columns))
    return np.sqrt(RHO) * shared[row] + np.sqrt(1 - RHO) * rng.normal(size=(len(row), columns)), row


def verdicts(latent: np.ndarray) -> np.ndarray:
    return np.where(latent > THIRD, 1, np.where(latent < -THIRD, -1, 0))


def _pairs(nu: np.ndarray, row: np.ndarray, chars: np.ndarray, labels: list[str | None],
           train: int) -> list[PairVerdicts]:
    """Turns as the analysis holds them: conversation `c<k>` on the training side when k < `train`."""
    turn = np.concatenate([np.arange(1, n + 1) for n in np.bincount(row)])
    return [PairVerdicts(f"c{row[i]}#{turn[i]}", "train" if row[i] < train else "test", labels[row[i]], f"a{i}",
                         f"b{i}", {f"v{j}": int(nu[i, j]) for j in range(nu.shape[1])}, {},
                         chars=[int(chars[i, 0]), int(chars[i, 1])], conversation=f"c{row[i]}", turn=int(turn[i]))
            for i in range(len(row))]


def _lengths(rng: np.random.Generator, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Characters of A's and B's answers per turn: the log ratio leans the same way within a conversation.
    Returns them with each turn's log ratio."""
    latent, _ = correlated(rng, counts, 1)
    ratio = 0.8 * latent[:, 0]
    return np.column_stack([500 * np.exp(ratio / 2), 500 * np.exp(-ratio / 2)]).round(), ratio


def headline_claims(rng: np.random.Generator, seed: int, conversations: int = 120, vibes: int = 30) -> bool:
    """A null VibeCheck analysis (30 noise vibes, one coin-flip label per conversation): keep/drop on the
    training conversations' mean verdicts, the headline's tests on the test conversations' (as the analysis
    scores a vibe), LARS top 10, both regressions, Holm over every claim. True when it claims anything."""
    from test_selection_calibration import scored

    counts = turn_counts(rng, conversations)
    latent, row = correlated(rng, counts, vibes)
    nu = verdicts(latent)
    chars = rng.integers(200, 2000, size=(len(row), 2))
    labels: list[str | None] = ["a" if rng.random() < 0.5 else "b" for _ in range(conversations)]
    pairs = _pairs(nu, row, chars, labels, conversations // 2)
    train, test = row < conversations // 2, row >= conversations // 2
    scores = [scored(f"v{j}", stats.cluster_means(nu[train, j].tolist(), row[train].tolist()),
                     stats.cluster_means(nu[test, j].tolist(), row[test].tolist())) for j in range(vibes)]
    kept = [s.name for s in scores if s.kept]
    features = Features(pairs, {})
    chosen, _, _ = vibecheck.select_vibes(kept, features, Regression(select="lars", top=10))
    scores, mm, pp, _ = vibecheck.adjust_claims(scores, *vibecheck.fit_regressions(chosen, features, "a", [], seed))
    named = headline.confirmed(VibeCheckResult("sim", "a", "b", scores, [], None, None, 0, []))
    return bool(named) or significant(mm) or significant(pp)


def significant(fit: heldout.HeldOutFit | None) -> bool:
    """A vibe coefficient of the fit is Holm-significant."""
    return fit is not None and any(tested and q is not None and q < ALPHA
                                   for tested, q in zip(fit.tested, fit.p_adjusted, strict=True))


def preference_null(rng: np.random.Generator, seed: int, conversations: int = 120,
                    vibes: int = 10) -> tuple[bool, bool]:
    """Length truly predicts each conversation's one label (logit 1.5 × its turns' mean log length ratio); ten
    noise vibes go into both regressions as they are. Returns (a noise vibe entered the preference model, a
    vibe coefficient of either refit is Holm-significant)."""
    counts = turn_counts(rng, conversations)
    latent, row = correlated(rng, counts, vibes)
    chars, ratio = _lengths(rng, counts)
    lean = np.bincount(row, weights=ratio) / counts
    labels: list[str | None] = ["a" if rng.random() < expit(1.5 * lean[c]) else "b" for c in range(conversations)]
    pairs = _pairs(verdicts(latent), row, chars, labels, conversations // 2)
    names = [f"v{j}" for j in range(vibes)]
    mm, pp = vibecheck.fit_regressions(names, Features(pairs, {}), "a", [], seed)
    fits, _, _, _ = heldout.adjust([f for f in (mm, pp) if f is not None])
    return (pp is not None and any(name in names for name in pp.features)), any(significant(f) for f in fits)


def lc_covers(rng: np.random.Generator, seed: int, conversations: int = 80, rounds: int = 300,
              intercept: float = 0.4) -> bool:
    """A model against a reference over conversations whose one label follows AlpacaEval 2's model at the
    conversation's length (logit = `intercept` + tanh(summed length difference / its SD)): does the
    length-controlled rate's 95% interval cover expit(`intercept`), the win rate at equal length?"""
    counts = turn_counts(rng, conversations)
    chars, _ = _lengths(rng, counts)
    row = np.repeat(np.arange(conversations), counts)
    difference = np.bincount(row, weights=chars[:, 0] - chars[:, 1])
    won = rng.random(conversations) < expit(intercept + np.tanh(difference / difference.std()))
    labels: list[str | None] = ["m" if w else "ref" for w in won]
    pairs = _pairs(np.zeros((len(row), 1), dtype=int), row, chars, labels, 0)
    rate = profiles.win_rate(VibeCheckResult("p", "m", "ref", [], pairs, None, None, 0, []), seed, rounds)
    truth = float(expit(intercept))
    return rate is not None and rate.lc_ci_low is not None and rate.lc_ci_low <= truth <= (rate.lc_ci_high or 0)


def rank_coverage(rng: np.random.Generator, seed: int, battles: int = 240,
                  rounds: int = RankingsOptions.bootstrap) -> tuple[int, int]:
    """Battles between four models with true Elo ratings `ELO`, each a conversation of 2–6 turns that carry its
    one winner: (Bradley–Terry intervals that cover their model's true rating, intervals), at the rankings
    method's default number of bootstrap rounds unless told otherwise."""
    models = list(ELO)
    items = []
    for b in range(battles):
        i, j = rng.choice(4, 2, replace=False)
        a, other = models[i], models[j]
        winner = a if rng.random() < 1 / (1 + 10 ** ((ELO[other] - ELO[a]) / 400)) else other
        items += [Item(f"b{b}#{k}", f"turn {k}", outputs={a: "x", other: "y"}, battles=(Battle(a, other, winner),),
                       conversation=f"b{b}", turn=k) for k in range(1, int(rng.integers(2, 7)) + 1)]
    ranking = rank("bradley_terry", human_outcomes(items, models, features=None), models, rounds=rounds, seed=seed,
                   unit="conversation")
    return sum(r.ci_low <= ELO[r.model] <= r.ci_high for r in ranking.ratings), len(ranking.ratings)


def compare_fails_at_margin(rng: np.random.Generator, conversations: int = 60, margin: float = 0.1,
                            spread: float = 0.5) -> bool:
    """Head against base over conversations whose true shift is exactly the gate's margin: each conversation's
    own shift is the margin ± `spread` (a coin flip), its turns' −ν drawn around it (a third tied). True when
    `vibe compare`'s gate fails it, a false failure."""
    counts = turn_counts(rng, conversations)
    row = np.repeat(np.arange(conversations), counts)
    own = margin + spread * rng.choice([-1.0, 1.0], conversations)
    up = (2 / 3 + own[row]) / 2
    draw = rng.random(len(row))
    moved = np.where(draw < up, 1.0, np.where(draw < 2 / 3, -1.0, 0.0))
    s = shift_of("v", -moved, margin, [f"c{r}" for r in row])
    ((gated,),) = gate([[s]])
    return gated.verdict == "fail"
