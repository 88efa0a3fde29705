"""How far one vibe moved between two runs of the same model slot, and whether that passes a gate.

The unit is the prompt: each shared prompt's two answers (base's and head's) are one pair, judged by the
panel once, so its verdict ν (−1, 0 or +1; +1 when base sits higher) is already a paired difference. The
shift is head minus base, δ = P(head higher) − P(base higher), estimated by −mean ν over the prompts.

Three tests per vibe, each with its own question (`engine.ternary` for the statistic):
- *moved?* the exact two-sided sign test over the prompts that moved (VibeCheck's test); Holm over the vibes of
  one model slot's table.
- *beyond the margin?* (a gated vibe) Tango's score test of |δ| ≤ margin against |δ| > margin, both sides
  tested with exact unconditional p-values and the smaller doubled (`beyond_either_side`); Holm over every
  (model slot, gated vibe) of the comparison. The gate fails when it holds.
- *within the margin?* TOST with the same statistic: δ ≥ +margin and δ ≤ −margin each rejected, p the larger
  (an intersection–union test, so passing every gate needs no correction).
Neither: inconclusive, with the prompts that would give the deciding test 80% power at the level it faces if
the observed shift and proportions held. The interval is Tango's 95% score interval.

Turns of conversations are not independent prompts: there the unit is the conversation, whose shift is the
mean of −ν over its turns (no longer −1, 0 or +1). The shift is the mean over conversations with the betting
interval (`engine.betting`: the t-interval it replaced covered 42–67% at 5 conversations when the shift sat in a
few conversations only, and collapsed to [0, 0] on samples of conversations that all agreed);
moved is the exact sign test over the conversations' means; beyond and within the margin are one-sided t-tests
of that mean against the margin (TOST for within), each conversation one observation, on Hall's skew-corrected
statistic (`stats.skew_corrected_t`): means of a few ternary verdicts are skewed, and the plain t-test then
failed more than 5% of gates at exactly the margin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as scipy_stats

from engine import stats, ternary

ALPHA = 0.05
POWER = 0.8


@dataclass(frozen=True)
class Shift:
    """One vibe's move between base and head on the shared prompts."""

    vibe: str
    n: int  # prompts with a verdict
    shift: float  # head minus base, in verdict units (−1…+1): mean of −ν
    low: float  # 95% score interval of the shift (Tango)
    high: float
    p_moved: float | None  # exact two-sided sign test of no shift (None: no prompt)
    p_moved_adjusted: float | None = None  # Holm over the slot's vibes
    margin: float | None = None  # the gate's max_shift, when the vibe is gated
    p_beyond: float | None = None  # score test of |shift| > margin, exact unconditional
    p_beyond_adjusted: float | None = None  # Holm over the comparison's gated vibes
    p_equivalent: float | None = None  # TOST against ±margin, same statistic
    verdict: str = ""  # gated vibes: fail | pass | inconclusive
    prompts_needed: int | None = None  # inconclusive: the prompts that would decide it (80% power)
    detectable: float | None = None  # the |shift| the moved test detects with 80% power at Holm's first step
    higher: int = 0  # prompts on which the head sits higher (verdict −1)
    lower: int = 0  # prompts on which the base sits higher
    metric: str | None = None  # a metric vibe: its metric's own paired difference, which does not discretize
    metric_difference: float | None = None  # mean over prompts of head's value − base's value
    metric_low: float | None = None  # its 95% t-interval (prompts are the units)
    metric_high: float | None = None
    unit: str = "prompts"  # what n counts: prompts, or conversations (each the mean over its turns)
    unit_sd: float | None = None  # conversations: the SD of their mean shifts (the t-tests' and power's)
    # a rate's vibe (lists per line, hedges per 100 words): the mean over units of head's count less base's
    # (`metrics.occurrences`), and the exact two-sided sign test of those differences
    count_difference: float | None = None
    p_count: float | None = None

    @property
    def with_length(self) -> bool:
        """The vibe is a rate whose count did not move (its sign test at 5% finds no unit whose answers gained
        or lost what it counts more often than the other way): where the rate moved, it moved because the
        answers' length did, as when an opener and a closer are all a change adds."""
        return self.p_count is not None and self.p_count >= ALPHA

    @property
    def tied(self) -> float:
        """The share of prompts the panel tied: what a pass cannot speak for."""
        return 1 - (self.higher + self.lower) / self.n if self.n else float("nan")

    @property
    def undecidable(self) -> str:
        """Why an inconclusive gate has no prompts_needed ("" when it has one)."""
        if self.prompts_needed is not None or self.margin is None:
            return ""
        if self.unit == "conversations" and self.n >= 2 and not self.unit_sd:
            return "every conversation moved by the same amount: no t-test, and no count of conversations, decides it"
        if self.n < 2:
            return f"{self.n} {self.unit if self.n != 1 else self.unit[:-1]}: too few for any test"
        return "the shift sits on the margin itself: no sample size decides it"


