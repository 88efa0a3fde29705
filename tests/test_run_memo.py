"""A finished run kept between commands (`engine.run_memo`): `vibe run` of unchanged inputs into the same folder
has nothing to do and says what the last run said; a page deleted, a file the run read changed, or an answer
written again in the cache makes it run. The suite turns the kept plan this stands on off elsewhere
(`conftest.py`); these turn it on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_imports import SPEC  # recorded answers, a metric judge: a run of seconds

from engine import prepared_memo, recorded_reads, run_memo

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def memo_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(prepared_memo.OFF, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))


def test_an_unchanged_run_has_nothing_to_do_and_a_deleted_page_runs_again(tmp_path: Path) -> None:
    rows = [{"id": f"p{i}", "q": f"Question {i}?", "a": "word " * (3 + i % 5), "b": "word " * (4 + i % 3),
             "winner": "a" if i % 3 else "b"} for i in range(24)]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "spec.yaml").write_text(SPEC, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != prepared_memo.OFF}
    env["XDG_CACHE_HOME"] = str(tmp_path / "user-cache")
    out = tmp_path / "run"

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "engine", "run", str(tmp_path / "spec.yaml"), "--out", str(out),
                               "--cache", str(tmp_path / "cache.sqlite"), "--quiet"], capture_output=True, text=True,
                              cwd=ROOT, env=env)

    first = run()
    assert first.returncode == 0, first.stderr[-3000:]
    page = out / "index.html"
    written = page.stat().st_mtime_ns
    second = run()
    assert second.returncode == 0 and "nothing to do" in second.stderr and "nothing to do" not in first.stderr
    said, again = first.stdout.splitlines(), second.stdout.splitlines()
    assert again[1:] == said[1:] and "48 answer values measured" in said[0]  # the same summaries and pages
    assert "(0 run now" in again[0] and "measured" not in again[0]  # as a run with nothing to do says it
    assert "vibecheck:" in second.stdout and "leaderboard:" in second.stdout and page.stat().st_mtime_ns == written
    page.unlink()  # a page the run wrote is one of its files: gone, the run is done again
    third = run()
    assert third.returncode == 0 and "nothing to do" not in third.stderr and page.is_file()
    rows[0]["winner"] = "a" if rows[0]["winner"] == "b" else "b"  # the data: the plan is compiled again
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    fourth = run()
    assert fourth.returncode == 0 and "nothing to do" not in fourth.stderr
    assert "nothing to do" in run().stderr


def test_a_kept_run_is_read_only_while_its_files_and_answers_are_as_they_were(tmp_path: Path) -> None:
    read = tmp_path / "labels.csv"
    read.write_text("a,b\n", encoding="utf-8")
    with recorded_reads.recorded() as reads:
        read.read_text(encoding="utf-8")
    key = run_memo.name(tmp_path / "spec.yaml", None, tmp_path / "run", tmp_path / "cache.sqlite", [True])
    run_memo.keep(key, "plan-1", reads, ["t1", "t2"], {"t1": 1.0}, {"said": ["done"], "status": 0})
    assert run_memo.kept(key, "plan-1", lambda ids: {"t1": 1.0}) == {"said": ["done"], "status": 0}
    assert run_memo.kept(key, "plan-2", lambda ids: {"t1": 1.0}) is None  # another plan
    assert run_memo.kept(key, None, lambda ids: {"t1": 1.0}) is None  # no kept plan to stand on
    assert run_memo.kept(key, "plan-1", lambda ids: {"t1": 2.0}) is None  # an answer written again
    assert run_memo.kept(key, "plan-1", lambda ids: {"t1": 1.0, "t2": 3.0}) is None  # a task now in the cache
    read.write_text("a,c\n", encoding="utf-8")
    assert run_memo.kept(key, "plan-1", lambda ids: {"t1": 1.0}) is None  # a file the run read
