"""Publish a run's leaderboard into the mkdocs-material site and keep a cross-run index.

The leaderboard folder is copied as static files under docs/runs/<spec name>/ (mkdocs serves it as is);
docs/runs/runs.json records each published run's headline numbers, and docs/runs/index.md is regenerated
from it, newest first. Publishing the same spec again replaces its entry.

A run with vibe profiles (a many-model vibecheck) also joins a site leaderboard: runs that share a reference
model and a set of vibes are one board, docs/leaderboards/<reference>-<vibes digest>.md, holding for every
model its newest measurement and the run it came from. With `runs=False` only that board is written (a
run's drill-down pages can be tens of megabytes: too much for a repository's Pages folder).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from engine.registry import get_method, method_names
from engine.report.paging import slug
from engine.run_lock import LOCK_FILE

RUNS_LINK_MARK = "<!--runs-index-->"
RUNS_LINK = '<a href="../index.html" class="runs-link">← all runs</a> · '


SITE_CONFIG = """\
site_name: vibe leaderboards
docs_dir: docs
site_dir: site
use_directory_urls: false
theme: {name: material, font: false}
nav:
  - Home: index.md
  - Runs: runs/index.md
"""


def ensure_site(site: Path) -> None:
    """A repository with no site yet gets a minimal mkdocs-material project to publish into (its own
    mkdocs.yml, once written, is never touched again)."""
    if (site / "mkdocs.yml").exists():
        return
    (site / "docs").mkdir(parents=True, exist_ok=True)
    (site / "mkdocs.yml").write_text(SITE_CONFIG, encoding="utf-8")
    index = site / "docs" / "index.md"
    if not index.exists():
        index.write_text("# vibe leaderboards\n\nThe [runs](runs/index.md) published here, newest first.\n",
                         encoding="utf-8")
    runs = site / "docs" / "runs" / "index.md"
    if not runs.exists():
        runs.parent.mkdir(parents=True, exist_ok=True)
        runs.write_text(_index_markdown([]), encoding="utf-8")


def publish(run_dir: Path, site: Path, runs: bool = True) -> Path:
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    if not (run_dir / "index.html").exists():
        raise FileNotFoundError(f"{run_dir} has no leaderboard yet; run `vibe report {run_dir}` first")
    ensure_site(site)
    name = slug(manifest["spec_name"])
    boards = [_join_board(path, site, name, manifest.get("finished_at", ""), runs) for path in _boards(run_dir)]
    if boards:
        (site / "docs" / "leaderboards" / "index.md").write_text(_boards_markdown(site), encoding="utf-8")
    if not runs:
        if not boards:
            raise ValueError(f"{run_dir} has no vibe profiles (a vibecheck with a reference) to add to a leaderboard")
        return boards[0]
    target = site / "docs" / "runs" / name
    shutil.rmtree(target, ignore_errors=True)
    # the whole run folder, its data too (spec.json, items, answers, verdicts): a run downloaded from the site
    # is a run folder that `vibe report`, `vibe export` and `vibe compare` read on its own
    shutil.copytree(run_dir, target, ignore=shutil.ignore_patterns("*.html", LOCK_FILE))
    for page in run_dir.glob("*.html"):  # the index and the per-analysis pages, linked back to the runs index
        html = page.read_text(encoding="utf-8").replace(RUNS_LINK_MARK, RUNS_LINK, 1)
        (target / page.name).write_text(html, encoding="utf-8")
    registry_path = site / "docs" / "runs" / "runs.json"
    registry = json.loads(registry_path.read_text(encoding="utf-8")) if registry_path.exists() else []
    registry = [r for r in registry if r["name"] != name]
    registry.append({"name": name, "spec": manifest["spec_name"], "title": _title(run_dir), "finished_at":
                     manifest.get("finished_at", ""), "tasks": manifest.get("tasks", {}).get("done", 0),
                     "cost_usd": manifest.get("cost_usd", 0.0), "headline": _headline(run_dir)})
    registry.sort(key=lambda r: r["finished_at"], reverse=True)
    registry_path.write_text(json.dumps(registry, indent=1) + "\n", encoding="utf-8")
    (site / "docs" / "runs" / "index.md").write_text(_index_markdown(registry), encoding="utf-8")
    return target / "index.html"


def _title(run_dir: Path) -> str:
    text = (run_dir / "index.html").read_text(encoding="utf-8")
    start = text.find("<h1>")
    return text[start + 4:text.find("</h1>", start)].strip() if start >= 0 else run_dir.name


def _folders(run_dir: Path) -> list[Path]:
    return sorted(p for p in run_dir.iterdir() if p.is_dir())


def _boards(run_dir: Path) -> list[Path]:
    """The board records the run's analyses wrote, as their methods name them (`AnalysisMethod.boards`)."""
    return [path for name in method_names() for folder in _folders(run_dir) for path in get_method(name).boards(folder)]


