"""Keep or drop: the rule that decides, on the training pairs alone, which vibes an analysis goes on to test.

A vibe is kept when its judges agree and it separates the two models on the training pairs; its training
direction is then the claim the test pairs confirm or not. A phrase lexicon mined as typical of one model is
also held to its own definition (see `against_own_lexicon`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.api.analysis import stats


@dataclass(frozen=True)
class Decision:
    """What a vibe's training verdicts decide, and the test its test verdicts then face: a kept vibe's training
    direction is confirmed one-sided (`stats.sign_test`), beside the separability that test detects with 80%
    power; a dropped vibe has neither."""

    separability_train: float
    train_ci: tuple[float, float]
    reasons: list[str]  # why it is dropped; empty: kept
    direction: int = 0  # the sign of the training separability, for a kept vibe
    p_value: float | None = None
    detectable: float | None = None

    @property
    def kept(self) -> bool:
        return not self.reasons


def decide(train: Sequence[float], test: Sequence[float], *, kappa_train: float | None, kappa_min: float,
           sep_min: float, origin: str, sides: tuple[str, str], ternary: bool = True) -> Decision:
    """Keep or drop on the training verdicts (`drop_reasons`, `against_own_lexicon`), then, for a kept vibe,
    the one-sided test of its training direction on the test verdicts. `ternary`: each test value is one
    −1/0/+1 verdict, not a conversation's mean, so the sign test's detectable separability has its formula."""
    sep_train, ci = stats.separability(train), stats.mean_interval(train)
    reasons = drop_reasons(sep_train, ci, kappa_train, kappa_min, sep_min)
    if against := against_own_lexicon(origin, sides, sep_train):
        reasons.append(against)
    if reasons:
        return Decision(sep_train, ci, reasons)
    direction = int(np.sign(sep_train))
    return Decision(sep_train, ci, [], direction, stats.sign_test(test, direction),
                    stats.sign_test_mde(sum(v != 0 for v in test), len(test)) if ternary else None)


def drop_reasons(sep_train: float, ci: tuple[float, float], kappa_train: float | None, kappa_min: float,
                 sep_min: float) -> list[str]:
    """Why a vibe is dropped, from its training separability, that separability's 95% interval and the judges'
    training κ (none: kept): its judges disagree, or it does not separate the models (|separability| below
    `sep_min`, or an interval that includes 0)."""
    reasons = []
    if kappa_train is not None and kappa_train < kappa_min:
        reasons.append(f"judges disagree (κ {kappa_train:.2f} < {kappa_min} on training pairs)")
    if abs(sep_train) < sep_min:
        reasons.append(f"does not separate the models (|sep| {abs(sep_train):.3f} < {sep_min} on training pairs)")
    elif not stats.excludes_zero(ci):
        reasons.append(f"separation not distinguishable from none (95% interval {ci[0]:+.3f} to {ci[1]:+.3f} "
                       "on training pairs includes 0)")
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
