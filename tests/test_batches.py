"""Judging through provider batches, over real HTTP against the loopback server's batch endpoints (OpenAI's
Batch API and Anthropic's Message Batches): the same verdicts as live calls, the live call's body in every
line, retries of errored and expired requests, a killed run that resumes without submitting again, `vibe
batches`, and the batch price in the plan and the manifest."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from llm_server import LLMServer, judged_answers

from engine.execute.cache import Cache
from engine.pipeline import prepare, run_spec
from engine.plan_view import outline_of, summarize
from engine.spec.load import load_spec
from engine.spec.problems import SpecError

ROOT = Path(__file__).resolve().parent.parent


def longer_judge(text: str) -> str | None:
    """A judge that reads its question: answer 1 or 2, whichever is longer, in JSON (read by either form)."""
    answers = judged_answers(text)
    if answers is None:
        return None
    one, two = answers
    winner = "1" if len(one) > len(two) else "2" if len(two) > len(one) else "N/A"
    return json.dumps({"reasoning": f"answer {winner} is longer", "verdict": winner})


def write_spec(folder: Path, server: LLMServer, *, prompts: int, batch: str, provider: str = "openai-compatible",
               markers: dict[int, str] | None = None, vibes: int = 3) -> Path:
    markers = markers or {}
    rows = [{"id": f"p{i}", "q": f"Question {i}. {markers.get(i, '')}", "a": "word " * (i % 9 + 2),
             "b": "text " * (11 - i % 7)} for i in range(prompts)]
    (folder / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    url = server.anthropic_url if provider == "anthropic" else server.base_url
    vibe_lines = "".join(f"  - {{name: vibe{i}, low: less of {i}, high: more of {i}}}\n" for i in range(vibes))
    (folder / "spec.yaml").write_text(f"""\
name: batched
models: {{a: {{provider: recorded}}, b: {{provider: recorded}}}}
judges:
  j: {{kind: llm, provider: {provider}, base_url: {url}, model: m, api_key_env: BATCH_TEST_KEY,
       price: {{input: 2.0, output: 8.0}}, limits: {{max_retries: 2}}{', batch: ' + batch if batch else ''}}}
datasets:
  d: {{source: {{path: d.jsonl}}, fields: {{id: id, prompt: q, outputs: {{a: a, b: b}}}}}}
vibes:
{vibe_lines}analyses:
  vibecheck: {{dataset: d, models: [a, b], judges: [j]}}
