"""The README's example judge kind: an offline judge that counts a mark (say '!') in each answer, with a field it
cannot do without (`mark`), added as this one module plus one line in `engine.plugin_tables.JUDGE_KINDS`
(tests/test_extensions.py adds it and runs it end to end)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from engine.api.judging import JudgeKind, KindSettings, PairVerdict, Setting, compare, judge_kind_class
from engine.api.records import PairJudgment
from engine.api.spec import Judge


@dataclass(frozen=True)
class ExclamationSettings(KindSettings):
    """Its settings, declared here alone: the spec schema, the required ones (those without a default) and the
    contract suite's sample judge are read off these fields."""

    mark: Annotated[str, Setting("what it counts in each answer, e.g. '!'.", example="!", min_length=1)]
    tolerance: Annotated[float, Setting("counts this close are a tie.", minimum=0)] = 0


@judge_kind_class("exclamations")
class ExclamationJudge(JudgeKind):
    """Scores a pair on any vibe by which answer has more of its `mark` (A more: +1), ties within `tolerance`."""

    label = "an exclamation-count judge"
    roles = frozenset({"vibe"})
    settings_record = ExclamationSettings

    def pair_config(self, judge: Judge) -> dict[str, Any]:
        settings = ExclamationSettings.of(judge)
        return {"method": "exclamations/v2", "mark": settings.mark, "tolerance": settings.tolerance}

    def judge_pairs(self, requests: Sequence[PairJudgment], texts: dict[str, str]) -> list[PairVerdict]:
        out = []
        for request in requests:
            assert request.config is not None
            a, b = (float(texts[task].count(request.config["mark"])) for task in request.outputs)
            out.append(PairVerdict(self.wire, compare(a, b, request.config["tolerance"], relative=False), a, b))
        return out
