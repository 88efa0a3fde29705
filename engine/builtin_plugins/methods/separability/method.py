"""Generation separability (seed 001): K samples per model and prompt at a set temperature; δ per prompt is
how much more alike a model's own samples are than the two models' samples are to each other. With a
`preference_judge`, sep-Elo weighs that judge's pairwise outcomes by each prompt's δ.

The statistics live in `engine.builtin_plugins.methods.separability.analysis`; imported when a run reaches them.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any, ClassVar

from engine.api.judging import is_recorded, prompts
from engine.api.methods import AnalysisMethod, Builder, Page, analysis_method
from engine.api.records import Prepared, Result
from engine.api.spec import Analysis, PathKey, SpecChecker
from engine.builtin_plugins.methods.separability.options import SeparabilityOptions


@analysis_method("separability")
class Separability(AnalysisMethod):
    options = SeparabilityOptions
    sections = ("separability",)
    stages: ClassVar[dict[str, str]] = {"preference": "before judging"}  # which answer the judges prefer

    def check(self, c: SpecChecker, path: PathKey, analysis: dict[str, Any]) -> None:
        models = analysis.get("models", [])
        if len(models) < 2:
            c.report((*path, "models"), "separability needs at least 2 models")
        for i, model in enumerate(models):
            if is_recorded(c.section("models").get(model, {}).get("provider")):
                c.report((*path, "models", i), "separability samples K generations; a recorded model cannot")
        if analysis.get("preference_judge") is not None:
            c.judge_for((*path, "preference_judge"), analysis["preference_judge"], "text")
        encoder = analysis.get("encoder")
        folder = c.file_path((*path, "encoder", "path"), encoder["path"]) if encoder is not None else None
        if folder is not None and not folder.is_dir():
            c.report((*path, "encoder", "path"), f"no model folder at {folder}")

    def plan(self, builder: Builder, a: Analysis) -> None:
        """K samples per model and prompt; a preference judge compares the two models' j-th samples for
        every j (both orders)."""
        opts = SeparabilityOptions.of(a)
        judge = builder.spec.judges.get(opts.preference_judge or "")
        for item in builder.items[a.dataset]:
            outputs = {model: [builder.generation(a.name, model, a.dataset, item, sample=s,
                                                  temperature=opts.temperature) for s in range(opts.samples)]
                       for model in a.models}
            builder.bind(a.name, item, {model: [task for task, _ in made] for model, made in outputs.items()})
            if judge is None:
                continue
            for first, second in itertools.combinations(a.models, 2):
                for (ga, ta), (gb, tb) in zip(outputs[first], outputs[second], strict=True):
                    builder.judge_pair("preference", a.name, judge, item, prompts.PREFERENCE,
                                       {"prompt": item.prompt}, (ga, gb), ta + tb)

    def analyze(self, prepared: Prepared, analysis: Analysis, results: dict[str, Result], run_dir: Path,
                origins: dict[str, str]) -> dict[str, list[Any]]:
        from engine.builtin_plugins.methods.separability.analysis import analyze_separability

        found = analyze_separability(prepared, analysis, results)
        for sep in found:
            out_dir = run_dir / analysis.name
            out_dir.mkdir(parents=True, exist_ok=True)
            (out_dir / f"delta-{sep.model_a}-vs-{sep.model_b}.json").write_text(
                json.dumps(asdict(sep), indent=1), encoding="utf-8")
        return {"separability": found}

    def section(self, name: str, result: Any, page: Page) -> list[dict[str, Any]]:
        from engine.api.report import charts, slug
        from engine.builtin_plugins.methods.separability.charts import delta_histogram

        spec = delta_histogram([i.delta for i in result.items], f"δ ({result.similarity})")
        chart = f"{slug(result.analysis)}-{slug(result.model_a)}-vs-{slug(result.model_b)}-delta"
        charts.export(spec, page.run_dir / "charts" / chart)
        items = {it.id: it for it in page.prepared.items[page.prepared.spec.analyses[result.analysis].dataset]}
        top = [(s, items[s.item_id].prompt) for s in result.items[:5]]
        bottom = [(s, items[s.item_id].prompt) for s in result.items[-3:]]
        return [{"result": result, "chart": spec, "top": top, "bottom": bottom, "chart_file": f"charts/{chart}.svg"}]
