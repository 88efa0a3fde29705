"""A conversation's turns are one unit in every number computed from them, each consumer checked on a small
example worked by hand: the preference admission's null and its folds, the held-out refits' rows and p-values,
the length-controlled win rate's rows and interval, the rankings' outcomes, `vibe compare`'s shift and its
tests, and a tool result that follows no tool call."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

from engine.analyze.outcomes import human_outcomes, style_vector
from engine.builtin_plugins.methods.vibecheck import heldout, profiles
from engine.builtin_plugins.methods.vibecheck.admission import admit, folds
from engine.builtin_plugins.methods.vibecheck.records import PairVerdicts, VibeCheckResult, one_label_each
from engine.builtin_plugins.methods.vibecheck.regressions import Features, _rows
from engine.datasets import DatasetError
from engine.datasets.conversations import normalised, turns
from engine.datasets.items import Battle, Item
from engine.drift.shift import gate, shift_of

# three conversations of 2, 3 and 1 turns
CONVERSATIONS = ["c1", "c1", "c2", "c2", "c2", "c3"]
GROUPS = np.array([0, 0, 1, 1, 1, 2])


def pair(cid: str, turn: int, nu: int, chars: tuple[int, int], preference: str | None = "a",
         split: str = "test") -> PairVerdicts:
    return PairVerdicts(f"{cid}#{turn}", split, preference, f"{cid}#{turn}:a", f"{cid}#{turn}:b", {"v": nu}, {},
                        chars=list(chars), conversation=cid, turn=turn)


def test_folds_keep_each_conversations_turns_together() -> None:
    """Three conversations give three folds, one conversation each (never fewer rows than a whole one); rows that
    are each their own unit are dealt one per fold as before."""
    held = sorted(sorted(f.tolist()) for f in folds(6, seed=0, groups=GROUPS))
    assert held == [[0, 1], [2, 3, 4], [5]]
    assert sorted(len(f) for f in folds(6, seed=0)) == [1] * 6


def test_the_admission_null_is_drawn_per_conversation() -> None:
    """Each of 60 conversations told twice (its two turns identical, label and values): drawn per conversation,
    the null's labels are identical on both turns too, so every score statistic doubles, observed and null
    alike, and the p-value is the one-turn data's exactly. Drawn per turn, the null is too narrow for the
    doubled statistic and the same data looks far stronger evidence than it is."""
    rng = np.random.default_rng(7)
    n = 60
    rule = rng.choice([-1.0, 1.0], n)
    noise = rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.8 * rule + 0.45 * noise)))).astype(float)
    once = admit(rule[:, None], {"noise": noise}, y, seed=3)
    twice = np.repeat(np.arange(n), 2)
    by_conversation = admit(rule[twice, None], {"noise": noise[twice]}, y[twice], seed=3, groups=twice)
    by_turn = admit(rule[twice, None], {"noise": noise[twice]}, y[twice], seed=3)

    def p_of(steps: list[str]) -> float:
        return float(re.search(r"p = ([0-9.]+)", steps[0]).group(1))  # type: ignore[union-attr]

    assert p_of(by_conversation[1]) == p_of(once[1])
    assert p_of(by_turn[1]) < p_of(once[1])


def test_refits_read_one_row_per_conversation_when_the_label_is_the_conversations() -> None:
    """The three conversations' rows: each vibe value and the length covariate averaged over its turns, its one
    label. c1: verdicts +1, −1 → 0; c2: +1, +1, 0 → 2/3; c3: −1. Lengths ln((1 + a)/(1 + b)): c1's turns
    ln(201/101) and 0, so ln(201/101) / 2."""
    chars = [(200, 100), (100, 100), (300, 100), (100, 300), (100, 100), (50, 100)]
    verdicts = [1, -1, 1, 1, 0, -1]
    labels = ["a", "a", "b", "b", "b", "a"]
    pairs = [pair(c, k, v, ch, lab) for c, k, v, ch, lab in
             zip(CONVERSATIONS, [1, 2, 1, 2, 3, 1], verdicts, chars, labels, strict=True)]
    features = Features(pairs, {})
    rows = _rows(features, pairs, ["v"], "a", per_conversation=True)
    assert rows.clusters == ["c1", "c2", "c3"]
    assert rows.x[:, 0] == pytest.approx([0.0, 2 / 3, -1.0])
    length = Features.length(pairs)
    assert rows.length == pytest.approx([length[:2].mean(), length[2:5].mean(), length[5]])
    assert rows.length[0] == pytest.approx(math.log(201 / 101) / 2)
    assert rows.y.tolist() == [1.0, 0.0, 1.0]
    assert one_label_each((p.cluster, p.preference) for p in pairs)
    assert not one_label_each((p.cluster, p.preference) for p in [*pairs[:1], pair("c1", 2, 0, (1, 1), "b")])


def test_turn_labels_within_conversations_print_no_refit_p_values() -> None:
    """Labels that differ between a conversation's turns keep turn rows: the refit tests nothing (its
    likelihood-ratio test would count turns), every vibe term leaves the Holm family, n counts turns."""
    rng = np.random.default_rng(1)
    conversations, per = 40, 3
    x = rng.normal(size=(conversations * per, 1))
    length = rng.normal(size=conversations * per)
    y = (rng.random(conversations * per) < 1 / (1 + np.exp(-2 * length))).astype(float)
    clusters = [f"c{k // per}" for k in range(conversations * per)]
    half = conversations * per // 2
    fit = heldout.preference(["v"], x[:half], y[:half], x[half:], y[half:], length[:half], length[half:], 0,
                             clusters[half:], clusters[:half])
    assert fit.unit == "turns" and fit.n_test == half
    assert all(p is None for p in fit.p_values) and not any(fit.tested)
    assert fit.p_notes[0] == heldout.TURN_LABELS  # the rule's term, always estimable here


def result_of(pairs: list[PairVerdicts]) -> VibeCheckResult:
    return VibeCheckResult("profiles", "a", "ref", [], pairs, None, None, 0, [])


def test_the_length_controlled_rate_reads_one_row_per_labelled_conversation() -> None:
    """c1 (2 turns, a won): characters 200 − 100 and 100 − 100 sum to +100; c2 (3 turns, ref won): 0 − 200 + 0 =
    −200; c3 (a tie): −50. Outcomes 1, 0, ½; n = 3 conversations, not 6 turns; the raw rate is their mean."""
    chars = [(200, 100), (100, 100), (300, 100), (100, 300), (100, 100), (50, 100)]
    labels = ["a", "a", "ref", "ref", "ref", "tie"]
    pairs = [pair(c, k, 0, ch, lab) for c, k, ch, lab in
             zip(CONVERSATIONS, [1, 2, 1, 2, 3, 1], chars, labels, strict=True)]
    y, difference, clusters, unit = profiles._labelled_rows(result_of(pairs))
    assert unit == "conversations" and clusters == ["c1", "c2", "c3"]
    assert y.tolist() == [1.0, 0.0, 0.5] and difference.tolist() == [100.0, 0.0, -50.0]
    many = [pair(f"k{c}", k, 0, (100 + 40 * (c % 5), 100), "a" if c % 3 else "ref") for c in range(60)
            for k in (1, 2, 3, 4)]
    rate = profiles.win_rate(result_of(many), seed=0, rounds=200)
    assert rate is not None and rate.n == 60 and rate.unit == "conversations"
    assert rate.win_rate == pytest.approx(40 / 60)


def test_a_conversations_battle_counts_once_in_the_rankings() -> None:
    """Two battles, c1 over three turns (a won) and c2 over one (b won): 1–1, not 3–1, each its own unit, the
    style vector read off each side's three turns at once: in cl100k tokens "one two" ×3 is 8 (one, two and a
    blank line between turns) against 5 for "one" ×3, so Arena's length feature is (8 − 5) / (8 + 5 + 1)."""
    one = Battle("a", "b", "a")
    items = [Item(f"c1#{k}", f"q{k}", outputs={"a": "one two", "b": "one"}, battles=(one,), conversation="c1",
                  turn=k) for k in (1, 2, 3)]
    items.append(Item("c2#1", "q", outputs={"a": "x", "b": "y z"}, battles=(Battle("a", "b", "b"),),
                      conversation="c2", turn=1))
    outcomes = human_outcomes(items, ["a", "b"])
    assert [(o.score, o.unit) for o in outcomes] == [(1.0, "c1"), (0.0, "c2")]
    assert outcomes[0].style == style_vector("one two\n\none two\n\none two", "one\n\none\n\none")
    assert outcomes[0].style[0] == pytest.approx((8 - 5) / (8 + 5 + 1))


