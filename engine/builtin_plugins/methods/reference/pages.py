"""A reference-rated analysis on the leaderboard: its section's scores and chart, and every rated answer
beside its reference, with the judge's reasons."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment

from engine.api.records import Prepared, Result
from engine.api.report import ITEMS_PER_PAGE, charts, slug, text_of, write_pages
from engine.builtin_plugins.methods.reference.options import ReferenceOptions
from engine.builtin_plugins.methods.reference.scores import ReferenceResult


def reference_section(env: Environment, ref: ReferenceResult, prepared: Prepared, run_dir: Path,
                      outputs: dict[str, Result]) -> dict[str, Any]:
    """The index section's figures, plus the drill-down: every prompt with each model's rating and reason."""
    analysis = prepared.spec.analyses[ref.analysis]
    items = {it.id: it for it in prepared.items[analysis.dataset]}
    answers = {(b.item, model): text_of(outputs, gen) for b in prepared.plan.bindings.get(ref.analysis, [])
               for model, (gen,) in b.outputs.items()}
    by_item: dict[str, list[tuple[Any, str]]] = {}
    for r in ref.ratings:
        by_item.setdefault(r.item_id, []).append((r, answers.get((r.item_id, r.model), "")))
    entries = [{"item_id": i, "subset": rows[0][0].subset, "prompt": items[i].prompt,
                "reference": items[i].reference or "", "rows": sorted(rows, key=lambda x: -(x[0].rating or 0))}
               for i, rows in by_item.items()]
    has_recorded = any(r.recorded is not None for r in ref.ratings)
    prefix = slug(ref.analysis)
    write_pages(env, "reference.html.j2", run_dir / "answers", prefix, "entries", entries, ITEMS_PER_PAGE, ref=ref,
                 has_recorded=has_recorded)
    overall = [{"model": s.model, "rating": s.subsets[0].score, "ci_low": s.subsets[0].ci_low,
                "ci_high": s.subsets[0].ci_high} for s in ref.scores if s.subsets[0].n]
    spec = charts.ratings_chart(overall, "score % against the references (95% CI)")
    charts.export(spec, run_dir / "charts" / f"{prefix}-reference")
    subsets = list(dict.fromkeys(sub.subset for s in ref.scores for sub in s.subsets))
    return {"result": ref, "kind": prepared.spec.judges[ref.judge].kind, "chart": spec,
            "chart_file": f"charts/{prefix}-reference.svg", "page": f"answers/{prefix}-1.html",
            "subsets": subsets, "has_recorded": has_recorded, "rounds": ReferenceOptions.of(analysis).bootstrap,
            "by_subset": {s.model: {sub.subset: sub for sub in s.subsets} for s in ref.scores}}
