"""The guide's example rating judge: 5 when an answer is the reference answer, else 1, with a field of its own
(`ignore_case`) that the spec schema learns from `field_schemas`. Added as this one module plus one line in
`engine.plugin_tables.JUDGE_KINDS` (tests/test_extensions.py runs it in a reference analysis)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from engine.api.judging import JudgeKind, RatingInput, RatingScore, judge_kind_class
from engine.api.records import Item, Rating
from engine.api.spec import Judge


@judge_kind_class("exact_match")
class ExactMatch(JudgeKind):
    label = "an exact-match judge"
    roles = frozenset({"reference"})
    fields = ("ignore_case",)
    field_schemas: ClassVar[dict[str, dict[str, Any]]] = {
        "ignore_case": {"type": "boolean", "description": "exact_match judges: compare without regard to case."}}

    def describe(self, judge: Judge, role: str) -> str:
        how = " ignoring case" if judge.settings.get("ignore_case") else ""
        return f"exact-match judge ‘{judge.name}’: 5 when the answer is the reference{how}, else 1"

    def rating_input(self, judge: Judge, item: Item, corpus: str, repeat: int) -> RatingInput | None:
        if repeat:  # deterministic: one repeat says all
            return None
        return {"reference": item.reference}, {"method": "exact/v1",
                                               "ignore_case": bool(judge.settings.get("ignore_case", False))}

    def rate(self, requests: Sequence[Rating], texts: dict[str, str],
             corpora: dict[str, tuple[str, ...]]) -> list[RatingScore]:
        out = []
        for request in requests:
            assert request.config is not None
            answer, reference = texts[request.output].strip(), str(request.fields["reference"]).strip()
            if request.config["ignore_case"]:
                answer, reference = answer.casefold(), reference.casefold()
            same = answer == reference
            out.append(RatingScore(self.wire, 5.0 if same else 1.0,
                                   "is the reference answer" if same else "differs from the reference answer",
                                   {"match": float(same)}))
        return out
