"""Report stage: typed analysis results → a self-contained static leaderboard folder.

    index.html                 the leaderboard: every analysis, every vibe, its numbers and their caveats
    vibes/<analysis>-<vibe>.html  definition, verdict distribution, per-model measures, telling examples
    samples/<analysis>-<n>.html   the drill-down, 50 pairs a page: prompt, both outputs, every verdict
    answers/<analysis>-<n>.html   every rated answer, 25 prompts a page: reference, ratings, the judge's reasons
    answers/<analysis>-<persona>-<n>.html  every prompt as one persona's: both answers, per-dimension verdicts
    charts/*.svg, *.png        every chart, for READMEs and PRs
    assets/                    the Vega bundle and the stylesheet: no CDN, works from file://

All text from models, prompts and judges goes through Jinja2 autoescaping; chart data is embedded as
escaped JSON. Nothing from the environment is rendered.
"""

from __future__ import annotations

import math
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from engine.analyze.heldout import Accuracy, HeldOutFit
from engine.analyze.personas import PersonaResult
from engine.analyze.reference import ReferenceResult
from engine.analyze.reliability import CONSISTENCY_MIN
from engine.analyze.results import RunResults
from engine.analyze.vibecheck import PairVerdicts, VibeCheckResult, VibeScore
from engine.records import Prepared, Result, Task
from engine.report import charts, headline
from engine.report.incomplete import incomplete_work, read_failures
from engine.report.paging import PAIRS_PER_PAGE, Sample, slug, text_of, write_pages
from engine.report.profile_pages import render_profiles
from engine.spec.model import REPORT_FOLDERS

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
ITEMS_PER_PAGE = 25
EXAMPLES_PER_VIBE = 3
PREVIEW_CHARS = 1200


def environment() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html", "j2"]),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["json"] = charts.safe_json
    env.filters["pct"] = lambda x: "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1%}"
    env.filters["num"] = lambda x, digits=2: "—" if x is None else f"{x:.{digits}f}"
    env.filters["pval"] = lambda p: "—" if p is None else ("<0.001" if p < 0.001 else f"{p:.3f}")
    env.filters["clip"] = lambda text, n=PREVIEW_CHARS: text if len(text) <= n else text[:n] + " …"
    env.globals["consistency_min"] = CONSISTENCY_MIN
    return env


def render_report(results: RunResults, prepared: Prepared, run_dir: Path, outputs: dict[str, Result]) -> Path:
    env = environment()
    for sub in REPORT_FOLDERS[:-1]:  # every page folder; assets are rewritten below
        shutil.rmtree(run_dir / sub, ignore_errors=True)
        (run_dir / sub).mkdir(parents=True)
    assets = run_dir / "assets"
    charts.write_vega_bundle(assets)
    shutil.copy(TEMPLATES / "style.css", assets / "style.css")
    failures = read_failures(run_dir)
    judges, failed_judges = _judges(prepared, outputs, failures)
    incomplete = incomplete_work(prepared.plan, outputs, failures, set(prepared.spec.judges))
    analyses = [_render_vibecheck(env, vc, prepared, run_dir, outputs) for vc in results.vibecheck]
    rankings = []
    for result in results.rankings:
        for ranking in result.rankings:
            spec = charts.ratings_chart([asdict(r) for r in ranking.ratings], f"{ranking.method} rating (95% CI)")
            charts.export(spec, run_dir / "charts" / f"{slug(result.analysis)}-{ranking.method}")
            rankings.append({"analysis": result.analysis, "source": result.outcomes, "ranking": ranking,
                             "warnings": result.warnings,
                             "chart": spec, "chart_file": f"charts/{slug(result.analysis)}-{ranking.method}.svg"})
    separability = []
    for sep in results.separability:
        spec = charts.delta_histogram([i.delta for i in sep.items], f"δ ({sep.similarity})")
        name = f"{slug(sep.analysis)}-{slug(sep.model_a)}-vs-{slug(sep.model_b)}-delta"
        charts.export(spec, run_dir / "charts" / name)
        items = {it.id: it for it in prepared.items[prepared.spec.analyses[sep.analysis].dataset]}
        top = [(s, items[s.item_id].prompt) for s in sep.items[:5]]
        bottom = [(s, items[s.item_id].prompt) for s in sep.items[-3:]]
        separability.append({"result": sep, "chart": spec, "top": top, "bottom": bottom,
                             "chart_file": f"charts/{name}.svg"})
    reference = [_render_reference(env, ref, prepared, run_dir, outputs) for ref in results.reference]
    personas = [_persona_section(env, p, prepared, run_dir, outputs) for p in results.personas]
    profiles = [render_profiles(env, p, prepared, run_dir, outputs) for p in results.profiles]
    page = env.get_template("index.html.j2").render(
        results=results, manifest=results.manifest, judges=judges, failed_judges=failed_judges, analyses=analyses,
        rankings=rankings, separability=separability, reference=reference, personas=personas, profiles=profiles,
        skipped=prepared.spec.skipped_judges, incomplete=incomplete, root=".")
    (run_dir / "index.html").write_text(page, encoding="utf-8")
    return run_dir / "index.html"


