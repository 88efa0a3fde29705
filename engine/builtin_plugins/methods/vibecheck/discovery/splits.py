"""The train/test split of a VibeCheck analysis, read the same way by every step that must agree on it:
discovery sees only the training prompts, validation and the regressions score on the rest."""

from __future__ import annotations

import numpy as np

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
    bindings, _, train = _split(prepared, analysis)
    if comparison is not None:
        bindings = [b for b in bindings if all(model in b.outputs for model in comparison)]
    return bindings, train


def _split(prepared: Prepared, analysis: Analysis) -> tuple[list[Binding], dict[str, str], set[str]]:
    """The analysis' bindings, the unit of each prompt (its conversation, or itself) and the training prompts."""
    bindings = [b for b in prepared.plan.bindings.get(analysis.name, []) if b.variant == "original"]
    clusters = {it.id: it.conversation for it in prepared.items.get(analysis.dataset, []) if it.conversation}
    of = {b.item: clusters.get(b.item, b.item) for b in bindings}
    units = list(dict.fromkeys(of.values())) if clusters else [b.item for b in bindings]
    train_clusters, _ = stats.split(units, PairOptions.of(analysis).split.train, split_seed(analysis))
    chosen = set(train_clusters)
    return bindings, of, {item for item, cluster in of.items() if cluster in chosen}


# Training units (prompts, or conversations) discovery reads at most. At this many, a candidate whose true
# separability is the smallest keep/drop keeps (0.05) lies five standard errors from 0 (a verdict's sd is at most 1,
# so the SE is at most 1/√10,000 = 0.01): discovery's screen passes it with about 95% power even at
# Benjamini–Hochberg's strictest level over 35 candidates (z = 3.4), and discovery's cost (tokenizing, mining and
# cross-fitting lexicons, measuring every metric) stops growing with the data.
DISCOVERY_UNITS = 10_000


def mined_items(prepared: Prepared, analysis: Analysis) -> set[str] | None:
    """The training prompts discovery reads: all of them (None) while there are at most `DISCOVERY_UNITS`
    training units, else those of `DISCOVERY_UNITS` units drawn at random with the split's seed. The analysis
    reads the same set: a lexicon is cross-fitted on these pairs, and scores the other training pairs, which it
    never saw, as it scores the test pairs."""
    _, of, train = _split(prepared, analysis)
    train_units = list(dict.fromkeys(of[item] for item in of if item in train))
    if len(train_units) <= DISCOVERY_UNITS:
        return None
    drawn = np.random.default_rng(split_seed(analysis)).choice(len(train_units), DISCOVERY_UNITS, replace=False)
    chosen = {train_units[i] for i in drawn.tolist()}
    return {item for item in train if of[item] in chosen}


POOLED = "other models"  # how pooled discovery names the side of the models compared with the reference


def discovery_sides(analysis: Analysis) -> tuple[str, str]:
    """The two sides discovery mines phrasing for: the analysis' two models, or every other model pooled
    against the reference."""
    reference = PairOptions.of(analysis).reference
    return (POOLED, reference) if reference is not None else (analysis.models[0], analysis.models[1])


def split_seed(analysis: Analysis) -> int:
    """The seed of the analysis' train/test split, which also seeds the steps that must follow it."""
    return PairOptions.of(analysis).split.seed
