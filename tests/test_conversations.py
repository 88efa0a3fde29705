"""Conversations and agent traces on real files: MT-Bench's two turns (a turn-2 verdict against a hand count of
the second-turn answers, the page's turn-by-turn table), OpenAI-style messages and Inspect logs with tool calls
(shown on the page, never measured as prose), Arena conversation pairs with their labels, the errors and
exclusions of bad transcripts, and what `vibe init` recognises."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from engine.builtin_plugins.methods.vibecheck.explorer import read_chunk
from engine.datasets import DatasetError
from engine.pipeline import prepare, run_spec
from engine.scaffold import sniff

# its runs are built once (session-scoped: a worker runs other files between this one's tests, and a module
# scope would build them again after each): every test of this file on one pytest-xdist worker
pytestmark = pytest.mark.xdist_group("conversations")

ROOT = Path(__file__).resolve().parent.parent
TOOL_RESULT = "result " * 400  # a tool's output far longer than any answer: were it measured, it would win


def words(text: str) -> int:
    """The metric judge's word count, by hand: runs of letters and apostrophes."""
    return len(re.findall(r"[A-Za-z']+", text))


def hand_verdict(a: float, b: float, tolerance: float = 0.05) -> int:
    """The offline panel's metric judge: a tie within 5% of the larger measure, else the larger side."""
    return 0 if abs(a - b) <= tolerance * max(a, b, 1e-9) else (1 if a > b else -1)