def test_compare_tests_the_mean_shift_of_each_conversation() -> None:
    """Head against base on six turns of three conversations. −ν per turn: c1 (+1, +1, 0) → 2/3, c2 (−1, 0) →
    −1/2, c3 (+1) → 1. Shift = (2/3 − 1/2 + 1)/3 = 7/18 over n = 3 conversations; moved: the sign test, 2 up and
    1 down, two-sided p = 1; beyond ±0.2: a one-sided t-test on 2 df of the mean against 0.2, on Hall's
    skew-corrected statistic: s = 0.78764, skewness γ = mean((x − x̄)³)/s³ = −0.150892/0.488624 = −0.30881,
    S = (7/18 − 0.2)/s, T = √3 (S + γS²/3 + γ²S³/27 + γ/18) = 0.37549 against +0.2 and 1.16817 against −0.2;
    beyond tests both sides and doubles the smaller p. The interval is the betting interval of the three means."""
    from engine import betting

    nu = -np.array([1, 1, 0, -1, 0, 1], dtype=float)
    clusters = ["c1", "c1", "c1", "c2", "c2", "c3"]
    s = shift_of("v", nu, margin=0.2, clusters=clusters)
    means = np.array([2 / 3, -1 / 2, 1.0])
    sd = means.std(ddof=1)
    assert (s.n, s.unit, s.higher, s.lower) == (3, "conversations", 2, 1)
    assert s.shift == pytest.approx(7 / 18)
    assert s.p_moved == pytest.approx(1.0)
    assert (s.low, s.high) == betting.interval(means)  # the conversations' means, in order of appearance
    assert s.p_beyond == pytest.approx(2 * scipy_stats.t.sf(0.375492, 2), abs=2e-6)
    assert s.p_equivalent == pytest.approx(max(scipy_stats.t.cdf(0.375492, 2), scipy_stats.t.sf(1.168173, 2)),
                                           abs=1e-6)
    ((gated,),) = gate([[s]])
    assert gated.verdict == "inconclusive" and gated.detectable is None
    z = scipy_stats.norm.ppf(0.975) + scipy_stats.norm.ppf(0.8)  # one side of the beyond test: α/2
    assert gated.prompts_needed == max(3, math.ceil((z * sd / abs(0.2 - 7 / 18)) ** 2))
    # prompts that are each their own unit keep the ternary tests
    assert shift_of("v", nu, margin=0.2).unit == "prompts"


