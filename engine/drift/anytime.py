"""Anytime-valid tests of a vibe's shift, for `vibe monitor`: e-processes by betting, which may be looked at
after every batch, forever, without raising their error rate.

Each unit (a prompt, or a conversation) gives x ∈ [−1, 1]: head minus base as the panel reads it (−ν for a
prompt; the mean of −ν over a conversation's turns). The claim "the mean shift is above μ₀" is tested by a
gambler who starts with 1 and, before each unit, stakes a share λᵢ of their wealth on it:

    Kₙ(μ₀) = ∏ᵢ₌₁ⁿ (1 + λᵢ · (xᵢ − μ₀)),   0 ≤ λᵢ ≤ c / (1 + μ₀)

(and the mirror image, 1 + λᵢ · (μ₀ − xᵢ), for "below μ₀"). Where every unit's mean given the units before it
is at most μ₀, each factor has expectation at most 1 whatever λᵢ is, as long as λᵢ is chosen before xᵢ is
seen, so Kₙ is a nonnegative supermartingale and Ville's inequality bounds the chance that it EVER reaches 1/α
by α (Waudby-Smith & Ramdas 2024, "Estimating means of bounded random variables by betting", JRSS-B 86(1);
Ramdas et al. 2023, "Game-theoretic statistics and safe anytime-valid inference", Statistical Science 38(4)).
The cap c < 1 keeps every factor above 1 − c: one unit can never ruin the gambler.

The stake is the approximate growth-rate-optimal bet of Waudby-Smith & Ramdas (their aGRAPA),

    λᵢ = clip((μ̂ᵢ − μ₀) / (σ̂ᵢ² + (μ̂ᵢ − μ₀)²), 0, c / (1 + μ₀)),

with μ̂ᵢ and σ̂ᵢ² the mean and variance of the last `WINDOW` units before unit i, shrunk towards "no shift"
by one pseudo-unit of mean 0 and variance 1. The window (rather than every unit so far) lets the bet follow a
shift that starts after a long quiet stretch: the gambler stops staking while the data sit below μ₀, so a
model that moves on day 10 is not judged by wealth lost on days 1 to 9.

Units are bet on in a fixed order: the batches in the order they were looked at, and within a batch its units
sorted by id, so the same batches give the same answer however often, and in whatever sittings, they are read.

The interval beside the running shift is a confidence sequence for the average of the units' means so far,
which is what a page over time shows: the shift since the baseline, averaged over every unit seen, whether the
model moved or not. Sₜ = Σ (xᵢ − E[xᵢ | the units before]) is a martingale whose steps lie in a range of 2, so
each is sub-Gaussian with variance factor 1 (Hoeffding); mixing exp(λSₜ − λ²t/2) over λ ~ N(0, 1/ρ) gives a
nonnegative martingale √(ρ/(t + ρ)) · exp(Sₜ² / (2(t + ρ))), and Ville's inequality makes
|Sₜ| < √((t + ρ) · log((t + ρ) / (ρα²))) hold at every t at once with probability 1 − α (Howard, Ramdas,
McAuliffe & Sekhon 2021, "Time-uniform, nonparametric, nonasymptotic confidence sequences", Ann. Statist.
49(2), the normal mixture). Dividing by t, the interval is the running mean ± that bound / t: never empty,
however the mean moved. (The set of constant means that neither e-process above rejects, which it replaces,
was empty in 39% of monitors 10 looks after a move: no constant mean fits a stream that moved.) ρ makes the
bound tightest at `TIGHTEST_AT` units.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WINDOW = 150  # units the stake is estimated from: three daily batches of 50 (benchmarks/monitor.py)
CAP = 0.5  # the largest share of wealth staked on one unit, as a share of the most that keeps wealth ≥ 0
TIGHTEST_AT = 500  # units where the confidence sequence is narrowest: ten daily batches of 50


def stakes(x: np.ndarray, null: np.ndarray | float, side: int) -> np.ndarray:
    """λᵢ for every unit of `x` (last axis), staking on the mean being above `null` (side +1) or below it
    (side −1); `null` broadcasts against x[..., :1] (a column of nulls gives one row of stakes per null)."""
    n = x.shape[-1]
    zero = np.zeros((*x.shape[:-1], 1))
    total = np.concatenate([zero, np.cumsum(x, axis=-1)], axis=-1)
    squares = np.concatenate([zero, np.cumsum(x * x, axis=-1)], axis=-1)
    ends = np.arange(n)  # unit i sees units [i − WINDOW, i)
    starts = np.maximum(ends - WINDOW, 0)
    seen = (ends - starts).astype(float)
    s, q = total[..., ends] - total[..., starts], squares[..., ends] - squares[..., starts]
    mean = s / (seen + 1)  # the pseudo-unit adds 0 to the sum and 1 to the count
    variance = (1 + q - (seen + 1) * mean * mean) / (seen + 1)
    edge = side * (mean - null)
    lam = edge / (variance + edge * edge)
    room = 1 + side * np.asarray(null, dtype=float)  # the most a unit can fall short of the null
    cap = np.divide(CAP, room, out=np.full_like(room, np.inf), where=room > 0)
    clipped: np.ndarray = np.clip(lam, 0.0, cap)
    return clipped


def log_wealth(x: np.ndarray, null: np.ndarray | float, side: int) -> np.ndarray:
    """log Kᵢ after every unit of `x` (last axis) for the claim "the mean is beyond `null` on `side`" (+1:
    above, −1: below): the e-process of the null "at most `null`" (side +1) or "at least" (side −1)."""
    lam = stakes(x, null, side)
    return np.cumsum(np.log1p(lam * side * (x - null)), axis=-1)


@dataclass(frozen=True)
class Look:
    """One vibe at one look: what the batches so far say, every figure anytime-valid but the batch's own mean."""

    units: int  # units with a verdict so far
    batch_units: int  # of which in this look's batch
    batch_mean: float | None  # this batch's mean shift (no interval: one look's figure)
    running_mean: float | None  # the mean shift over every batch so far
    low: float  # the confidence sequence of the running shift at this look, at the family's level
    high: float
    e_above: float  # e-value of "shift > +margin"
    e_below: float  # e-value of "shift < −margin"
    e_within: float | None  # e-value of "|shift| < margin" (the smaller of its two sides); None without a margin