def _headline(run_dir: Path) -> str:
    """Each analysis' headline figures, as its method states them (`AnalysisMethod.headline`)."""
    methods = [get_method(name) for name in method_names()]
    parts = [part for method in methods for folder in _folders(run_dir) for part in method.headline(folder)]
    return ", ".join(parts) or "—"


def _index_markdown(registry: list[dict]) -> str:
    lines = ["# Runs", "", "Every published leaderboard, newest first. Accuracies are held out.", "",
             "| run | finished | tasks | cost | headline |", "|---|---|---:|---:|---|"]
    for r in registry:
        title = r["title"].replace("|", "\\|")
        lines.append(f"| [{title}]({r['name']}/index.html) | {r['finished_at']} | {r['tasks']:,} | "
                     f"${r['cost_usd']:.2f} | {r['headline']} |")
    return "\n".join(lines) + "\n"


def _join_board(profiles: Path, site: Path, run: str, finished_at: str, linked: bool) -> Path:
    """Add a run's profiles to the board of its reference and vibe set: each of its models replaces an older
    measurement of the same model (never a newer one)."""
    data = json.loads(profiles.read_text(encoding="utf-8"))
    vibes = sorted(v["name"] for v in data["vibes"])
    digest = hashlib.sha256(json.dumps(vibes).encode()).hexdigest()[:8]
    folder = site / "docs" / "leaderboards"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{slug(data['reference'])}-{digest}.json"
    board = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {
        "reference": data["reference"], "vibes": vibes, "labels": data["labels"], "models": {}}
    rates = {w["model"]: w for w in data["winrates"]}
    for model in data["models"]:
        old = board["models"].get(model)
        if old and old["finished_at"] > finished_at:
            continue
        board["models"][model] = {
            "run": run, "analysis": data["analysis"], "finished_at": finished_at, "linked": linked,
            "cells": {c["vibe"]: [c["separability"], c["ci_low"], c["ci_high"]] for c in data["cells"]
                      if c["model"] == model},
            "win_rate": rates.get(model, {}).get("win_rate"), "lc_win_rate": rates.get(model, {}).get("lc_win_rate")}
    path.write_text(json.dumps(board, indent=1) + "\n", encoding="utf-8")
    page = path.with_suffix(".md")
    page.write_text(_board_markdown(board), encoding="utf-8")
    return page


def _cell(value: list[Any] | None) -> str:
    if not value or value[0] is None:
        return "—"
    sep, low, high = value
    mark = "**" if low is not None and (low > 0 or high < 0) else ""
    return f"{mark}{sep:+.2f}{mark} [{low:+.2f}, {high:+.2f}]"


def _board_markdown(board: dict[str, Any]) -> str:
    vibes = board["vibes"]
    rows = sorted(board["models"].items(), key=lambda kv: -(kv[1]["win_rate"] or -1))
    lines = [f"# Vibes against {board['reference']}", "",
             f"Every model's separability against **{board['reference']}** on each vibe: the mean judge verdict "
             "over prompts, from −1 (always lower than the reference) to +1 (always higher), with its 95% bootstrap "
             "interval over prompts; **bold** where the interval excludes 0. Each row is the model's newest "
             "measurement; the run column says where it came from. Win rates are against the reference, "
             f"labelled by {board['labels'].get('description') or board['labels'].get('source', 'unknown')}.", "",
             "| model | run | win rate | LC win rate | " + " | ".join(vibes) + " |",
             "|---|---|---:|---:|" + "---:|" * len(vibes)]
    for model, entry in rows:
        run = f"[{entry['run']}](../runs/{entry['run']}/index.html)" if entry["linked"] else entry["run"]
        rates = ["—" if entry[k] is None else f"{100 * entry[k]:.1f}%" for k in ("win_rate", "lc_win_rate")]
        lines.append(f"| {model} | {run} ({entry['finished_at'][:10]}) | {rates[0]} | {rates[1]} | "
                     + " | ".join(_cell(entry["cells"].get(v)) for v in vibes) + " |")
    return "\n".join(lines) + "\n"


def _boards_markdown(site: Path) -> str:
    lines = ["# Vibe leaderboards", "", "Models measured against a common reference on one set of vibes, merged "
             "across runs (newest measurement per model).", ""]
    for path in sorted((site / "docs" / "leaderboards").glob("*.json")):
        board = json.loads(path.read_text(encoding="utf-8"))
        lines.append(f"- [{board['reference']}: {len(board['models'])} models, {len(board['vibes'])} vibes]"
                     f"({path.with_suffix('.md').name})")
    return "\n".join(lines) + "\n"
