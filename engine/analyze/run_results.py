"""Analyze stage: every analysis of a spec over a finished run, each by its registered method, gathered by
report section into one `RunResults` the report reads."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.records import Prepared, Result
from engine.registry import get_method


@dataclass
class RunResults:
    spec_name: str
    title: str
    description: str
    manifest: dict[str, Any]
    sections: dict[str, list[Any]] = field(default_factory=dict)  # report section -> its results, spec order
    methods: list[str] = field(default_factory=list)  # the analysis methods that ran, in spec order

    def of(self, section: str) -> list[Any]:
        """The results of one report section, in spec order (none when no analysis filled it)."""
        return self.sections.get(section, [])


def analyze_run(prepared: Prepared, results: dict[str, Result], run_dir: Path,
                origins: dict[str, str] | None = None) -> RunResults:
    """`results`: the finished tasks' results (from the cache), read once by the caller and shared with the
    report stage. `origins`: a discovered vibe's name -> how it was found (discovery's held-out rule)."""
    out = unanalyzed(prepared, run_dir)
    spec = prepared.spec
    out.methods = list(dict.fromkeys(a.method for a in spec.analyses.values()))
    for analysis in spec.analyses.values():
        found = get_method(analysis.method).analyze(prepared, analysis, results, run_dir, origins or {})
        for section, section_results in found.items():
            out.sections.setdefault(section, []).extend(section_results)
    return out


def unanalyzed(prepared: Prepared, run_dir: Path) -> RunResults:
    """A run's results with no analysis in them: what an interrupted run returns, since figures computed on
    whatever finished before Ctrl-C would read as the run's results (and take time the user asked back)."""
    spec = prepared.spec
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    return RunResults(spec.name, spec.report.get("title") or spec.name, spec.description, manifest)