def _judges(prepared: Prepared, outputs: dict[str, Result],
            failures: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The judges that produced at least one verdict, and those planned that produced none, each with the
    first error its calls met (from failures.jsonl) so the page can say why and what to do."""
    planned: dict[str, int] = {}
    for task in prepared.plan.tasks:
        if task.endpoint in prepared.spec.judges:
            planned[task.endpoint] = planned.get(task.endpoint, 0) + 1
    done = {r.endpoint for r in outputs.values() if r.endpoint in prepared.spec.judges}
    errors: dict[str, str] = {}
    for failure in failures:
        errors.setdefault(failure["endpoint"], failure["error"])
    asked_schema: dict[str, list[Result]] = {}
    for task in prepared.plan.tasks:
        if "answer" in task.request and task.id in outputs:
            asked_schema.setdefault(task.endpoint, []).append(outputs[task.id])
    ran, failed = [], []
    for j in prepared.spec.judges.values():
        row = {"name": j.name, "kind": j.kind, "model": j.endpoint.model if j.endpoint else None,
               "form": _answer_form(j.answers_in_schema, asked_schema.get(j.name, []))}
        if j.name in done:
            ran.append(row)
        elif planned.get(j.name):
            failed.append({**row, "tasks": planned[j.name], "error": errors.get(j.name, "its tasks did not finish"),
                           "key": j.endpoint.api_key_env if j.endpoint else None})
    return ran, failed


def _answer_form(in_schema: bool, answers: list[Result]) -> str:
    """How an LLM judge's answers came back: in its JSON schema, or in free text (asked for, or because the
    endpoint refused the schema and the run fell back)."""
    if not in_schema:
        return "answers in free text (structured: off)"
    free = sum(r.meta.get("structured") is False for r in answers)
    if not free:
        return f"{len(answers)} answers in its JSON schema" if answers else ""
    return (f"{free} of {len(answers)} answers in free text: the endpoint refused the JSON schema, so the run "
            "answered in free text for the rest of it")


def _render_vibecheck(env: Environment, vc: VibeCheckResult, prepared: Prepared, run_dir: Path,
                      outputs: dict[str, Result]) -> dict[str, Any]:
    items = {it.id: it for it in prepared.items[prepared.spec.analyses[vc.analysis].dataset]}
    samples = [Sample(p, items[p.item_id].prompt, text_of(outputs, p.output_a), text_of(outputs, p.output_b),
                      f"{slug(vc.analysis)}-{n // PAIRS_PER_PAGE + 1}.html") for n, p in enumerate(vc.pairs)]
    sep_chart = charts.separability_chart(headline.chart_rows(vc), vc.model_a, vc.model_b)
    charts.export(sep_chart, run_dir / "charts" / f"{slug(vc.analysis)}-separability")
    acc_rows = [{"task": name, "rule": rule.rule, "accuracy": rule.accuracy, "ci_low": rule.ci_low,
                 "ci_high": rule.ci_high, "n_test": rule.n}
                for name, reg in (("model matching", vc.model_matching), ("preference", vc.preference)) if reg
                for rule in _accuracies(reg)]
    acc_chart = charts.accuracy_chart(acc_rows) if acc_rows else None
    vibe_pages = {}
    for vibe in vc.vibes:
        vibe_pages[vibe.name] = f"vibes/{slug(vc.analysis)}-{slug(vibe.name)}.html"
        _render_vibe_page(env, vc, vibe, samples, run_dir / vibe_pages[vibe.name], run_dir)
    regressions_page = f"{slug(vc.analysis)}-regressions.html"
    (run_dir / regressions_page).write_text(env.get_template("regressions.html.j2").render(vc=vc, root="."),
                                            encoding="utf-8")
    write_pages(env, "samples.html.j2", run_dir / "samples", slug(vc.analysis), "samples", samples, PAIRS_PER_PAGE,
                 vc=vc, vibe_names=[v.name for v in vc.vibes])
    ranked = sorted(vc.vibes, key=lambda v: (not v.kept, -abs(v.separability if v.separability is not None
                                                              else v.separability_train)))
    return {"result": vc, "ranked": ranked, "sep_chart": sep_chart, "regressions_page": regressions_page,
            "headline": headline.headline(vc),
            "acc_chart": acc_chart, "vibe_pages": vibe_pages,
            "samples_page": f"samples/{slug(vc.analysis)}-1.html", "pairs": len(vc.pairs),
            "n_train": sum(p.split == "train" for p in vc.pairs), "n_test": sum(p.split == "test" for p in vc.pairs),
            "chart_file": f"charts/{slug(vc.analysis)}-separability.svg"}


def _accuracies(reg: HeldOutFit) -> list[Accuracy]:
    """The regression's own accuracy first, then its baselines on the same test pairs."""
    return [Accuracy("vibes", reg.test_accuracy, reg.ci_low, reg.ci_high, reg.n_test), *reg.baselines]


