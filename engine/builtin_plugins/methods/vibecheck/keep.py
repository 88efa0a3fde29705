"""Keep or drop: the rule that decides, on the training pairs alone, which vibes an analysis goes on to test.

A vibe is kept when its judges agree and it leans one way on the training pairs; its training direction is
then the claim the test pairs confirm or not. A phrase lexicon mined as typical of one model is also held to its
own definition (see `against_own_lexicon`).

The screen is liberal on purpose: a training separability more than one standard error from 0 (|z| > 1), not
a 95% interval. Every claim a page makes is tested again on the test pairs, which the screen never saw, so a
liberal screen costs no validity; what it would cost is power, by enlarging the family the test pairs' claims
are corrected in. The training evidence pays that back: each kept vibe's test enters the comparison's weighted
Holm with weight exp(2·min(|z|, 4)) (`holm_weight`), so a vibe that led clearly on the training pairs gets
most of the level and one that barely passed gets little. In seeded simulations (29 noise vibes beside one
planted, 200 + 200 pairs) this names a planted vibe of test separability 0.10 or 0.15 more often than a 95%
screen with unweighted Holm did, at the same family-wise error (`benchmarks/calibration.py`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.api.analysis import stats

SCREEN_Z = 1.0  # a kept vibe's training separability lies more than this many standard errors from 0
WEIGHT_SLOPE, WEIGHT_CAP = 2.0, 4.0  # test weight exp(2·min(|z|, 4)): e² at the screen, at most e⁸


@dataclass(frozen=True)
class Decision:
    """What a vibe's training verdicts decide, and the test its test verdicts then face: a kept vibe's training
    direction is confirmed one-sided (`stats.sign_test`), beside the separability that test detects with 80%
    power; a dropped vibe has neither."""

    separability_train: float
    train_ci: tuple[float, float]  # 95%, for the page: the screen reads z, not this interval
    reasons: list[str]  # why it is dropped; empty: kept
    direction: int = 0  # the sign of the training separability, for a kept vibe
    p_value: float | None = None
    detectable: float | None = None
    weight: float | None = None  # a kept vibe's weight in the weighted Holm family (`holm_weight`)

    @property
    def kept(self) -> bool:
        return not self.reasons


def decide(train: Sequence[float], test: Sequence[float], *, kappa_train: float | None, kappa_min: float,
           sep_min: float, origin: str, sides: tuple[str, str], ternary: bool = True,
           ac1_train: float | None = None) -> Decision:
    """Keep or drop on the training verdicts (`drop_reasons`, `against_own_lexicon`), then, for a kept vibe,
    the one-sided test of its training direction on the test verdicts. `ternary`: each test value is one
    −1/0/+1 verdict, not a conversation's mean, so the sign test's detectable separability has its formula."""
    sep_train, ci, z = stats.separability(train), stats.verdict_interval(train), training_z(train)
    if not len(train):  # not "does not separate": there was nothing to separate
        return Decision(sep_train, ci, ["no training pairs: the models answered no training prompt in common"])
    reasons = drop_reasons(sep_train, z, kappa_train, kappa_min, sep_min, ac1_train)
    if against := against_own_lexicon(origin, sides, sep_train):
        reasons.append(against)
    if reasons:
        return Decision(sep_train, ci, reasons)
    direction = int(np.sign(sep_train))
    return Decision(sep_train, ci, [], direction, stats.sign_test(test, direction),
                    stats.sign_test_mde(sum(v != 0 for v in test), len(test)) if ternary else None,
                    holm_weight(z))


def training_z(train: Sequence[float]) -> float:
    """The training separability over its standard error (independent units: pairs, or conversations' means);
    infinite when every unit agrees on a side, 0 below two units (nothing to tell a lean from chance by)."""
    if len(train) < 2:
        return 0.0
    mean, sd = float(np.mean(train)), float(np.std(train, ddof=1))
    if sd == 0:
        return math.copysign(math.inf, mean) if mean else 0.0
    return mean / (sd / math.sqrt(len(train)))


def holm_weight(z: float) -> float:
    """A kept vibe's weight in its comparison's weighted Holm family: exp(2·min(|z|, 4)). Larger for a vibe that
    led more clearly on the training pairs; capped so that vibes far past the screen share the level evenly
    rather than one leaving the rest almost none until it is rejected."""
    return math.exp(WEIGHT_SLOPE * min(abs(z), WEIGHT_CAP))


def drop_reasons(sep_train: float, z: float, kappa_train: float | None, kappa_min: float,
                 sep_min: float, ac1_train: float | None = None) -> list[str]:
    """Why a vibe is dropped, from its training separability, that separability over its standard error (`z`)
    and the judges' training agreement (none: kept): its judges disagree, or it does not separate the models
    (|separability| below `sep_min`, or within one standard error of 0). The judges disagree when κ and Gwet's
    AC1 (`ac1_train`, where given) are both below `kappa_min`: κ alone collapses towards 0 when nearly every
    verdict is one category (two judges agreeing on 98% of pairs, nearly all one way, had κ 0.00 and dropped
    the plainest vibe), where AC1 stays near their agreement."""
    reasons = []
    if kappa_train is not None and kappa_train < kappa_min and (ac1_train is None or ac1_train < kappa_min):
        ac1 = f", AC1 {ac1_train:.2f}" if ac1_train is not None else ""
        reasons.append(f"judges disagree (κ {kappa_train:.2f}{ac1} < {kappa_min} on training pairs)")
    if abs(sep_train) < sep_min:
        reasons.append(f"does not separate the models (|sep| {abs(sep_train):.3f} < {sep_min} on training pairs)")
    elif not abs(z) > SCREEN_Z:
        reasons.append(f"separation within one standard error of none on training pairs (sep {sep_train:+.3f}, "
                       f"|z| {abs(z):.2f} ≤ {SCREEN_Z:g})")
    return reasons


def against_own_lexicon(origin: str, sides: tuple[str, str], sep_train: float) -> str:
    """Why a phrase lexicon is dropped when its cross-fitted training separability leans to the model it was
    not mined for (empty when it does not, or the vibe is not a lexicon). Such a lexicon holds phrases that
    happened to mark one half of the training pairs and mark the other model on the other half: keeping it
    would test "typical of x" in the direction of y."""
    for sign, side in ((1, sides[0]), (-1, sides[1])):
        if origin.startswith(f"discovered (phrases:{side}, ") and sep_train * sign < 0:
            return (f"mined as phrasing typical of {side}, but leans the other way on the training pairs it was "
                    f"not mined from (cross-fitted separability {sep_train:+.3f}): its phrases do not carry over")
    return ""
