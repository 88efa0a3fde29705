"""Statistics shared by the analyses: agreement, separability and its interval, the judge-panel ensemble,
signed strengths of measures, and seeded splits. Small pure functions, each checked against
hand-computed cases in the tests."""

from __future__ import annotations

import gc
import math
import warnings
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import numpy as np

from engine import betting, ternary

# what a plug-in may use of this module, through the public API (held by tests/test_api_surface.py)
__all__ = ["GLM_FAILURES", "agreement", "benjamini_hochberg", "binomial_glm", "bootstrap_interval",
           "change_interval", "cluster_bootstrap_interval", "cluster_bootstrap_means", "cluster_index",
           "cluster_means", "ensemble", "fit_failure", "fleiss_kappa", "gwet_ac1", "holm", "length_covariate",
           "resampled_rows", "separability", "sign_test", "sign_test_mde", "split", "strength", "strengths",
           "verdict_interval", "weighted_holm", "wilson"]


def round_half_away(x: float) -> int:
    """Round to the nearest integer, halves away from zero (±0.5 → ±1), as the panel ensemble needs."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def ensemble(scores: Sequence[int]) -> int:
    """Panel verdict ν: the rounded mean of the judges' scores. Two judges: +1 when one says +1 and the
    other 0; a +1/−1 conflict gives 0."""
    return round_half_away(sum(scores) / len(scores)) if scores else 0


def separability(nu: Sequence[float]) -> float:
    """Mean panel verdict over pairs, in [−1, 1]; positive means model A leans to the vibe's high end."""
    return float(np.mean(nu)) if len(nu) else 0.0


def mean_interval(values: Sequence[float]) -> tuple[float, float]:
    """95% t-interval of a mean over independent units (a point when they all agree; unbounded below two)."""
    from scipy import stats as scipy_stats

    if len(values) < 2:
        return float("-inf"), float("inf")
    mean, sd = float(np.mean(values)), float(np.std(values, ddof=1))
    half = float(scipy_stats.t.ppf(0.975, len(values) - 1)) * sd / math.sqrt(len(values))
    return mean - half, mean + half


def skew_corrected_t(values: Sequence[float] | np.ndarray, null: float) -> float:
    """The one-sample t statistic of `values`' mean against `null`, after Hall's (1992) transformation that
    removes the first-order effect of skewness, to be read against t with n − 1 degrees of freedom.

    Why: a one-sided t-test is exact only for symmetric data. Means of a few ternary verdicts (a conversation's
    turns) are skewed, and at 60 conversations a plain t-test at exactly the margin failed 5.4% of gates at
    α = 0.05; this statistic's test holds 0.05. With S = (x̄ − null)/s and γ the sample skewness:
    T = √n (S + γS²/3 + γ²S³/27 + γ/(6n)), monotone in x̄. Needs two distinct values (s > 0)."""
    array = np.asarray(values, dtype=float)
    n = len(array)
    mean, sd = float(array.mean()), float(array.std(ddof=1))
    standardized = (mean - null) / sd
    skewness = float(np.mean((array - mean) ** 3)) / sd**3
    return math.sqrt(n) * (standardized + skewness * standardized**2 / 3 + skewness**2 * standardized**3 / 27
                           + skewness / (6 * n))


Z95 = 1.959963984540054  # the normal quantile of a two-sided 95% interval


def wilson(successes: float, n: int) -> tuple[float, float]:
    """Wilson's score 95% interval of a proportion with a continuity correction (Newcombe 1998, method 4; half
    successes allowed: a coin-flip prediction); NaN for n = 0. Uncorrected, its coverage, computed exactly over
    every outcome, fell to 84% at 10 trials and 90% at 20–50 for proportions near 0 or 1 (a judge that agrees
    with people on nearly every label); corrected it is at least 95% from 10 trials on, where a percentile
    bootstrap of the share covered 86–90% at 10–30 (people's labels of a mostly tied vibe)."""
    if n == 0:
        return float("nan"), float("nan")
    p = successes / n
    spread = 2 * (n + Z95**2)
    low = 0.0 if p <= 0 else (2 * n * p + Z95**2 - 1
                              - Z95 * math.sqrt(Z95**2 - 2 - 1 / n + 4 * p * (n * (1 - p) + 1))) / spread
    high = 1.0 if p >= 1 else (2 * n * p + Z95**2 + 1
                               + Z95 * math.sqrt(Z95**2 + 2 - 1 / n + 4 * p * (n * (1 - p) - 1))) / spread
    return max(0.0, low), min(1.0, high)