def test_a_tool_result_after_a_message_that_called_no_tool_is_located() -> None:
    messages = normalised("t.jsonl:3", [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
                                        {"role": "tool", "name": "search", "content": "42"}])
    with pytest.raises(DatasetError, match=r"t.jsonl:3: messages.2 is a tool result that follows no assistant tool"):
        turns("t.jsonl:3", messages)
    called = normalised("t.jsonl:4", [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "name": "f", "content": "1"}, {"role": "tool", "name": "f", "content": "2"},
        {"role": "assistant", "content": "done"}])
    assert len(turns("t.jsonl:4", called)[1]) == 1  # two results of one call are fine


def test_vibe_eval_scores_resample_conversations() -> None:
    """Each of three conversations rated the same on both of its turns: resampled by conversation, the score
    and its interval are those of the three conversations taken once each (the same draws), where resampling
    turns would count six independent ratings."""
    from engine.builtin_plugins.methods.reference.scores import subset_scores

    ratings = {"c1": 5.0, "c2": 1.0, "c3": 4.0}
    once = subset_scores({cid: ("normal", r) for cid, r in ratings.items()}, 200, seed=0)
    turns_of = {f"{cid}#{k}": cid for cid in ratings for k in (1, 2)}
    both = subset_scores({i: ("normal", ratings[cid]) for i, cid in turns_of.items()}, 200, seed=0, units=turns_of)
    assert [(s.score, s.ci_low, s.ci_high) for s in both] == [(s.score, s.ci_low, s.ci_high) for s in once]
    assert both[0].score == pytest.approx(25 * (10 / 3 - 1))
    apart = subset_scores({i: ("normal", ratings[cid]) for i, cid in turns_of.items()}, 200, seed=0)
    assert apart[0].ci_high - apart[0].ci_low < both[0].ci_high - both[0].ci_low


INSPECT_SPEC = """\
name: {name}
models: {{a: {{provider: recorded}}, b: {{provider: recorded}}}}
judges:
  m: {{kind: metric}}
  j: {{kind: llm, provider: openai-compatible, base_url: {url}, model: m}}
datasets:
  t: {{format: inspect-messages, context_tokens: 16, source: {{paths: [a.json, b.json]}}}}
vibes: [{{name: verbosity, low: short, high: long, metric: length_words}}]
analyses:
  vibecheck: {{dataset: t, models: [a, b], judges: [m, j]}}
"""


