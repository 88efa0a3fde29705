"""The unit-test correctness gate: answers' code run against the dataset's tests in a subprocess, and a
persona analysis gated on the result, end to end over real HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from llm_server import LLMServer

from engine.builtin_plugins.judges.unit_tests import extract_code, rate, run_tests
from engine.judges.verdicts import RatingScore
from engine.pipeline import run_spec
from engine.requests import Rating

TESTS = "assert add(2, 3) == 5\nassert add(-1, 1) == 0"


def test_code_is_taken_from_the_last_python_block() -> None:
    answer = "Here:\n```bash\npip install x\n```\nand\n```python\ndef add(a, b):\n    return a + b\n```\nDone."
    assert extract_code(answer) == "def add(a, b):\n    return a + b\n"
    assert extract_code("def add(a, b): return a + b") == "def add(a, b): return a + b"


def test_passing_failing_hanging_and_crashing_answers() -> None:
    assert run_tests("def add(a, b):\n    return a + b", TESTS) == (True, "all tests passed")
    passed, why = run_tests("def add(a, b):\n    return a - b", TESTS)
    assert not passed and why.startswith("AssertionError")
    passed, why = run_tests("def add(a, b):\n    while True: pass", TESTS, timeout_s=1.0)
    assert not passed and why == "timed out after 1 s"
    passed, why = run_tests("x = 'a' * (4 << 30)\ndef add(a, b): return a + b", TESTS)
    assert not passed and "MemoryError" in why  # the memory cap stops it, the run goes on
    ratings = rate([Rating("tests", "unit_tests", {"tests": TESTS}, "g", config={"timeout_s": 5})],
                   {"g": "```python\ndef add(a, b):\n    return a + b\n```"})
    assert [r.to_json() for r in ratings] == [
        {"kind": "unit_tests", "rating": 5.0, "explanation": "all tests passed", "signals": {"passed": 1.0}}]


def test_ratings_cached_in_the_older_forms_still_read() -> None:
    """Before every offline rater returned one record, the test judge stored its pass and reason and the
    similarity judge its signals at the top level; both read as the common record, the signals shown by name (the
    reader knows no judge kind, so no kind's own wording)."""
    tests = RatingScore.from_json({"kind": "unit_tests", "rating": 1.0, "passed": False, "reason": "AssertionError"})
    assert (tests.value, tests.explanation, dict(tests.signals)) == (1.0, "AssertionError", {"passed": 0.0})
    similar = RatingScore.from_json({"kind": "embedding", "method": "m/v1", "rating": 3.0, "match": 0.5,
                                     "bertscore_recall": 0.25, "key_term_recall": 0.5, "cosine": 0.75})
    assert similar.value == 3.0 and similar.method == "m/v1"
    assert similar.explanation == "match 0.50, bertscore recall 0.25, key term recall 0.50, cosine 0.75"
    assert RatingScore.from_json(similar.to_json()) == similar


SPEC = """\
name: gated
models:
  good: {{provider: openai-compatible, base_url: {url}, model: m, system_prompt: MODEL-GOOD}}
  bad: {{provider: openai-compatible, base_url: {url}, model: m, system_prompt: MODEL-BAD}}
judges:
  tests: {{kind: unit_tests}}
  m: {{kind: metric}}
datasets:
  d:
    source: {{path: items.jsonl}}
    fields: {{id: id, prompt: q, tests: tests}}
personas:
  dev: {{description: I write Python every day., dimensions: {{cognitive_load: 5}}, prefers: {{length_words: high}}}}
analyses:
  personas: {{dataset: d, models: [good, bad], personas: [dev], judges: [m], gate_judge: tests, variants: 1,
             controls: 0}}
"""


def test_a_persona_analysis_gated_on_unit_tests(tmp_path: Path) -> None:
    """The bad model writes more words (the metric judge, asked for length, prefers it), but its code fails
    the tests: the gate gives every prompt with tests to the good model; the prompt without tests is left to
    the dimensions."""
    rows = [{"id": "p0", "q": "Write add(a, b).", "tests": TESTS}, {"id": "p1", "q": "Explain add.", "tests": None}]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with LLMServer() as server:
        server.state.replies = {"MODEL-GOOD": "```python\ndef add(a, b):\n    return a + b\n```",
                                "MODEL-BAD": "Sure! Here is a lovely long answer for you:\n```python\ndef add(a, b):"
                                             "\n    return a * b\n```\nI hope this helps you a lot today!"}
        (tmp_path / "spec.yaml").write_text(SPEC.format(url=server.base_url))
        summary, results, _ = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True,
                                       report=False)
    assert summary.done == summary.total
    (result,) = results.of("personas")
    gates = {(s.item_id, s.variant): s.gate for s in result.samples}
    assert gates == {("p0", "original"): 1, ("p0", "persona0"): 1, ("p1", "original"): None,
                     ("p1", "persona0"): None}
    votes = {(s.item_id, s.variant): s.votes["m"] for s in result.samples}
    assert votes[("p0", "original")] == 1 and votes[("p1", "original")] == -1  # p1: length decides, bad is longer
    (dev,) = result.personas
    assert (dev.gate_decided, dev.gate_prompts) == (2, 1)  # two samples (p0 and its rewrite), one prompt
    assert any("pass@1 on the dataset's unit tests" in note for note in result.notes)


def test_a_unit_tests_judge_needs_tests_and_is_only_a_gate(tmp_path: Path) -> None:
    (tmp_path / "items.jsonl").write_text("")
    text = SPEC.format(url="http://127.0.0.1:9").replace("fields: {id: id, prompt: q, tests: tests}",
                                                         "fields: {id: id, prompt: q}").replace(
        "judges: [m]", "judges: [m, tests]")
    (tmp_path / "spec.yaml").write_text(text)
    out = subprocess.run([sys.executable, "-m", "engine", "validate", str(tmp_path / "spec.yaml")],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "analyses.personas.gate_judge: gate_judge 'tests' reads the dataset's tests: map the column" in out.stderr
    assert ("analyses.personas.judges[1]: judge 'tests' is a unit-test judge (kind: unit_tests), which cannot score a "
            "pair of answers on a persona's dimension") in out.stderr
