"""What offline judges produce, as typed records, and the rules that turn measurements into verdicts.

Every offline judge kind returns one of two records: `PairVerdict` for a pair of answers, `RatingScore` for
one answer. Each is stored in the cache as JSON (`to_json`) and read back by the analyses with `from_json`;
the field names are part of every cached result, so they only ever gain optional fields (records cached in
an older form are still read).
An LLM judge's result is its raw text, parsed by `engine.judges.reading` where it is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PairVerdict:
    """A metric or embedding judge's call on a pair. `score` is in A/B terms: +1 when output A measures
    higher on the vibe by more than the judge's tolerance, -1 when B does, 0 otherwise. `measure`: the
    metric measured (metric judges)."""

    kind: str  # metric | embedding
    score: int
    value_a: float
    value_b: float
    measure: str | None = None

    def to_json(self) -> dict[str, Any]:
        measured = {} if self.measure is None else {"measure": self.measure}
        return {"kind": self.kind, "score": self.score, **measured, "value_a": self.value_a, "value_b": self.value_b}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PairVerdict:
        return cls(d.get("kind", ""), int(d["score"]), d["value_a"], d["value_b"], d.get("measure"))


@dataclass(frozen=True)
class RatingScore:
    """Every offline judge's rating of one answer, whatever its kind: the record analyses and pages read.
    `value` is on the 1–5 scale, `explanation` says in a sentence where it came from, `signals` holds the named
    measurements it was computed from (a similarity judge's recalls, a test judge's pass as 1 or 0), `kind`
    the judge kind's wire name and `method` the version of its computation."""

    kind: str
    value: float
    explanation: str
    signals: Mapping[str, float] = field(default_factory=dict)
    method: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "rating": self.value, "explanation": self.explanation,
                "signals": dict(self.signals), **({"method": self.method} if self.method else {})}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RatingScore:
        if "explanation" in d:
            return cls(d.get("kind", ""), float(d["rating"]), str(d["explanation"]), dict(d.get("signals", {})),
                       d.get("method", ""))
        return _cached_before_the_common_record(d)


def _cached_before_the_common_record(d: dict[str, Any]) -> RatingScore:
    """A rating cached before every kind wrote `RatingScore` (and named itself, so its kind is left blank): one
    with a `reason` kept its pass beside it, one without kept its named measurements at the top level, shown
    now as they read."""
    if "reason" in d:
        return RatingScore(d.get("kind", ""), float(d["rating"]), str(d["reason"]),
                           {"passed": float(bool(d.get("passed")))})
    signals = {k: float(v) for k, v in d.items() if k not in ("kind", "rating", "method") and _number(v)}
    shown = ", ".join(f"{name.replace('_', ' ')} {value:.2f}" for name, value in signals.items())
    return RatingScore(d.get("kind", ""), float(d["rating"]), shown, signals, d.get("method", ""))


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True)
class PreservationCheck:
    """Whether a persona's rewrite still asks for the original: the cosine of the two and the threshold test."""

    cosine: float
    passed: bool
    rewrite: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": "embedding", "method": "preservation", "cosine": self.cosine, "passed": self.passed,
                "rewrite": self.rewrite}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PreservationCheck:
        return cls(float(d["cosine"]), bool(d["passed"]), d["rewrite"])


def combine_orders(first: int | None, second: int | None) -> int | None:
    """Position swap. `first` is the verdict with A shown first, `second` with B shown first, both already
    mapped to A/B terms. Agreement keeps the verdict; disagreement (or N/A in either order) is 0. An answer
    with no readable verdict makes the question unanswered (None), never a tie: counting it as 0 would pull
    separability, κ and ratings towards "no difference" by however often the judge failed to answer."""
    if first is None or second is None:
        return None
    return first if first == second else 0


@dataclass(frozen=True)
class AnswerMeasure:
    """What a judge kind measures on each answer alone when its verdict on a pair is `compare` of the two
    values: the value's definition (JSON; it names the measure in the cache and in the plan's hashes), the
    tolerance, and whether the tolerance is relative to the larger value."""

    definition: dict[str, Any]
    tolerance: float
    relative: bool


def compare(value_a: float, value_b: float, tolerance: float, relative: bool) -> int:
    """+1 if A's measure is higher by more than the tolerance, -1 if B's is, else 0."""
    diff = value_a - value_b
    scale = max(abs(value_a), abs(value_b), 1e-9) if relative else 1.0
    if abs(diff) / scale <= tolerance:
        return 0
    return 1 if diff > 0 else -1


def compare_columns(value_a: Any, value_b: Any, tolerance: float, relative: bool) -> Any:
    """`compare` over two NumPy columns at once, with the same float operations (so the same verdicts), NaN
    where either value is missing."""
    import numpy as np

    diff = value_a - value_b
    scale = np.maximum(np.maximum(np.abs(value_a), np.abs(value_b)), 1e-9) if relative else 1.0
    with np.errstate(invalid="ignore"):
        out = np.where(np.abs(diff) / scale <= tolerance, 0.0, np.sign(diff))
    return np.where(np.isnan(diff), np.nan, out)