def inspect_log(model: str, last: str, conversations: int = 4) -> dict[str, object]:
    """`model`'s Inspect log of three-turn conversations, `last` its third answer."""
    samples = [{"id": k, "epoch": 1, "input": f"First question {k}.", "target": "", "scores": {}, "messages": [
        {"role": "system", "content": "Be helpful."},
        {"role": "user", "content": f"First question {k}."}, {"role": "assistant", "content": f"{model} first {k}."},
        {"role": "user", "content": f"Second question {k}."},
        {"role": "assistant", "content": f"{model} second answer number {k}, a little longer."},
        {"role": "user", "content": f"Third question {k}."}, {"role": "assistant", "content": last}],
        "output": {"completion": last}} for k in range(conversations)]
    return {"version": 2, "status": "success", "eval": {"model": f"openai/{model}", "task": "t"}, "samples": samples}


def test_compare_judges_whole_conversations_and_counts_them(tmp_path: Path) -> None:
    """Two runs of Inspect logs (four three-turn conversations; the head's model `a` writes a longer third answer),
    judged with an LLM judge on the loopback server that reads the earlier turns within 16 tokens. `vibe compare`
    sends each side's conversations whole: its judge reads the same earlier turns the runs' judge read, told how
    many messages were cut, and the shift is over 4 conversations, not 12 turns."""
    from llm_server import LLMServer

    from engine.drift.compare import compare_runs
    from engine.drift.summary import notes, to_markdown
    from engine.pipeline import run_spec

    runs = {}
    with LLMServer() as server:
        for name, last in (("base", "Short."), ("head", "A much longer third answer than before, with detail.")):
            folder = tmp_path / name
            folder.mkdir()
            (folder / "a.json").write_text(json.dumps(inspect_log("a", last)))
            (folder / "b.json").write_text(json.dumps(inspect_log("b", "Short.")))
            (folder / "spec.yaml").write_text(INSPECT_SPEC.format(name=f"insp-{name}", url=server.base_url))
            summary, _, runs[name] = run_spec(folder / "spec.yaml", folder / "run", tmp_path / "c.sqlite",
                                              quiet=True)
            assert summary.done == summary.total
        judged_in_runs = [e.text for e in server.state.log if "[Answer 1]" in e.text]
        before = len(server.state.log)
        (slot,), _, panel = compare_runs(runs["base"], runs["head"], tmp_path / "cmp", tmp_path / "c.sqlite",
                                      models=["a"])
        judged = [e.text for e in server.state.log[before:] if "[Answer 1]" in e.text]
    # the runs' judge and the comparison's read turn 3 after the earlier turns, each told what was cut
    for prompts in (judged_in_runs, judged):
        third = [t for t in prompts if "Third question 1." in t]
        assert third and all("[The conversation before Answer 1, oldest first]" in t for t in third)
        assert all(re.search(r"\[\d earlier messages?, about \d+ tokens, cut to fit the judge's 16-token context\]", t)
                   for t in third)
    assert any("a second answer number 1, a little longer." in t for t in judged if "Third question 1." in t)
    assert slot.shared == 12 and slot.conversations == 4
    markdown = to_markdown([slot], runs["base"], runs["head"], panel, notes([slot], {}))
    assert "### a: 12 shared prompts (the turns of 4 conversations)" in markdown
    assert "so the unit is the conversation" in markdown
    by_vibe = {s.vibe: s for s in slot.shifts}
    assert by_vibe["verbosity"].unit == "conversations" and by_vibe["verbosity"].n == 4
    assert by_vibe["verbosity"].shift == pytest.approx(1 / 3)  # turn 3 of 3 longer in every conversation


def test_calibration_on_correlated_conversations() -> None:
    """Seeded nulls through the real functions (`conversation_sims`; the benchmark runs 600 of each): a shift
    exactly at the gate's margin fails in at most 5% of comparisons over conversations, and a noise vibe enters
    the preference model of at most 5% of analyses whose one label per conversation follows length. Counting
    turns as prompts (the code before) failed 113 of 1,000 such comparisons and admitted noise in 17 of these 40
    analyses: either fails its bound here."""
    from conversation_sims import compare_fails_at_margin, preference_null
    from test_selection_calibration import within

    rng = np.random.default_rng(2)
    fails = sum(compare_fails_at_margin(rng) for _ in range(400))
    assert within(fails, 400, 0.05), f"{fails} of 400"
    rng = np.random.default_rng(3)
    admitted = sum(preference_null(rng, seed, conversations=80)[0] for seed in range(40))
    assert within(admitted, 40, 0.05), f"{admitted} of 40"
