"""The agent board: several agents' standings on every measure (the median's distribution-free interval, checked
by hand and by seeded simulation through the real function), every pair compared under one Holm family, and the
page that leads with what was found."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from markupsafe import escape

from engine.builtin_plugins.methods.agents import board

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import agent_logs
from test_report import open_pages


def test_the_medians_interval_by_hand() -> None:
    """n = 6: only the range reaches 95% (1 − 2/64 = 96.9%); n = 20: the 6th to the 15th value (P(B ≤ 5) =
    2.07%, P(B ≤ 6) = 5.77% for B ~ Binomial(20, ½)); n = 5: no interval."""
    values = np.array([7.0, 1.0, 3.0, 5.0, 2.0, 9.0])
    s = board.standing("a", values)
    assert (s.median, s.ci_low, s.ci_high, s.mean, s.conversations) == (4.0, 1.0, 9.0, 4.5, 6)
    twenty = board.standing("a", np.arange(1.0, 21.0)[::-1])
    assert (twenty.median, twenty.ci_low, twenty.ci_high) == (10.5, 6.0, 15.0)
    five = board.standing("a", np.array([1.0, 2.0, 3.0, 4.0, np.nan, 5.0]))
    assert (five.median, five.ci_low, five.ci_high, five.conversations) == (3.0, None, None, 5)
    assert board.standing("a", np.array([np.nan])).median is None


def test_ranks_share_a_place_between_equal_agents() -> None:
    made = [board.standing(a, np.array(v)) for a, v in
            (("a", [1.0] * 6), ("b", [2.0] * 6), ("c", [1.0] * 6), ("d", [np.nan]))]
    assert [s.rank for s in board.ranks(made)] == [2, 1, 2, 0]


@pytest.mark.parametrize("draw", ["skewed counts", "mostly zero shares"])
def test_the_medians_interval_covers_at_least_95_percent(draw: str) -> None:
    """2,000 seeded samples at each of 6, 10, 20 and 40 conversations, from a skewed count (Poisson of a
    log-normal rate) and from a share that is 0 in 70% of conversations: the interval holds the population
    median at least 95% of the time (it is conservative on ties, never short)."""
    rng = np.random.default_rng(7)

    def sample(n: int) -> np.ndarray:
        if draw == "skewed counts":
            return rng.poisson(np.exp(rng.normal(1.0, 1.0, n))).astype(float)
        return np.where(rng.random(n) < 0.7, 0.0, rng.random(n))

    truth = float(np.median(sample(2_000_000)))
    for n in (6, 10, 20, 40):
        held = [(s.ci_low or 0) <= truth <= (s.ci_high or 0)
                for s in (board.standing("a", sample(n)) for _ in range(2000))]
        assert np.mean(held) >= 0.95, (n, np.mean(held))


def test_four_agents_on_one_board(tmp_path: Path) -> None:
    """Four agents (two tools' logs, two model versions each, partly shared prompts), 40 sessions each, a reading
    before it edits and c closing with a bulleted summary on 80% of their sessions: every pair is compared
    (paired where they share enough prompts), one Holm family over all six, the board puts a above the three
    others on "turns opening with Read" and no one else above anyone there, c alone above others on its answers'
    headings, and the page leads with that sentence, whole in a browser at 1280 and 390 px."""
    from engine.pipeline import run_spec

    agent_logs.write_logs(tmp_path / "logs", agent_logs.four_agents(40, seed=0),
                          ("claude-code", "claude-code", "codex", "codex"))
    names = ", ".join(f"{agent_logs.MODELS[a]}: {a}" for a in "abcd")
    (tmp_path / "spec.yaml").write_text(f"""name: board
models: {{a: {{provider: recorded}}, b: {{provider: recorded}}, c: {{provider: recorded}}, d: {{provider: recorded}}}}
datasets:
  logs: {{source: {{path: {tmp_path / 'logs'}}}, format: agent-logs, model_names: {{{names}}}}}
analyses:
  behaviour: {{method: agents, dataset: logs, models: [a, b, c, d]}}
""")
    _, results, _ = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
    (summary,) = results.of("agent_board")
    assert [(c.model_a, c.model_b) for c in summary.comparisons] == [
        ("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]
    assert results.of("agents") == summary.comparisons
    # a and b answered every request; c and d half of them: 20 shared of 40 reaches the half that pairing needs
    assert {c.design for c in summary.comparisons} == {"paired"}
    assert summary.family == 6 * 29 == sum(len(c.measures) for c in summary.comparisons)
    assert {c.family for c in summary.comparisons} == {174}
    read = next(r for r in summary.rows if r.measure == "turns opening with Read")
    assert read.differing == ["a > b, c, d"]
    assert [s.rank for s in read.standings] == [1, 2, 2, 2] and read.standings[0].median == 1.0
    # c's closing summary moves measures of its answers, and only c's
    prose = {r.measure: r.differing for r in summary.differing() if r.measure.startswith("answers: ")}
    assert "answers: heading_density" in prose, prose
    assert all(claim.startswith("c > ") for claims in prose.values() for claim in claims), prose
    assert summary.headline().startswith(f"{len(summary.differing())} of 29 measures tell the 4 agents apart at 5% "
                                         "after Holm's correction over 174 tests: a > b, c, d on tool calls per turn;")
    saved = json.loads((tmp_path / "run" / "behaviour" / "board.json").read_text())
    assert saved["agents"] == ["a", "b", "c", "d"] and len(saved["comparisons"]) == 6
    page = " ".join((tmp_path / "run" / "index.html").read_text().split())
    assert str(escape(summary.headline())) in page
    assert page.index(str(escape(summary.headline()))) < page.index("The 6 pairwise comparisons behind the board")
    assert open_pages([tmp_path / "run" / "index.html"], tmp_path, widths=(1280, 390)) == []


def test_a_cap_on_comparisons_keeps_the_pairs_sharing_most_and_names_the_rest(tmp_path: Path) -> None:
    """`comparisons: 2` on three agents (8, 6 and 7 sessions), c sharing no prompt: a–b (6 shared) and then the
    larger of the unshared pairs, a–c, are compared, and the page names the pair left out."""
    from engine.pipeline import run_spec

    made = agent_logs.sessions(8, planted=True)
    made["b"] = made["b"][:6]
    made["c"] = [agent_logs.Session(f"another request {k}", s.answer, s.calls) for k, s in enumerate(made["a"][:7])]
    agent_logs.write_logs(tmp_path / "logs", made, ("claude-code", "codex", "atif"))
    names = ", ".join(f"{agent_logs.MODELS[a]}: {a}" for a in "abc")
    (tmp_path / "spec.yaml").write_text(f"""name: board
models: {{a: {{provider: recorded}}, b: {{provider: recorded}}, c: {{provider: recorded}}}}
datasets:
  logs: {{source: {{path: {tmp_path / 'logs'}}}, format: agent-logs, model_names: {{{names}}}}}
analyses:
  behaviour: {{method: agents, dataset: logs, models: [a, b, c], comparisons: 2}}
""")
    _, results, _ = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
    (summary,) = results.of("agent_board")
    assert [(c.model_a, c.model_b, c.design) for c in summary.comparisons] == [
        ("a", "b", "paired"), ("a", "c", "unpaired")]
    assert summary.not_compared == ["b and c"]
    page = " ".join((tmp_path / "run" / "index.html").read_text().split())
    assert "Not compared, the `comparisons` cap reached: b and c." in page