def track(batches: list[np.ndarray], margin: float, threshold: float) -> list[Look]:
    """Every look's figures for one vibe from its batches of unit values (NaN: no verdict, left out), in the
    order looked at. `threshold`: the e-value a claim must reach (claims in the family / α); the confidence
    sequence is at the same level (`running_interval`)."""
    kept = [b[np.isfinite(b)] for b in batches]
    x = np.concatenate(kept) if kept else np.zeros(0)
    ends = np.cumsum([len(b) for b in kept]) - 1
    nulls = np.array([margin, -margin, margin, -margin])[:, None]
    sides = (1, -1, -1, 1)  # above +m, below −m, and within's two sides: below +m, above −m
    wealth = np.vstack([log_wealth(x, nulls[k], side) for k, side in enumerate(sides)]) if len(x) else None
    low, high = running_interval(x, 1 / threshold)
    out = []
    for k, batch in enumerate(kept):
        end = int(ends[k])
        if end < 0 or wealth is None:  # no unit with a verdict yet
            out.append(Look(0, 0, None, None, -1.0, 1.0, 1.0, 1.0, None if margin == 0 else 1.0))
            continue
        e = np.exp(wealth[:, end])
        out.append(Look(end + 1, len(batch), float(batch.mean()) if len(batch) else None,
                        float(x[:end + 1].mean()), float(low[end]), float(high[end]), float(e[0]), float(e[1]),
                        None if margin == 0 else float(min(e[2], e[3]))))
    return out


def running_interval(x: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """After every unit of `x` (values in [−1, 1]), the confidence sequence for the average of the units' means
    so far: the running mean ± √((t + ρ) · log((t + ρ) / (ρα²))) / t, within [−1, 1] (the module docstring)."""
    t = np.arange(1, len(x) + 1, dtype=float)
    rho = _rho(alpha)
    half = np.sqrt((t + rho) * np.log((t + rho) / (rho * alpha**2))) / t
    mean = np.cumsum(x) / t
    return np.maximum(mean - half, -1.0), np.minimum(mean + half, 1.0)


def _rho(alpha: float) -> float:
    """The mixture's ρ that makes the bound narrowest at `TIGHTEST_AT` units (a search over a fixed grid)."""
    rho = np.geomspace(1.0, 1e5, 2001)
    bound = (TIGHTEST_AT + rho) * np.log((TIGHTEST_AT + rho) / (rho * alpha**2))
    return float(rho[np.argmin(bound)])
