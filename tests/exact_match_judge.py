"""The guide's example rating judge: 5 when an answer is the reference answer, else 1, with a field of its own
(`ignore_case`), declared once in its settings record. Added as this one module plus one line in
`engine.plugin_tables.JUDGE_KINDS` (tests/test_extensions.py runs it in a reference analysis)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from engine.api.judging import JudgeKind, KindSettings, RatingInput, RatingScore, Setting, judge_kind_class
from engine.api.records import Item, Rating
from engine.api.spec import Judge


@dataclass(frozen=True)
class ExactMatchSettings(KindSettings):
    ignore_case: Annotated[bool, Setting("exact_match judges: compare without regard to case.")] = False


@judge_kind_class("exact_match")
class ExactMatch(JudgeKind):
    label = "an exact-match judge"
    roles = frozenset({"reference"})
    settings_record = ExactMatchSettings

    def describe(self, judge: Judge, role: str) -> str:
        how = " ignoring case" if ExactMatchSettings.of(judge).ignore_case else ""
        return f"exact-match judge ‘{judge.name}’: 5 when the answer is the reference{how}, else 1"

    def rating_input(self, judge: Judge, item: Item, corpus: str, repeat: int) -> RatingInput | None:
        if repeat:  # deterministic: one repeat says all
            return None
        return {"reference": item.reference}, {"method": "exact/v1",
                                               "ignore_case": ExactMatchSettings.of(judge).ignore_case}

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