def shift_of(vibe: str, nu: np.ndarray, margin: float | None = None,
             clusters: list[str] | None = None) -> Shift:
    """The shift of `vibe` from its verdicts ν on the shared prompts (NaN: no verdict, left out), with the
    margin tests when the vibe is gated. Holm and the gate's verdict come later (`gate`), over many vibes.
    `clusters` (each prompt's conversation, where the prompts are its turns): the conversation is the unit."""
    if clusters is not None and len(set(clusters)) < len(clusters):
        return _conversation_shift(vibe, nu, margin, clusters)
    higher, lower, n = ternary.counts(-np.asarray(nu, dtype=float))
    shift = (higher - lower) / n if n else 0.0
    low, high = ternary.interval(higher, lower, n)
    p_moved = stats.sign_test(np.r_[np.ones(higher), -np.ones(lower)]) if n else None
    out = Shift(vibe, n, shift, low, high, p_moved, margin=margin, higher=higher, lower=lower)
    if margin is None or n == 0:
        return out
    beyond = beyond_either_side(ternary.p_above(higher, lower, n, margin),
                                ternary.p_below(higher, lower, n, -margin))
    equivalent = max(ternary.p_below(higher, lower, n, margin), ternary.p_above(higher, lower, n, -margin))
    return replace(out, p_beyond=beyond, p_equivalent=equivalent)


def _conversation_shift(vibe: str, nu: np.ndarray, margin: float | None, clusters: list[str]) -> Shift:
    """`shift_of` over conversations: each one's mean of −ν over its turns with a verdict is one observation."""
    judged = ~np.isnan(np.asarray(nu, dtype=float))
    means = np.array(stats.cluster_means((-np.asarray(nu, dtype=float)[judged]).tolist(),
                                         [c for c, ok in zip(clusters, judged, strict=True) if ok]))
    n = len(means)
    shift = float(means.mean()) if n else 0.0
    low, high = stats.verdict_interval(means)  # never [0, 0] on conversations that all agree, as a t-interval was
    sd = float(means.std(ddof=1)) if n > 1 else None
    out = Shift(vibe, n, shift, low, high, stats.sign_test(means) if n else None,
                margin=margin, higher=int((means > 0).sum()), lower=int((means < 0).sum()), unit="conversations",
                unit_sd=sd)
    if margin is None or not sd:  # below two conversations, or all alike: no t-test exists
        return out
    t = scipy_stats.t(n - 1)
    above, below = stats.skew_corrected_t(means, margin), stats.skew_corrected_t(means, -margin)
    beyond = beyond_either_side(float(t.sf(above)), float(t.cdf(below)))
    equivalent = max(float(t.cdf(above)), float(t.sf(below)))
    return replace(out, p_beyond=beyond, p_equivalent=equivalent)


def beyond_either_side(above: float, below: float) -> float:
    """The p-value of "beyond the margin on either side" from the two one-sided tests' (Bonferroni: twice the
    smaller). Testing only the side the shift lies on at the full level let the data pick the side: at a shift
    exactly on the margin that failed 5.9% of gates at 12 prompts (margin 0.05), 6.05% over conversations."""
    return min(1.0, 2 * min(above, below))


def with_metric(s: Shift, metric: str, base: list[str], head: list[str], clusters: list[str] | None = None) -> Shift:
    """`s` with the metric's paired difference, head − base, over the same prompts' answers; for a rate, also
    the difference of what it counts, tested over the units (a conversation's turns averaged into one)."""
    from engine.judges.metrics import measure, occurrences

    differences = [measure(metric, h) - measure(metric, b) for b, h in zip(base, head, strict=True)]
    low, high = stats.mean_interval(differences) if differences else (float("nan"), float("nan"))
    out = replace(s, metric=metric, metric_difference=float(np.mean(differences)) if differences else None,
                  metric_low=low, metric_high=high)
    counted = [(occurrences(metric, h), occurrences(metric, b)) for b, h in zip(base, head, strict=True)]
    if not counted or counted[0][0] is None:
        return out
    gained = [float(h or 0) - float(b or 0) for h, b in counted]
    units = gained if clusters is None else stats.cluster_means(gained, clusters)
    return replace(out, count_difference=float(np.mean(units)), p_count=stats.sign_test(np.sign(units)))


