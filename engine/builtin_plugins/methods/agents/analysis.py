"""How two agents' behaviour differs, measure by measure, with one conversation as the unit.

Where both agents answered the same conversations (sessions paired by the prompt that opens them), each
measure is compared within conversations: Wilcoxon's signed-rank test on the per-conversation differences
(scipy; exact for small samples without ties, its normal approximation otherwise). Where they did not, as
logs of two agents' everyday sessions are, the same measures are compared between the agents' sessions:
Mann-Whitney's U (scipy, two-sided). Paired needs six shared conversations or more, and at least half of
those of the agent with fewer; the result says which design ran and why. Each measure's shift is the
Hodges–Lehmann estimate that goes with its test, with the interval that inverts that test (`rank_shift`):
without ties it leaves out 0 exactly where the test rejects; a percentile bootstrap of the difference of means
covered 81–90% at 6–20 conversations. Every measure of every comparison (each pair of agents, up to the
`comparisons` option) is one family for Holm's correction, so a reader may read every row of the board and of
every table at once; the board itself (`board`) ranks the agents by their median conversation."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import stats as scipy_stats

from engine.api.analysis import stats
from engine.api.records import Prepared
from engine.api.spec import Analysis
from engine.builtin_plugins.methods.agents import board, measures, rank_shift
from engine.builtin_plugins.methods.agents.board import BoardRow
from engine.builtin_plugins.methods.agents.options import AgentOptions

MIN_UNITS = 6  # fewer conversations than this per side (or shared) give no test and no interval


@dataclass(frozen=True)
class MeasureTest:
    name: str
    description: str
    mean_a: float | None
    mean_b: float | None
    shift: float | None  # Hodges–Lehmann: how far model A's values sit above model B's (`rank_shift`)
    ci_low: float | None
    ci_high: float | None
    units: int  # conversations the test read (pairs, or both agents' sessions together)
    p: float | None
    p_holm: float | None
    why_no_p: str = ""


@dataclass(frozen=True)
class AgentBehaviour:
    analysis: str
    model_a: str
    model_b: str
    design: str  # paired | unpaired
    test: str
    why: str
    conversations_a: int
    conversations_b: int
    shared: int
    calls_a: int
    calls_b: int
    tools: list[str]
    measures: list[MeasureTest]
    family: int = 0  # the p-values Holm's correction ran over: every measure of every comparison of the analysis

    def too_few(self) -> str:
        """Why no measure could be tested, and how many conversations it would take, for a page whose table
        holds no p-value: too few conversations is no evidence that the agents act alike."""
        if self.design == "paired":
            have = f"{self.shared} conversations both agents answered"
        else:
            have = (f"{self.conversations_a} conversations of {self.model_a} and {self.conversations_b} of "
                    f"{self.model_b}")
        return (f"{have}, where a test needs at least {MIN_UNITS} "
                + ("shared ones" if self.design == "paired" else "of each agent")
                + " with the measure. Nothing here says whether their tool use differs; give more sessions.")


def conversations(prepared: Prepared, analysis: Analysis) -> dict[str, dict[str, list[list[dict[str, Any]]]]]:
    """Each model's turns (assistant and tool messages) per conversation, from the dataset's items."""
    out: dict[str, dict[str, list[list[dict[str, Any]]]]] = defaultdict(lambda: defaultdict(list))
    for item in prepared.items[analysis.dataset]:
        for model in analysis.models:
            if model in item.transcript:
                out[model][item.cluster].extend(_turns(item.transcript[model]))
    return out


def _turns(messages: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A transcript cut at its user messages (a whole conversation's) or kept whole (one turn's replies)."""
    turns: list[list[dict[str, Any]]] = [[]]
    for message in messages:
        if message["role"] == "user":
            turns.append([])
        elif message["role"] in ("assistant", "tool"):
            turns[-1].append(message)
    return [t for t in turns if t]


