"""Tests and intervals for the mean of ternary verdicts: one verdict per unit, +1, −1 or 0 (tied), and their
mean δ = P(+1) − P(−1). `vibe compare` tests a shift with them (+1: the head sits higher); a separability is the
same quantity over pairs (+1: model A sits higher).

δ is a difference of two proportions measured on the same prompts: the two discordant cells of a paired 2×2
table, n₊ and n₋ of n. Tango (1998) gives its score statistic for δ = δ₀,

    Z(δ₀) = (n₊ − n₋ − n·δ₀) / √(n · (2·q̃ + δ₀·(1 − δ₀))),

whose variance is taken at q̃, the maximum-likelihood P(−1) under δ = δ₀, not at the sample. A t statistic's
sample spread is smallest exactly when few prompts moved (one +1 among tied prompts), so at a true shift equal
to the margin it certified "within the margin" in a third of comparisons at 10 prompts and printed p = 0 for
samples without spread.

Every p-value here is exact and unconditional: the largest probability, over the nuisance P(−1) on a fine
grid of the values δ = δ₀ allows, that the trinomial counts (n₊, n₋) give a statistic at least as extreme as
the one observed. It is never 0, and it holds its level at every n, including the one-directional shifts
(P(−1) = 0) on which the normal approximation is too liberal (5.8% at 100 prompts). Above `EXACT_UP_TO`
units the normal approximation of the same statistic is used, where the trinomial is close to normal. Intervals
invert the same statistic with normal quantiles (Tango's score interval).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import optimize
from scipy import stats as scipy_stats
from scipy.special import gammaln, xlogy

EXACT_UP_TO = 800  # units; a table of every outcome costs n²/2 × NUISANCE_GRID evaluations (1–3 s at 800 here)
NUISANCE_GRID = 201


def counts(verdicts: np.ndarray) -> tuple[int, int, int]:
    """(n₊, n₋, n) of ternary verdicts, NaN (no verdict) left out; each must be −1, 0 or +1."""
    values = np.asarray(verdicts, dtype=float)
    values = values[np.isfinite(values)]
    if not np.isin(values, (-1.0, 0.0, 1.0)).all():
        raise ValueError("ternary verdicts must be -1, 0 or +1")
    return int((values > 0).sum()), int((values < 0).sum()), len(values)


def restricted_minus(plus: np.ndarray | float, minus: np.ndarray | float, n: int, delta0: float) -> np.ndarray:
    """q̃: the maximum-likelihood P(−1) given δ = δ₀ (the root in [0, 1] of Tango's quadratic)."""
    a = 2.0 * n
    b = -np.asarray(plus, float) - minus + (2.0 * n - plus + minus) * delta0
    c = -np.asarray(minus, float) * delta0 * (1 - delta0)
    return np.asarray((np.sqrt(np.maximum(b * b - 4 * a * c, 0.0)) - b) / (2 * a))


def score(plus: np.ndarray | float, minus: np.ndarray | float, n: int, delta0: float) -> np.ndarray:
    """Tango's Z(δ₀) (vectorised over outcomes); 0 where its variance is 0 (no prompt moved and δ₀ = 0)."""
    q = restricted_minus(plus, minus, n, delta0)
    variance = n * (2 * q + delta0 * (1 - delta0))
    diff = np.asarray(plus, float) - minus - n * delta0
    return np.divide(diff, np.sqrt(variance), out=np.zeros_like(diff), where=variance > 0)


@lru_cache(maxsize=8)  # ≤ 10 MB a table at 800 prompts; a comparison reads two per margin and n
def _exact_tails(n: int, delta0: float) -> tuple[np.ndarray, np.ndarray]:
    """For every outcome (n₊, n₋) of n prompts, the exact unconditional p-values of Z(δ₀): lower tail
    sup P(Z ≤ z) and upper tail sup P(Z ≥ z), each an (n+1) × (n+1) array indexed [n₊, n₋]."""
    plus, minus = (a.ravel() for a in np.indices((n + 1, n + 1)))
    possible = plus + minus <= n
    plus, minus = plus[possible], minus[possible]
    rest = n - plus - minus
    z = np.round(score(plus, minus, n, delta0), 10)  # equal statistics compare equal
    order = np.argsort(z, kind="stable")
    ranked = z[order]
    last_at_most = np.searchsorted(ranked, ranked, side="right") - 1  # the last outcome with Z ≤ this one's
    first_at_least = np.searchsorted(ranked, ranked, side="left")
    log_ways = (gammaln(n + 1) - gammaln(plus + 1) - gammaln(minus + 1) - gammaln(rest + 1))[order]
    plus, minus, rest = plus[order], minus[order], rest[order]
    lower, upper = np.zeros(len(z)), np.zeros(len(z))
    for q in np.linspace(max(0.0, -delta0), (1 - delta0) / 2, NUISANCE_GRID):
        p_plus, p_rest = q + delta0, 1 - 2 * q - delta0
        prob = np.exp(log_ways + xlogy(plus, p_plus) + xlogy(minus, q) + xlogy(rest, max(p_rest, 0.0)))
        # each tail summed from its own end: the upper one as 1 − cdf cancels to 0 below about 1e-16
        np.maximum(lower, np.cumsum(prob)[last_at_most], out=lower)
        np.maximum(upper, np.cumsum(prob[::-1])[::-1][first_at_least], out=upper)
    tables = []
    for tail in (lower, upper):
        table = np.full((n + 1, n + 1), np.nan)
        table[plus, minus] = np.minimum(tail, 1.0)
        tables.append(table)
    return tables[0], tables[1]


def p_below(plus: int, minus: int, n: int, delta0: float) -> float:
    """p-value of δ < δ₀ against δ ≥ δ₀ (the statistic's lower tail)."""
    if n <= EXACT_UP_TO:
        return floored(float(_exact_tails(n, delta0)[0][plus, minus]))
    return floored(float(scipy_stats.norm.cdf(score(plus, minus, n, delta0))))


def p_above(plus: int, minus: int, n: int, delta0: float) -> float:
    """p-value of δ > δ₀ against δ ≤ δ₀ (the statistic's upper tail)."""
    if n <= EXACT_UP_TO:
        return floored(float(_exact_tails(n, delta0)[1][plus, minus]))
    return floored(float(scipy_stats.norm.sf(score(plus, minus, n, delta0))))


P_FLOOR = float(np.finfo(float).tiny)  # 2.2e-308, the smallest normal double


def floored(p: float) -> float:
    """A p-value no smaller than the smallest normal double: one too small for a float is reported at that bound,
    which is still a valid (larger) p-value, never as 0, which finite data cannot give."""
    return max(p, P_FLOOR)


def interval(plus: int, minus: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Tango's score interval: the δ₀ whose two-sided score test does not reject at 1 − `level` (Z decreases
    in δ₀, so each end is one root); NaN below one prompt."""
    if n < 1:
        return float("nan"), float("nan")
    z = float(scipy_stats.norm.ppf(0.5 + level / 2))
    edge = 1 - 1e-12

    def end(target: float, side: float) -> float:
        def f(d0: float) -> float:
            return float(score(plus, minus, n, d0)) - target
        if f(side * edge) * side >= 0:  # even the extreme of the range is not rejected
            return side
        return float(optimize.brentq(f, -edge, edge, xtol=1e-10))

    return end(z, -1.0), end(-z, 1.0)


def null_variance(p_plus: float, p_minus: float, delta0: float) -> float:
    """A verdict's variance under δ = δ₀ when the proportions observed are p₊ and p₋: the variance at the
    margin that a sample size for the score test needs."""
    return float(2 * restricted_minus(p_plus, p_minus, 1, delta0) + delta0 * (1 - delta0))
