"""Discovery as a pipeline step: read the training pairs a run produced, propose vibes, and add them to
the spec so that the next plan judges them like declared ones. Only the training split is ever shown to
discovery; the test split stays unseen until the regressions are scored."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import yaml

from engine import derived
from engine.discover import statistical as discovery
from engine.discover.splits import discovery_sides, split_bindings, split_seed
from engine.execute.cache import Cache
from engine.judges.metrics import PHRASES_PREFIX
from engine.plan import compile_plan
from engine.records import Prepared
from engine.registry import PairOptions, get_method
from engine.spec.model import Analysis, Vibe, vibe_examples


def training_pairs(prepared: Prepared, analysis: Analysis, cache: Cache) -> list[discovery.TrainingPair]:
    """The training pairs of every comparison of the analysis, pooled (model A's answer first): discovery
    runs once on them, so every model of a many-model analysis is measured on one set of vibes."""
    items = {it.id: it for it in prepared.items[analysis.dataset]}
    wanted = {}
    for comparison in analysis.comparisons():
        bindings, train = split_bindings(prepared, analysis, comparison)
        wanted[comparison] = [b for b in bindings if b.item in train]
    texts = cache.get_many({b.outputs[model][0] for (model_a, model_b), bs in wanted.items() for b in bs
                            for model in (model_a, model_b)})
    pairs = []
    for (model_a, model_b), bindings in wanted.items():
        for b in bindings:
            ra, rb = texts.get(b.outputs[model_a][0]), texts.get(b.outputs[model_b][0])
            if ra is None or rb is None:
                continue
            preference = items[b.item].label(model_a, model_b)
            label = None if preference in (None, "tie") else preference == model_a
            pairs.append(discovery.TrainingPair(str(ra.output), str(rb.output), label))
    return pairs


def _llm_vibes(prepared: Prepared, analysis: Analysis, cache: Cache, pairs: list[discovery.TrainingPair]) -> list[Vibe]:
    from engine.discover.llm import discover_with_llm
    from engine.execute.run import execute

    spec = prepared.spec
    d = spec.discovery
    assert d is not None and d.proposer is not None
    proposer = spec.judges[d.proposer]
    assert proposer.endpoint is not None

    def score(vibes: list[Vibe]) -> np.ndarray:
        scored = with_vibes(prepared, vibes)
        execute(scored, Path(".vibe-discovery"), cache, quiet=True, stages=("judge",), write=False)
        # the panel's verdicts ν (training pairs × vibes), from the analysis' own method: discovery holds none
        results = cache.get_many(t.id for t in scored.plan.tasks)
        return np.asarray(get_method(analysis.method).train_verdicts(scored, analysis, results, vibes), dtype=float)

    return discover_with_llm(pairs, d, proposer, cache, score, seed=split_seed(analysis))


def discover_vibes(prepared: Prepared, cache: Cache) -> tuple[list[Vibe], dict[str, str]]:
    """New vibes for every analysis whose method discovers, with where each came from."""
    spec = prepared.spec
    d = spec.discovery
    assert d is not None
    declared_metrics = {v.metric for v in spec.vibes if v.metric is not None}
    found: list[Vibe] = []
    origins: dict[str, str] = {}
    for analysis in spec.analyses.values():
        if not get_method(analysis.method).discovers:
            continue
        pairs = training_pairs(prepared, analysis, cache)
        if d.method == "llm":
            proposed = [(v, f"LLM proposer {d.proposer}") for v in _llm_vibes(prepared, analysis, cache, pairs)]
        else:
            clusters = any(spec.judges[j].kind_of.reads_examples for j in PairOptions.of(analysis).judges)
            settings = {"models": list(discovery_sides(analysis)), "max_vibes": d.max_vibes,
                        "seed": split_seed(analysis),
                        "exclude_metrics": sorted(declared_metrics), "clusters": clusters}
            proposed = [(c.vibe, c.origin) for c in _statistical(pairs, settings, cache)]
        for vibe, origin in proposed:
            if vibe.name in origins or any(v.name == vibe.name for v in spec.vibes):
                continue
            found.append(vibe)
            origins[vibe.name] = f"discovered ({origin}, {len(pairs)} training pairs)"
    return found, origins


def _statistical(pairs: list[discovery.TrainingPair], settings: dict, cache: Cache) -> list[discovery.Candidate]:
    """Statistical discovery, read back when the same training pairs (texts and labels) and settings were
    seen before: it is deterministic, and on a large spec most of a re-run's time."""
    def compute() -> list[discovery.Candidate]:
        model_a, model_b = settings["models"]
        return discovery.discover(pairs, model_a, model_b, max_vibes=settings["max_vibes"],
                                  exclude_metrics=frozenset(settings["exclude_metrics"]),
                                  clusters=settings["clusters"], seed=settings["seed"])

    inputs = {"settings": settings, "pairs": [[p.output_a, p.output_b, p.a_preferred] for p in pairs]}
    return derived.cached("discovery", inputs, compute,
                          lambda found: json.dumps([{**asdict(c.vibe), "origin": c.origin, "members": c.members}
                                                    for c in found]).encode("utf-8"),
                          lambda data: [_candidate(record) for record in json.loads(data)],
                          module=discovery.__name__)


def _candidate(record: dict) -> discovery.Candidate:
    members = record.get("members")
    return discovery.Candidate(_vibe(record), record["origin"], tuple(members) if members else None)


def with_vibes(prepared: Prepared, vibes: list[Vibe]) -> Prepared:
    """The run with discovered vibes added to the spec and to each analysis whose method discovers."""
    names = [v.name for v in vibes]
    analyses = {name: get_method(a.method).with_discovered(a, names) for name, a in prepared.spec.analyses.items()}
    spec = replace(prepared.spec, vibes=(*prepared.spec.vibes, *vibes), analyses=analyses)
    return Prepared(spec, prepared.items, compile_plan(spec, prepared.items))


def vibes_yaml(vibes: list[Vibe], origins: dict[str, str]) -> str:
    """Discovered vibes as a `vibes:` block to paste into a spec."""
    entries = [{"name": v.name, "low": v.low, "high": v.high, **({"metric": v.metric} if v.metric else {}),
                **({"examples": {"low": list(v.examples.low), "high": list(v.examples.high)}} if v.examples else {})}
               for v in vibes]
    header = "".join(f"# {v.name}: {origins.get(v.name, '')}{LEXICON_CAVEAT if _is_lexicon(v) else ''}\n"
                     for v in vibes)
    return header + yaml.dump({"vibes": entries}, Dumper=_ReadableDumper, sort_keys=False, allow_unicode=True,
                              width=120)


LEXICON_CAVEAT = (" -- its phrases come from these training pairs: declared in a spec with the same split, it is "
                  "scored in-sample there; a fresh split or new data keeps the regressions honest")


def _is_lexicon(vibe: Vibe) -> bool:
    return (vibe.metric or "").startswith(PHRASES_PREFIX)


class _ReadableDumper(yaml.SafeDumper):
    """Multi-line strings (example answers) as literal blocks, so they read as they were written."""


_ReadableDumper.add_representer(str, lambda dumper, text: dumper.represent_scalar(
    "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None))


def write_discovered(vibes: list[Vibe], origins: dict[str, str], run_dir: Path) -> Path:
    """The YAML to paste into a spec, and a JSON twin that `vibe report` reads back."""
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "discovered_vibes.yaml"
    path.write_text(vibes_yaml(vibes, origins), encoding="utf-8")
    records = [{**asdict(v), "judges": list(v.judges), "origin": origins.get(v.name, "")} for v in vibes]
    (run_dir / "discovered_vibes.json").write_text(json.dumps(records, indent=1), encoding="utf-8")
    return path


def read_discovered(run_dir: Path) -> tuple[list[Vibe], dict[str, str]]:
    path = run_dir / "discovered_vibes.json"
    if not path.exists():
        return [], {}
    records = json.loads(path.read_text(encoding="utf-8"))
    return [_vibe(r) for r in records], {r["name"]: r["origin"] for r in records}


def _vibe(record: dict) -> Vibe:
    """A vibe from its JSON record (`asdict` of it), as discovery's cache and discovered_vibes.json hold it."""
    return Vibe(record["name"], record["low"], record["high"], record.get("metric"),
                tuple(record.get("judges", ())), vibe_examples(record.get("examples")))
