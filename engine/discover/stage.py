"""Discovery as a pipeline step: every analysis whose method discovers proposes vibes from the training pairs
a run produced (`AnalysisMethod.propose_vibes`; how is the method's business), and they are added to the spec
so that the next plan judges them like declared ones; they are written to the run folder for `vibe report` and
for pasting into a spec."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import yaml

from engine.execute.cache import Cache
from engine.judges.metrics import PHRASES_PREFIX
from engine.planner import compile_plan
from engine.records import Prepared
from engine.registry import get_method
from engine.spec.model import Vibe, vibe_examples


def discover_vibes(prepared: Prepared, cache: Cache) -> tuple[list[Vibe], dict[str, str]]:
    """New vibes for every analysis whose method discovers (its `propose_vibes`), with where each came from;
    a name already declared, or found for an earlier analysis, is kept once."""
    spec = prepared.spec
    found: list[Vibe] = []
    origins: dict[str, str] = {}
    for analysis in spec.analyses.values():
        method = get_method(analysis.method)
        if not method.discovers:
            continue
        for vibe, origin in method.propose_vibes(prepared, analysis, cache):
            if vibe.name in origins or any(v.name == vibe.name for v in spec.vibes):
                continue
            found.append(vibe)
            origins[vibe.name] = origin
    return found, origins


def with_vibes(prepared: Prepared, vibes: list[Vibe]) -> Prepared:
    """The run with discovered vibes added to the spec and to each analysis whose method discovers (what its
    readers said of the data kept)."""
    names = [v.name for v in vibes]
    analyses = {name: get_method(a.method).with_discovered(a, names) for name, a in prepared.spec.analyses.items()}
    spec = replace(prepared.spec, vibes=(*prepared.spec.vibes, *vibes), analyses=analyses)
    return replace(prepared, spec=spec, plan=compile_plan(spec, prepared.items, earlier=prepared.plan))


def vibe_entry(v: Vibe) -> dict[str, Any]:
    """A vibe as a spec's `vibes:` list writes it."""
    return {"name": v.name, "low": v.low, "high": v.high, **({"metric": v.metric} if v.metric else {}),
            **({"examples": {"low": list(v.examples.low), "high": list(v.examples.high)}} if v.examples else {})}


def vibes_yaml(vibes: list[Vibe], origins: dict[str, str]) -> str:
    """Discovered vibes as a `vibes:` block to paste into a spec."""
    entries = [vibe_entry(v) for v in vibes]
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
    return [vibe_from_record(r) for r in records], {r["name"]: r["origin"] for r in records}


def vibe_from_record(record: dict) -> Vibe:
    """A vibe from its JSON record (`asdict` of it), as discovery's cache and discovered_vibes.json hold it."""
    return Vibe(record["name"], record["low"], record["high"], record.get("metric"),
                tuple(record.get("judges", ())), vibe_examples(record.get("examples")))
