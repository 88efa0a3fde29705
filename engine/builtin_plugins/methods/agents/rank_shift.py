"""The shift that Wilcoxon's rank tests test, and its interval: the Hodges–Lehmann estimate with the interval
got by inverting the same test (Hollander, Wolfe & Chicken, "Nonparametric Statistical Methods", 3rd ed.,
§3.2 for paired values, §4.3 for two samples).

Why not a difference of means with a bootstrap interval: per-conversation counts are skewed, and at 6–20
conversations a percentile bootstrap of their mean difference covered 81–90%; and a mean answers a different
question from the signed-rank or rank-sum test printed beside it, so the interval could exclude 0 where the test
did not reject, or the other way. Here the estimate is the median of the Walsh averages (dᵢ + dⱼ)/2, i ≤ j, of
paired differences, or the median of all differences xᵢ − yⱼ of two samples; the interval runs from the k-th
smallest of them to the k-th largest, k the largest count with P(T ≤ k − 1) ≤ α/2 under the test's null
distribution (exact up to 50 values a side, the normal approximation above). Without ties, a shift is inside
the interval exactly when the test, run on the values moved by it, would not reject. The interval is closed, so on tied,
discrete values it is conservative.

The order statistics are found by counting, not by listing the n(n + 1)/2 averages (or m·n differences): a
bisection on the value, with the count of those at or below it taken from the sorted values, so 10,000
conversations need no 400 MB array."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache

import numpy as np
from scipy import stats as scipy_stats

__all__ = ["EXACT_UP_TO", "paired", "two_sample"]

EXACT_UP_TO = 50  # values a side: the null distribution is listed exactly up to here


def paired(x: np.ndarray, y: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """The Hodges–Lehmann shift of x over y, paired (the pseudo-median of x − y), with the interval that
    inverts Wilcoxon's signed-rank test: (estimate, low, high). The interval is NaN where even the widest
    one falls short of `level` (5 pairs or fewer at 95%)."""
    d = np.sort(np.asarray(x, dtype=float) - np.asarray(y, dtype=float))
    n = len(d)
    if not n:
        return math.nan, math.nan, math.nan
    total = n * (n + 1) // 2
    k = (_count_at_most(_signed_rank_cdf(n), level) if n <= EXACT_UP_TO
         else _normal_count(total, n * (n + 1) * (2 * n + 1) / 24, level))

    def at_most(t: float) -> int:  # Walsh sums dᵢ + dⱼ (i ≤ j) at most t
        ends = np.searchsorted(d, t - d, side="right")
        return int(np.maximum(ends - np.arange(n), 0).sum())

    def above(t: float) -> float:  # the smallest Walsh sum above t
        ends = np.maximum(np.searchsorted(d, t - d, side="right"), np.arange(n))
        inside = ends < n
        return float((d[inside] + d[ends[inside]]).min())

    def kth(k: int) -> float:
        return _kth(k, at_most, above, 2 * d[0], 2 * d[-1]) / 2

    return _estimate_and_interval(kth, total, k)


def two_sample(x: np.ndarray, y: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """The Hodges–Lehmann shift of x over y, two independent samples (the median of all xᵢ − yⱼ), with the
    interval that inverts the Wilcoxon–Mann–Whitney rank-sum test: (estimate, low, high)."""
    xs, ys = np.sort(np.asarray(x, dtype=float)), np.sort(np.asarray(y, dtype=float))
    m, n = len(xs), len(ys)
    if not m or not n:
        return math.nan, math.nan, math.nan
    total = m * n
    k = (_count_at_most(_rank_sum_cdf(min(m, n), max(m, n)), level) if max(m, n) <= EXACT_UP_TO
         else _normal_count(total, m * n * (m + n + 1) / 12, level))

    def at_most(t: float) -> int:  # differences xᵢ − yⱼ at most t: yⱼ ≥ xᵢ − t
        return int((n - np.searchsorted(ys, xs - t, side="left")).sum())

    def above(t: float) -> float:  # the smallest difference above t: the largest yⱼ below xᵢ − t
        below = np.searchsorted(ys, xs - t, side="left") - 1
        inside = below >= 0
        return float((xs[inside] - ys[below[inside]]).min())

    def kth(k: int) -> float:
        return _kth(k, at_most, above, xs[0] - ys[-1], xs[-1] - ys[0])

    return _estimate_and_interval(kth, total, k)


def _estimate_and_interval(kth: Callable[[int], float], total: int, k: int) -> tuple[float, float, float]:
    """The median of the `total` ordered values `kth` reads (1-based), and the interval from the k-th to the
    (total + 1 − k)-th."""
    middle = (kth((total + 1) // 2) + kth(total // 2 + 1)) / 2
    if k < 1:
        return middle, math.nan, math.nan
    return middle, kth(k), kth(total + 1 - k)


def _kth(k: int, at_most: Callable[[float], int], above: Callable[[float], float], low: float,
         high: float) -> float:
    """The k-th smallest (1-based) of values between `low` and `high` that `at_most` counts: bisect until no
    float lies between the two ends, with fewer than k values at or below `below` throughout, then the
    smallest value above it."""
    if at_most(low) >= k:
        return float(low)
    below = low
    while True:
        middle = below + (high - below) / 2
        if middle in (below, high):
            return above(below)
        if at_most(middle) >= k:
            high = middle
        else:
            below = middle


@cache
def _signed_rank_cdf(n: int) -> np.ndarray:
    """P(T⁺ ≤ t), t = 0 … n(n + 1)/2, for the signed-rank statistic of n values without ties or zeros: each
    rank joins the positive sum with probability ½."""
    pmf = np.ones(1)
    for rank in range(1, n + 1):
        grown = np.zeros(len(pmf) + rank)
        grown[:len(pmf)] += pmf / 2
        grown[rank:] += pmf / 2
        pmf = grown
    return np.cumsum(pmf)


@cache
def _rank_sum_cdf(m: int, n: int) -> np.ndarray:
    """P(U ≤ u), u = 0 … m·n, for the Mann–Whitney count of m values against n without ties: the recursion
    on which sample holds the largest value, p(u; i, j) = i/(i+j)·p(u − j; i − 1, j) + j/(i+j)·p(u; i, j − 1)."""
    row = [np.ones(1) for _ in range(n + 1)]  # i = 0: U is 0 whatever j
    for i in range(1, m + 1):
        new = [np.ones(1)]  # j = 0: U is 0
        for j in range(1, n + 1):
            pmf = np.zeros(i * j + 1)
            pmf[j:j + len(row[j])] += i / (i + j) * row[j]
            pmf[:len(new[j - 1])] += j / (i + j) * new[j - 1]
            new.append(pmf)
        row = new
    return np.cumsum(row[n])


def _count_at_most(cdf: np.ndarray, level: float) -> int:
    """How many values t of the statistic have P(T ≤ t) ≤ (1 − level)/2 (a hair of slack for rounding)."""
    return int(np.searchsorted(cdf, (1 - level) / 2 * (1 + 1e-12), side="right"))


def _normal_count(total: int, variance: float, level: float) -> int:
    """`_count_at_most` for a statistic centred on total/2 with this variance, from the normal approximation
    with a continuity correction: the t with t + ½ ≤ total/2 + σ·z₍₁₋ₗₑᵥₑₗ₎/₂."""
    edge = total / 2 + math.sqrt(variance) * float(scipy_stats.norm.ppf((1 - level) / 2)) - 0.5
    return max(0, math.floor(edge) + 1)