""")
    return folder / "spec.yaml"


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BATCH_TEST_KEY", "sk-test")


def judged(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in gzip.decompress((run_dir / "judge.jsonl.gz").read_bytes()).splitlines()]


def verdicts(run_dir: Path) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    return [(p["item_id"], p["nu"], p["orders"]) for p in
            map(json.loads, (run_dir / "vibecheck" / "pairs.jsonl").read_text().splitlines())]


def test_a_judge_stage_through_batches_gives_the_live_verdicts(tmp_path: Path) -> None:
    with LLMServer() as server:
        server.state.reply = longer_judge
        (tmp_path / "batch").mkdir()
        spec = write_spec(tmp_path / "batch", server, prompts=60, batch="{poll_s: 0.1}")
        summary, _, batched = run_spec(spec, tmp_path / "batch" / "run", tmp_path / "batch.sqlite", quiet=True)
        lines = [line for batch in server.state.batch.submitted for line in batch["lines"]]
        live_before = [e for e in server.state.log if not e.path.startswith("batch")]
        (tmp_path / "live").mkdir()
        spec_live = write_spec(tmp_path / "live", server, prompts=60, batch="")
        _, _, live = run_spec(spec_live, tmp_path / "live" / "run", tmp_path / "live.sqlite", quiet=True)
        live_calls = [e for e in server.state.log if not e.path.startswith("batch")]
    assert summary.done == summary.total and not live_before  # every question went in the batch
    assert len(lines) == 60 * 3 * 2 == len(live_calls)
    assert verdicts(batched) == verdicts(live)
    assert {t.id for t in prepare(spec).plan.tasks} == {t.id for t in prepare(spec_live).plan.tasks}
    # every line carries the live call's body, its JSON schema in the same response_format
    by_messages = {json.dumps(e.body["messages"]): e.body for e in live_calls}
    for line in lines:
        assert line["url"] == "/v1/chat/completions" and line["method"] == "POST"
        assert line["body"] == by_messages[json.dumps(line["body"]["messages"])]
    assert lines[0]["body"]["response_format"]["type"] == "json_schema"
    results = judged(batched)
    assert {r["meta"]["batch_id"] for r in results} == {"batch_1"}
    index = (batched / "index.html").read_text()
    assert "Provider batches" in index and "batch_1" in index and "succeeded 360" in index


def test_anthropic_batches_carry_the_live_tool_and_retry_what_failed(tmp_path: Path) -> None:
    markers = {1: "[[batch_error]]", 4: "[[batch_expire]]"}
    with LLMServer() as server:
        server.state.reply = longer_judge
        (tmp_path / "b").mkdir()
        spec = write_spec(tmp_path / "b", server, prompts=8, batch="{poll_s: 0.1, max_requests: 10}",
                          provider="anthropic", markers=markers, vibes=1)
        summary, _, batched = run_spec(spec, tmp_path / "b" / "run", tmp_path / "b.sqlite", quiet=True)
        submitted = server.state.batch.submitted
        (tmp_path / "l").mkdir()
        spec_live = write_spec(tmp_path / "l", server, prompts=8, batch="", provider="anthropic", markers=markers,
                               vibes=1)
        _, _, live = run_spec(spec_live, tmp_path / "l" / "run", tmp_path / "l.sqlite", quiet=True)
        live_calls = [e for e in server.state.log if not e.path.startswith("batch")]
    assert summary.done == summary.total
    # 16 questions in batches of at most 10; then the 2 errored and 2 expired, once more
    assert [len(b["custom_ids"]) for b in submitted] == [10, 6, 4]
    assert set(submitted[2]["custom_ids"]) < set(submitted[0]["custom_ids"]) | set(submitted[1]["custom_ids"])
    assert verdicts(batched) == verdicts(live)
    by_messages = {json.dumps(e.body["messages"]): e.body for e in live_calls}
    for line in submitted[0]["lines"] + submitted[1]["lines"]:
        live_body = by_messages[json.dumps(line["params"]["messages"])]
        assert line["params"]["tools"] == live_body["tools"] and line["params"]["tool_choice"] == live_body[
            "tool_choice"]
        assert {k: v for k, v in live_body.items() if k in line["params"]} == line["params"]
    log = json.loads((batched / "manifest.json").read_text())["batches"]["j"]
    assert log["outcomes"] == {"succeeded": 16, "errored": 2, "expired": 2}
    assert sum(b["outcomes"].get("succeeded", 0) for b in log["batches"][:2]) == 12
    assert log["batches"][2]["outcomes"] == {"succeeded": 4} and log["batches"][2]["round"] == 1


def killed_while_polling(spec: Path, cache: Path, out: Path, server: LLMServer) -> str:
    """`vibe run` in a process of its own, stopped by SIGTERM once it has polled its batch twice: its stderr."""
    env = {**os.environ, "BATCH_TEST_KEY": "sk-test", "PYTHONUNBUFFERED": "1"}
    run = subprocess.Popen([sys.executable, "-m", "engine", "run", str(spec), "--cache", str(cache), "--out",
                            str(out), "--quiet"], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while server.state.batch.polls < 2 and time.time() < deadline:
        time.sleep(0.1)
    assert server.state.batch.polls >= 2, "the run never polled its batch"
    run.send_signal(signal.SIGTERM)  # as a cancelled CI job stops it; Ctrl-C is the same path
    _, stderr = run.communicate(timeout=60)
    assert run.returncode == 130, stderr
    return stderr


def vibe_batches(spec: Path, cache: Path, *flags: str) -> str:
    env = {**os.environ, "BATCH_TEST_KEY": "sk-test"}
    shown = subprocess.run([sys.executable, "-m", "engine", "batches", str(spec), "--cache", str(cache), *flags],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


def test_a_killed_run_resumes_its_batches_and_submits_nothing_again(tmp_path: Path) -> None:
    cache, out = tmp_path / "c.sqlite", tmp_path / "run"
    with LLMServer() as server:
        server.state.reply = longer_judge
        server.state.batch.delay_s = 3600.0  # the provider takes its time
        spec = write_spec(tmp_path, server, prompts=20, batch="{poll_s: 0.2}")
        stderr = killed_while_polling(spec, cache, out, server)
        assert "1 provider batch(es) keep running" in stderr, stderr
        shown = vibe_batches(spec, cache)
        assert "batch batch_1 (openai-compatible), 120 requests, in_progress" in shown, shown
        server.state.batch.delay_s = 0.0  # the next day: the batch has ended
        summary, _, run_dir = run_spec(spec, out, cache, quiet=True)
        assert len(server.state.batch.submitted) == 1  # polled, not sent again
        assert not [e for e in server.state.log if not e.path.startswith("batch")]
    assert summary.done == summary.total
    log = json.loads((run_dir / "manifest.json").read_text())["batches"]["j"]
    assert log["resumed"] == 1 and log["outcomes"] == {"succeeded": 120}


@pytest.mark.parametrize(("provider", "forgets"), [("openai-compatible", "batch"), ("anthropic", "batch"),
                                                   ("openai-compatible", "results"), ("anthropic", "results")])
def test_a_batch_the_provider_forgot_is_closed_and_its_requests_asked_once_more(
        tmp_path: Path, provider: str, forgets: str) -> None:
    cache, out = tmp_path / "c.sqlite", tmp_path / "run"
    with LLMServer() as server:
        server.state.reply = longer_judge
        server.state.batch.delay_s = 3600.0
        spec = write_spec(tmp_path, server, prompts=10, batch="{poll_s: 0.2}", provider=provider, vibes=2)
        killed_while_polling(spec, cache, out, server)
        if forgets == "batch":  # past retention, or asked with another organisation's key
            server.state.batch.forget()
            shown = vibe_batches(spec, cache)
            assert f"batch {server.state.batch.submitted[0]['id']} ({provider}), 40 requests, gone at the provider " \
                   "(HTTP 404): the next run closes it" in shown, shown
        else:  # the batch still shows as ended, but its results are no longer served
            server.state.batch.forget(results_only=True)
        server.state.batch.delay_s = 0.0
        summary, _, run_dir = run_spec(spec, out, cache, quiet=True)
        log = json.loads((run_dir / "manifest.json").read_text())["batches"]["j"]
        page = (run_dir / "index.html").read_text()
        first, *again = server.state.batch.submitted
        assert not Cache(cache).batches(open_only=True)
        assert vibe_batches(spec, cache).startswith("batched: no provider batch is waiting")
        second, *_ = run_spec(spec, out, cache, quiet=True)  # and nothing is stuck: the next run has it all
    assert summary.done == summary.total == second.done
    assert len(again) == 1 and sorted(again[0]["custom_ids"]) == sorted(first["custom_ids"])
    assert set(server.state.batch.seen.values()) == {2}  # each forgotten request submitted exactly once more
    assert log["outcomes"] == {"gone": 40, "succeeded": 40}
    gone = log["batches"][0]
    assert gone["status"] == "gone" and gone["resumed"] and f"batch {first['id']} is gone at {provider} (HTTP 404" \
        in gone["reason"]
    assert "asked again" in gone["reason"] and f"{first['id']}</span>: 40 requests, submitted by an earlier run — " \
        "gone" in page


def test_a_forgotten_batch_is_closed_by_cancel_and_a_503_closes_nothing(tmp_path: Path) -> None:
    cache, out = tmp_path / "c.sqlite", tmp_path / "run"
    with LLMServer() as server:
        server.state.reply = longer_judge
        server.state.batch.delay_s = 3600.0
        spec = write_spec(tmp_path, server, prompts=5, batch="{poll_s: 0.2}", vibes=1)
        killed_while_polling(spec, cache, out, server)
        server.state.batch.unavailable = 100  # the provider is down for longer than the run's retries
        summary, _, _ = run_spec(spec, out, cache, quiet=True)
        assert summary.done < summary.total and "HTTP 503" in str(summary.failed)
        assert "batch batch_1 at openai-compatible stays open: the next `vibe run` polls it again" in str(
            summary.failed)
        assert [b.batch_id for b in Cache(cache).batches(open_only=True)] == ["batch_1"]  # still open
        server.state.batch.unavailable = 2  # back after two failed polls: the run waits them out
        server.state.batch.forget()
        cancelled = vibe_batches(spec, cache, "--cancel")
        assert "batch batch_1 (openai-compatible), 10 requests, gone at the provider (HTTP 404): closed here" \
            in cancelled, cancelled
        server.state.batch.delay_s = 0.0
        summary, _, _ = run_spec(spec, out, cache, quiet=True)
    assert summary.done == summary.total
    assert [len(b["custom_ids"]) for b in server.state.batch.submitted] == [10, 10]
    assert [b.status for b in Cache(cache).batches()] == ["gone", "completed"]


def test_cancelled_batches_are_asked_again(tmp_path: Path) -> None:
    cache, out = tmp_path / "c.sqlite", tmp_path / "run"
    env = {**os.environ, "BATCH_TEST_KEY": "sk-test"}
    with LLMServer() as server:
        server.state.reply = longer_judge
        server.state.batch.delay_s = 3600.0
        spec = write_spec(tmp_path, server, prompts=5, batch="{poll_s: 0.2}", vibes=1)
        run = subprocess.Popen([sys.executable, "-m", "engine", "run", str(spec), "--cache", str(cache), "--out",
                                str(out), "--quiet"], cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while server.state.batch.polls < 1 and time.time() < deadline:
            time.sleep(0.1)
        run.send_signal(signal.SIGTERM)
        run.wait(60)
        cancelled = subprocess.run([sys.executable, "-m", "engine", "batches", str(spec), "--cache", str(cache),
                                    "--cancel"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        assert "cancelling: completed" in cancelled.stdout or "cancelling: cancelled" in cancelled.stdout, (
            cancelled.stdout + cancelled.stderr)
        server.state.batch.delay_s = 0.0
        summary, _, run_dir = run_spec(spec, out, cache, quiet=True)
        assert [len(b["custom_ids"]) for b in server.state.batch.submitted] == [10, 10]
    assert summary.done == summary.total
    log = json.loads((run_dir / "manifest.json").read_text())["batches"]["j"]
    assert log["outcomes"] == {"cancelled": 10, "succeeded": 10}


def test_the_plan_and_the_manifest_price_batches_at_half(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with LLMServer() as server:
        server.state.reply = longer_judge
        (tmp_path / "b").mkdir()
        (tmp_path / "l").mkdir()
        batched = write_spec(tmp_path / "b", server, prompts=10, batch="true")
        live = write_spec(tmp_path / "l", server, prompts=10, batch="")
        cost = {name: sum(r["cost"] for r in summarize(outline_of(prepare(path)), set())) for name, path in
                (("batched", batched), ("live", live))}
        assert cost["batched"] == pytest.approx(cost["live"] / 2) and cost["live"] > 0
        from engine.cli import main
        from engine.diff import diff_plans

        before, after = prepare(live), prepare(batched)
        change = diff_plans(before.spec.document, outline_of(before), after.spec.document, outline_of(after))
        assert change.new_cost == pytest.approx(change.base_cost / 2)  # the same tasks, at the batch rate
        assert all(c["added"] == c["removed"] == 0 for c in change.stages.values())
        assert change.sections["judges"]["changed"] == ["j (batch)"]

        assert main(["plan", str(batched)]) == 0
        assert "j goes in provider batches: priced above at half the live rate" in capsys.readouterr().out
        summary, _, run_dir = run_spec(batched, tmp_path / "b" / "run", tmp_path / "c.sqlite", quiet=True)
    assert summary.done == summary.total
    results = judged(run_dir)
    live_price = sum((r["input_tokens"] * 2.0 + r["output_tokens"] * 8.0) / 1e6 for r in results)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["cost_usd"] == pytest.approx(live_price / 2, abs=1e-6)
    assert manifest["batches"]["j"]["spent"] == pytest.approx(live_price / 2)
    (tmp_path / "bad.yaml").write_text(live.read_text().replace("a: {provider: recorded}",
                                                                "a: {provider: recorded, batch: true}"))
    with pytest.raises(SpecError, match=r"models\.a\.batch.*no batch API"):
        load_spec(tmp_path / "bad.yaml")


def test_execution_batch_is_the_judges_default_and_models_batch_when_they_ask(tmp_path: Path) -> None:
    with LLMServer() as server:
        spec = write_spec(tmp_path, server, prompts=6, batch="", vibes=1)
        text = spec.read_text().replace("a: {provider: recorded}", f"a: {{provider: openai-compatible, base_url: "
                                        f"{server.base_url}, model: gen, batch: {{poll_s: 0.1}}}}")
        text = text.replace("analyses:", "execution: {batch: true}\nanalyses:")
        text = text.replace("judges:\n", f"judges:\n  live: {{kind: llm, provider: openai, base_url: {server.base_url},"
                                         " model: m, api_key_env: BATCH_TEST_KEY, batch: false}\n")
        spec.write_text(text.replace("datasets:", "  local: {kind: metric}\ndatasets:"))
        loaded = load_spec(spec)
        assert loaded.judges["j"].endpoint.batch is not None and loaded.judges["live"].endpoint.batch is None
        assert loaded.models["a"].batch is not None and loaded.models["b"].batch is None
        spec.write_text(text.replace("judges: [j]", "judges: [j, live]"))
        summary, _, _ = run_spec(spec, tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
        kinds = [{line["body"]["model"] for line in b["lines"]} for b in server.state.batch.submitted]
        live = {e.body["model"] for e in server.state.log if not e.path.startswith("batch")}
    assert summary.done == summary.total
    assert kinds == [{"gen"}, {"m"}]  # the answers in one batch, then the batched judge's questions
    assert live == {"m"}  # the judge that said batch: false asked live
