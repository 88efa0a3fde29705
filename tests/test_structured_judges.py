"""LLM judges that answer in a JSON schema, over real HTTP (tests/llm_server.py), and the reliability figures
every LLM judge gets on the page."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from llm_server import LLMServer

from engine.analyze import reliability
from engine.analyze.reliability import TwoOrders
from engine.builtin_plugins.methods.personas.reading import parse_confidence, parse_same_task
from engine.judges import answers
from engine.judges.reading import parse_rating, parse_verdict
from engine.pipeline import prepare, run_spec

SPEC = """\
name: structured
models: {{a: {{provider: recorded}}, b: {{provider: recorded}}}}
judges:
  judge:
    kind: llm
    provider: {provider}
    base_url: {url}
    model: judge-model
    params: {{temperature: 0, max_tokens: 64}}
{extra}
  m: {{kind: metric}}
datasets:
  d:
    source: {{path: pairs.jsonl}}
    fields: {{id: id, prompt: q, outputs: {{a: a, b: b}}, preference: pref}}
    labels: {{source: human, description: test votes}}
vibes:
  - {{name: warmth, low: cold tone, high: warm tone, metric: warmth}}
analyses:
  vibecheck:
    {{dataset: d, models: [a, b], judges: [judge, m], preference_judges: [judge], split: {{train: 0.5, seed: 1}}}}
