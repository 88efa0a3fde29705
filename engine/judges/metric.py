"""Metric judge: the vibe's measurable property, computed on both outputs and compared with a relative
tolerance. Deterministic and free, so it always runs and anchors the panel."""

from __future__ import annotations

from typing import Any

from engine.judges.metrics import measure
from engine.judges.verdicts import compare


def judge_pairs(requests: list[dict[str, Any]], texts: dict[str, str]) -> list[dict[str, Any]]:
    out = []
    for request in requests:
        metric = request["config"]["metric"]
        if metric == "auto":
            metric = request["fields"]["metric"]
        ga, gb = request["outputs"]
        value_a, value_b = measure(metric, texts[ga]), measure(metric, texts[gb])
        score = compare(value_a, value_b, request["config"]["tolerance"], relative=True)
        out.append({"kind": "metric", "score": score, "measure": metric, "value_a": value_a, "value_b": value_b})
    return out
