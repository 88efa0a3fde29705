"""Analyze stage: every analysis of a spec over a finished run, as one typed `RunResults` the report reads."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from engine.analyze.vibecheck import VibeCheckResult, analyze_vibecheck, write_vibecheck
from engine.execute.cache import Cache
from engine.pipeline import Prepared


@dataclass
class RunResults:
    spec_name: str
    title: str
    description: str
    manifest: dict
    vibecheck: list[VibeCheckResult] = field(default_factory=list)


def analyze_run(prepared: Prepared, cache: Cache, run_dir: Path, origins: dict[str, str] | None = None) -> RunResults:
    spec = prepared.spec
    results = cache.get_many(t.id for t in prepared.plan.tasks)
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    out = RunResults(spec.name, spec.report.get("title") or spec.name, spec.description, manifest)
    for analysis in spec.analyses.values():
        if analysis.method == "vibecheck":
            result = analyze_vibecheck(prepared, analysis, results, origins)
            write_vibecheck(result, run_dir)
            out.vibecheck.append(result)
    return out
