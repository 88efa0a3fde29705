"""Report stage: typed analysis results → a self-contained static leaderboard folder.

    index.html                 the leaderboard: every analysis, every vibe, its numbers and their caveats; one
                               section per analysis, rendered by its method (`engine/builtin_plugins/methods/`)
    vibes/<analysis>-<vibe>.html  definition, verdict distribution, per-model measures, telling examples
    explore/<analysis>.html    every pair, filtered, sorted and searched in the page: prompt, both answers
                               (Markdown rendered and sanitized, or raw), every verdict and the judges' reasons;
                               its data in explore/<analysis>/ (see `engine.builtin_plugins.methods.vibecheck.explorer`)
    answers/<analysis>-<n>.html   every rated answer, 25 prompts a page: reference, ratings, the judge's reasons
    answers/<analysis>-<persona>-<n>.html  every prompt as one persona's: both answers, per-dimension verdicts
    charts/*.svg, *.png        every chart, for READMEs and PRs
    assets/                    the Vega bundle and the stylesheet: no CDN, works from file://

All text from models, prompts and judges goes through Jinja2 autoescaping; chart data is embedded as
escaped JSON. Nothing from the environment is rendered.
"""

from __future__ import annotations

import importlib.util
import math
import shutil
from pathlib import Path
from typing import Any

from jinja2 import (
    ChoiceLoader,
    DictLoader,
    Environment,
    FileSystemBytecodeCache,
    FileSystemLoader,
    StrictUndefined,
    select_autoescape,
)
from markupsafe import Markup, escape

from engine import user_cache
from engine.analyze.reliability import CONSISTENCY_MIN
from engine.analyze.run_results import RunResults
from engine.judges.kinds import kind_of
from engine.judges.reading import verdict_reason
from engine.records import Prepared, Result
from engine.registry import AnalysisMethod, Page, get_method, method_names
from engine.report import charts, kind_badges
from engine.report.incomplete import incomplete_work, read_failures
from engine.spec.model import REPORT_FOLDERS


def _shared_templates() -> Path:
    """The report's shared templates (page shell, index, macros, stylesheet): the top-level templates/ folder of
    the source tree, shipped in the wheel as the package `engine.report.templates`. An editable install does
    not map a subpackage to another folder (pypa/setuptools#4248), so a checkout reads its templates/ itself."""
    found = importlib.util.find_spec("engine.report.templates")
    if found is not None and found.submodule_search_locations:
        return Path(next(iter(found.submodule_search_locations)))
    return Path(__file__).resolve().parents[2] / "templates"


TEMPLATES = _shared_templates()
PREVIEW_CHARS = 1200


def section_order() -> list[tuple[str, AnalysisMethod]]:
    """Every report section with the method that fills it, in page order: methods as registered, each
    method's sections as it lists them."""
    return [(section, method) for method in map(get_method, method_names()) for section in method.sections]


def _compiled_templates() -> FileSystemBytecodeCache | None:
    """Jinja's compiled templates kept beside vibe's other kept work (`engine.user_cache`), checked by Jinja
    against each template's source: compiling the report's templates took about half a second of every run."""
    folder = user_cache.folder() / "templates"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return FileSystemBytecodeCache(str(folder))


def environment() -> Environment:
    """The shared templates (`TEMPLATES`), and the section templates a method carries itself."""
    methods = list(dict.fromkeys(method for _, method in section_order()))
    own = {f"sections/{name}.html.j2": source for method in methods for name, source in method.templates.items()}
    folders = [folder for method in methods if (folder := method.template_folder()) is not None]
    env = Environment(loader=ChoiceLoader([FileSystemLoader([TEMPLATES, *folders]), DictLoader(own)]),
                      autoescape=select_autoescape(["html", "j2"]), trim_blocks=True, lstrip_blocks=True,
                      undefined=StrictUndefined, bytecode_cache=_compiled_templates())
    env.filters["json"] = charts.safe_json
    env.filters["pct"] = lambda x: "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1%}"
    env.filters["num"] = lambda x, digits=2: "—" if x is None else f"{x:.{digits}f}"
    env.filters["pval"] = lambda p: "—" if p is None else ("<0.001" if p < 0.001 else f"{p:.3f}")
    env.filters["clip"] = lambda text, n=PREVIEW_CHARS: text if len(text) <= n else text[:n] + " …"
    env.filters["reason"] = verdict_reason
    # a long snake_case name may break after its underscores, never inside a word
    env.filters["breakable"] = lambda name: Markup("_<wbr>").join(escape(str(name)).split("_"))
    env.filters["signed"] = lambda v: "—" if v is None else f"{v:+d}"
    env.globals["consistency_min"] = CONSISTENCY_MIN
    env.globals["judge_kinds"] = []  # the run's judge kinds (`kind_badges.badges`): the footer and badges' titles
    env.globals["kind_labels"] = {}
    return env


