"""Providers and the scheduler over real HTTP against tests/llm_server.py (no SDK mocks)."""

from __future__ import annotations

import gzip
import json
import time
from email.utils import formatdate
from pathlib import Path

import pytest
from llm_server import LLMServer

from engine.execute.cache import Cache
from engine.execute.providers.base import parse_retry_after
from engine.execute.run import execute
from engine.pipeline import prepare


def make_spec(tmp_path: Path, server: LLMServer, prompts: list[str], *, provider: str = "openai-compatible",
              model: str = "m", limits: str = "{concurrency: 4, max_retries: 3, timeout_s: 5}",
              extra: str = "") -> Path:
    (tmp_path / "prompts.jsonl").write_text("".join(json.dumps({"id": f"p{i}", "q": p}) + "\n"
                                                    for i, p in enumerate(prompts)))
    url = server.base_url if provider == "openai-compatible" else server.anthropic_url
    spec = f"""\
name: http-test
models:
  a:
    provider: {provider}
    model: {model}
    base_url: {url}
    limits: {limits}
    params: {{max_tokens: 16}}
{extra}
  b: {{provider: recorded}}
datasets:
  d:
    source: {{path: prompts.jsonl}}
    fields: {{id: id, prompt: q, outputs: {{b: q}}}}
vibes: [{{name: verbosity, low: short answers, high: long answers, metric: length_words}}]
judges: {{m: {{kind: metric}}}}
analyses:
  vibecheck: {{dataset: d, models: [a, b], judges: [m]}}
"""
    if provider == "anthropic":
        spec = spec.replace(f"    base_url: {url}\n", f"    base_url: {url}\n    api_key_env: TEST_ANTHROPIC_KEY\n")
    path = tmp_path / "spec.yaml"
    path.write_text(spec)
    return path


def run(tmp_path: Path, spec: Path):
    with Cache(tmp_path / "cache.sqlite") as cache:
        return execute(prepare(spec), tmp_path / "run", cache, quiet=True)


def generations(tmp_path: Path) -> list[dict]:
    path = tmp_path / "run" / "generation.jsonl.gz"
    return [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode().splitlines()]


def test_openai_compatible_success_records_usage(tmp_path: Path, llm_server: LLMServer) -> None:
    summary = run(tmp_path, make_spec(tmp_path, llm_server, ["hello there", "second prompt"]))
    assert summary.done == summary.total == 2 * 2  # 2 generations, 2 recorded;
    assert summary.measured.computed == 4  # the metric judge measures each of the 4 answers once
    called = [g for g in generations(tmp_path) if g["endpoint"] == "a"]
    assert sorted(g["output"] for g in called) == ["echo: hello there", "echo: second prompt"]
    assert {g["input_tokens"] for g in called} == {2} and {g["output_tokens"] for g in called} == {3}
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["tasks"]["failed"] == 0


def test_anthropic_success(tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "sk-ant-test-secret")
    summary = run(tmp_path, make_spec(tmp_path, llm_server, ["hi from claude"], provider="anthropic"))
    assert summary.done == summary.total
    assert [g["output"] for g in generations(tmp_path) if g["endpoint"] == "a"] == ["echo: hi from claude"]
    assert all(entry.path == "/v1/messages" for entry in llm_server.state.log)
    # the key is never written anywhere
    for path in [tmp_path / "cache.sqlite", *(tmp_path / "run").iterdir()]:
        assert b"sk-ant-test-secret" not in path.read_bytes()


@pytest.mark.parametrize("marker", ["429", "429date"])
def test_429_honours_retry_after(tmp_path: Path, llm_server: LLMServer, marker: str) -> None:
    start = time.monotonic()
    summary = run(tmp_path, make_spec(tmp_path, llm_server, [f"slow [[{marker}]]"]))
    assert summary.done == summary.total
    assert time.monotonic() - start >= 0.9  # waited for Retry-After, not an instant retry
    assert [e.status for e in llm_server.state.log] == [429, 200]


def test_500s_are_retried(tmp_path: Path, llm_server: LLMServer) -> None:
    summary = run(tmp_path, make_spec(tmp_path, llm_server, ["flaky [[500x2]]"]))
    assert summary.done == summary.total
    assert [e.status for e in llm_server.state.log] == [500, 500, 200]
    assert generations(tmp_path)[0]["meta"]["attempts"] == 3


def test_timeout_fails_task_not_run(tmp_path: Path, llm_server: LLMServer) -> None:
    spec = make_spec(tmp_path, llm_server, ["hang [[timeout]]", "fine"],
                     limits="{concurrency: 2, max_retries: 1, timeout_s: 0.5}")
    summary = run(tmp_path, spec)
    assert [f.error for f in summary.failed if f.stage == "generation"] == [
        "a: timed out after 0.5s (timeout_s bounds the whole call, the response body included)"]
    assert summary.done == summary.total - 1  # the generation; its pair gets no metric verdict, and says so:
    failures = (tmp_path / "run" / "failures.jsonl").read_text().splitlines()
    assert len(failures) == 2


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_a_trickling_body_is_bounded_by_timeout(tmp_path: Path, llm_server: LLMServer, provider: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """One byte every 0.5 s resets an HTTP client's read timeout; timeout_s must still end the call."""
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "k")
    spec = make_spec(tmp_path, llm_server, ["slow body [[trickle]]"], provider=provider,
                     limits="{max_retries: 1, timeout_s: 1.5}")
    start = time.monotonic()
    (failure,) = [f for f in run(tmp_path, spec).failed if f.stage == "generation"]
    assert time.monotonic() - start < 8  # two attempts of 1.5 s and a backoff, not minutes of trickling
    assert failure.error == "a: timed out after 1.5s (timeout_s bounds the whole call, the response body included)"
    assert failure.attempts == 2


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_an_html_page_is_named_as_such(tmp_path: Path, llm_server: LLMServer, provider: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "k")
    spec = make_spec(tmp_path, llm_server, ["a [[html]]", "b [[html]]"], provider=provider,
                     limits="{concurrency: 1, max_retries: 3}")
    failed = [f for f in run(tmp_path, spec).failed if f.stage == "generation"]
    assert len(failed) == 2 and all("answered with HTML, not JSON (usually a wrong base_url" in f.error and
                                    "Sign in Proxy login" in f.error for f in failed)
    assert len(llm_server.state.log) == 1  # not retried, and the endpoint stops at the first page


