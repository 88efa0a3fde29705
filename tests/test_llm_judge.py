"""The LLM judge and LLM discovery paths over real HTTP (scripted answers from tests/llm_server.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from llm_server import LLMServer

from engine.analyze.run_results import analyze_run
from engine.execute.cache import Cache
from engine.pipeline import prepare, run_spec

SPEC = """\
name: llm-judged
models: {{a: {{provider: recorded}}, b: {{provider: recorded}}}}
judges:
  judge:
    kind: llm
    provider: openai-compatible
    base_url: {url}
    model: judge-model
    params: {{temperature: 0, max_tokens: 64}}
  m: {{kind: metric}}
datasets:
  d:
    source: {{path: pairs.jsonl}}
    fields: {{id: id, prompt: q, outputs: {{a: a, b: b}}, preference: pref}}
vibes:
  - {{name: warmth, low: cold tone, high: warm tone, metric: warmth}}
{discover}
analyses:
  vibecheck: {{dataset: d, models: [a, b], judges: [judge, m], split: {{train: 0.5, seed: 1}}}}
"""


def write_pairs(tmp_path: Path, n: int = 20) -> None:
    rows = []
    for i in range(n):
        warm = f"Hello friend, I am so glad you asked about item {i}! Great question, hope this helps."
        cold = f"Item {i}: see the documentation."
        tag = "[[noverdict]]" if i == 0 else ""
        rows.append({"id": f"q{i}", "q": f"question {i} {tag}", "a": warm if i % 4 else cold,
                     "b": cold if i % 4 else warm, "pref": "a" if i % 3 else "b"})
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_llm_judge_swap_and_invalid_verdicts(tmp_path: Path) -> None:
    write_pairs(tmp_path)
    with LLMServer() as server:
        # a position-biased judge: always "answer 1", except one pair it cannot decide
        server.state.replies = {"noverdict": "Both are fine, I think.", "Which answer": "It reads warmer.\nVerdict: 1"}
        (tmp_path / "spec.yaml").write_text(SPEC.format(url=server.base_url, discover=""))
        summary, results, _ = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite",
                                       quiet=True, report=False)
    assert summary.done == summary.total
    (vc,) = results.of("vibecheck")
    pairs = {p.item_id: p for p in vc.pairs}
    # "answer 1" in both orders is position bias: the swap rule gives 0 for every pair it could read; q0's
    # answers hold no verdict, so its score is missing, not a tie
    assert all(p.by_judge["warmth"]["judge"] == 0 for p in vc.pairs if p.item_id != "q0")
    assert pairs["q0"].by_judge["warmth"]["judge"] is None
    # the metric judge still sees the planted difference, so the panel (mean of 0 and ±1) follows it
    assert pairs["q1"].nu["warmth"] == 1 and pairs["q4"].nu["warmth"] == -1
    (warmth,) = vc.vibes
    assert warmth.invalid_verdicts == 2 and vc.invalid_verdicts == 2  # q0's two orders, both unparseable
    assert any("Both are fine" in answer for answer in pairs["q0"].rationales["warmth"]["judge"])
    assert warmth.judge_kinds == ["llm", "metric"]


def test_llm_discovery_proposes_reduces_and_iterates(tmp_path: Path) -> None:
    """Round 1 proposes enthusiasm, which a judge that reads the answers scores consistently (the warm answer
    is higher in both orders): it separates the models and stays. Model matching on it still gets more than
    `pairs_per_round` training pairs wrong, so round 2 asks for new axes and gets formality, which the judge
    scores by position alone (ν = 0 everywhere): validation drops it that round."""
    write_pairs(tmp_path, 40)  # 10 pairs where b is the warm one: more than 2 of them in training
    discover = ("  - discover: {method: llm, proposer: judge, max_vibes: 3, pairs_per_round: 2, batch: 2, "
                "iterations: 2}")
    with LLMServer() as server:
        server.state.replies = {
            "already known": "- Formality: Low: slang and jokes; High: stiff and official",
            "candidate evaluation axes": "Nothing to merge.",  # unparseable: the proposals are kept as they are
            "differ systematically": "1. **Enthusiasm**: Low: flat delivery; High: excited delivery\nnot an axis",
            "Axis: formality": "The first one.\nVerdict: 1",
            "[Answer 1]\\nHello friend": "Answer 1 is warmer.\nVerdict: 1",
            "[Answer 2]\\nHello friend": "Answer 2 is warmer.\nVerdict: 2",
        }
        (tmp_path / "spec.yaml").write_text(SPEC.format(url=server.base_url, discover=discover))
        out = subprocess.run([sys.executable, "-m", "engine", "discover", str(tmp_path / "spec.yaml"), "--cache",
                              str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "vibes.yaml"), "--quiet"],
                             capture_output=True, text=True, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        vibes = yaml.safe_load((tmp_path / "vibes.yaml").read_text())["vibes"]
        assert vibes == [{"name": "enthusiasm", "low": "flat delivery", "high": "excited delivery"}]
        proposer_calls = [e for e in server.state.log if "differ systematically" in e.text]
        assert len(proposer_calls) == 1 * 2  # the 2 pairs of a round in one batch, shown in both orders
        assert any("already known" in e.text for e in server.state.log)  # the second round ran
        assert any("Axis: formality" in e.text for e in server.state.log)  # and its proposal was scored
        calls = len(server.state.log)
        again = subprocess.run([sys.executable, "-m", "engine", "discover", str(tmp_path / "spec.yaml"), "--cache",
                                str(tmp_path / "c.sqlite"), "--quiet"], capture_output=True, text=True, cwd=tmp_path)
        assert again.returncode == 0 and len(server.state.log) == calls  # every call came from the cache
    with Cache(tmp_path / "c.sqlite") as cache:
        prepared = prepare(tmp_path / "spec.yaml")
        finished = cache.get_many(t.id for t in prepared.plan.tasks)
        assert analyze_run(prepared, finished, tmp_path / "run").of("vibecheck")


def test_llm_judge_reads_a_vibes_example_answers(tmp_path: Path) -> None:
    write_pairs(tmp_path, 4)
    spec = SPEC.format(url="{url}", discover="  - {name: docs_pointer, low: explains in place, high: points to docs,"
                       "\n     examples: {low: ['Here is how it works, step by step.'], high: ['RTFM-EXAMPLE: see the "
                       "manual.', 'Consult the reference page.']}}")
    with LLMServer() as server:
        server.state.replies = {"Examples from the high end": "Answer 2 points to the docs.\nVerdict: 2",
                                "Which answer": "Verdict: N/A"}
        (tmp_path / "spec.yaml").write_text(spec.replace("{url}", server.base_url))
        summary, results, _ = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite",
                                       quiet=True, report=False)
        texts = [entry.text for entry in server.state.log]
    assert summary.done == summary.total
    with_examples = [t for t in texts if "RTFM-EXAMPLE" in t]
    assert len(with_examples) == 8  # 4 pairs x both orders, each showing both ends' examples
    assert all("[Example 2]\nConsult the reference page." in t and "step by step" in t for t in with_examples)
    assert all("Examples from" not in t for t in texts if "Axis: warmth" in t)  # vibes without examples: as before
    (vc,) = results.of("vibecheck")
    docs = {p.item_id: p.by_judge["docs_pointer"]["judge"] for p in vc.pairs}
    # "answer 2" in both orders is position bias, so the swap rule scores 0; the verdicts were parsed, not invalid
    assert set(docs.values()) == {0} and next(v for v in vc.vibes if v.name == "docs_pointer").invalid_verdicts == 0


def test_the_llm_proposer_reads_every_training_pair_where_statistical_discovery_reads_a_sample(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond `DISCOVERY_UNITS` training prompts statistical discovery reads a seeded sample of them; the LLM
    proposer still gets every training pair, since its screen scores its vibes on all of them."""
    from engine.builtin_plugins.methods.vibecheck.discovery import propose, splits
    from engine.execute.recorded import hold_recorded

    write_pairs(tmp_path, 40)
    monkeypatch.setattr(splits, "DISCOVERY_UNITS", 5)
    read: dict[str, int] = {}

    def llm_vibes(prepared: Any, analysis: Any, cache: Cache, pairs: list[Any]) -> list[Any]:
        read["llm"] = len(pairs)
        return []

    def statistical(pairs: list[Any], settings: dict, cache: Cache) -> list[Any]:
        read["statistical"] = len(pairs)
        return []

    monkeypatch.setattr(propose, "_llm_vibes", llm_vibes)
    monkeypatch.setattr(propose, "_statistical", statistical)
    for discover in ("{method: llm, proposer: judge}", "{method: statistical}"):
        (tmp_path / "spec.yaml").write_text(SPEC.format(url="http://127.0.0.1:9", discover=f"  - discover: {discover}"))
        prepared = prepare(tmp_path / "spec.yaml")
        analysis = prepared.spec.analyses["vibecheck"]
        with Cache(tmp_path / "c.sqlite") as cache:
            hold_recorded(prepared, cache)
            propose.propose(prepared, analysis, cache)
    assert read == {"llm": len(splits.split_bindings(prepared, analysis)[1]), "statistical": 5}
