"""Report of a many-model vibecheck: the heatmap and per-vibe ranking on the leaderboard, one profile page per
model that says its strongest vibes in words, and every comparison's pairs as a drill-down."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment

from engine.api.records import Prepared, Result
from engine.api.report import charts, slug
from engine.builtin_plugins.methods.vibecheck import charts as own_charts
from engine.builtin_plugins.methods.vibecheck.explorer import link, write_explorer
from engine.builtin_plugins.methods.vibecheck.profiles import ProfileCell, ProfileResult

STRONGEST = 4  # vibes a profile states in words

# How a metric's measure reads in a sentence: a ratio of means (a count that scales) or the share of answers
# where it occurs at all (a density that is zero in most answers).
RATIO_UNITS = {"length_words": "words", "paragraphs": "paragraphs", "words_per_sentence": "words per sentence"}
SHARE_VERBS = {"list_density": "puts lines in lists", "heading_density": "uses headings", "bold_density": "uses bold",
               "code_blocks": "includes code", "emoji": "uses emoji", "exclamations": "uses exclamation marks",
               "questions_to_user": "asks the reader a question", "hedging": "hedges",
               "personal_pronouns": "speaks as I or to you", "warmth": "uses warm words",
               "formal_connectives": "uses formal connectives", "refusal": "declines or apologizes"}


def describe(cell: ProfileCell, low: str, high: str, metric: str | None, reference: str) -> str:
    """One profile cell in a sentence: which way the model leans and, where a metric measures the vibe, by
    how much in the metric's own terms."""
    assert cell.separability is not None and cell.ci_low is not None and cell.ci_high is not None
    direction = "more" if cell.separability > 0 else "less"
    lead = (f"{direction} {cell.vibe.replace('_', ' ')} than {reference} (separability {cell.separability:+.2f}, "
            f"95% interval {cell.ci_low:+.2f} to {cell.ci_high:+.2f}, {cell.n} prompts)")
    if metric in RATIO_UNITS and cell.measure is not None and cell.measure_reference:
        return (f"{lead}: writes {cell.measure / cell.measure_reference:.2g}× as many {RATIO_UNITS[metric]} "
                f"(mean {cell.measure:.3g} against {cell.measure_reference:.3g})")
    if metric in SHARE_VERBS and cell.share is not None and cell.share_reference is not None:
        return (f"{lead}: {SHARE_VERBS[metric]} in {cell.share:.0%} of its answers "
                f"({reference}: {cell.share_reference:.0%})")
    if metric and cell.measure is not None and cell.measure_reference is not None:
        return f"{lead}: {metric} averages {cell.measure:.3g} against {cell.measure_reference:.3g}"
    return f"{lead}: closer to “{high if cell.separability > 0 else low}”"


def strongest(result: ProfileResult, model: str) -> list[str]:
    """The model's clearest differences from the reference (significant after Benjamini–Hochberg over the
    profile's cells), largest first, in words."""
    vibes = {v.name: v for v in result.vibes}
    cells = sorted((c for c in result.cells if c.model == model and c.clear()), key=lambda c: -abs(c.separability or 0))
    return [describe(c, vibes[c.vibe].low, vibes[c.vibe].high, vibes[c.vibe].metric, result.reference)
            for c in cells[:STRONGEST]]


def heatmap_rows(result: ProfileResult, explorers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The heatmap's cells, the reference's own row (0 by definition) included; with `explorers` (model →
    its comparison's explorer) a cell links to that comparison's pairs, filtered to the vibe."""
    rates = {w.model: w.win_rate for w in result.winrates}
    explorers = explorers or {}
    rows = [{"model": c.model, "vibe": c.vibe, "separability": c.separability, "ci_low": c.ci_low,
             "ci_high": c.ci_high, "clear": c.clear(), "win_rate": rates.get(c.model),
             **({"explore": link(explorers[c.model], vibe=c.vibe)} if c.model in explorers else {})}
            for c in result.cells if c.separability is not None]
    rows += [{"model": result.reference, "vibe": v.name, "separability": 0.0, "ci_low": 0.0, "ci_high": 0.0,
              "clear": True, "win_rate": 0.5 if rates else None} for v in result.vibes]
    return rows


def render_profiles(env: Environment, result: ProfileResult, prepared: Prepared, run_dir: Path,
                    outputs: dict[str, Result]) -> dict[str, Any]:
    """The leaderboard section's charts and tables; writes the profile and drill-down pages."""
    prefix = slug(result.analysis)
    vibes = [v.name for v in result.vibes]
    explorers = {vc.model_a: write_explorer(env, vc, prepared, outputs, run_dir, f"{prefix}-{slug(vc.model_a)}", {},
                                            f"profiles/{prefix}-{slug(vc.model_a)}.html")
                 for vc in result.comparisons}
    rows = heatmap_rows(result, explorers)
    sort_options = ([own_charts.WIN_RATE] if result.winrates else []) + vibes
    heatmap = ranking = None  # no vibe to draw (discovery kept none): the table says so
    if vibes:
        heatmap = own_charts.profile_heatmap(rows, vibes, result.reference, sort_options)
        ranking = own_charts.vibe_ranking(rows, vibes, result.reference)
        charts.export(heatmap, run_dir / "charts" / f"{prefix}-heatmap")
        charts.export(ranking, run_dir / "charts" / f"{prefix}-ranking")
    sentences = {model: strongest(result, model) for model in result.models}
    pages = {}
    for vc in result.comparisons:
        pages[vc.model_a] = f"profiles/{prefix}-{slug(vc.model_a)}.html"
        html = env.get_template("profile.html.j2").render(
            pr=result, vc=vc, model=vc.model_a, sentences=sentences[vc.model_a],
            cells=[result.cell(vc.model_a, v) for v in vibes], winrate=result.winrate(vc.model_a),
            scores={s.name: s for s in vc.vibes}, explorer="../" + explorers[vc.model_a], root="..")
        (run_dir / pages[vc.model_a]).write_text(html, encoding="utf-8")
    kinds = sorted({kind for vc in result.comparisons for score in vc.vibes for kind in score.judge_kinds})
    return {"result": result, "heatmap": heatmap, "ranking": ranking, "pages": pages, "kinds": kinds,
            "explorers": explorers,
            "shared": {vc.model_a: len({p.cluster for p in vc.pairs}) for vc in result.comparisons},
            "sentences": {model: lines[:2] for model, lines in sentences.items()},
            "heatmap_file": f"charts/{prefix}-heatmap.svg", "ranking_file": f"charts/{prefix}-ranking.svg"}
