"""The planted-recovery benchmark's machinery on a tiny case worked out by hand (benchmarks/planted.py runs it at
size): edits that are what they say, the counterfactual that defines "tracks", and the figures of one analysis."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import planted

TEXTS = [f"Topic {i} matters because it shapes the work.\n\nA second paragraph adds detail number {i}."
         for i in range(24)]


def test_each_edit_shows_what_its_detector_looks_for_in_both_realizations() -> None:
    text = "Paris is the capital of France. It sits on the Seine.\n\n**History** goes back centuries."
    for behaviour in planted.BEHAVIOURS.values():
        for realization in ("shown", "hidden"):
            edited = getattr(behaviour, realization)(text)
            assert behaviour.shows(edited), (behaviour.name, realization, edited)
    assert planted.BEHAVIOURS["follow_up"].shown(text) != planted.BEHAVIOURS["follow_up"].hidden(text)


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
    from engine.discover import statistical as discovery

    assert planted.tracks(emoji, case, "emoji", test, discovery.pair_scores(emoji, pairs))
    assert not planted.tracks(length, case, "emoji", test, discovery.pair_scores(length, pairs))
    assert np.all(discovery.pair_scores(length, pairs) == 0)
