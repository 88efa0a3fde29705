"""Embedding-axis judge (`kind: embedding_axis`): places each output on the vibe's low→high axis with
all-MiniLM-L6-v2 and compares.

An output's position is cos(output, high) − cos(output, low). The ends are the vibe's own low and high
definitions or, when the vibe gives example answers for each end, the normalized mean embedding of each
end's examples. A scores +1 when it sits further toward "high" than B by more than `margin`. All texts of
a batch are embedded together, each once. numpy and the encoder are imported when a batch is judged: reading
the kind's declaration (every `vibe validate` does) stays light.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from engine.api.judging import AnswerMeasure, JudgeKind, KindSettings, PairVerdict, compare, judge_kind_class
from engine.api.records import PairJudgment

if TYPE_CHECKING:
    import numpy as np

    from engine.api.spec import Judge, Vibe

MARGIN = 0.02  # how much further toward one end A must sit than B to score, where the judge sets none


def _end_texts(fields: Mapping[str, Any], end: str) -> list[str]:
    """The texts that define one end ("low" or "high") of a vibe's axis."""
    examples = fields.get("examples")
    return list(examples[end]) if examples else [fields[end]]


def _axis_end(texts: list[str], vector: Callable[[str], np.ndarray]) -> np.ndarray:
    import numpy as np

    mean = np.mean([vector(t) for t in texts], axis=0)
    return np.asarray(mean / max(float(np.linalg.norm(mean)), 1e-12))


def judge_pairs(requests: Sequence[PairJudgment], texts: dict[str, str]) -> list[PairVerdict]:
    """One verdict per request, all texts embedded in one batch; `texts` maps output task ids to text."""
    if not requests:
        return []
    import numpy as np

    from engine.api.embeddings import embed

    ends = [t for r in requests for end in ("low", "high") for t in _end_texts(r.fields, end)]
    corpus = list(dict.fromkeys([texts[g] for r in requests for g in r.outputs] + ends))
    vectors = dict(zip(corpus, embed(corpus), strict=True))
    out = []
    for request in requests:
        low, high = (_axis_end(_end_texts(request.fields, end), vectors.__getitem__) for end in ("low", "high"))
        a, b = (vectors[texts[g]] for g in request.outputs)
        value_a, value_b = float(np.dot(a, high) - np.dot(a, low)), float(np.dot(b, high) - np.dot(b, low))
        assert request.config is not None
        score = compare(value_a, value_b, request.config["margin"], relative=False)
        out.append(PairVerdict("embedding", score, value_a, value_b))
    return out


@dataclass(frozen=True)
class EmbeddingAxisSettings(KindSettings):
    margin: float = MARGIN


@judge_kind_class("embedding_axis")
class EmbeddingAxisJudge(JudgeKind):
    """Places both answers between a vibe's two ends with MiniLM embeddings. A vibe with a metric is a
    counted property the axis says nothing about, so it scores only vibes without one."""

    label = "an embedding judge"
    badge_colour = "#0969da"
    scores_which = "vibes without a metric"
    roles = frozenset({"vibe"})
    fields = ("margin",)
    settings_record = EmbeddingAxisSettings
    field_schemas: ClassVar[dict[str, dict[str, Any]]] = {
        "margin": {"type": "number", "minimum": 0, "maximum": 2,
                   "description": "projection difference under which it calls a tie."}}
    wire = "embedding"  # its name before the two embedding judges were told apart: task hashes keep it
    reads_examples = True
    extra = "embeddings"

    def can_score(self, judge: Judge, vibe: Vibe) -> bool:
        return vibe.metric is None

    def pair_config(self, judge: Judge) -> dict[str, Any]:
        """Its margin; `metric` and `tolerance` (a metric judge's settings) stay in the hashed settings at the
        values every judge once carried, so no embedding task's hash changed when the settings moved to the
        kinds."""
        return {"metric": "auto", "tolerance": 0.05, "margin": EmbeddingAxisSettings.of(judge).margin}

    def judge_pairs(self, requests: Sequence[PairJudgment], texts: dict[str, str]) -> Sequence[PairVerdict]:
        return judge_pairs(requests, texts)

    def answer_measure(self, fields: dict[str, Any], config: dict[str, Any]) -> AnswerMeasure:
        return AnswerMeasure({"low": _end_texts(fields, "low"), "high": _end_texts(fields, "high")},
                             float(config["margin"]), relative=False)

    def measure_answers(self, measure: dict[str, Any], texts: Sequence[str]) -> list[float]:
        """Each text's place on the axis, cos(text, high end) − cos(text, low end), every text embedded once."""
        import numpy as np

        from engine.api.embeddings import embed

        corpus = list(dict.fromkeys([*texts, *measure["low"], *measure["high"]]))
        vectors = dict(zip(corpus, embed(corpus), strict=True))
        low, high = (_axis_end(measure[end], vectors.__getitem__) for end in ("low", "high"))
        return [float(np.dot(vectors[t], high) - np.dot(vectors[t], low)) for t in texts]