@pytest.fixture(scope="session")
def mt_bench_run(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    tmp = tmp_path_factory.mktemp("mt-bench")
    summary, _, run_dir = run_spec(ROOT / "specs" / "mt-bench-vibes.yaml", tmp / "run", tmp / "c.sqlite", quiet=True)
    assert summary.done == summary.total
    return run_dir


def answers_of(shared: Path, model: str) -> dict[str, list[str]]:
    rows = [json.loads(line) for line in (shared / "mt_bench" / "model_answer" / f"{model}.jsonl").open()]
    return {str(r["question_id"]): r["choices"][0]["turns"] for r in rows}


def test_a_turn_two_verdict_is_the_metric_on_the_second_turn_answers(mt_bench_run: Path, shared_data: Path) -> None:
    pairs = [json.loads(line) for line in (mt_bench_run / "turn-profiles" / "gpt-3.5-turbo" / "pairs.jsonl").open()]
    model, reference = answers_of(shared_data, "gpt-3.5-turbo"), answers_of(shared_data, "gpt-4")
    second = [p for p in pairs if p["turn"] == 2]
    assert len(second) == 80 and {p["conversation"] for p in second} == set(model)
    for pair in second[:20]:
        qid = pair["conversation"]
        a, b = words(model[qid][1]), words(reference[qid][1])
        assert pair["measures"]["verbosity"] == [a, b]
        assert pair["nu"]["verbosity"] == hand_verdict(a, b)
    # turn 1 of the same question reads the first answers, not the second
    first = next(p for p in pairs if p["item_id"] == "81#1")
    assert first["measures"]["verbosity"] == [words(model["81"][0]), words(reference["81"][0])]


def test_the_page_breaks_every_vibe_down_by_turn_with_intervals(mt_bench_run: Path) -> None:
    profiles = json.loads((mt_bench_run / "turn-profiles" / "profiles.json").read_text())
    cells = [c for c in profiles["turns"] if c["model"] == "gpt-3.5-turbo" and c["vibe"] == "verbosity"]
    assert [c["turn"] for c in cells] == [1, 2]
    pairs = [json.loads(line) for line in (mt_bench_run / "turn-profiles" / "gpt-3.5-turbo" / "pairs.jsonl").open()]
    for cell in cells:
        nu = [p["nu"]["verbosity"] for p in pairs if p["turn"] == cell["turn"]]
        assert cell["n"] == len(nu) and cell["separability"] == pytest.approx(sum(nu) / len(nu))
        assert cell["ci_low"] <= cell["separability"] <= cell["ci_high"]
    by_conversation = {p["conversation"]: {} for p in pairs}
    for p in pairs:
        by_conversation[p["conversation"]][p["turn"]] = p["nu"]["verbosity"]
    change = [t[2] - t[1] for t in by_conversation.values() if 1 in t and 2 in t]
    assert cells[1]["change"] == pytest.approx(sum(change) / len(change)) and cells[1]["change_n"] == len(change)
    # the overall cell counts conversations, not turns: a question's two turns are one unit
    overall = next(c for c in profiles["cells"] if c["model"] == "gpt-3.5-turbo" and c["vibe"] == "verbosity")
    assert overall["n"] == 80 and "turns of conversations" in profiles["cell_test"]
    page = (mt_bench_run / "index.html").read_text()
    assert "<h3>Turn by turn</h3>" in page and "turn 2 − turn 1" in page
    # the empty first answer of llama-13b to question 127 is left out, and said
    manifest = json.loads((mt_bench_run / "manifest.json").read_text())
    assert manifest["excluded"]["mt-bench"] == [
        "conversation '127' turn 1: llama-13b's answer has no text (tool calls only, or empty)"]


def test_the_split_keeps_a_conversations_turns_together(mt_bench_run: Path) -> None:
    pairs = [json.loads(line) for line in (mt_bench_run / "turn-profiles" / "claude-v1" / "pairs.jsonl").open()]
    sides: dict[str, set[str]] = {}
    for p in pairs:
        sides.setdefault(p["conversation"], set()).add(p["split"])
    assert all(len(s) == 1 for s in sides.values())
    assert {"train", "test"} == {s for v in sides.values() for s in v}


# -- agent traces ------------------------------------------------------------------------------------------

def trace(model: str, prose: str, hostile: str = "") -> list[dict[str, Any]]:
    """Two turns; the first calls a tool whose long result must never count as the model's writing."""
    return [
        {"role": "system", "content": "You are a research assistant."},
        {"role": "user", "content": f"Find the population of Lyon. {hostile}"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q": "Lyon population"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "search", "content": TOOL_RESULT + hostile},
        {"role": "assistant", "content": prose},
        {"role": "user", "content": "And of Paris?"},
        {"role": "assistant", "content": f"{model} says: about two million."},
    ]


TRACE_SPEC = """\
name: traces
models: {{a: {{provider: recorded}}, b: {{provider: recorded}}}}
judges: {{m: {{kind: metric}}}}
datasets:
  t: {{format: {format}, unit: {unit}, source: {{paths: [{paths}]}}}}
vibes: [{{name: verbosity, low: short, high: long, metric: length_words}}]
analyses:
  vibecheck: {{dataset: t, models: [a, b], judges: [m]}}
"""


def test_openai_messages_with_tool_calls_are_shown_not_measured(tmp_path: Path) -> None:
    prose_of = {"a": "Lyon has about 520,000 people within the city limits today.", "b": "About 520k."}
    for model, prose in prose_of.items():
        rows = [{"id": f"c{n}", "messages": trace(model, prose)} for n in range(3)]
        (tmp_path / f"{model}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    calm = "{name: enthusiasm, low: calm, high: excited, metric: exclamations}"  # no '!' anywhere: dropped
    spec = TRACE_SPEC.format(format="openai-messages", unit="turn", paths="a.jsonl, b.jsonl")
    (tmp_path / "spec.yaml").write_text(spec.replace("length_words}]", f"length_words}}, {calm}]"))
    prepared = prepare(tmp_path / "spec.yaml")
    items = prepared.items["t"]
    assert [it.id for it in items][:2] == ["c0#1", "c0#2"] and items[0].outputs["b"] == "About 520k."
    assert items[1].history["a"][3]["name"] == "search"  # the earlier tool result is the judge's context
    summary, _, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
    assert summary.done == summary.total
    pairs = [json.loads(line) for line in (run_dir / "vibecheck" / "pairs.jsonl").open()]
    turn1 = next(p for p in pairs if p["item_id"] == "c0#1")
    # the prose only: the 400 words of the tool's result are not the model's
    assert turn1["measures"]["verbosity"] == [words(prose_of["a"]), words(prose_of["b"])] == [9, 2]
    row, second = read_chunk(run_dir / "explore" / "vibecheck" / "chunk-0.js")[:2]
    assert row["a_tools"] == [["tool call", 'search({"q": "Lyon population"})'],
                              ["tool result · search", TOOL_RESULT]]
    assert [label for label, _ in second["a_before"]] == ["system", "user", "tool call", "tool result · search",
                                                          "assistant"]
    # a two-model comparison breaks its kept vibes (and no dropped one) down by turn too, on the test pairs
    turns = json.loads((run_dir / "vibecheck" / "turns.json").read_text())
    kept = {v["name"] for v in map(json.loads, (run_dir / "vibecheck" / "vibes.jsonl").open()) if v["kept"]}
    assert {(t["vibe"], t["turn"]) for t in turns} == {(v, turn) for v in kept for turn in (1, 2)}
    assert "verbosity" in kept and "enthusiasm" not in kept
    assert "<h3>Turn by turn</h3>" in (run_dir / "index.html").read_text()


def inspect_log(model: str, prose: str) -> dict[str, Any]:
    messages = trace(model, prose)
    inspect_messages = []
    for m in messages:  # Inspect writes a tool call flat: id, function, arguments (an object)
        if m.get("tool_calls"):
            m = {**m, "tool_calls": [{"id": "c1", "function": "search", "arguments": {"q": "Lyon population"},
                                      "type": "function"}]}
        if m["role"] == "tool":
            m = {"role": "tool", "tool_call_id": "c1", "function": "search", "content": m["content"]}
        inspect_messages.append(m)
    sample = {"id": 1, "epoch": 1, "input": "Find the population of Lyon.", "target": "",
              "messages": inspect_messages, "output": {"completion": messages[-1]["content"]}, "scores": {}}
    return {"version": 2, "status": "success", "eval": {"model": f"openai/{model}", "task": "trace"},
            "samples": [sample]}


def test_inspect_logs_with_tool_events(tmp_path: Path) -> None:
    for model, prose in (("a", "Lyon has about half a million people."), ("b", "About 520k.")):
        (tmp_path / f"{model}.json").write_text(json.dumps(inspect_log(model, prose)))
    found = sniff(tmp_path / "a.json", None)
    assert found is not None and found[0].format == "inspect-messages"
    (tmp_path / "spec.yaml").write_text(TRACE_SPEC.format(format="inspect-messages", unit="turn",
                                                          paths="a.json, b.json"))
    items = prepare(tmp_path / "spec.yaml").items["t"]
    assert [it.outputs for it in items] == [{"a": "Lyon has about half a million people.", "b": "About 520k."},
                                            {"a": "a says: about two million.", "b": "b says: about two million."}]
    calls = [m for m in items[0].transcript["a"] if m.get("tool_calls")]
    assert calls[0]["tool_calls"] == [{"name": "search", "arguments": '{"q": "Lyon population"}'}]
    summary, _, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
    assert summary.done == summary.total
    pairs = [json.loads(line) for line in (run_dir / "vibecheck" / "pairs.jsonl").open()]
    assert pairs[0]["measures"]["verbosity"] == [words("Lyon has about half a million people."), words("About 520k.")]
    shown = read_chunk(run_dir / "explore" / "vibecheck" / "chunk-0.js")[0]
    assert shown["b_tools"] == [["tool call", 'search({"q": "Lyon population"})'],
                                ["tool result · search", TOOL_RESULT]]


def test_the_shared_inspect_logs_read_with_their_history(tmp_path: Path, shared_data: Path) -> None:
    """Two runs of one model, told apart by their files (as specs/inspect-popularity.yaml does)."""
    logs = shared_data / "interop" / "inspect_logs"
    first, second = (f"2025-02-11T15-{stamp}-05-00_popularity_{tail}.eval" for stamp, tail in
                     (("17-00", "dPiJifoWeEQBrfWsAopzWr"), ("18-04", "mj7khqpMM4GBCfVQozKgzB")))
    (tmp_path / "spec.yaml").write_text(f"""\
name: inspect-history
models: {{one: {{provider: recorded}}, two: {{provider: recorded}}}}
judges: {{m: {{kind: metric}}}}
datasets:
  t:
    format: inspect-messages
    unit: final
    source: {{paths: [{logs / first}, {logs / second}]}}
    model_names: {{{first}: one, {second}: two}}
vibes: [{{name: verbosity, low: short, high: long, metric: length_words}}]
analyses:
  vibecheck: {{dataset: t, models: [one, two], judges: [m]}}
""")
    items = prepare(tmp_path / "spec.yaml").items["t"]
    assert len(items) == 10 and all(it.turn == 1 for it in items)
    assert all(it.history["two"][0]["role"] == "system" for it in items)  # the system prompt is the context


ARENA = [
    {"question_id": "q1", "model_a": "x", "model_b": "y", "winner": "model_a", "turn": 2,
     "conversation_a": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello there, friend!"},
                        {"role": "user", "content": "Tell a joke"}, {"role": "assistant", "content": "A long joke."}],
     "conversation_b": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hey."},
                        {"role": "user", "content": "Tell a joke"}, {"role": "assistant", "content": "No."}]},
    {"question_id": "q2", "model_a": "y", "model_b": "x", "winner": "tie (bothbad)", "turn": 1,
     "conversation_a": [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}],
     "conversation_b": [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "It is four."}]},
    {"question_id": "q3", "model_a": "x", "model_b": "z", "winner": "model_b", "turn": 1,
     "conversation_a": [{"role": "user", "content": "Bye"}, {"role": "assistant", "content": "Goodbye."}],
     "conversation_b": [{"role": "user", "content": "Bye"}, {"role": "assistant", "content": "See you."}]},
]


