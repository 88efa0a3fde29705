"""The verdict record every judge kind produces, and the position-swap rule that combines two orders."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    """One judge's call on one vibe for one pair. `score` is in A/B terms: +1 means output A sits higher on
    the vibe (or is preferred), -1 means B, 0 a tie or an order-dependent answer. `valid` is False when the
    judge's answer could not be parsed; such verdicts count as 0 and are reported."""

    judge: str
    kind: str  # llm | metric | embedding
    score: int
    valid: bool = True
    rationale: str = ""
    value_a: float | None = None
    value_b: float | None = None


def combine_orders(first: int | None, second: int | None) -> int:
    """Position swap. `first` is the verdict with A shown first, `second` with B shown first, both already
    mapped to A/B terms. Agreement keeps the verdict; disagreement, or N/A/invalid in either run, is 0."""
    if first is None or second is None:
        return 0
    return first if first == second else 0


def compare(value_a: float, value_b: float, tolerance: float, relative: bool) -> int:
    """+1 if A's measure is higher by more than the tolerance, -1 if B's is, else 0."""
    diff = value_a - value_b
    scale = max(abs(value_a), abs(value_b), 1e-9) if relative else 1.0
    if abs(diff) / scale <= tolerance:
        return 0
    return 1 if diff > 0 else -1
