"""The GitHub Action's logic (`vibe diff --changed BASE`, engine/review.py) on a real git repository: two commits,
one spec changed, one added, one removed, one file that is not a spec. Nothing of GitHub is needed: the action
posts exactly the body this writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

SPEC = """\
name: {name}
extends: vibe:offline-panel
models:
  a: {{provider: recorded}}
  b: {{provider: recorded}}
datasets:
  d: {{source: {{path: ../data/pairs.jsonl}}, fields: {{id: id, prompt: q, outputs: {{a: a, b: b}}}}}}
analyses:
  vibecheck: {{dataset: d, models: [a, b], judges: [metrics], vibes: {vibes}}}
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}).stdout.strip()


def fixture(root: Path) -> tuple[Path, str]:
    repo = root / "repo"
    (repo / "specs").mkdir(parents=True)
    (repo / "data").mkdir()
    rows = [{"id": f"p{i}", "q": f"question {i}", "a": "Hello! " * (i + 1), "b": f"Answer {i}."} for i in range(8)]
    (repo / "data" / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (repo / "specs" / "kept.yaml").write_text(SPEC.format(name="kept", vibes="[verbosity, enthusiasm]"))
    (repo / "specs" / "gone.yaml").write_text(SPEC.format(name="gone", vibes="[verbosity]"))
    (repo / "specs" / "notes.txt").write_text("not a spec")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "specs" / "kept.yaml").write_text(SPEC.format(name="kept", vibes="[verbosity, enthusiasm, formatting]"))
    (repo / "specs" / "gone.yaml").unlink()
    (repo / "specs" / "new.yaml").write_text(SPEC.format(name="new", vibes="[warmth]"))
    (repo / "specs" / "broken.yaml").write_text("name: broken\nmodels: {a: {provider: nope}}\n")
    (repo / "specs" / "notes.txt").write_text("still not a spec")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    return repo, base


def test_comment_covers_changed_new_removed_and_broken_specs(tmp_path: Path) -> None:
    repo, base = fixture(tmp_path)
    done = subprocess.run([sys.executable, "-m", "engine", "diff", "--changed", base], cwd=repo, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    body = done.stdout
    assert body.startswith("<!-- vibe-diff -->\n")  # the action finds and updates its own comment by this
    assert "4 spec file(s) changed" in body and "notes.txt" not in body
    sections = {block.split("\n", 1)[0]: block for block in body.split("### ")[1:]}
    changed = sections[f"vibe spec diff: `specs/kept.yaml@{base}` → `specs/kept.yaml`"]
    # one vibe added: 8 pairs judged by the metric panel on it, everything else unchanged (cached)
    assert "| judge | 8 | 0 | 16 |" in changed
    new = sections["vibe spec diff: `(none)` → `specs/new.yaml`"]
    assert "| generation | 16 | 0 | 0 |" in new and "| judge | 8 | 0 | 0 |" in new
    removed = sections[f"vibe spec diff: `specs/gone.yaml@{base}` → `(removed)`"]
    assert "| generation | 0 | 16 | 0 |" in removed
    broken = sections["`specs/broken.yaml` (new): no plan could be compiled"]
    assert "models.a.provider" in broken


def test_no_change_says_so_and_patterns_choose_the_files(tmp_path: Path) -> None:
    repo, _ = fixture(tmp_path)
    head = git(repo, "rev-parse", "HEAD")
    done = subprocess.run([sys.executable, "-m", "engine", "diff", "--changed", head], cwd=repo, capture_output=True,
                          text=True)
    assert "0 spec file(s) changed" in done.stdout and "No file matching" in done.stdout
    (repo / "specs" / "new.yaml").write_text(SPEC.format(name="new", vibes="[warmth, hedging]"))
    only = subprocess.run([sys.executable, "-m", "engine", "diff", "--changed", head, "--pattern", "specs/new.*"],
                          cwd=repo, capture_output=True, text=True)
    assert "1 spec file(s) changed" in only.stdout and "| judge | 8 | 0 | 8 |" in only.stdout


def test_action_metadata_runs_the_same_command() -> None:
    action = yaml.safe_load((Path(__file__).parent.parent / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    scripts = "\n".join(step.get("run", "") for step in action["runs"]["steps"])
    assert "vibe diff --changed" in scripts and "<!-- vibe-diff -->" in scripts
    assert {"specs", "comment", "run", "publish"} <= set(action["inputs"])
