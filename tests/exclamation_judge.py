"""The README's example judge kind: an offline judge that counts exclamation marks, added as this one module
plus one line in `engine.plugin_tables.JUDGE_KINDS` (tests/test_extensions.py adds it and runs it end to end)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.api.judging import JudgeKind, PairVerdict, compare, judge_kind_class
from engine.api.records import PairJudgment


@judge_kind_class("exclamations")
class ExclamationJudge(JudgeKind):
    """Scores a pair on any vibe by which answer has more '!' (A more: +1), ties within `tolerance` marks."""

    label = "an exclamation-count judge"
    roles = frozenset({"vibe"})
    fields = ("tolerance",)

    def pair_config(self, judge: Any) -> dict[str, Any]:
        return {"method": "exclamations/v1", "tolerance": judge.settings.get("tolerance", 0)}

    def judge_pairs(self, requests: Sequence[PairJudgment], texts: dict[str, str]) -> list[PairVerdict]:
        out = []
        for request in requests:
            assert request.config is not None
            a, b = (float(texts[task].count("!")) for task in request.outputs)
            out.append(PairVerdict(self.wire, compare(a, b, request.config["tolerance"], relative=False), a, b))
        return out