"""
WARM_FIRST = '{"verdict": "1", "reasoning": "The first one is warmer."}'


def write(tmp_path: Path, server: LLMServer, n: int = 8, provider: str = "openai-compatible", extra: str = "") -> Path:
    rows = []
    for i in range(n):
        warm = f"Hello friend, I am so glad you asked about item {i}! Great question, hope this helps."
        cold = f"Item {i}: see the documentation."
        rows.append({"id": f"q{i}", "q": f"question {i}", "a": warm if i % 2 else cold, "b": cold if i % 2 else warm,
                     "pref": "a"})
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    url = server.base_url if provider == "openai-compatible" else server.anthropic_url
    if provider == "anthropic":
        extra += "    api_key_env: TEST_ANTHROPIC_KEY\n"
    (tmp_path / "spec.yaml").write_text(SPEC.format(provider=provider, url=url, extra=extra))
    return tmp_path / "spec.yaml"


def test_openai_compatible_judge_sends_the_schema_and_reads_the_answer(tmp_path: Path) -> None:
    with LLMServer() as server:
        server.state.replies = {"Which answer": WARM_FIRST,
                                "serves the user better": '{"verdict": "2", "reasoning": "Kinder."}'}
        spec = write(tmp_path, server)
        summary, results, run_dir = run_spec(spec, tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
        log = list(server.state.log)
    assert summary.done == summary.total and not summary.free_text_fallbacks
    vibe_request = next(e.body for e in log if "Which answer" in e.text)
    assert vibe_request["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "vibe_verdict_v1", "strict": True, "schema": answers.VIBE_VERDICT.schema}}
    preference_request = next(e.body for e in log if "serves the user better" in e.text)
    assert preference_request["response_format"]["json_schema"]["schema"]["properties"]["verdict"]["enum"] == \
        ["1", "2", "tie"]
    (vc,) = results.of("vibecheck")
    # "1" in both orders is position bias: every pair is inconsistent, so the swap rule gives 0
    assert all(p.by_judge["warmth"]["judge"] == 0 for p in vc.pairs) and vc.invalid_verdicts == 0
    rows = {r.task: r for r in vc.reliability}
    assert rows["vibe scores"].position_consistency == 0.0 and rows["vibe scores"].structured == 16
    assert rows["vibe scores"].warnings and "below 60%" in rows["vibe scores"].warnings[0]
    # preference: always "2" → B in one order, A in the other: never consistent, never agrees with the labels
    assert rows["preference"].label_n == 8 and rows["preference"].label_accuracy == 0.0
    assert rows["preference"].label_source == "human"
    with (run_dir / "vibecheck" / "judge_reliability.csv").open() as fh:
        assert {r["task"] for r in csv.DictReader(fh)} == {"vibe scores", "preference"}
    page = (run_dir / "index.html").read_text()
    assert "How far to trust the judges" in page and "position consistency 0% is below 60%" in page


def test_anthropic_judge_is_forced_to_its_answer_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "test-key")
    with LLMServer() as server:
        server.state.replies = {"Which answer": WARM_FIRST, "serves the user better": WARM_FIRST}
        spec = write(tmp_path, server, n=4, provider="anthropic")
        summary, results, _ = run_spec(spec, tmp_path / "run", tmp_path / "c.sqlite", quiet=True, report=False)
        request = next(e.body for e in server.state.log if "Which answer" in e.text)
    assert summary.done == summary.total
    assert request["tools"] == [{"name": "vibe_verdict_v1", "description": "Record your answer in this form.",
                                 "input_schema": answers.VIBE_VERDICT.schema}]
    assert request["tool_choice"] == {"type": "tool", "name": "vibe_verdict_v1"}
    (vc,) = results.of("vibecheck")
    scores = next(r for r in vc.reliability if r.task == "vibe scores")
    assert scores.invalid == 0 and scores.structured == 8  # every tool answer read, none lost


@pytest.mark.parametrize("status", [400, 422])
def test_a_refused_schema_falls_back_to_free_text_once_for_the_run(tmp_path: Path, status: int) -> None:
    with LLMServer() as server:
        server.state.refuse_schemas = status
        server.state.replies = {"Which answer": "Warmer.\nVerdict: 1"}
        spec = write(tmp_path, server, n=6, extra="    limits: {concurrency: 2}\n")
        summary, results, run_dir = run_spec(spec, tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
        refused = [e for e in server.state.log if e.status == status]
        sent = len(server.state.log)
        manifest = json.loads((run_dir / "manifest.json").read_text())
        page = (run_dir / "index.html").read_text()
        rerun, _, _ = run_spec(spec, tmp_path / "run", tmp_path / "c.sqlite", quiet=True, report=False)
        assert len(server.state.log) == sent  # the free-text answers are cached: nothing is asked again
    assert summary.done == summary.total and summary.failed == []
    # only calls already in flight when the first refusal came back are refused (2 at a time here)
    assert 1 <= len(refused) <= 2 and "json_schema is not supported" in summary.free_text_fallbacks["judge"]
    (vc,) = results.of("vibecheck")
    scores = next(r for r in vc.reliability if r.task == "vibe scores")
    assert scores.structured == 0 and scores.invalid == 0
    assert "judge" in manifest["free_text_fallbacks"]  # this run's fallback, by endpoint
    assert "answers in free text: the endpoint refused the JSON schema" in page
    assert rerun.ran_now == 0


def test_the_schema_is_part_of_the_task_hash(tmp_path: Path) -> None:
    with LLMServer() as server:
        structured = prepare(write(tmp_path, server)).plan
        free = prepare(write(tmp_path, server, extra="    structured: off\n")).plan
    llm = {t.id: t for t in structured.tasks if t.endpoint == "judge"}
    llm_free = {t.id: t for t in free.tasks if t.endpoint == "judge"}
    assert len(llm) == len(llm_free) == 32 and not set(llm) & set(llm_free)
    assert all(t.request["answer"] == {"schema": "vibe_verdict/v1", "sha": answers.VIBE_VERDICT.digest}
               for t in llm.values() if t.stage == "judge")
    assert all("answer" not in t.request for t in llm_free.values())
    offline = {t.id for t in structured.tasks if t.endpoint != "judge"}
    assert offline == {t.id for t in free.tasks if t.endpoint != "judge"}


@pytest.mark.parametrize(("reasoning", "verdict"), [("A is warmer.", "1"), ("B, clearly.", "2"), ("Same.", "N/A"),
                                                     ("Both fine.", "tie")])
def test_structured_and_free_text_answers_read_the_same(reasoning: str, verdict: str) -> None:
    structured = json.dumps({"reasoning": reasoning, "verdict": verdict})
    assert parse_verdict(structured) == parse_verdict(f"{reasoning}\nVerdict: {verdict}") is not None
    fenced = f"```json\n{structured}\n```"
    assert parse_verdict(fenced) == parse_verdict(structured)


def test_a_cut_off_answer_keeps_the_decision_it_had_written() -> None:
    """max_tokens reached in the reason, after the verdict: the verdict stands; cut off before the verdict
    was written, nothing is read."""
    assert parse_verdict('{"verdict": "2", "reasoning": "The second one is warm and') == "2"
    assert parse_rating('{"rating": 4, "explanation": "Close to the ground tru') == 4
    assert parse_confidence('{"verdict": "1", "confidence": 3, "reasoning": "Short') == 3
    assert parse_verdict('{"reasoning": "It is warmer", "verd') is None


def test_structured_ratings_confidence_and_checks_read_the_same() -> None:
    for n in range(1, 6):
        assert parse_rating(json.dumps({"explanation": "ok", "rating": n})) == parse_rating(f"ok\nRating: {n}") == n
        persona = json.dumps({"reasoning": "r", "verdict": "1", "confidence": n})
        assert parse_confidence(persona) == parse_confidence(f"r\nVerdict: 1\nConfidence: {n}") == n
    assert parse_rating(json.dumps({"explanation": "ok", "rating": 9})) is None
    for answer in ("yes", "no"):
        assert parse_same_task(json.dumps({"reasoning": "r", "same_task": answer})) == \
            parse_same_task(f"r\nSame task: {answer}")


def test_reliability_figures_by_hand() -> None:
    """Five pairs, one judge, one question each; labels on four of them.
        p1: +1 +1  consistent, verdict +1      label +1  agree
        p2: +1 -1  inconsistent, verdict 0     label +1  disagree
        p3:  0  0  consistent (a tie both ways), verdict 0   label -1  disagree
        p4: -1 None  one unreadable: no verdict (missing, not a tie), left out of consistency and labels
        p5: -1 -1  consistent, verdict -1      no label
    Answers 10, unreadable 1. Consistency 3/4 over the pairs with two readable answers; ties 2 of 9 readable.
    Label accuracy 1/3 (p4 has no verdict); κ over verdicts (+1, 0, 0) against labels (+1, +1, −1): p_o = 1/3,
    p_e = (1·2 + 2·0 + 0·1)/9 = 2/9, κ = (1/3 − 2/9)/(1 − 2/9) = 1/7."""
    rows = [TwoOrders("j", "p1", "v", 1, 1, 2), TwoOrders("j", "p2", "v", 1, -1), TwoOrders("j", "p3", "v", 0, 0),
            TwoOrders("j", "p4", "v", -1, None), TwoOrders("j", "p5", "v", -1, -1)]
    (r,) = reliability.reliability(rows, "vibe scores", {"p1": 1, "p2": 1, "p3": -1, "p4": 0}, "human")
    assert (r.pairs, r.answers, r.invalid, r.structured, r.consistent_n) == (5, 10, 1, 2, 4)
    assert r.invalid_rate == 0.1 and r.position_consistency == 0.75 and r.tie_rate == pytest.approx(2 / 9)
    assert r.label_n == 3 and r.label_accuracy == pytest.approx(1 / 3) and r.label_kappa == pytest.approx(1 / 7)
    assert r.consistency_ci[0] <= 0.75 <= r.consistency_ci[1]
    assert any("10% of its answers" in w for w in r.warnings)  # above the 5% limit


def test_a_judge_that_contradicts_itself_does_not_agree_with_a_tie_label() -> None:
    """Two pairs labelled a tie. The judge calls p1 a tie in both orders (agrees); on p2 it names the first-shown
    answer each time (+1, −1), which combines to 0 but says nothing about a tie: it disagrees with the label.
    Accuracy 1/2; κ over (0, inconsistent) against (0, 0) is 0 (one label category: p_e = p_o's chance)."""
    rows = [TwoOrders("j", "p1", "preference", 0, 0), TwoOrders("j", "p2", "preference", 1, -1)]
    (r,) = reliability.reliability(rows, "preference", {"p1": 0, "p2": 0}, "human")
    assert r.label_n == 2 and r.label_accuracy == 0.5 and r.label_kappa == 0.0


def test_judge_agreement_by_hand() -> None:
    """κ between two judges on the questions both answered: here 4 shared of 5, verdicts (+1, −1, 0, +1) and
    (+1, −1, +1, +1): p_o = 3/4, p_e = (2·3 + 1·1 + 1·0)/16 = 7/16, κ = (0.75 − 0.4375)/0.5625 = 0.5556."""
    verdicts = {"llm": {("p1", "v"): 1, ("p2", "v"): -1, ("p3", "v"): 0, ("p4", "v"): 1, ("p5", "v"): 0},
                "metric": {("p1", "v"): 1, ("p2", "v"): -1, ("p3", "v"): 1, ("p4", "v"): 1}}
    (g,) = reliability.agreements(verdicts, "vibe scores")
    assert (g.judge, g.other, g.n, g.agreement) == ("llm", "metric", 4, 0.75)
    assert g.kappa == pytest.approx(0.3125 / 0.5625)
