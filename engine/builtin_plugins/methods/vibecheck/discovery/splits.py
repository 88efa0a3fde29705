"""The train/test split of a VibeCheck analysis, read the same way by every step that must agree on it:
discovery sees only the training prompts, validation and the regressions score on the rest."""

from __future__ import annotations

from engine.api.analysis import stats
from engine.api.methods import PairOptions
from engine.api.records import Binding, Prepared
from engine.api.spec import Analysis


def split_bindings(prepared: Prepared, analysis: Analysis,
                   comparison: tuple[str, str] | None = None) -> tuple[list[Binding], set[str]]:
    """The analysis' pairs (original prompts) and the ids of the training split, as every step that must
    agree on the split (discovery, validation, regressions) reads them. The split is drawn over prompts, so
    every comparison of a many-model analysis holds out the same prompts; `comparison` keeps the prompts
    both of its models answered. The turns of one conversation fall on the same side."""
    bindings = [b for b in prepared.plan.bindings.get(analysis.name, []) if b.variant == "original"]
    clusters = {it.id: it.conversation for it in prepared.items.get(analysis.dataset, []) if it.conversation}
    of = {b.item: clusters.get(b.item, b.item) for b in bindings}
    units = list(dict.fromkeys(of.values())) if clusters else [b.item for b in bindings]
    train_clusters, _ = stats.split(units, PairOptions.of(analysis).split.train, split_seed(analysis))
    if comparison is not None:
        bindings = [b for b in bindings if all(model in b.outputs for model in comparison)]
    chosen = set(train_clusters)
    return bindings, {item for item, cluster in of.items() if cluster in chosen}


POOLED = "other models"  # how pooled discovery names the side of the models compared with the reference


def discovery_sides(analysis: Analysis) -> tuple[str, str]:
    """The two sides discovery mines phrasing for: the analysis' two models, or every other model pooled
    against the reference."""
    reference = PairOptions.of(analysis).reference
    return (POOLED, reference) if reference is not None else (analysis.models[0], analysis.models[1])


def split_seed(analysis: Analysis) -> int:
    """The seed of the analysis' train/test split, which also seeds the steps that must follow it."""
    return PairOptions.of(analysis).split.seed
