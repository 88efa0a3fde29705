"""Metric judge: the vibe's measurable property, computed on both outputs and compared with a relative
tolerance. Deterministic and free, so it always runs and anchors the panel."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from engine.judges.kinds import JudgeKind, judge_kind_class
from engine.judges.metrics import METRICS, measure
from engine.judges.verdicts import PairVerdict, compare
from engine.names import did_you_mean
from engine.requests import PairJudgment

if TYPE_CHECKING:
    from engine.spec.model import Judge, Persona, Vibe


def judge_pairs(requests: Sequence[PairJudgment], texts: dict[str, str]) -> list[PairVerdict]:
    """One verdict per request; `texts` maps the outputs' task ids to their text."""
    out = []
    for request in requests:
        assert request.config is not None
        metric = request.config["metric"]
        if metric == "auto":
            metric = request.fields["metric"]
        ga, gb = request.outputs
        value_a, value_b = measure(metric, texts[ga]), measure(metric, texts[gb])
        score = compare(value_a, value_b, request.config["tolerance"], relative=True)
        out.append(PairVerdict("metric", score, value_a, value_b, measure=metric))
    return out


@judge_kind_class("metric")
class MetricJudge(JudgeKind):
    """Measures a property of each answer (its own `metric`, or the vibe's) and compares the two."""

    label = "a metric judge"
    roles = frozenset({"vibe", "dimension"})
    fields = ("metric", "tolerance")
    measures = True

    def can_score(self, judge: Judge, vibe: Vibe) -> bool:
        """It needs a property to measure: its own metric or the vibe's."""
        return judge.metric != "auto" or vibe.metric is not None

    def can_judge_dimension(self, judge: Judge, dimension_measure: str | None, persona: Persona) -> bool:
        """A dimension with a measure the persona states a preference on, for a judge that measures per use."""
        return judge.metric == "auto" and dimension_measure is not None and dimension_measure in persona.prefers

    def check(self, entry: dict[str, Any]) -> list[tuple[str, str]]:
        metric = entry.get("metric", "auto")
        if metric == "auto" or metric in METRICS:
            return []
        return [("metric", f"unknown metric {metric!r}{did_you_mean(metric, METRICS)} "
                           f"(known: auto, {', '.join(sorted(METRICS))})")]

    def judge_pairs(self, requests: Sequence[PairJudgment], texts: dict[str, str]) -> Sequence[PairVerdict]:
        return judge_pairs(requests, texts)
