"""How far one vibe moved between two runs of the same model slot, and whether that passes a gate.

The unit is the prompt: each shared prompt's two answers (base's and head's) are one pair, judged by the
panel once, so its verdict ν (−1…+1, +1 when base sits higher on the vibe) is already a paired difference.
The shift is head minus base: −mean ν. Estimator: the mean over prompts with a t-interval (prompts are the
independent units; ν is bounded, so the t-interval is close to exact at the sizes a drift check uses).

Three tests per vibe, each with its own question:
- *moved?* two-sided t-test of shift = 0; across the vibes of one comparison, Holm.
- *beyond the margin?* (a gated vibe) one-sided t-test of |shift| ≤ margin against |shift| > margin, on the
  side the shift lies; across the gated vibes, Holm. The gate fails when it holds.
- *within the margin?* TOST: two one-sided t-tests of shift ≤ −margin and shift ≥ +margin, p the larger;
  equivalence when p < α, the same as the 90% interval lying inside ±margin. Every gate must pass its own
  test (an intersection–union test, so no correction is needed for passing all of them).
Neither: inconclusive, with the number of prompts that would give the deciding test 80% power if the shift
and its spread were as observed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as scipy_stats

from engine import stats

ALPHA = 0.05
POWER = 0.8


@dataclass(frozen=True)
class Shift:
    """One vibe's move between base and head on the shared prompts."""

    vibe: str
    n: int  # prompts with a verdict
    shift: float  # head minus base, in verdict units (−1…+1): mean of −ν
    low: float  # 95% t-interval of the shift
    high: float
    p_moved: float | None  # two-sided t-test of no shift (None: fewer than two prompts)
    p_moved_adjusted: float | None = None  # Holm over the comparison's vibes
    margin: float | None = None  # the gate's max_shift, when the vibe is gated
    p_beyond: float | None = None  # one-sided test of |shift| > margin
    p_beyond_adjusted: float | None = None  # Holm over the gated vibes
    p_equivalent: float | None = None  # TOST against ±margin
    verdict: str = ""  # gated vibes: fail | pass | inconclusive
    prompts_needed: int | None = None  # inconclusive: the prompts that would decide it (80% power)
    detectable: float | None = None  # the |shift| the moved test detects with 80% power at this n (α = 0.05)


def shift_of(vibe: str, nu: np.ndarray, margin: float | None = None) -> Shift:
    """The shift of `vibe` from its verdicts ν on the shared prompts (NaN: no verdict, left out), with the
    margin tests when the vibe is gated. Holm and the gate's verdict come later (`gate`), over many vibes."""
    values = -np.asarray(nu, dtype=float)
    values = values[np.isfinite(values)]
    n = len(values)
    if n < 2:
        mean = float(values.mean()) if n else 0.0
        return Shift(vibe, n, mean, float("nan"), float("nan"), None, margin=margin)
    mean, sd = float(values.mean()), float(values.std(ddof=1))
    low, high = stats.mean_interval(values.tolist())
    se = sd / math.sqrt(n)
    t = scipy_stats.t(df=n - 1)
    p_moved = 1.0 if se == 0 and mean == 0 else (0.0 if se == 0 else float(2 * t.sf(abs(mean) / se)))
    detectable = float((scipy_stats.norm.ppf(1 - ALPHA / 2) + scipy_stats.norm.ppf(POWER)) * se)
    out = Shift(vibe, n, mean, low, high, p_moved, margin=margin, detectable=detectable)
    if margin is None:
        return out
    if se == 0:
        beyond, equivalent = float(abs(mean) <= margin), float(abs(mean) >= margin)
    else:
        beyond = float(t.sf((abs(mean) - margin) / se))
        equivalent = max(float(t.sf((mean + margin) / se)), float(t.cdf((mean - margin) / se)))
    return replace(out, p_beyond=beyond, p_equivalent=equivalent)


def gate(shifts: list[Shift]) -> list[Shift]:
    """The comparison's shifts with Holm applied (moved: over every vibe; beyond: over the gated ones) and each
    gated vibe's verdict: fail when its shift is beyond the margin (Holm-adjusted p < α), pass when TOST shows
    it within the margin, else inconclusive with the prompts that would decide it."""
    moved = stats.holm([s.p_moved for s in shifts])
    gated = [i for i, s in enumerate(shifts) if s.margin is not None]
    beyond = dict(zip(gated, stats.holm([shifts[i].p_beyond for i in gated]), strict=True))
    out = []
    for i, s in enumerate(shifts):
        s = replace(s, p_moved_adjusted=moved[i])
        if s.margin is not None:
            adjusted = beyond[i]
            s = replace(s, p_beyond_adjusted=adjusted)
            if adjusted is not None and adjusted < ALPHA:
                s = replace(s, verdict="fail")
            elif s.p_equivalent is not None and s.p_equivalent < ALPHA:
                s = replace(s, verdict="pass")
            else:
                s = replace(s, verdict="inconclusive", prompts_needed=prompts_needed(s))
        out.append(s)
    return out


def prompts_needed(s: Shift) -> int | None:
    """Prompts for 80% power in the test that would decide `s`, if its shift and spread hold: TOST when the
    shift lies inside the margin, the beyond-margin test when outside. None when the shift sits on the margin
    (no sample size decides it) or nothing varies."""
    if s.margin is None or s.n < 2 or not math.isfinite(s.low):
        return None
    sd = (s.high - s.low) / (2 * scipy_stats.t(df=s.n - 1).ppf(0.975)) * math.sqrt(s.n)
    gap = s.margin - abs(s.shift)
    if sd == 0 or gap == 0:
        return None
    z_alpha = scipy_stats.norm.ppf(1 - ALPHA)
    z_power = scipy_stats.norm.ppf(1 - (1 - POWER) / 2) if gap > 0 else scipy_stats.norm.ppf(POWER)
    return max(s.n, math.ceil(float((z_alpha + z_power) * sd / abs(gap)) ** 2))
