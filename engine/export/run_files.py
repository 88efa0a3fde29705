"""What an export reads from a run directory: its manifest, plan bindings, generated answers and the pair
verdicts each VibeCheck comparison wrote, with its spec and prompts: from the spec file and its datasets while
they are there, else from the copies the run keeps (`engine.execute.snapshot`), so a run folder exports on
its own."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.datasets import DatasetError, Item, load_items
from engine.execute.snapshot import output_text, read_bindings, read_items, read_spec_document, task_records
from engine.spec.build import spec_from_document
from engine.spec.model import Spec


class ExportError(Exception):
    """A run directory that cannot be exported, and why."""


@dataclass(frozen=True)
class Comparison:
    """One VibeCheck comparison of a run: its two models and the verdicts on each pair (pairs.jsonl rows)."""

    analysis: str
    dataset: str
    model_a: str
    model_b: str
    pairs: list[dict[str, Any]]


@dataclass
class RunFiles:
    """A finished run as its folder holds it (spec, manifest, plan bindings, answers, results), read for an
    exporter."""

    run_dir: Path
    spec: Spec
    manifest: dict[str, Any]
    bindings: dict[str, list[dict[str, Any]]]  # analysis -> plan bindings (item, variant, outputs)
    answers: dict[str, str]  # generation task id -> answer text
    items: dict[str, dict[str, Item]] = field(default_factory=dict)  # dataset -> item id -> item
    kept_items: dict[str, list[Item]] | None = None  # the run folder's own copy of its prompts, once read

    @classmethod
    def open(cls, run_dir: Path, spec_file: Path | None = None) -> RunFiles:
        from engine.spec.load import SpecError, load_spec

        manifest_path = run_dir / "manifest.json"
        if not manifest_path.is_file():
            raise ExportError(f"{run_dir}: no manifest.json; point at a run directory (`vibe run` writes one)")
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        source = spec_file or Path(manifest["spec_path"])
        try:
            spec = load_spec(source)
        except (SpecError, OSError) as exc:
            kept = None if spec_file else read_spec_document(run_dir)
            if kept is None:
                raise ExportError(f"{run_dir}: the run's spec {source} cannot be read ({exc}); pass --spec") from None
            spec = spec_from_document(*kept)
        if spec.name != manifest["spec_name"]:
            raise ExportError(f"{source} is spec {spec.name!r}, but {run_dir} ran {manifest['spec_name']!r}; pass "
                              "--spec with the spec that made the run")
        bindings = read_bindings(run_dir)
        answers = {row["task_id"]: output_text(row) for row in task_records(run_dir, "generation")}
        return cls(run_dir, spec, manifest, bindings, answers)

    def dataset_items(self, dataset: str) -> dict[str, Item]:
        if dataset not in self.items:
            if self.kept_items is None:
                self.kept_items = read_items(self.run_dir) or {}
            if dataset in self.kept_items:
                self.items[dataset] = {it.id: it for it in self.kept_items[dataset]}
                return self.items[dataset]
            try:
                self.items[dataset] = {it.id: it for it in load_items(self.spec.datasets[dataset])}
            except DatasetError as exc:
                raise ExportError(f"the prompts of dataset {dataset!r} cannot be read again: {exc}") from None
        return self.items[dataset]

    def comparisons(self) -> list[Comparison]:
        """Every comparison the run wrote pair verdicts for (a comparison.json beside its pairs.jsonl), in the
        spec's order of analyses."""
        out = []
        for analysis in self.spec.analyses:
            for path in sorted((self.run_dir / analysis).glob("**/comparison.json")):
                about = json.loads(path.read_text(encoding="utf-8"))
                pairs = [json.loads(line) for line in (path.parent / "pairs.jsonl").read_text(
                    encoding="utf-8").splitlines() if line]
                out.append(Comparison(about["analysis"], about["dataset"], about["model_a"], about["model_b"], pairs))
        if not out:
            raise ExportError(f"{self.run_dir}: no pair verdicts to export (comparison.json and pairs.jsonl); "
                              "runs made before vibe export write them when `vibe run` runs them again (cached)")
        return out
