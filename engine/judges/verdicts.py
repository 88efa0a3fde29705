"""What offline judges produce, as typed records, and the rules that turn measurements into verdicts.

An offline judge's result is stored in the cache as JSON (`to_json`) and read back by the analyses with
`from_json`; the field names are part of every cached result, so they only ever gain optional fields.
An LLM judge's result is its raw text, parsed by `engine.judges.llm` where it is read.
"""

from __future__ import annotations

from dataclasses import dataclass
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
        return cls(d.get("kind", "metric"), int(d["score"]), d["value_a"], d["value_b"], d.get("measure"))


@dataclass(frozen=True)
class SimilarityRating:
    """The reference-similarity judge's 1–5 rating: 1 + 4 × `match`, the weighted mean of its three signals."""

    method: str
    rating: float
    match: float
    bertscore_recall: float
    key_term_recall: float
    cosine: float
    kind = "embedding"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "method": self.method, "rating": self.rating, "match": self.match,
                "bertscore_recall": self.bertscore_recall, "key_term_recall": self.key_term_recall,
                "cosine": self.cosine}


@dataclass(frozen=True)
class TestRating:
    """The unit-test judge's rating: 5 when the answer's code passes the item's tests, else 1, and why."""

    passed: bool
    reason: str
    kind = "unit_tests"

    @property
    def rating(self) -> float:
        return 5.0 if self.passed else 1.0

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "rating": self.rating, "passed": self.passed, "reason": self.reason}


def rating_value(d: dict[str, Any]) -> float:
    """The 1–5 value of any offline rating as stored (similarity or unit tests)."""
    return float(d["rating"])


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


def compare(value_a: float, value_b: float, tolerance: float, relative: bool) -> int:
    """+1 if A's measure is higher by more than the tolerance, -1 if B's is, else 0."""
    diff = value_a - value_b
    scale = max(abs(value_a), abs(value_b), 1e-9) if relative else 1.0
    if abs(diff) / scale <= tolerance:
        return 0
    return 1 if diff > 0 else -1
