"""The GitHub Action's logic (`vibe diff --changed BASE`, engine/review.py) on a real git repository: two commits,
one spec changed, one added, one removed, one file that is not a spec. Nothing of GitHub is needed: the action
posts exactly the body this writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
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


GH_STUB = """\
#!/usr/bin/env python3
# A stand-in for `gh api` on a pull request's comments, kept in comments.json beside this file.
import json, subprocess, sys
from pathlib import Path

state = Path(__file__).with_name("comments.json")
comments = json.loads(state.read_text()) if state.exists() else []
args = sys.argv[1:]
if "-X" in args:
    method, path = args[args.index("-X") + 1], args[args.index("-X") + 2]
    body = json.load(sys.stdin)["body"]
    if method == "POST":
        comments.append({"id": 100 + len(comments), "body": body})
    else:
        next(c for c in comments if c["id"] == int(path.rsplit("/", 1)[1]))["body"] = body
    state.write_text(json.dumps(comments))
    with state.with_name("calls.log").open("a") as log:
        log.write(f"{method} {path}\\n")
else:
    query = args[args.index("--jq") + 1]
    sys.stdout.write(subprocess.run(["jq", "-r", query], input=json.dumps(comments), capture_output=True,
                                    text=True, check=True).stdout)
"""

DRIFT_SPEC = """\
name: drift
models: {terse: {provider: recorded}, chatty: {provider: recorded}}
judges: {metrics: {kind: metric}}
datasets:
  d: {source: {path: ../data/answers.jsonl}, fields: {id: id, prompt: q, outputs: {terse: terse, chatty: chatty}}}