def verdict_interval(values: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """95% interval of a mean verdict that stays inside the verdicts' range [−1, 1] (a t-interval does not:
    [0.24, 1.36] from a few pairs). Verdicts of −1, 0 and +1: Tango's score interval for P(+1) − P(−1)
    (`engine.ternary`), from one verdict on; a percentile bootstrap of them collapses to [0, 0] when no pair
    moved. Means of several verdicts (a conversation's turns): the betting interval (`engine.betting`), which
    holds its level at every n where a t-interval or a bootstrap collapses on conversations that all agree.
    NaN for no value."""
    array = np.asarray(values, dtype=float)
    if not len(array):
        return float("nan"), float("nan")
    if np.isin(array, (-1.0, 0.0, 1.0)).all():
        plus, minus, n = ternary.counts(array)
        return ternary.interval(plus, minus, n)
    return betting.interval(array)


def change_interval(changes: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """95% interval of a mean change of verdict within units (turn k less turn 1, in [−2, 2]): the betting interval
    on that range (`engine.betting`), at its level at every n, where a percentile bootstrap covered 64% at 20."""
    return betting.interval(np.asarray(changes, dtype=float), low=-2.0, high=2.0)


def bootstrap_interval(values: np.ndarray, seed: int, rounds: int) -> tuple[float, float]:
    """95% percentile interval of a mean, resampling its independent units (pairs, prompts) `rounds` times."""
    means = bootstrap_means(values, np.random.default_rng(seed), rounds)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def bootstrap_means(values: np.ndarray, rng: np.random.Generator, rounds: int) -> np.ndarray:
    """The mean of each of `rounds` resamples of `values` with replacement (`resampled_rows`)."""
    return np.concatenate([values[draws].mean(axis=1) for draws in resampled_rows(rng, len(values), rounds)])


def bootstrap_ratios(sums: np.ndarray, counts: np.ndarray, rng: np.random.Generator, rounds: int) -> np.ndarray:
    """Σ sums / Σ counts over each of `rounds` resamples of the units with replacement (`resampled_rows`): the
    mean of values that come in units (a unit's sum of values, and how many it holds)."""
    return np.concatenate([sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
                           for draws in resampled_rows(rng, len(sums), rounds)])


ROUNDS_AT_ONCE = 32  # even: see `resampled_rows`


def resampled_rows(rng: np.random.Generator, n: int, rounds: int) -> Iterator[np.ndarray]:
    """Bootstrap draws of n units, `ROUNDS_AT_ONCE` rounds at a time: the rows of `rng.integers(0, n,
    size=(rounds, n))`, the same numbers (NumPy draws bounded integers two from each 64-bit word, so a block of
    an even number of rows ends on a whole word), without a rounds × n matrix (800 MB at 2,000 rounds of
    50,000 pairs)."""
    for start in range(0, rounds, ROUNDS_AT_ONCE):
        yield rng.integers(0, n, size=(min(ROUNDS_AT_ONCE, rounds - start), n))


def cluster_means(values: Sequence[float], clusters: Sequence[str]) -> list[float]:
    """Each cluster's mean, in order of first appearance: the independent units of a test or interval when
    several values share a unit (the turns of one conversation). Values that are each their own cluster come
    back as they are, so unclustered data gives the numbers it always gave."""
    if len(set(clusters)) == len(clusters):
        return list(values)
    grouped: dict[str, list[float]] = {}
    for value, cluster in zip(values, clusters, strict=True):
        grouped.setdefault(cluster, []).append(value)
    return [float(np.mean(group)) for group in grouped.values()]


def cluster_index(clusters: Sequence[Hashable]) -> np.ndarray:
    """Each value's cluster as 0..k−1, clusters numbered in order of first appearance."""
    index = {c: n for n, c in enumerate(dict.fromkeys(clusters))}
    return np.array([index[c] for c in clusters], dtype=np.intp)


def cluster_bootstrap_means(values: np.ndarray, clusters: Sequence[str], rng: np.random.Generator,
                            rounds: int) -> np.ndarray:
    """The mean of each of `rounds` resamples of whole clusters (`bootstrap_means` where each value is its own)."""
    if len(set(clusters)) == len(clusters):
        return bootstrap_means(values, rng, rounds)
    group = cluster_index(clusters)
    return bootstrap_ratios(np.bincount(group, weights=values), np.bincount(group).astype(float), rng, rounds)


def cluster_bootstrap_interval(values: np.ndarray, clusters: Sequence[str], seed: int,
                               rounds: int) -> tuple[float, float]:
    """95% percentile interval of a mean over values that come in clusters (the turns of a conversation),
    resampling whole clusters; values that are each their own cluster give `bootstrap_interval`'s numbers."""
    means = cluster_bootstrap_means(values, clusters, np.random.default_rng(seed), rounds)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def excludes_zero(interval: tuple[float, float]) -> bool:
    """Whether an interval lies wholly on one side of 0: the test every "does it separate?" check uses."""
    low, high = interval
    return not low <= 0 <= high


def strength(a: float, b: float) -> float:
    """Signed, bounded difference of two measures: 0 when equal, ±1 when one of them is 0. Chatbot Arena's
    style control normalises its features the same way, so a coefficient reads per unit of relative
    difference whatever the measure's scale."""
    total = abs(a) + abs(b)
    return 0.0 if total == 0 else (a - b) / total


def strengths(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`strength` of every pair of values at once (arrays of one shape): the same number for each."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    total = np.abs(a) + np.abs(b)
    return np.asarray(np.divide(a - b, total, out=np.zeros_like(total), where=total != 0))


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float:
    """Cohen's κ between two raters over the same items (scikit-learn's `cohen_kappa_score`); 1 when both
    give one and the same category throughout, where the formula is 0/0."""
    from sklearn.metrics import cohen_kappa_score

    if len(a) != len(b) or not a:
        raise ValueError("kappa needs two equally long, non-empty rating lists")
    if len(set(a) | set(b)) == 1:
        return 1.0
    return float(cohen_kappa_score(list(a), list(b)))


def fleiss_kappa(ratings: Sequence[Sequence[int]]) -> float:
    """Fleiss' κ (statsmodels' `fleiss_kappa`); `ratings[i]` holds every rater's category for item i (the same
    number of raters per item); 1 when every rating is the same category."""
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

    n = len(ratings[0]) if ratings else 0
    if n < 2 or any(len(row) != n for row in ratings):
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of ratings per item")
    if len({c for row in ratings for c in row}) == 1:
        return 1.0
    table, _ = aggregate_raters(np.array([list(row) for row in ratings]))
    return float(statsmodels_fleiss(table, method="fleiss"))


def agreement(per_judge: Sequence[Sequence[int]]) -> float | None:
    """κ across a panel: Cohen's for two judges, Fleiss' for more, None for a single judge."""
    if len(per_judge) < 2:
        return None
    if len(per_judge) == 2:
        return cohen_kappa(per_judge[0], per_judge[1])
    return fleiss_kappa([list(col) for col in zip(*per_judge, strict=True)])


def gwet_ac1(per_judge: Sequence[Sequence[int]], categories: Sequence[int] = (-1, 0, 1)) -> float | None:
    """Gwet's AC1 of a panel (Gwet 2008, Br. J. Math. Stat. Psychol. 61(1), multi-rater form): (pₐ − pₑ)/(1 − pₑ),
    pₐ the share of agreeing rater pairs per item, pₑ = Σ πₖ(1 − πₖ)/(q − 1), πₖ category k's mean share. κ falls
    towards 0 when nearly every verdict is one category; AC1 does not. None for one judge (irrCAC pins scipy 1.12)."""
    if len(per_judge) < 2 or not per_judge[0]:
        return None
    ratings = np.array(per_judge, dtype=int).T  # items × raters
    counts = np.stack([(ratings == c).sum(axis=1) for c in categories], axis=1)  # items × categories
    raters = ratings.shape[1]
    agreed = float(np.mean((counts * (counts - 1)).sum(axis=1) / (raters * (raters - 1))))
    shares = counts.mean(axis=0) / raters
    chance = float((shares * (1 - shares)).sum() / (len(categories) - 1))
    return 1.0 if chance == 1.0 else (agreed - chance) / (1 - chance)


def split(ids: Sequence[str], train_fraction: float, seed: int) -> tuple[list[str], list[str]]:
    """Seeded random train/test split of item ids (order of `ids` does not matter)."""
    ordered = sorted(ids)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(ordered))
    cut = round(len(ordered) * train_fraction)
    return [ordered[i] for i in perm[:cut]], [ordered[i] for i in perm[cut:]]


def sign_test(verdicts: Sequence[float] | np.ndarray, direction: int = 0) -> float:
    """Exact p-value that ternary verdicts (+1, 0, −1) lean one way, by the sign test over the non-zero ones:
    with no difference between the models, +1 and −1 are equally likely, whoever the pairs are. `direction`
    +1 or −1 makes it one-sided: "they lean that way", the test of a direction proposed on other pairs (a vibe
    kept on training pairs, confirmed on test pairs), which then can never confirm the opposite direction.
    0: two-sided. Never 0 from finite data ([+1, +1] gives 0.5 two-sided, 0.25 one-sided); 1 with no non-zero
    verdict."""
    from scipy.stats import binomtest

    values = np.asarray(verdicts, dtype=float)
    higher, lower = int((values > 0).sum()), int((values < 0).sum())
    if higher + lower == 0:
        return 1.0
    alternative = {1: "greater", -1: "less", 0: "two-sided"}[int(np.sign(direction))]
    # beyond about 1,070 pairs all one way the exact p is below the smallest double: reported at that bound
    return ternary.floored(float(binomtest(higher, higher + lower, 0.5, alternative=alternative).pvalue))


def sign_test_mde(nonzero: int, total: int, alpha: float = 0.05, power: float = 0.8,
                  one_sided: bool = True) -> float | None:
    """The smallest separability (mean verdict) that the sign test over `total` pairs, `nonzero` of them with a
    non-zero verdict, detects with `power` at `alpha`: what "not significant" can mean there. Separability is
    (share +1) − (share −1), so at the observed share of ties it is (nonzero / total)·(2q − 1), q the share of
    +1 among the non-zero verdicts that the exact test finds with that power. None when even a unanimous
    sample could not reach `alpha`."""
    from scipy.optimize import brentq
    from scipy.stats import binom

    if nonzero < 1 or total < nonzero:
        return None
    tail = alpha if one_sided else alpha / 2
    # the fewest +1s the exact test calls significant (every count's tail at once: one call per count took
    # seconds at tens of thousands of pairs); none can be enough where even all of them is not
    reached = np.flatnonzero(binom.sf(np.arange(nonzero + 1) - 1, nonzero, 0.5) <= tail)
    if not len(reached):
        return None
    need = int(reached[0])

    def shortfall(q: float) -> float:
        return float(binom.sf(need - 1, nonzero, q)) - power

    # at q = ½ the chance of `need` or more is at most `tail`, below `power`; at q = 1 it is 1: one root between
    return nonzero / total * (2 * float(brentq(shortfall, 0.5, 1.0)) - 1)


def _adjusted(p_values: list[float | None], method: str) -> list[float | None]:
    from statsmodels.stats.multitest import multipletests

    present = [i for i, p in enumerate(p_values) if p is not None]
    adjusted: list[float | None] = [None] * len(p_values)
    if len(present) == 1:  # a family of one needs no adjustment
        adjusted[present[0]] = p_values[present[0]]
    elif present:
        # statsmodels' Holm ends with a full gc.collect(): over a large run's millions of live objects that
        # costs seconds a call. Frozen, they are outside the collection, which then sees only the call's own.
        # Within a run, whose phases froze what they keep (`release_freed_memory`), the heap is left as it is:
        # unfreezing would undo the phases' freeze, and freezing more would keep this phase's garbage cycles
        # until the run ends (at 100,000 pairs that raised the peak by 30 MB)
        outside_a_run = gc.get_freeze_count() == 0
        if outside_a_run:
            gc.freeze()
        try:
            values = multipletests([p_values[i] for i in present], method=method)[1]
        finally:
            if outside_a_run:
                gc.unfreeze()
        for i, value in zip(present, values, strict=True):
            adjusted[i] = float(value)
    return adjusted


def holm(p_values: list[float | None]) -> list[float | None]:
    """Holm's step-down adjustment over the p-values present (statsmodels' multipletests; family-wise error);
    None stays None."""
    return _adjusted(p_values, "holm")


def weighted_holm(p_values: list[float | None], weights: list[float]) -> list[float | None]:
    """Holm's step-down with weights (the weighted form in Holm 1979), None staying None: hypotheses are taken
    in order of p/w, and the one taken at a step is rejected when p ≤ α·w/W, W the weights of those not yet
    rejected. The adjusted p-value is the running maximum of p·W/w (capped at 1), so "adjusted ≤ α" is exactly that
    rejection. It holds the family-wise error at α for any weights fixed before the p-values are seen; with
    equal weights it is Holm's. Weights must be positive."""
    present = [i for i, p in enumerate(p_values) if p is not None]
    adjusted: list[float | None] = [None] * len(p_values)
    if not present:
        return adjusted
    p = np.array([p_values[i] for i in present], dtype=float)
    w = np.array([weights[i] for i in present], dtype=float)
    if (w <= 0).any():
        raise ValueError("weighted Holm: every weight must be positive")
    order = np.argsort(p / w, kind="stable")
    remaining = np.cumsum(w[order][::-1])[::-1]  # W at each step: this hypothesis' weight and all after it
    steps = np.minimum(1.0, np.maximum.accumulate(p[order] * remaining / w[order]))
    for k, value in zip(order, steps, strict=True):
        adjusted[present[k]] = float(value)
    return adjusted


def benjamini_hochberg(p_values: list[float | None]) -> list[float | None]:
    """Benjamini–Hochberg adjustment over the p-values present (statsmodels' multipletests; false discovery
    rate), for a grid of many cells where a few false ones among many true ones are tolerable; None stays None."""
    return _adjusted(p_values, "fdr_bh")


class FitFailed(ValueError):
    """A binomial GLM with no meaningful fit: the outcomes are separated, or the design is rank-deficient."""


# what fitting a GLM to degenerate data raises (statsmodels' own errors, and `FitFailed` for its warnings)
GLM_FAILURES = (FitFailed, np.linalg.LinAlgError, ValueError, OverflowError)


def binomial_glm(y: np.ndarray, design: np.ndarray, *, intercept: bool, **fit_options: object) -> Any:
    """statsmodels' binomial GLM of `y` (0, 1, or a share between) on `design`, with a column of ones first when
    `intercept`; `fit_options` go to its `fit` (a clustered covariance). Separation and a singular design raise
    `FitFailed` instead of warning beside a meaningless fit. The model is imported from its own module, not
    `statsmodels.api`, which pulls in pandas' plotting and time-series code: half a second of every run."""
    from statsmodels.genmod.families import Binomial
    from statsmodels.genmod.generalized_linear_model import GLM
    from statsmodels.tools.sm_exceptions import PerfectSeparationWarning, SingularMatrixWarning

    if intercept:
        design = np.column_stack([np.ones(len(y)), design])
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerfectSeparationWarning)
        warnings.simplefilter("error", SingularMatrixWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return GLM(y, design, family=Binomial()).fit(**fit_options)
        except (PerfectSeparationWarning, SingularMatrixWarning) as exc:
            reason = "separation" if isinstance(exc, PerfectSeparationWarning) else "a singular design"
            raise FitFailed(reason) from exc


def fit_failure(exc: BaseException) -> str:
    """What stopped a GLM fit (one of `GLM_FAILURES`), as a page says it."""
    return str(exc) if isinstance(exc, FitFailed) else type(exc).__name__


def length_covariate(chars_a: np.ndarray, chars_b: np.ndarray) -> np.ndarray:
    """The length control of every preference model here: the log-ratio of the two answers' lengths."""
    return np.asarray(np.log1p(np.asarray(chars_a, float)) - np.log1p(np.asarray(chars_b, float)))
