"""Embedding judge: places each output on the vibe's low→high axis with all-MiniLM-L6-v2 and compares.

An output's position is cos(output, high) − cos(output, low), where high and low are the vibe's own
definitions; A scores +1 when it sits further toward "high" than B by more than `margin`. All texts of a
batch are embedded together, each once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.embeddings import embed
from engine.judges.verdicts import compare


def judge_pairs(requests: list[dict[str, Any]], texts: dict[str, str]) -> list[dict[str, Any]]:
    if not requests:
        return []
    corpus = list(dict.fromkeys([texts[g] for r in requests for g in r["outputs"]]
                                + [r["fields"][end] for r in requests for end in ("low", "high")]))
    vectors = dict(zip(corpus, embed(corpus), strict=True))
    out = []
    for request in requests:
        low, high = vectors[request["fields"]["low"]], vectors[request["fields"]["high"]]
        a, b = (vectors[texts[g]] for g in request["outputs"])
        value_a, value_b = float(np.dot(a, high) - np.dot(a, low)), float(np.dot(b, high) - np.dot(b, low))
        score = compare(value_a, value_b, request["config"]["margin"], relative=False)
        out.append({"kind": "embedding", "score": score, "value_a": value_a, "value_b": value_b})
    return out
