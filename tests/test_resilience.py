"""A flaky endpoint never stops a run; a wrong one stops it fast. Real HTTP against tests/llm_server.py, whose
faults are the ones gateways make: reset connections, hangs, trickling bodies, 503 with Retry-After, 500s and
200 HTML pages, seeded per request and attempt."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from llm_server import Faults, LLMServer

from engine.execute import scheduler
from engine.execute.cache import Cache
from engine.execute.run import execute
from engine.pipeline import prepare

SPEC = """\
name: flaky
models:
  one: {{provider: openai-compatible, model: one, base_url: {url}, params: {{max_tokens: 8}}, limits: {limits}}}
  two: {{provider: openai-compatible, model: two, base_url: {url}, params: {{max_tokens: 8}}, limits: {limits}}}
datasets:
  d: {{source: {{path: prompts.jsonl}}, fields: {{id: id, prompt: q}}}}
vibes: [{{name: verbosity, low: short answers, high: long answers, metric: length_words}}]
judges: {{m: {{kind: metric}}}}
analyses:
  vibecheck: {{dataset: d, models: [one, two], judges: [m]}}
"""
LIMITS = "{concurrency: 8, timeout_s: 2, max_retries: 2}"


def spec(tmp_path: Path, server: LLMServer, prompts: int, limits: str = LIMITS) -> Path:
    (tmp_path / "prompts.jsonl").write_text("".join(json.dumps({"id": f"p{i}", "q": f"Question number {i}?"}) + "\n"
                                                    for i in range(prompts)))
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(url=server.base_url, limits=limits))
    return path


def run(tmp_path: Path, path: Path) -> tuple[object, dict[tuple[str, str], str]]:
    """The execute summary, and (model, prompt) -> answer for every generation in the cache."""
    prepared = prepare(path)
    with Cache(tmp_path / "cache.sqlite") as cache:
        summary = execute(prepared, tmp_path / "run", cache, quiet=True)
        done = cache.get_many(t.id for t in prepared.plan.tasks if t.stage == "generation")
    by_task = {t.id: (t.endpoint, t.request["messages"][-1]["content"]) for t in prepared.plan.tasks
               if t.stage == "generation"}
    return summary, {by_task[task_id]: str(result.output) for task_id, result in done.items()}


def test_every_call_the_server_answers_is_stored_and_only_the_rest_are_asked_again(tmp_path: Path) -> None:
    with LLMServer() as server:
        server.state.faults = Faults(rate=0.3, seed=4)  # 5% of attempts each: reset, hang, trickle, 503, 500, HTML
        path = spec(tmp_path, server, 100)
        summary, stored = run(tmp_path, path)
        answered = {(e.body["model"], e.text) for e in server.state.log if e.status == 200 and e.marker is None}
        kinds = {e.marker for e in server.state.log if e.marker}
        assert kinds == {"reset", "hang", "trickle", "503", "500", "html"}  # every fault happened
        assert set(stored) == answered  # every call the server answered, and no other
        assert len(answered) >= 190  # three attempts per call get almost every one through
        assert not summary.endpoint_errors  # no endpoint was stopped by an odd page
        failed = [f for f in summary.failed if f.stage == "generation"]
        assert len(failed) == 200 - len(answered) and all(f.attempts == 3 for f in failed)
        for failure in failed:  # the true reason of the last attempt, never "skipped"
            assert not failure.error.startswith("skipped") and any(
                why in failure.error for why in ("HTML", "timed out", "HTTP 503", "HTTP 500", "cannot reach",
                                                 "dropped", "malformed"))
        before = len(server.state.log)
        server.state.faults = None
        again, stored = run(tmp_path, path)
        asked = {(e.body["model"], e.text) for e in server.state.log[before:]}
        assert len(server.state.log) - before == len(asked) == 200 - len(answered)  # exactly the failed ones
        assert not again.failed and len(stored) == 200


def test_a_wrong_base_url_stops_within_a_few_calls(tmp_path: Path) -> None:
    with LLMServer() as server:
        server.state.html_after = 0  # every answer is a login page
        summary, stored = run(tmp_path, spec(tmp_path, server, 60))
        assert not stored and len(server.state.log) <= 2 * 8  # the calls already in flight, per model
        assert set(summary.endpoint_errors) == {"one", "two"}
        assert all("answered with HTML" in why for why in summary.endpoint_errors.values())


def test_an_endpoint_that_turns_bad_mid_run_trips_the_breaker_then_stops(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduler, "BREAKER_COOLDOWN_S", 0.5)
    with LLMServer() as server:
        server.state.html_after = 30  # thirty answers, then the gateway's page for good
        start = time.monotonic()
        summary, stored = run(tmp_path, spec(tmp_path, server, 100, "{concurrency: 4, timeout_s: 2, max_retries: 2}"))
        assert len(stored) == 30 and time.monotonic() - start < 30
        for model in ("one", "two"):
            if model in summary.endpoint_errors:
                assert summary.endpoint_errors[model].startswith("circuit breaker: 5 failures in a row")
                assert "answered with HTML" in summary.endpoint_errors[model]
        assert summary.endpoint_errors  # at least one model ran into the bad stretch
        skipped = [f for f in summary.failed if f.error.startswith("skipped: circuit breaker")]
        assert skipped and len(server.state.log) < 30 + 2 * 4 * 3 + 2 * 5 * 3  # no hammering of a dead endpoint


def test_a_bad_stretch_that_ends_closes_the_breaker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Twenty answers, then a gateway page on every request until the probe: the probe gets through (the test
    lifts the fault when the breaker opens), the breaker closes, and every call is answered."""
    monkeypatch.setattr(scheduler, "BREAKER_COOLDOWN_S", 0.5)
    with LLMServer() as server:
        server.state.html_after = 20
        path = spec(tmp_path, server, 40, "{concurrency: 2, timeout_s: 2, max_retries: 5}")

        def lift_when_open() -> None:
            while not any(e.marker == "html" for e in server.state.log[-5:]) or sum(
                    e.marker == "html" for e in server.state.log) < 5:
                time.sleep(0.01)
            server.state.html_after = None

        lifter = threading.Thread(target=lift_when_open, daemon=True)
        lifter.start()
        summary, stored = run(tmp_path, path)
        assert not summary.endpoint_errors and len(stored) == 80


def test_a_server_that_never_answers_stops_after_one_call_runs_out_of_retries(tmp_path: Path) -> None:
    """Every call hangs: the first call to use up its retries stops the endpoint; the rest are skipped, not
    each timed out in turn."""
    with LLMServer() as server:
        path = spec(tmp_path, server, 30, "{concurrency: 2, timeout_s: 0.5, max_retries: 1}")
        prompts = tmp_path / "prompts.jsonl"
        prompts.write_text(prompts.read_text().replace("?", "? [[timeout]]"))
        start = time.monotonic()
        summary, stored = run(tmp_path, path)
        assert not stored and set(summary.endpoint_errors) == {"one", "two"}
        assert all("timed out after 0.5s" in why for why in summary.endpoint_errors.values())
        assert time.monotonic() - start < 10 and len(server.state.log) <= 2 * 2 * 2  # in flight × attempts