def test_arena_conversation_pairs(tmp_path: Path) -> None:
    (tmp_path / "arena.json").write_text(json.dumps(ARENA))
    found = sniff(tmp_path / "arena.json", ARENA)
    assert found is not None and found[0].format == "arena-conversations"
    spec = TRACE_SPEC.format(format="arena-conversations", unit="final", paths="arena.json").replace(
        "a: {provider: recorded}, b: {provider: recorded}", "x: {provider: recorded}, y: {provider: recorded}").replace(
        "models: [a, b]", "models: [x, y]")
    (tmp_path / "spec.yaml").write_text(spec)
    items = prepare(tmp_path / "spec.yaml").items["t"]
    assert [(it.id, it.turn, it.outputs) for it in items] == [
        ("q1", 2, {"x": "A long joke.", "y": "No."}), ("q2", 1, {"y": "4", "x": "It is four."}),
        ("q3", 1, {"x": "Goodbye."})]  # z is not in the spec: its side is left out
    assert [it.label("x", "y") for it in items] == ["x", "tie", None]
    assert items[0].history["y"] == ({"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hey."})
    whole = prepare_with(tmp_path, spec.replace("unit: final", "unit: conversation"))
    assert whole[0].outputs["x"] == "Hello there, friend!\n\nA long joke." and whole[0].turn is None


