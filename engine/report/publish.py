"""Publish a run's leaderboard into the mkdocs-material site and keep a cross-run index.

The leaderboard folder is copied as static files under docs/runs/<spec name>/ (mkdocs serves it as is);
docs/runs/runs.json records each published run's headline numbers, and docs/runs/index.md is regenerated
from it, newest first. Publishing the same spec again replaces its entry.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from engine.report.render import slug
from engine.spec.model import REPORT_FOLDERS

RUNS_LINK_MARK = "<!--runs-index-->"
RUNS_LINK = '<a href="../index.html" class="runs-link">← all runs</a> · '


def publish(run_dir: Path, site: Path) -> Path:
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    if not (run_dir / "index.html").exists():
        raise FileNotFoundError(f"{run_dir} has no leaderboard yet; run `vibe report {run_dir}` first")
    name = slug(manifest["spec_name"])
    target = site / "docs" / "runs" / name
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for part in REPORT_FOLDERS:
        if (run_dir / part).is_dir():
            shutil.copytree(run_dir / part, target / part)
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


def _headline(run_dir: Path) -> str:
    parts = []
    for regressions in sorted(run_dir.glob("*/regressions.json")):
        data = json.loads(regressions.read_text(encoding="utf-8"))
        for key, label in (("model_matching", "model matching"), ("preference", "preference")):
            if data.get(key):
                length = next((b for b in data[key].get("baselines", []) if b["rule"] == "length alone"), None)
                parts.append(f"{label} {data[key]['test_accuracy']:.1%}"
                             + (f" (length alone {length['accuracy']:.1%})" if length else ""))
    for path in sorted(run_dir.glob("*/reference.json")):
        scores = json.loads(path.read_text(encoding="utf-8"))["scores"]
        if scores and scores[0]["subsets"]:
            parts.append(f"top reference score {scores[0]['model']} {scores[0]['subsets'][0]['score']:.1f}%")
    for path in sorted(run_dir.glob("*/personas.json")):
        for persona in json.loads(path.read_text(encoding="utf-8"))["personas"]:
            parts.append(f"{persona['persona']} prefers {persona['preferred'] or 'neither'}")
    return ", ".join(parts) or "—"


def _index_markdown(registry: list[dict]) -> str:
    lines = ["# Runs", "", "Every published leaderboard, newest first. Accuracies are held out.", "",
             "| run | finished | tasks | cost | headline |", "|---|---|---:|---:|---|"]
    for r in registry:
        title = r["title"].replace("|", "\\|")
        lines.append(f"| [{title}]({r['name']}/index.html) | {r['finished_at']} | {r['tasks']:,} | "
                     f"${r['cost_usd']:.2f} | {r['headline']} |")
    return "\n".join(lines) + "\n"
