"""The planted-recovery benchmark's machinery on a tiny case worked out by hand (benchmarks/planted.py runs it at
size): edits that are what they say, the counterfactual that defines "tracks", and the figures of one analysis."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from llm_server import LLMServer, judged_answers

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import planted

TEXTS = [f"Topic {i} matters because it shapes the work.\n\nA second paragraph adds detail number {i}."
         for i in range(24)]


def test_each_edit_shows_what_its_detector_looks_for_in_both_realizations() -> None:
    text = "Paris is the capital of France. It sits on the Seine.\n\n**History** goes back centuries."
    for behaviour in planted.EDITS.values():
        for realization in ("shown", "hidden"):
            edited = getattr(behaviour, realization)(text)
            assert behaviour.shows(edited), (behaviour.name, realization, edited)
    assert planted.BEHAVIOURS["follow_up"].shown(text) != planted.BEHAVIOURS["follow_up"].hidden(text)


def test_an_unlisted_behaviour_adds_no_paragraph_and_no_metric_names_it() -> None:
    """The unlisted arm's edits keep the paragraph count (the paragraphs metric would otherwise name every one)
    and leave every structural metric as it was: no list lines, headings, bold, questions, exclamations, emoji,
    refusal phrases or code. What they add is words, which discovery has to find by mining them."""
    from engine.judges.metrics import METRICS

    text = "Paris is the capital of France. It sits on the Seine.\n\nIts history goes back centuries."
    for behaviour in planted.UNLISTED.values():
        for realization in ("shown", "hidden"):
            edited = getattr(behaviour, realization)(text)
            assert behaviour.shows(edited) and not behaviour.shows(text), (behaviour.name, realization)
            assert planted.paragraphs(edited) and len(planted.paragraphs(edited)) == 2, edited
            for metric in ("list_density", "heading_density", "bold_density", "questions_to_user", "exclamations",
                           "emoji", "refusal", "code_blocks"):
                assert METRICS[metric][0](edited) == METRICS[metric][0](text), (behaviour.name, metric, edited)


def test_one_planted_behaviour_is_found_and_nothing_else_is_kept() -> None:
    """24 prompts whose two sides hold the same answer, emoji planted in every y answer: the only difference.
    Discovery on the 12 training pairs keeps the emoji metric (separability −1: y higher on every pair); on the
    12 test pairs taking the emoji back out changes its verdict on all 12, so it tracks the behaviour. Recovery
    1 of 1, 1 vibe kept, 0 false. With nothing planted the two sides are identical and no vibe is kept."""
    case = planted.Scenario([(t, t) for t in TEXTS], [["emoji"] for _ in TEXTS])
    tally = planted.Found(missed={})
    planted.analyse(case, 0, tally)
    assert (tally.planted, tally.found, tally.kept, tally.false) == (1, 1, 1, 0)
    assert tally.separability == 1.0 and tally.tracking == 1 and tally.missed == {}
    null = planted.Found()
    planted.analyse(planted.Scenario([(t, t) for t in TEXTS], [[] for _ in TEXTS]), 0, null)
    assert (null.planted, null.kept, null.false) == (0, 0, 0)


def test_a_behaviour_on_every_pair_is_measured_by_taking_it_back_out() -> None:
    """At a 100% rate the indicator is constant, so no correlation can say what a vibe tracks; the
    counterfactual can: the emoji metric's verdicts change on every carrying pair, the length metric's on none."""
    from engine.spec.model import Vibe

    case = planted.Scenario([(t, t) for t in TEXTS], [["emoji"] for _ in TEXTS])
    test = slice(12, None)
    pairs = case.pairs()[test]
    emoji = Vibe("emoji", "no emoji", "emoji", metric="emoji")
    length = Vibe("length", "short", "long", metric="length_words")
    from engine.builtin_plugins.methods.vibecheck.discovery import statistical as discovery

    def without(vibe: Vibe, leave_out: frozenset[str]) -> np.ndarray:
        return discovery.pair_scores(vibe, case.pairs(leave_out)[test])

    tested = range(12, 24)
    assert planted.tracks(emoji, case, "emoji", tested, discovery.pair_scores(emoji, pairs), without)
    assert not planted.tracks(length, case, "emoji", tested, discovery.pair_scores(length, pairs), without)
    assert np.all(discovery.pair_scores(length, pairs) == 0)


def _follow_up_judge(text: str) -> str | None:
    """A judge that reads the two answers: the one that ends with a question is higher on the axis."""
    shown = judged_answers(text)
    if shown is None:
        return None
    one, two = (answer.strip().endswith("?") for answer in shown)
    return "One of them asks back.\nVerdict: " + ("1" if one and not two else "2" if two and not one else "N/A")


def test_the_llm_arm_runs_discovery_and_counterfactuals_through_the_pipeline(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """16 pairs, a follow-up question planted in every y answer, over real HTTP: the scripted proposer names one
    axis, the judge reads the answers. The axis separates the training pairs (ν = −1 on each: y asks back), so
    it is kept; on the test pairs the counterfactual run, with the question taken back out, gets N/A (0) on
    every pair, so the kept vibe tracks the behaviour: recovered 1 of 1, 1 kept, 0 false. With nothing planted
    the same axis is proposed and scored 0 everywhere, and nothing is kept."""
    with LLMServer() as server:
        server.state.reply = _follow_up_judge
        server.state.replies = {"candidate evaluation axes": "Nothing to merge.",
                                "differ systematically": "- Follow-up question: Low: ends on a statement; "
                                                         "High: ends by asking the reader a question"}
        monkeypatch.setenv("VIBE_PLANTED_LLM", f"{server.base_url} judge-model")
        judge = planted.llm_judge()
        assert judge is not None and judge["base_url"] == server.base_url
        prompts = [f"Tell me about topic {i}." for i in range(16)]
        tallies = []
        for name, edits in (("planted", ["follow_up"]), ("null", [])):
            case = planted.Scenario([(t, t) for t in TEXTS[:16]], [list(edits) for _ in range(16)], prompts=prompts)
            (tmp_path / name).mkdir()
            run = planted.LLMRun(case, judge, tmp_path / name, 0)
            kept, test = run.kept()
            tally = planted.Found(missed={})
            planted.count(case, kept, test, run.without, tally)
            tallies.append(tally)
    found, null = tallies
    assert (found.planted, found.found, found.kept, found.false) == (1, 1, 1, 0)
    assert found.separability == 1.0  # |test separability| of the tracking vibe: y asks back on every pair
    assert (null.planted, null.kept) == (0, 0)