@pytest.mark.parametrize("provider", ["openai-compatible", "anthropic"])
def test_a_lone_surrogate_in_an_answer_is_replaced_and_counted(tmp_path: Path, llm_server: LLMServer, provider: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's JSON carries the escape \\ud83d without its pair, as a model cut mid-emoji can."""
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "k")
    llm_server.state.replies["half"] = "half an emoji: \ud83d, then a whole one: \U0001f600"
    summary = run(tmp_path, make_spec(tmp_path, llm_server, ["half please"], provider=provider))
    assert not summary.failed
    (answer,) = [g for g in generations(tmp_path) if g["endpoint"] == "a"]
    assert answer["output"] == "half an emoji: \ufffd, then a whole one: \U0001f600"
    with Cache(tmp_path / "cache.sqlite") as cache:
        stored = cache.get_many([answer["task_id"]])[answer["task_id"]]
    assert stored.output == answer["output"] and stored.meta["lone_surrogates_replaced"] == 1


@pytest.mark.parametrize(("marker", "message"), [("malformed", "malformed response"), ("empty", "no choices")])
def test_bad_bodies_are_retried_then_recorded(tmp_path: Path, llm_server: LLMServer, marker: str,
                                              message: str) -> None:
    spec = make_spec(tmp_path, llm_server, [f"x [[{marker}]]"], limits="{max_retries: 2}")
    summary = run(tmp_path, spec)
    (failure,) = [f for f in summary.failed if f.stage == "generation"]
    assert message in failure.error and failure.attempts == 3
    assert len(llm_server.state.log) == 3


def test_empty_anthropic_content(tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "k")
    spec = make_spec(tmp_path, llm_server, ["x [[empty]]"], provider="anthropic", limits="{max_retries: 0}")
    (failure,) = [f for f in run(tmp_path, spec).failed if f.stage == "generation"]
    assert "no text content" in failure.error


def test_unknown_model_stops_endpoint_with_one_message(tmp_path: Path, llm_server: LLMServer) -> None:
    prompts = [f"prompt {i}" for i in range(40)]
    summary = run(tmp_path, make_spec(tmp_path, llm_server, prompts, model="missing-model",
                                      limits="{concurrency: 4}"))
    assert list(summary.endpoint_errors) == ["a"] and "HTTP 404" in summary.endpoint_errors["a"]
    assert len(llm_server.state.log) <= 4  # only the calls already in flight
    assert summary.done == 40  # the recorded outputs are still there


def test_missing_api_key_makes_no_request(tmp_path: Path, llm_server: LLMServer,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEST_ANTHROPIC_KEY", raising=False)
    summary = run(tmp_path, make_spec(tmp_path, llm_server, ["a", "b"], provider="anthropic"))
    assert summary.endpoint_errors == {"a": "a: environment variable TEST_ANTHROPIC_KEY is not set (it should hold "
                                            "the API key for anthropic)"}
    assert llm_server.state.log == []


def test_unreachable_server_stops_endpoint(tmp_path: Path) -> None:
    dead = LLMServer()
    dead.port = 9  # discard port: nothing listens there
    spec = make_spec(tmp_path, dead, [f"p{i}" for i in range(30)], limits="{concurrency: 2, max_retries: 1}")
    summary = run(tmp_path, spec)
    assert "cannot reach" in summary.endpoint_errors["a"]
    assert sum(f.error.startswith("skipped") for f in summary.failed) >= 20


def test_bad_request_before_any_success_stops_endpoint(tmp_path: Path, llm_server: LLMServer) -> None:
    summary = run(tmp_path, make_spec(tmp_path, llm_server, [f"x{i} [[400]]" for i in range(10)],
                                      limits="{concurrency: 1}"))
    assert "HTTP 400" in summary.endpoint_errors["a"]
    assert len(llm_server.state.log) == 1


def test_rerun_makes_zero_calls(tmp_path: Path, llm_server: LLMServer) -> None:
    spec = make_spec(tmp_path, llm_server, [f"prompt {i}" for i in range(5)])
    run(tmp_path, spec)
    calls = len(llm_server.state.log)
    summary = run(tmp_path, spec)
    assert len(llm_server.state.log) == calls == 5
    assert summary.ran_now == 0 and summary.done == summary.total


def test_changing_params_reruns_only_that_model(tmp_path: Path, llm_server: LLMServer) -> None:
    spec = make_spec(tmp_path, llm_server, [f"prompt {i}" for i in range(5)])
    run(tmp_path, spec)
    spec.write_text(spec.read_text().replace("max_tokens: 16", "max_tokens: 32"))
    summary = run(tmp_path, spec)
    assert len(llm_server.state.log) == 10
    assert summary.ran_now == 5  # a's generations; b's recorded stay
    assert summary.measured.computed == 5  # a's new answers measured; b's values read back


def test_parse_retry_after() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    now = time.time()
    assert abs(parse_retry_after(formatdate(now + 10, usegmt=True), now=now) - 10) < 1.01
    assert parse_retry_after(formatdate(now - 10, usegmt=True), now=now) == 0.0
