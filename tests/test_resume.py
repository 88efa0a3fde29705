"""kill -9 mid-run, then resume: every task ends with exactly one result, and no finished call is repeated."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from llm_server import LLMServer
from test_providers import make_spec

from engine.execute.cache import Cache
from engine.pipeline import prepare


def cached_outputs(db: Path) -> list[str]:
    """Generation outputs in the cache; none while the running process has created the file but not yet its
    table (the tests poll a cache another process is writing)."""
    with sqlite3.connect(db) as conn:
        try:
            return [row[0] for row in conn.execute("SELECT output FROM results WHERE stage = 'generation'")]
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return []
            raise


@pytest.mark.slow
def test_sigkill_then_resume(tmp_path: Path) -> None:
    with LLMServer(latency_s=0.05) as server:
        prompts = [f"prompt number {i}" for i in range(200)]
        spec = make_spec(tmp_path, server, prompts, limits="{concurrency: 4}")
        db = tmp_path / "cache.sqlite"
        cmd = [sys.executable, "-m", "engine", "run", str(spec), "--cache", str(db), "--out", str(tmp_path / "run"),
               "--quiet"]
        child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if db.exists() and len([o for o in cached_outputs(db) if o.startswith('"echo')]) >= 60:
                break
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        finished = {o for o in cached_outputs(db) if o.startswith('"echo')}
        assert 60 <= len(finished) < 200, "the kill should land mid-run"

        resumed = subprocess.run(cmd, capture_output=True, text=True)
        assert resumed.returncode == 0, resumed.stderr

    prepared = prepare(spec)
    with Cache(db) as cache:
        results = cache.get_many(t.id for t in prepared.plan.tasks)
    assert len(results) == len(prepared.plan.tasks)  # every task has its (single, primary-keyed) result
    successes: dict[str, int] = {}
    for entry in server.state.log:
        if entry.status == 200:
            successes[entry.text] = successes.get(entry.text, 0) + 1
    for output in finished:
        prompt = output.strip('"').removeprefix("echo: ")
        assert successes[prompt] == 1, f"{prompt!r} was served twice"
    assert set(successes) == set(prompts)


def test_sigterm_stops_like_ctrl_c(tmp_path: Path) -> None:
    """A cancelled job (SIGTERM) keeps what finished and says it was interrupted, and prints no analysis
    summary ("vibes kept", held-out accuracies) that would read as the results of a run it did not finish."""
    with LLMServer(latency_s=0.05) as server:
        spec = make_spec(tmp_path, server, [f"prompt {i}" for i in range(200)], limits="{concurrency: 2}")
        db = tmp_path / "cache.sqlite"
        child = subprocess.Popen([sys.executable, "-m", "engine", "run", str(spec), "--cache", str(db), "--out",
                                  str(tmp_path / "run"), "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        def called() -> int:
            return len([o for o in cached_outputs(db) if o.startswith('"echo')]) if db.exists() else 0

        while time.monotonic() < deadline and called() < 20:
            time.sleep(0.05)
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=30)
    assert child.returncode == 130 and b"interrupted" in err
    assert b"vibes kept" not in out and b"held out" not in out, out
    manifest = (tmp_path / "run" / "manifest.json").read_text()
    assert '"status": "interrupted"' in manifest
    assert 20 <= called() < 200