def gate(slots: list[list[Shift]]) -> list[list[Shift]]:
    """Each model slot's shifts with Holm applied (moved: over the slot's vibes; beyond the margin: over every
    gated vibe of every slot, one family for the comparison) and each gated vibe's verdict: fail when its shift
    is beyond the margin (Holm-adjusted p < α), pass when TOST shows it within, else inconclusive with the
    prompts that would decide it."""
    gated = [(i, j) for i, shifts in enumerate(slots) for j, s in enumerate(shifts) if s.margin is not None]
    beyond_p = [slots[i][j].p_beyond for i, j in gated]
    beyond = dict(zip(gated, stats.holm(beyond_p), strict=True))
    steps = dict(zip(gated, _holm_steps(beyond_p), strict=True))
    out = []
    for i, shifts in enumerate(slots):
        moved = stats.holm([s.p_moved for s in shifts])
        family = sum(s.p_moved is not None for s in shifts)
        checked = []
        for j, s in enumerate(shifts):
            s = replace(s, p_moved_adjusted=moved[j], detectable=_detectable(s, ALPHA / max(family, 1)))
            if s.margin is not None:
                s = replace(s, p_beyond_adjusted=beyond[(i, j)])
                if s.p_beyond_adjusted is not None and s.p_beyond_adjusted < ALPHA:
                    s = replace(s, verdict="fail")
                elif s.p_equivalent is not None and s.p_equivalent < ALPHA:
                    s = replace(s, verdict="pass")
                else:
                    s = replace(s, verdict="inconclusive", prompts_needed=prompts_needed(s, steps[(i, j)]))
            checked.append(s)
        out.append(checked)
    return out


def _holm_steps(p_values: list[float | None]) -> list[float]:
    """The level Holm compares each p-value with: α/(m − r + 1) for the r-th smallest of m."""
    present = sorted((p, k) for k, p in enumerate(p_values) if p is not None)
    levels = [ALPHA] * len(p_values)
    for rank, (_, k) in enumerate(present):
        levels[k] = ALPHA / (len(present) - rank)
    return levels


def _detectable(s: Shift, alpha: float) -> float | None:
    """The |shift| the two-sided sign test detects with 80% power at `alpha`, at the observed share of ties
    (None when no prompt moved: then nothing says how many would, and over conversations, whose means are not
    −1, 0 or +1, where that formula does not hold)."""
    if s.unit == "conversations":
        return None
    return stats.sign_test_mde(s.higher + s.lower, s.n, alpha=alpha, power=POWER, one_sided=False)


def prompts_needed(s: Shift, beyond_alpha: float = ALPHA) -> int | None:
    """Prompts for 80% power in the score test that would decide `s`, if its shift and proportions held: TOST
    (at α) when the shift lies inside the margin, the beyond-margin test at its Holm step `beyond_alpha` when
    outside (one side of it, at half that step). The variance under the null is Tango's at the nearer margin,
    under the alternative the observed one; power's quantile is z₁₋β, or z₁₋β/₂ for TOST at a shift of exactly
    0 (both sides bind). None below two prompts or for a shift on the margin (`Shift.undecidable` says which)."""
    if s.margin is None or s.n < 2:
        return None
    p_plus, p_minus = s.higher / s.n, s.lower / s.n
    gap = s.margin - abs(s.shift)
    if gap == 0:
        return None
    if s.unit == "conversations":  # the t-tests' normal approximation, at the conversations' observed SD
        if not s.unit_sd:
            return None
        z_alpha = scipy_stats.norm.ppf(1 - (ALPHA if gap > 0 else beyond_alpha / 2))
        z_power = scipy_stats.norm.ppf(1 - (1 - POWER) / 2 if gap > 0 and s.shift == 0 else POWER)
        return max(s.n, math.ceil(float((z_alpha + z_power) * s.unit_sd / abs(gap)) ** 2))
    side = s.margin if s.shift >= 0 else -s.margin
    null_sd = math.sqrt(ternary.null_variance(p_plus, p_minus, side))
    observed_sd = math.sqrt(max(p_plus + p_minus - s.shift**2, 0.0))
    z_alpha = scipy_stats.norm.ppf(1 - (ALPHA if gap > 0 else beyond_alpha / 2))
    z_power = scipy_stats.norm.ppf(1 - (1 - POWER) / 2 if gap > 0 and s.shift == 0 else POWER)
    return max(s.n, math.ceil(float((z_alpha * null_sd + z_power * observed_sd) / abs(gap)) ** 2))
