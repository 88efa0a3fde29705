"""Semantic-preservation check of persona rewrites: a rewritten request must still ask for the same thing.

Measured as the cosine between the sentence embeddings (all-MiniLM-L6-v2) of the original and the rewrite;
below the analysis' `preservation_min` the rewrite is rejected and its samples are left out of the
persona results (and counted). An embedding cannot tell a changed number or constraint from a paraphrase,
so this is a floor against rewrites that drifted off the task, not a proof that the answer is unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.embeddings import embed
from engine.judges.verdicts import PreservationCheck
from engine.requests import Preservation


def check(requests: Sequence[Preservation], texts: dict[str, str]) -> list[PreservationCheck]:
    """One check per request; `texts` holds the LLM rewrites' outputs by task id."""
    if not requests:
        return []
    originals = [r.fields["original"] for r in requests]
    rewrites = [r.fields["rewrite"] if r.rewrite is None else texts[r.rewrite].strip() for r in requests]
    vectors = embed(originals + rewrites)
    n = len(requests)
    out = []
    for i, request in enumerate(requests):
        cosine = float(np.dot(vectors[i], vectors[n + i])) if rewrites[i] else 0.0
        out.append(PreservationCheck(cosine, cosine >= request.config["min_cosine"], rewrites[i]))
    return out