vibes: [{name: verbosity, low: short, high: long, metric: length_words}]
gates: {verbosity: {max_shift: 0.1}}
analyses: {vibecheck: {dataset: d, models: [terse, chatty], judges: [metrics]}}
"""


def _answers(repo: Path, chatty_words: int) -> None:
    rows = [{"id": f"p{i}", "q": f"Question {i}?", "terse": "Short answer here.",
             "chatty": " ".join(["word"] * chatty_words)} for i in range(30)]
    (repo / "data" / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _drift_repo(root: Path, head_words: int) -> tuple[Path, str]:
    """A repository whose base commit's chatty answers have 40 words and whose head commit's have
    `head_words`; the spec and its gate are the same in both."""
    repo = root / "repo"
    (repo / "specs").mkdir(parents=True)
    (repo / "data").mkdir()
    (repo / "specs" / "drift.yaml").write_text(DRIFT_SPEC)
    _answers(repo, 40)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    _answers(repo, head_words)
    git(repo, "commit", "-q", "-am", "head", "--allow-empty")
    return repo, base


def _upsert(tmp_path: Path, body: Path) -> None:
    stub = tmp_path / "bin" / "gh"
    stub.parent.mkdir(exist_ok=True)
    stub.write_text(GH_STUB)
    stub.chmod(0o755)
    script = Path(__file__).resolve().parent.parent / "scripts" / "upsert_comment.sh"
    done = subprocess.run(["bash", str(script), "o/r", "7", "<!-- vibe-compare -->", str(body)], capture_output=True,
                          text=True, env={"PATH": f"{stub.parent}:/usr/bin:/bin", "GH_TOKEN": "t"})
    assert done.returncode == 0, done.stderr


def test_compare_mode_comments_once_updates_in_place_and_gates_the_check(tmp_path: Path) -> None:
    """The pull request shortens the chatty answers from 40 to 10 words: the spec run at the base commit and at
    the head, compared, fails its verbosity gate (exit 1, which the action's last step turns into the check's
    status). The comment is posted once and, on the next push, edited in place. A pull request that changes
    nothing the panel measures passes the gate."""
    repo, base = _drift_repo(tmp_path, 10)
    done = subprocess.run([sys.executable, "-m", "engine", "compare", "--git", base, "specs/drift.yaml", "--gate",
                           "--out", "cmp", "--cache", "c.sqlite", "--quiet"], cwd=repo, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 1, done.stderr
    assert "gate: chatty · verbosity: FAIL: shift -1.000 is beyond ±0.1" in done.stderr
    body = repo / "cmp" / "compare.md"
    assert body.read_text().startswith(f"<!-- vibe-compare -->\n## vibe compare: `drift.yaml` at `{base}` (`")
    assert " → `drift.yaml` at `" in body.read_text()  # the commits, not the run folders
    assert body.read_text().splitlines()[3].startswith("**1 of 2 gates fail**: chatty · verbosity.")
    _upsert(tmp_path, body)
    body.write_text(body.read_text() + "\nsecond push\n")
    _upsert(tmp_path, body)
    comments = json.loads((tmp_path / "bin" / "comments.json").read_text())
    assert len(comments) == 1 and comments[0]["body"].endswith("second push\n")
    assert (tmp_path / "bin" / "calls.log").read_text().splitlines() == [
        "POST repos/o/r/issues/7/comments", "PATCH repos/o/r/issues/comments/100"]
    steps = {s.get("name"): s for s in yaml.safe_load((Path(__file__).resolve().parent.parent / "action.yml")
                                                   .read_text())["runs"]["steps"]}
    assert "--gate" in steps["Compare the spec at the base and at the head"]["run"]
    assert steps["Set the check from the gates"]["run"] == 'exit "${{ steps.compare.outputs.status }}"'
    kept = steps["Keep the comparison's pages"]  # the comment's links to pairs are relative to the folder it uploads
    assert kept["uses"].startswith("actions/upload-artifact@") and kept["with"]["path"].endswith("/vibe-compare")
    assert "steps.pages.outputs.artifact-url" in steps["Post or update the compare comment"]["env"]["PAGES"]
    still, base_still = _drift_repo(tmp_path / "same", 40)
    same = subprocess.run([sys.executable, "-m", "engine", "compare", "--git", base_still, "specs/drift.yaml",
                           "--gate", "--out", "cmp", "--cache", "c.sqlite", "--quiet"], cwd=still,
                          capture_output=True, text=True, timeout=600)
    assert same.returncode == 0, same.stderr


def _init_repo(root: Path) -> tuple[Path, str]:
    """A repository holding what `vibe init` writes for a two-model CSV (discovery on, the offline panel with
    its MiniLM judge), whose head commit makes one model's answers longer and excited."""
    repo = root / "init-repo"
    repo.mkdir()
    rows = [(f"Question number {i} about topic {i % 7}?", f"A plain answer to {i}.", f"Reply {i}, kept short.")
            for i in range(40)]

    def write(rows: list[tuple[str, str, str]]) -> None:
        (repo / "answers.csv").write_text("prompt,alpha,beta\n" + "".join(f'"{p}","{a}","{b}"\n' for p, a, b in rows))

    write(rows)
    done = subprocess.run([sys.executable, "-m", "engine", "init", "answers.csv"], cwd=repo, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    write([(p, a, b + " Wow, this is such an exciting question to think about together!!!") for p, a, b in rows])
    git(repo, "commit", "-q", "-am", "head")
    return repo, base


@pytest.mark.slow
def test_compare_mode_runs_on_the_spec_vibe_init_writes(tmp_path: Path) -> None:
    """The spec `vibe init` writes discovers vibes, so base and head find different ones: the Action's compare
    step, run as action.yml runs it, judges both runs with the base's panel, says so in the comment, and the
    install step installs the extra that spec's MiniLM judge needs."""
    repo, base = _init_repo(tmp_path)
    steps = {s.get("name"): s for s in yaml.safe_load((Path(__file__).resolve().parent.parent / "action.yml")
                                                   .read_text())["runs"]["steps"]}
    assert '--panel "${{ inputs.panel }}"' in steps["Compare the spec at the base and at the head"]["run"]
    assert "vibe validate --extras" in steps["Install vibe"]["run"]
    extras = subprocess.run([sys.executable, "-m", "engine", "validate", "--extras", "vibe.yaml"], cwd=repo,
                            capture_output=True, text=True)
    assert extras.returncode == 0 and extras.stdout.strip() == "embeddings", extras.stderr
    done = subprocess.run([sys.executable, "-m", "engine", "compare", "--git", base, "vibe.yaml", "--gate",
                           "--inconclusive", "pass", "--panel", "base", "--out", "cmp", "--cache", "c.sqlite",
                           "--quiet"], cwd=repo, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    comment = (repo / "cmp" / "compare.md").read_text()
    assert comment.startswith("<!-- vibe-compare -->") and "### beta:" in comment
    body = json.loads((repo / "cmp" / "compare.json").read_text())
    assert body["panel"].endswith("base-run")
    by_vibe = {s["vibe"]: s for c in body["comparisons"] if c["model"] == "beta" for s in c["shifts"]}
    assert by_vibe["enthusiasm"]["shift"] > 0.5  # the head's beta is excited on every prompt
    found = {v["name"] for v in json.loads((repo / "cmp" / "base-run" / "discovered_vibes.json").read_text())}
    elsewhere = {v["name"] for v in json.loads((repo / "cmp" / "head-run" / "discovered_vibes.json").read_text())}
    assert found <= set(by_vibe) and found != elsewhere  # the base's discovered vibes measured both runs
    assert "The two runs' panels differ (vibes); the base's panel judged both runs (`--panel base`)." in comment


@pytest.mark.slow
def test_a_missing_extra_is_a_located_error_at_validate_and_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """An install without the embeddings extra (its modules made unfindable here): the MiniLM judge of the
    spec `vibe init` writes is refused at validate and run, at the line of the judge's kind, naming the extra
    and the command that installs it; exit 2, no traceback."""
    from engine import cli, readiness

    repo, _ = _init_repo(tmp_path)
    monkeypatch.chdir(repo)
    monkeypatch.setitem(readiness.EXTRA_MODULES, "embeddings", ("no_such_module_for_this_test",))
    for command in ("validate", "run"):
        assert cli.main([command, "vibe.yaml"]) == 2
        err = capsys.readouterr().err
        assert "judges.minilm.kind: needs the 'embeddings' extra, which is not installed here (no_such_module_for_" \
               "this_test is missing): pip install 'vibe-bench[embeddings]' torch==2.13.0" in err, err
        assert "offline-panel.yaml:" in err  # located in the base file that declares the judge


def test_git_modes_outside_a_repository_are_one_line_errors(tmp_path: Path) -> None:
    """`vibe diff --changed`, `vibe diff --git` and `vibe compare --git` in a folder no git repository holds:
    exit 2 with one line naming the option and the folder, never a traceback."""
    (tmp_path / "vibe.yaml").write_text("name: s\n")
    for args, option in ((["diff", "--changed", "HEAD"], "--changed HEAD"),
                         (["diff", "--git", "HEAD", "vibe.yaml"], "--git HEAD"),
                         (["compare", "--git", "HEAD", "vibe.yaml"], "--git HEAD")):
        done = subprocess.run([sys.executable, "-m", "engine", *args], cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith(f"error: {option}: {tmp_path} is not inside a git repository"), line


def test_changed_specs_include_the_spec_vibe_init_writes(tmp_path: Path) -> None:
    """`vibe diff --changed` looks at the top-level vibe.yaml that `vibe init` writes, as well as specs/."""
    repo, base = fixture(tmp_path)
    (repo / "vibe.yaml").write_text(SPEC.format(name="top", vibes="[verbosity]").replace("../data", "data"))
    done = subprocess.run([sys.executable, "-m", "engine", "diff", "--changed", base], cwd=repo, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert "### vibe spec diff: `(none)` → `vibe.yaml`" in done.stdout, done.stdout