def prepare_with(tmp_path: Path, spec: str) -> list[Any]:
    (tmp_path / "spec.yaml").write_text(spec)
    return prepare(tmp_path / "spec.yaml").items["t"]


def test_bad_transcripts_are_located_or_counted(tmp_path: Path) -> None:
    spec = TRACE_SPEC.format(format="openai-messages", unit="turn", paths="d.jsonl")

    def write(*rows: dict[str, Any]) -> None:
        (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    ok = [{"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A1"},
          {"role": "user", "content": "Q2"}, {"role": "assistant", "content": "A2"}]
    # roles that do not alternate: the file, the line and the message
    write({"id": "c", "model": "a", "messages": ok}, {"id": "c", "model": "b", "messages": [
        {"role": "user", "content": "Q1"}, {"role": "user", "content": "Q1 again"}]})
    with pytest.raises(DatasetError, match=r"d\.jsonl:2: messages\.1 is a user message right after another"):
        prepare_with(tmp_path, spec)
    write({"id": "c", "model": "a", "messages": [{"role": "assistant", "content": "hi"}]},
          {"id": "c", "model": "b", "messages": ok})
    with pytest.raises(DatasetError, match=r"d\.jsonl:1: messages\.0 \(assistant\) comes before any user"):
        prepare_with(tmp_path, spec)
    write({"id": "c", "model": "b", "messages": ok}, {"id": "c", "model": "a", "messages": [{"role": "robot"}]})
    with pytest.raises(DatasetError, match=r"d\.jsonl:2: messages\.0\.role is 'robot'"):
        prepare_with(tmp_path, spec)
    # a turn count that differs, and an answer with no text: left out, counted, said
    write({"id": "c1", "model": "a", "messages": ok}, {"id": "c1", "model": "b", "messages": ok[:2]},
          {"id": "c2", "model": "a", "messages": ok},
          {"id": "c2", "model": "b", "messages": [*ok[:3], {"role": "assistant", "content": "  "}]},
          {"id": "c3", "model": "a", "messages": ok}, {"id": "c3", "model": "b", "messages": ok})
    (tmp_path / "spec.yaml").write_text(spec)
    prepared = prepare(tmp_path / "spec.yaml")
    assert [it.id for it in prepared.items["t"]] == ["c2#1", "c3#1", "c3#2"]
    assert prepared.excluded == {"t": [
        "conversation 'c1': the models answered different numbers of turns (a 2, b 1)",
        "conversation 'c2' turn 2: b's answer has no text (tool calls only, or empty)"]}


def test_unit_needs_a_conversation_format(tmp_path: Path) -> None:
    from engine.spec.load import SpecError, load_spec

    (tmp_path / "d.jsonl").write_text('{"id": 1, "q": "x", "a": "1", "b": "2"}\n')
    (tmp_path / "spec.yaml").write_text(TRACE_SPEC.format(format="wide", unit="turn", paths="d.jsonl").replace(
        "unit: turn,", "unit: turn, fields: {id: id, prompt: q, outputs: {a: a, b: b}},"))
    with pytest.raises(SpecError, match="unit chooses what is judged of a conversation; format: wide"):
        load_spec(tmp_path / "spec.yaml")


def test_vibe_init_recognises_the_conversation_formats(tmp_path: Path, shared_data: Path) -> None:
    found = sniff(shared_data / "mt_bench", None)
    assert found is not None and found[0].format == "mt-bench" and len(found[0].models) == 8
    rows = [{"id": "c", "model": "a", "messages": [{"role": "user", "content": "Q"}]}]
    found = sniff(tmp_path / "x.jsonl", rows)
    assert found is not None and found[0].format == "openai-messages"


def test_a_whole_transcript_is_judged_only_as_recorded(tmp_path: Path) -> None:
    from engine.plan import PlanError

    (tmp_path / "question.jsonl").write_text(json.dumps({"question_id": 1, "turns": ["Hi", "Bye"]}) + "\n")
    spec = TRACE_SPEC.format(format="mt-bench", unit="conversation", paths="question.jsonl").replace(
        "a: {provider: recorded}", "a: {provider: openai-compatible, base_url: 'http://127.0.0.1:9/v1', model: m}")
    (tmp_path / "spec.yaml").write_text(spec.replace("b: {provider: recorded}", "b: {provider: openai-compatible, "
                                                     "base_url: 'http://127.0.0.1:9/v1', model: n}"))
    with pytest.raises(PlanError, match="unit: conversation judges recorded transcripts, and 'a' is a model vibe "
                                        "calls; use unit: turn or final"):
        prepare(tmp_path / "spec.yaml")