def use_kinds(env: Environment, names: list[str], assets: Path) -> None:
    """The pages of a run whose judges are of the kinds `names`: the footer describes each, every badge says
    what its kind is, and assets/kinds.css colours them."""
    shown = kind_badges.badges(names)
    env.globals["judge_kinds"] = shown
    env.globals["kind_labels"] = {k["name"]: k["label"] for k in shown}
    (assets / "kinds.css").write_text(kind_badges.badge_css(shown), encoding="utf-8")


def render_report(results: RunResults, prepared: Prepared, run_dir: Path, outputs: dict[str, Result]) -> Path:
    env = environment()
    pages = dict.fromkeys([*REPORT_FOLDERS, *(f for _, method in section_order() for f in method.report_folders)])
    for sub in [f for f in pages if f != "assets"]:  # every page folder; assets are rewritten below
        shutil.rmtree(run_dir / sub, ignore_errors=True)
        (run_dir / sub).mkdir(parents=True)
    shutil.rmtree(run_dir / "samples", ignore_errors=True)  # the paged drill-down the explorer replaced
    assets = run_dir / "assets"
    charts.write_vega_bundle(assets)
    shutil.copy(TEMPLATES / "style.css", assets / "style.css")
    use_kinds(env, [name for j in prepared.spec.judges.values() for name in (j.kind, kind_of(j).name)], assets)
    for method in map(get_method, method_names()):  # every method's, so a page of any run finds its scripts
        folder = method.template_folder()
        if folder is not None:
            for name in method.assets:
                shutil.copy(folder / name, assets / name)
    failures = read_failures(run_dir)
    judges, failed_judges, unasked = _judges(prepared, outputs, failures)
    for name, method in section_order():  # what each method says of a judge (agreement with people, …)
        for result in results.sections.get(name, []):
            for judge, lines in method.judge_notes(name, result).items():
                for row in judges + unasked:
                    if row["name"] == judge:
                        row["notes"].extend(lines)
    judges += [row for row in unasked if row["notes"]]  # a judge fitted at analysis time, that a method speaks of
    incomplete = incomplete_work(prepared.plan, outputs, failures, set(prepared.spec.judges))
    page = Page(env, prepared, run_dir, outputs)
    sections = [{"name": name, "template": f"sections/{name}.html.j2",
                 "items": [entry for result in results.sections[name] for entry in method.section(name, result, page)]}
                for name, method in section_order() if name in results.sections]
    html = env.get_template("index.html.j2").render(
        results=results, manifest=results.manifest, judges=judges, failed_judges=failed_judges, sections=sections,
        skipped=prepared.spec.skipped_judges, incomplete=incomplete, root=".")
    (run_dir / "index.html").write_text(html, encoding="utf-8")
    return run_dir / "index.html"


def _judges(prepared: Prepared, outputs: dict[str, Result], failures: list[dict[str, Any]]
            ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """The judges that produced at least one verdict; those planned that produced none, each with the first
    error its calls met (from failures.jsonl) so the page can say why and what to do; and those the plan asks
    nothing of (a judge whose verdicts come from a fit when the analysis runs, or one no analysis uses)."""
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
    ran, failed, unasked = [], [], []
    for j in prepared.spec.judges.values():
        kind = kind_of(j)
        form = None if kind.offline else _answer_form(kind.answers_in_schema(j), asked_schema.get(j.name, []))
        row: dict[str, Any] = {"name": j.name, "kind": j.kind, "model": j.endpoint.model if j.endpoint else None,
                               "notes": [], "form": form}
        if j.name in done:
            ran.append(row)
        elif planned.get(j.name):
            failed.append({**row, "tasks": planned[j.name], "error": errors.get(j.name, "its tasks did not finish"),
                           "key": j.endpoint.api_key_env if j.endpoint else None})
        else:
            unasked.append(row)
    return ran, failed, unasked


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


