"""Generation separability (Ghosh et al.): how distinguishable two models' outputs are on each input.

For an item with K samples per model: self-alignment Â_AA is the mean similarity over the K(K−1) pairs of
A's distinct samples, cross-alignment Â_AB the mean over all K² pairs, and
δ = max(Â_AA, Â_BB) − Â_AB. Alignments are min-max normalized over all items of one (dataset, model pair,
similarity) before δ is taken, as the authors' code does; the raw δ is kept beside it. High δ: each
model is more like itself than like the other, so a comparison on that item says something; low δ: the
two are interchangeable there and preferences between them are noise.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from engine.analyze.similarity import group_similarity
from engine.execute.cache import Result
from engine.pipeline import Prepared
from engine.spec.model import Analysis


@dataclass(frozen=True)
class ItemSeparability:
    item_id: str
    self_a: float
    self_b: float
    cross: float
    delta: float  # on normalized alignments
    delta_raw: float


@dataclass
class SeparabilityResult:
    analysis: str
    model_a: str
    model_b: str
    similarity: str
    samples: int
    items: list[ItemSeparability]  # highest δ first
    mean_delta: float
    quantiles: dict[str, float]


def alignments(sim: np.ndarray, self_pairs: bool) -> float:
    """Mean of a K×K similarity matrix; for self-alignment the diagonal (a sample with itself) is left out."""
    k = sim.shape[0]
    if self_pairs:
        return float((sim.sum() - np.trace(sim)) / (k * (k - 1)))
    return float(sim.mean())


def item_alignments(sim: np.ndarray, k: int) -> tuple[float, float, float]:
    """(Â_AA, Â_BB, Â_AB) from the similarity matrix over an item's 2K texts (A's K first)."""
    return alignments(sim[:k, :k], True), alignments(sim[k:, k:], True), alignments(sim[:k, k:], False)


def separability_from_alignments(item_ids: list[str], raw: np.ndarray) -> list[ItemSeparability]:
    """`raw` rows are (self_a, self_b, cross); normalize the pooled values to [0, 1] and take δ."""
    low, high = float(raw.min()), float(raw.max())
    norm = (raw - low) / (high - low) if high > low else np.zeros_like(raw)
    out = [ItemSeparability(i, *map(float, r), float(max(n[0], n[1]) - n[2]), float(max(r[0], r[1]) - r[2]))
           for i, r, n in zip(item_ids, raw, norm, strict=True)]
    return sorted(out, key=lambda s: -s.delta)


def analyze_separability(prepared: Prepared, analysis: Analysis,
                         results: dict[str, Result]) -> list[SeparabilityResult]:
    metric = analysis.options.get("similarity", "bertscore_length_adjusted")
    bindings = [b for b in prepared.plan.bindings.get(analysis.name, []) if b.variant == "original"]
    out = []
    for model_a, model_b in itertools.combinations(analysis.models, 2):
        groups = []
        for binding in bindings:
            a = [str(results[t].output) for t in binding.outputs[model_a] if t in results]
            b = [str(results[t].output) for t in binding.outputs[model_b] if t in results]
            if len(a) >= 2 and len(b) >= 2:
                groups.append((binding.item, a, b))
        if not groups:
            continue
        matrices = group_similarity(metric, [a + b for _, a, b in groups])
        raw = np.array([item_alignments(sim, len(a)) for sim, (_, a, _) in zip(matrices, groups, strict=True)])
        items = separability_from_alignments([g[0] for g in groups], raw)
        deltas = np.array([s.delta for s in items])
        out.append(SeparabilityResult(
            analysis.name, model_a, model_b, metric, analysis.options.get("samples", 5), items,
            float(deltas.mean()),
            {q: float(np.quantile(deltas, float(q))) for q in ("0.1", "0.25", "0.5", "0.75", "0.9")}))
    return out
