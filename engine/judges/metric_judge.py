"""Metric judge: the vibe's measurable property, computed on both outputs and compared with a relative
tolerance. Deterministic and free, so it always runs and anchors the panel."""

from __future__ import annotations

from collections.abc import Sequence

from engine.judges.metrics import measure
from engine.judges.verdicts import PairVerdict, compare
from engine.requests import PairJudgment


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
