"""How a VibeCheck analysis proposes vibes: from the training pairs of every comparison it makes (never the
test pairs), statistically or with an LLM proposer as the spec's `discover` block says. Statistical proposals
are cached by the pairs' texts and labels and the settings, since they are deterministic; a namer, where the
block gives one, then names the measures of meaning among them (`naming`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from engine.api.execution import Cache, cached, vibe_from_record, with_vibes
from engine.api.judging import kind_of
from engine.api.methods import PairOptions, get_method
from engine.api.records import Prepared
from engine.api.spec import Analysis, Vibe
from engine.builtin_plugins.methods.vibecheck.discovery import statistical as discovery
from engine.builtin_plugins.methods.vibecheck.discovery.splits import (
    discovery_sides,
    mined_items,
    split_bindings,
    split_seed,
)


def propose(prepared: Prepared, analysis: Analysis, cache: Cache) -> list[tuple[Vibe, str]]:
    """The vibes the spec's discovery proposes from the analysis' training pairs, each with where it came
    from; measured properties the spec already declares a vibe for are not proposed again."""
    spec = prepared.spec
    d = spec.discovery
    assert d is not None
    # a statistical proposal reads a sample of a large training split; the LLM proposer's screen scores its vibes
    # on every training pair, with the analysis' own method
    mined = mined_items(prepared, analysis) if d.method != "llm" else None
    pairs = training_pairs(prepared, analysis, cache.get_many, mined)
    read = f"{len(pairs)} training pairs"
    if mined is not None:
        total = len(split_bindings(prepared, analysis)[1])
        read += f": those of a seeded sample of {len(mined):,} of the {total:,} training prompts"
    if d.method == "llm":
        proposed = [(v, f"LLM proposer {d.proposer}") for v in _llm_vibes(prepared, analysis, cache, pairs)]
    else:
        clusters = any(kind_of(spec.judges[j]).reads_examples for j in PairOptions.of(analysis).judges)
        settings = {"models": list(discovery_sides(analysis)), "max_vibes": d.max_vibes, "seed": split_seed(analysis),
                    "exclude_metrics": sorted({v.metric for v in spec.vibes if v.metric is not None}),
                    "clusters": clusters, "sentences": d.sentences}
        proposed = [(c.vibe, c.origin) for c in _statistical(pairs, settings, cache)]
        if d.namer is not None:
            from engine.builtin_plugins.methods.vibecheck.discovery.naming import named

            proposed = named(proposed, spec.judges[d.namer], cache, {v.name for v in spec.vibes})
    return [(vibe, f"discovered ({origin}, {read})") for vibe, origin in proposed]


def training_pairs(prepared: Prepared, analysis: Analysis, read: Callable[[set[str]], Mapping[str, Any]],
                   mined: set[str] | None = None) -> list[discovery.TrainingPair]:
    """The training pairs of every comparison of the analysis, pooled (model A's answer first), in one fixed
    order: discovery runs once on them, so every model of a many-model analysis is measured on one set of vibes,
    and the analysis cross-fits its lexicons on the same list (the halves depend on it). `read`: generation
    task ids -> their results (the run cache's, or the analysis' own). `mined`: the training prompts discovery
    reads (`mined_items`; None: all)."""
    items = {it.id: it for it in prepared.items[analysis.dataset]}
    wanted = {}
    for comparison in analysis.comparisons():
        bindings, train = split_bindings(prepared, analysis, comparison)
        wanted[comparison] = [b for b in bindings if b.item in train and (mined is None or b.item in mined)]
    texts = read({b.outputs[model][0] for (model_a, model_b), bs in wanted.items() for b in bs
                            for model in (model_a, model_b)})
    pairs = []
    for (model_a, model_b), bindings in wanted.items():
        for b in bindings:
            ra, rb = texts.get(b.outputs[model_a][0]), texts.get(b.outputs[model_b][0])
            if ra is None or rb is None:
                continue
            preference = items[b.item].label(model_a, model_b)
            label = None if preference in (None, "tie") else preference == model_a
            pairs.append(discovery.TrainingPair(str(ra.output), str(rb.output), label,
                                                (b.outputs[model_a][0], b.outputs[model_b][0]),
                                                items[b.item].conversation))
    return pairs


def _llm_vibes(prepared: Prepared, analysis: Analysis, cache: Cache, pairs: list[discovery.TrainingPair]) -> list[Vibe]:
    from engine.api.calls import execute
    from engine.api.execution import finished_results
    from engine.builtin_plugins.methods.vibecheck.discovery.llm import discover_with_llm

    spec = prepared.spec
    d = spec.discovery
    assert d is not None and d.proposer is not None
    proposer = spec.judges[d.proposer]
    assert proposer.endpoint is not None

    def score(vibes: list[Vibe]) -> np.ndarray:
        scored = with_vibes(prepared, vibes)
        execute(scored, Path(".vibe-discovery"), cache, quiet=True, stages=("judge",), write=False)
        # the panel's verdicts ν (training pairs × vibes), from the analysis' own method: discovery holds none
        results = finished_results(scored, cache)
        return np.asarray(get_method(analysis.method).train_verdicts(scored, analysis, results, vibes), dtype=float)

    return discover_with_llm(pairs, d, proposer, cache, score, seed=split_seed(analysis))


def _statistical(pairs: list[discovery.TrainingPair], settings: dict, cache: Cache) -> list[discovery.Candidate]:
    """Statistical discovery, read back when the same training pairs (texts and labels) and settings were
    seen before: it is deterministic, and on a large spec most of a re-run's time."""
    def compute() -> list[discovery.Candidate]:
        model_a, model_b = settings["models"]
        return discovery.discover(pairs, model_a, model_b, max_vibes=settings["max_vibes"],
                                  exclude_metrics=frozenset(settings["exclude_metrics"]),
                                  clusters=settings["clusters"], sentences=settings["sentences"],
                                  seed=settings["seed"], store=cache)

    inputs = {"settings": settings, "pairs": [[p.output_a, p.output_b, p.a_preferred, p.unit] for p in pairs]}
    return cached("discovery", inputs, compute,
                          lambda found: json.dumps([{**asdict(c.vibe), "origin": c.origin, "members": c.members}
                                                    for c in found]).encode("utf-8"),
                          lambda data: [_candidate(record) for record in json.loads(data)],
                          module=discovery.__name__)


def _candidate(record: dict) -> discovery.Candidate:
    members = record.get("members")
    return discovery.Candidate(vibe_from_record(record), record["origin"], tuple(members) if members else None)
