"""The agents method's shift and interval (`rank_shift`): hand-computed cases, the brute-force listing of
every Walsh average or difference, and the interval's ends where scipy's exact tests start to reject."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from engine.builtin_plugins.methods.agents import rank_shift


def test_six_paired_differences_by_hand() -> None:
    # differences 1…6: 21 Walsh averages with median 3.5; P(T⁺ = 0) = 1/64 ≤ 0.025 < P(T⁺ ≤ 1) = 2/64, so k = 1
    assert rank_shift.paired(np.arange(1.0, 7.0), np.zeros(6)) == (3.5, 1.0, 6.0)


def test_six_against_six_by_hand() -> None:
    # 10…15 against 0…5: differences 5…15, d = 5 + t held 6 − |t − 5| times; P(U ≤ 5) = 19/924 ≤ 0.025 <
    # P(U ≤ 6) = 30/924, so k = 6: the 6th smallest difference (7) and the 31st (13)
    assert rank_shift.two_sample(np.arange(10.0, 16.0), np.arange(6.0)) == (10.0, 7.0, 13.0)


def test_too_few_values_give_no_interval() -> None:
    estimate, low, high = rank_shift.paired(np.arange(5.0), np.zeros(5))  # P(T⁺ = 0) = 1/32 > 0.025
    assert estimate == 2.0 and np.isnan(low) and np.isnan(high)


@pytest.mark.parametrize("seed", range(40))
def test_order_statistics_match_the_listing(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, m = rng.integers(1, 16, size=2)
    draw = (lambda k: rng.integers(0, 4, k).astype(float)) if seed % 2 else (lambda k: rng.normal(size=k))
    x, y, other = draw(n), draw(n), draw(m)
    d = x - y
    walsh = np.sort([(d[i] + d[j]) / 2 for i in range(n) for j in range(i, n)])
    estimate, low, high = rank_shift.paired(x, y)
    k = rank_shift._count_at_most(rank_shift._signed_rank_cdf(int(n)), 0.95)
    assert estimate == pytest.approx(np.median(walsh), abs=1e-12)
    if k:
        assert (low, high) == (walsh[k - 1], walsh[-k])
    differences = np.sort(np.subtract.outer(x, other).ravel())
    estimate, low, high = rank_shift.two_sample(x, other)
    k = rank_shift._count_at_most(rank_shift._rank_sum_cdf(int(min(n, m)), int(max(n, m))), 0.95)
    assert estimate == pytest.approx(np.median(differences), abs=1e-12)
    if k:
        assert (low, high) == (differences[k - 1], differences[-k])


@pytest.mark.parametrize("seed", range(20))
def test_the_interval_is_where_the_exact_test_does_not_reject(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(6, 30))
    x, y = rng.normal(0.5, 1, n), rng.normal(0, 1, n)
    _, low, high = rank_shift.paired(x, y)
    for end, outward in ((low, -1), (high, 1)):
        for step, rejects in ((outward * 1e-9, True), (-outward * 1e-9, False)):
            p = scipy_stats.wilcoxon(x - y - (end + step), method="exact").pvalue
            assert bool(p <= 0.05) == rejects
    y = rng.normal(0, 2, int(rng.integers(6, 30)))
    _, low, high = rank_shift.two_sample(x, y)
    for end, outward in ((low, -1), (high, 1)):
        for step, rejects in ((outward * 1e-9, True), (-outward * 1e-9, False)):
            p = scipy_stats.mannwhitneyu(x - (end + step), y, method="exact").pvalue
            assert bool(p <= 0.05) == rejects


def test_the_normal_approximation_takes_over_near_the_exact_count() -> None:
    exact = rank_shift._count_at_most(rank_shift._signed_rank_cdf(50), 0.95)
    assert rank_shift._normal_count(1275, 50 * 51 * 101 / 24, 0.95) in (exact - 1, exact)
    exact = rank_shift._count_at_most(rank_shift._rank_sum_cdf(50, 50), 0.95)
    assert rank_shift._normal_count(2500, 2500 * 101 / 12, 0.95) in (exact - 1, exact)


def test_many_conversations_need_no_listing() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.poisson(3, 20_000).astype(float), rng.poisson(2, 20_000).astype(float)
    estimate, low, high = rank_shift.two_sample(x, y)
    assert low <= estimate <= high and estimate == 1.0  # the median of Poisson(3) − Poisson(2) draws