@dataclass(frozen=True)
class AgentBoard:
    """Every agent of the analysis on every measure, and the pairwise comparisons behind the rows' claims."""
    analysis: str
    agents: list[str]
    conversations: dict[str, int]
    calls: dict[str, int]
    tools: list[str]
    rows: list[BoardRow]
    comparisons: list[AgentBehaviour]
    family: int  # the p-values Holm's correction ran over
    not_compared: list[str]  # pairs left out by the `comparisons` cap, said
    absent: list[str]  # measures no agent's logs hold (no times in a trace, say)

    def differing(self) -> list[BoardRow]:
        return [row for row in self.rows if row.differing]

    def ordered(self) -> list[BoardRow]:
        """The rows that tell agents apart first, the rest after, each group in the measures' order."""
        return self.differing() + [row for row in self.rows if not row.differing]

    def tested(self) -> bool:
        return any(m.p is not None for c in self.comparisons for m in c.measures)

    def headline(self) -> str:
        """The board's finding in a sentence: which agents differ, that none do, or that nothing was tested."""
        agents = f"the {len(self.agents)} agents" if len(self.agents) > 2 else " and ".join(self.agents)
        if not self.tested():
            fewest = min(self.conversations.values())
            return (f"No test ran: {agents} have as few as {fewest} conversations, where a comparison needs "
                    f"{MIN_UNITS} of each agent (or {MIN_UNITS} shared ones). Nothing here says whether they "
                    "differ; give more sessions.")
        found = self.differing()
        tests = f"at 5% after Holm's correction over {self.family} tests"
        if not found:
            return f"No measure tells {agents} apart {tests}."
        claims = "; ".join(f"{' and '.join(r.differing)} on {r.measure}" for r in found[:3])
        more = f"; and {len(found) - 3} more below" if len(found) > 3 else ""
        return f"{len(found)} of {len(self.rows)} measures tell {agents} apart {tests}: {claims}{more}."


def analyze_agents(prepared: Prepared, analysis: Analysis) -> tuple[AgentBoard, list[AgentBehaviour]]:
    """Every agent's standing on every measure, and the pairs of agents compared: those sharing the most
    conversations first, then the largest, up to the `comparisons` option. Holm's correction runs over every
    measure of every comparison at once, so the whole board may be read at the stated level."""
    opts = AgentOptions.of(analysis)
    found = conversations(prepared, analysis)
    agents = list(analysis.models)
    # the tools are chosen by how often all the agents together call them, not by whom, once for every pair
    tools = measures.chosen_tools(measures.tool_counts([t for a in agents for t in found[a].values()]),
                                  opts.tools, opts.min_calls)
    values = {a: {c: measures.measure(t, tools) for c, t in found[a].items()} for a in agents}
    pairs = sorted(itertools.combinations(agents, 2),
                   key=lambda p: (-len(values[p[0]].keys() & values[p[1]].keys()),
                                  -(len(values[p[0]]) + len(values[p[1]]))))
    chosen = sorted(pairs[:opts.comparisons], key=lambda p: (agents.index(p[0]), agents.index(p[1])))
    compared = [_compare(analysis.name, a, b, values[a], values[b], found[a], found[b], tools) for a, b in chosen]
    adjusted = iter(stats.holm([r.p for c in compared for r in c.measures]))
    family = sum(len(c.measures) for c in compared)
    compared = [replace(c, family=family, measures=[replace(r, p_holm=next(adjusted)) for r in c.measures])
                for c in compared]
    labels = measures.names(tools)
    rows, absent = [], []
    for k, label in enumerate(labels):
        standings = [board.standing(a, np.array([v[k] for v in values[a].values()], dtype=float)) for a in agents]
        if all(s.median is None for s in standings):
            absent.append(label)
            continue
        above: dict[str, list[str]] = defaultdict(list)  # agent -> the agents it sits above, at 5% after Holm
        for c in compared:
            if (r := c.measures[k]).p_holm is not None and r.p_holm <= 0.05:
                higher, lower = (c.model_a, c.model_b) if (r.shift or 0) > 0 else (c.model_b, c.model_a)
                above[higher].append(lower)
        differing = [f"{a} > {', '.join(above[a])}" for a in agents if a in above]
        rows.append(BoardRow(label, measures.describe(label), board.ranks(standings), differing))
    skipped = [f"{a} and {b}" for a, b in pairs[opts.comparisons:]]
    summary = AgentBoard(analysis.name, agents, {a: len(values[a]) for a in agents},
                         {a: sum(len(measures.calls(t)) for ts in found[a].values() for t in ts) for a in agents},
                         tools, rows, compared, family, skipped, absent)
    return summary, compared