def _render_reference(env: Environment, ref: ReferenceResult, prepared: Prepared, run_dir: Path,
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
            "subsets": subsets, "has_recorded": has_recorded, "rounds": analysis.options.get("bootstrap", 1000),
            "by_subset": {s.model: {sub.subset: sub for sub in s.subsets} for s in ref.scores}}


def _persona_section(env: Environment, result: PersonaResult, prepared: Prepared, run_dir: Path,
                     outputs: dict[str, Result]) -> dict[str, Any]:
    """The index section's chart, plus a drill-down per persona: every prompt as the models saw it."""
    rows = []
    for p in result.personas:
        for c in p.cells:
            if not c.votes:
                continue
            for rank_, (outcome, votes) in enumerate(((f"{result.model_a} wins", c.a_wins), ("tie", c.ties),
                                                      (f"{result.model_b} wins", c.b_wins))):
                rows.append({"condition": f"{p.persona} · {c.prompt_type}", "outcome": outcome, "votes": votes,
                             "share": votes / c.votes, "rank": rank_})
    spec = charts.persona_chart(rows, result.model_a, result.model_b)
    name = f"{slug(result.analysis)}-personas"
    charts.export(spec, run_dir / "charts" / name)
    tasks = {t.id: t for t in prepared.plan.tasks}
    bindings = {(b.item, b.variant): b for b in prepared.plan.bindings.get(result.analysis, [])}
    pages = {}
    for p in result.personas:
        entries = []
        for sample in (s for s in result.samples if s.persona == p.persona):
            binding = bindings[(sample.item_id, f"{p.persona}/{sample.variant}")]
            ga, gb = binding.outputs[result.model_a][0], binding.outputs[result.model_b][0]
            entries.append({"sample": sample, "prompt": _shown_prompt(tasks[ga], outputs),
                            "answer_a": text_of(outputs, ga), "answer_b": text_of(outputs, gb)})
        prefix = f"{slug(result.analysis)}-{slug(p.persona)}"
        write_pages(env, "personas.html.j2", run_dir / "answers", prefix, "entries", entries, ITEMS_PER_PAGE,
                     pr=result, persona=p.persona, weights=p.weights)
        pages[p.persona] = f"answers/{prefix}-1.html"
    return {"result": result, "chart": spec, "chart_file": f"charts/{name}.svg", "pages": pages}


def _shown_prompt(generation: Task, outputs: dict[str, Result]) -> str:
    """The user message a generation answered: an LLM rewrite's output, or the planned text."""
    source = generation.request.get("prompt_from")
    if source:
        return text_of(outputs, source)
    content = generation.request["messages"][-1]["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


def _render_vibe_page(env: Environment, vc: VibeCheckResult, vibe: VibeScore, samples: list[Sample], path: Path,
                      run_dir: Path) -> None:
    counts = {"-1": 0, "0": 0, "1": 0}
    for s in samples:
        counts[str(s.pair.nu[vibe.name])] += 1
    dist = charts.verdict_distribution_chart(counts, vc.model_a, vc.model_b)
    charts.export(dist, run_dir / "charts" / f"{slug(vc.analysis)}-{slug(vibe.name)}-verdicts")
    measures = _measures(vc, vibe)
    measure_spec = (charts.measure_chart(measures["values"], measures["name"], vc.model_a, vc.model_b)
                    if measures["values"] else None)
    examples, against = _telling(samples, vibe)
    html = env.get_template("vibe.html.j2").render(vc=vc, vibe=vibe, dist=dist, measure=measure_spec,
                                                   measure_name=measures["name"], examples=examples, against=against,
                                                   root="..")
    path.write_text(html, encoding="utf-8")


def _telling(samples: list[Sample], vibe: VibeScore) -> tuple[list[Sample], list[Sample]]:
    """Pairs that show the vibe's measured direction (the side its separability leans to), clearest first,
    and one that goes against it, so a reader sees both what the number says and that it is a tendency."""
    lean = vibe.separability if vibe.separability is not None else vibe.separability_train
    sign = 1 if lean > 0 else -1
    decided = sorted((s for s in samples if s.pair.nu[vibe.name] != 0), key=lambda s: -_strength(s.pair, vibe.name))
    if lean == 0:
        return decided[:EXAMPLES_PER_VIBE], []
    return ([s for s in decided if s.pair.nu[vibe.name] == sign][:EXAMPLES_PER_VIBE],
            [s for s in decided if s.pair.nu[vibe.name] == -sign][:1])


def _strength(pair: PairVerdicts, vibe: str) -> float:
    """How clear-cut a pair is for a vibe: judges that agree with the panel verdict, then fewer abstentions."""
    scores = [s for s in pair.by_judge[vibe].values() if s is not None]
    return sum(s == pair.nu[vibe] for s in scores) + 0.01 * len(scores)


def _measures(vc: VibeCheckResult, vibe: VibeScore) -> dict[str, Any]:
    """Per-model values of the vibe's measured property, as the metric judge recorded them."""
    values = [{"model": model, "value": pair.measures[vibe.name][side]}
              for pair in vc.pairs if vibe.name in pair.measures
              for side, model in enumerate((vc.model_a, vc.model_b))]
    return {"name": vibe.metric or "", "values": values}
