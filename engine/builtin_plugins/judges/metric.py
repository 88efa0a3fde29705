"""Metric judge: the vibe's measurable property, computed on both outputs and compared with a relative
tolerance. Deterministic and free, so it always runs and anchors the panel."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from engine.api.judging import (
    METRICS,
    AnswerMeasure,
    JudgeKind,
    KindSettings,
    PairVerdict,
    Setting,
    compare,
    judge_kind_class,
    sentence_meaning,
)
from engine.api.judging import measure as measure_text
from engine.api.records import PairJudgment
from engine.api.spec import did_you_mean

if TYPE_CHECKING:
    from engine.api.spec import Judge, Persona, Vibe


TOLERANCE = 0.05  # relative difference under which two answers' values tie, where the judge sets none
LEGACY_MARGIN = 0.02  # see `MetricJudge.pair_config`


@dataclass(frozen=True)
class MetricSettings(KindSettings):
    metric: Annotated[str, Setting("the measured property; 'auto' picks one per vibe.")] = "auto"
    tolerance: Annotated[float, Setting("relative difference under which it calls a tie.", minimum=0,
                                        maximum=1)] = TOLERANCE


def metric_of(judge: Judge) -> str:
    """The judge's own metric, or `auto`: whatever metric the vibe it scores names."""
    return str(MetricSettings.of(judge).metric)


def judge_pairs(requests: Sequence[PairJudgment], texts: dict[str, str]) -> list[PairVerdict]:
    """One verdict per request; `texts` maps the outputs' task ids to their text."""
    out = []
    for request in requests:
        assert request.config is not None
        metric = _metric(request.fields, request.config)
        ga, gb = request.outputs
        value_a, value_b = measure_text(metric, texts[ga]), measure_text(metric, texts[gb])
        score = compare(value_a, value_b, request.config["tolerance"], relative=True)
        out.append(PairVerdict("metric", score, value_a, value_b, measure=metric))
    return out


def _metric(fields: Mapping[str, Any], config: Mapping[str, Any]) -> str:
    """The judge's own metric, or the vibe's when the judge measures whatever the vibe names (`auto`)."""
    metric: str = config["metric"]
    return str(fields["metric"]) if metric == "auto" else metric


@judge_kind_class("metric")
class MetricJudge(JudgeKind):
    """Measures a property of each answer (its own `metric`, or the vibe's) and compares the two."""

    label = "a metric judge"
    badge_colour = "#1a7f37"
    scores_which = "vibes that name a metric (or every vibe, for a judge given its own 'metric')"
    roles = frozenset({"vibe", "dimension"})
    settings_record = MetricSettings
    measures = True
    measure_in_workers = True

    def can_score(self, judge: Judge, vibe: Vibe) -> bool:
        """It needs a property to measure: its own metric or the vibe's."""
        return metric_of(judge) != "auto" or vibe.metric is not None

    def can_judge_dimension(self, judge: Judge, dimension_measure: str | None, persona: Persona) -> bool:
        """A dimension with a measure the persona states a preference on, for a judge that measures per use."""
        return metric_of(judge) == "auto" and dimension_measure is not None and dimension_measure in persona.prefers

    def pair_config(self, judge: Judge) -> dict[str, Any]:
        """Its metric and tolerance; `margin` (an embedding judge's setting) stays in the hashed settings at the
        value every judge once carried, so no metric task's hash changed when the settings moved to the kinds."""
        return {"metric": metric_of(judge), "tolerance": MetricSettings.of(judge).tolerance,
                "margin": LEGACY_MARGIN}

    def check(self, entry: dict[str, Any]) -> list[tuple[str, str]]:
        metric = entry.get("metric", "auto")
        if metric == "auto" or metric in METRICS:
            return []
        return [("metric", f"unknown metric {metric!r}{did_you_mean(metric, METRICS)} "
                           f"(known: auto, {', '.join(sorted(METRICS))})")]

    def judge_pairs(self, requests: Sequence[PairJudgment], texts: dict[str, str]) -> Sequence[PairVerdict]:
        return judge_pairs(requests, texts)

    def answer_measure(self, fields: dict[str, Any], config: dict[str, Any]) -> AnswerMeasure:
        return AnswerMeasure({"metric": _metric(fields, config)}, float(config["tolerance"]), relative=True)

    def measure_answers(self, measure: dict[str, Any], texts: Sequence[str]) -> list[float]:
        return measure_all(measure["metric"], texts)


def measure_all(metric: str, texts: Sequence[str]) -> list[float]:
    """`measure` over many texts: a measure of meaning embeds all their sentences in one batch."""
    if metric.startswith(sentence_meaning.PREFIX):
        return [float(v) for v in sentence_meaning.counts(metric, texts)]
    return [measure_text(metric, text) for text in texts]