def _compare(name: str, a: str, b: str, values_a: dict[str, np.ndarray], values_b: dict[str, np.ndarray],
             turns_a: dict[str, list[Any]], turns_b: dict[str, list[Any]], tools: list[str]) -> AgentBehaviour:
    labels = measures.names(tools)
    shared = sorted(set(values_a) & set(values_b))
    paired = len(shared) >= max(MIN_UNITS, 0.5 * min(len(values_a), len(values_b)))
    if paired:
        why = (f"both agents answered {len(shared)} of the same conversations (of {len(values_a)} and "
               f"{len(values_b)}): each measure is compared within a conversation")
        test = "Wilcoxon signed-rank on per-conversation differences"
    else:
        why = (f"the agents share {len(shared)} conversations of {len(values_a)} and {len(values_b)}: too few to "
               "pair, so the measures' distributions over each agent's conversations are compared instead")
        test = "Mann-Whitney U between the agents' conversations"
    rows = []
    for k, label in enumerate(labels):
        if paired:
            x = np.array([values_a[c][k] for c in shared])
            y = np.array([values_b[c][k] for c in shared])
            keep = ~(np.isnan(x) | np.isnan(y))
            x, y = x[keep], y[keep]
        else:
            x = np.array([v[k] for v in values_a.values()])
            y = np.array([v[k] for v in values_b.values()])
            x, y = x[~np.isnan(x)], y[~np.isnan(y)]
        rows.append(_row(label, x, y, paired))
    return AgentBehaviour(name, a, b, "paired" if paired else "unpaired", test, why, len(values_a), len(values_b),
                          len(shared), sum(len(measures.calls(t)) for ts in turns_a.values() for t in ts),
                          sum(len(measures.calls(t)) for ts in turns_b.values() for t in ts), tools, rows)


def _row(label: str, x: np.ndarray, y: np.ndarray, paired: bool) -> MeasureTest:
    units = len(x) if paired else len(x) + len(y)
    if min(len(x), len(y)) == 0:
        return MeasureTest(label, measures.describe(label), None, None, None, None, None, units, None, None,
                           "no conversation has this measure for both agents")
    mean_a, mean_b = float(x.mean()), float(y.mean())
    shift, low, high = (rank_shift.paired if paired else rank_shift.two_sample)(x, y)
    if min(len(x), len(y)) < MIN_UNITS:
        return MeasureTest(label, measures.describe(label), mean_a, mean_b, shift, None, None, units, None,
                           None, f"fewer than {MIN_UNITS} conversations to test on")
    return MeasureTest(label, measures.describe(label), mean_a, mean_b, shift, low, high, units, _p(x, y, paired),
                       None)


def _p(x: np.ndarray, y: np.ndarray, paired: bool) -> float:
    """The two-sided p-value; 1 where the two sides do not differ at all (no test statistic to speak of)."""
    if paired:
        if not np.any(x != y):
            return 1.0
        return float(scipy_stats.wilcoxon(x, y, zero_method="wilcox").pvalue)
    if np.all(np.concatenate([x, y]) == x[0]):
        return 1.0
    return float(scipy_stats.mannwhitneyu(x, y, alternative="two-sided").pvalue)
