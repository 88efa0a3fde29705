"""Reference-based rating (Vibe-Eval, seed 003): each model answers each prompt that has a reference; a
judge rates every answer against the reference, 1 to 5 (an LLM judge `repeats` times), and the analysis
reports score % per model and subset with intervals, pairwise rankings and agreement with recorded ratings.

Beside this module: the statistics (`scores.py`), the analysis that runs them (`analysis.py`) and the pages
(`pages.py`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from engine.api.data import dataset_format
from engine.api.judging import is_recorded
from engine.api.methods import AnalysisMethod, Builder, Page, PlanError, analysis_method, reference_corpus
from engine.api.records import Prepared, Result
from engine.api.spec import Analysis, PathKey, SpecChecker
from engine.builtin_plugins.methods.reference.options import ReferenceOptions


@analysis_method("reference")
class Reference(AnalysisMethod):
    options = ReferenceOptions
    sections = ("reference",)
    stages: ClassVar[dict[str, str]] = {"reference": "after judging"}  # each answer rated against the reference
    report_folders = ("answers",)

    def headline(self, folder: Path) -> list[str]:
        """The best model's score on its first subset, from reference.json."""
        path = folder / "reference.json"
        if not path.is_file():
            return []
        scores = json.loads(path.read_text(encoding="utf-8"))["scores"]
        if scores and scores[0]["subsets"]:
            return [f"top reference score {scores[0]['model']} {scores[0]['subsets'][0]['score']:.1f}%"]
        return []

    def check(self, c: SpecChecker, path: PathKey, analysis: dict[str, Any]) -> None:
        kind = c.judge_for((*path, "judge"), analysis["judge"], "reference")
        dataset = c.dataset(analysis)
        if kind is not None and kind.learns and dataset and not dataset.get("fields", {}).get("scores"):
            c.report((*path, "judge"), f"judge {analysis['judge']!r} is {kind.label}: it learns from the ratings "
                     f"dataset {analysis['dataset']!r} records, so map them (fields.scores: model → column)")
        if dataset and "reference" not in {**dataset_format(dataset.get("format")).fields,
                                           **dataset.get("fields", {})}:
            c.report((*path, "dataset"), f"reference judging needs fields.reference in dataset {analysis['dataset']!r}")

    def plan(self, builder: Builder, a: Analysis) -> None:
        opts = ReferenceOptions.of(a)
        judge = builder.spec.judges.get(opts.judge)
        if judge is None:  # the only way a validated name is missing: an optional judge without its key
            raise PlanError(f"analysis {a.name!r} rates with judge {opts.judge!r}, an optional judge whose "
                            "API key is not set; set the key or choose another judge")
        items = [item for item in builder.items[a.dataset] if item.reference]
        corpus, _ = reference_corpus(items)
        for item in items:
            outputs = {}
            for model in a.models:
                if is_recorded(builder.spec.models[model].provider) and model not in item.outputs:
                    continue  # pointwise: a missing recorded answer is unrated, and counted in the model's n
                output, tokens = builder.generation(a.name, model, a.dataset, item)
                outputs[model] = [output]
                for r in range(opts.repeats):
                    builder.judge_single("reference", a.name, judge, item, output, tokens, r, corpus)
            builder.bind(a.name, item, outputs)

    def analyze(self, prepared: Prepared, analysis: Analysis, results: dict[str, Result], run_dir: Path,
                origins: dict[str, str]) -> dict[str, list[Any]]:
        from engine.builtin_plugins.methods.reference.analysis import analyze_reference, write_reference

        result = analyze_reference(prepared, analysis, results)
        write_reference(result, run_dir)
        return {"reference": [result]}

    def section(self, name: str, result: Any, page: Page) -> list[dict[str, Any]]:
        from engine.builtin_plugins.methods.reference.pages import reference_section

        return [reference_section(page.env, result, page.prepared, page.run_dir, page.outputs)]
