"""Keep or drop: the rule that decides, on the training pairs alone, which vibes an analysis goes on to test.

A vibe is kept when its judges agree and it separates the two models on the training pairs; its training
direction is then the claim the test pairs confirm or not. A phrase lexicon mined as typical of one model is
also held to its own definition (see `against_own_lexicon`).
"""

from __future__ import annotations

from engine import stats


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
