"""How two agents' behaviour differs, measure by measure, with one conversation as the unit.

Where both agents answered the same conversations (sessions paired by the prompt that opens them), each
measure is compared within conversations: Wilcoxon's signed-rank test on the per-conversation differences
(scipy; exact for small samples without ties, its normal approximation otherwise). Where they did not, as
logs of two agents' everyday sessions are, the same measures are compared between the agents' sessions:
Mann-Whitney's U (scipy, two-sided). Paired needs six shared conversations or more, and at least half of
those of the agent with fewer; the result says which design ran and why. Each measure's shift is the
Hodges–Lehmann estimate that goes with its test, with the interval that inverts that test (`rank_shift`):
without ties it leaves out 0 exactly where the test rejects; a percentile bootstrap of the difference of means
covered 81–90% at 6–20 conversations. Every measure of every comparison (the first agent against each other
one) is one family for Holm's correction, so a reader may read every row of every table at once."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import stats as scipy_stats

from engine.api.analysis import stats
from engine.api.records import Prepared
from engine.api.spec import Analysis
from engine.builtin_plugins.methods.agents import measures, rank_shift
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


def analyze_agents(prepared: Prepared, analysis: Analysis) -> list[AgentBehaviour]:
    """The first model against each other one; Holm's correction over every measure of every comparison at
    once, so that a board of several agents may be read whole at the stated level."""
    opts = AgentOptions.of(analysis)
    found = conversations(prepared, analysis)
    first = analysis.models[0]
    compared = [_compare(analysis.name, first, other, found[first], found[other], opts)
                for other in analysis.models[1:]]
    adjusted = iter(stats.holm([r.p for c in compared for r in c.measures]))
    return [replace(c, family=sum(len(d.measures) for d in compared),
                    measures=[replace(r, p_holm=next(adjusted)) for r in c.measures]) for c in compared]


def _compare(name: str, a: str, b: str, turns_a: dict[str, list[Any]], turns_b: dict[str, list[Any]],
             opts: AgentOptions) -> AgentBehaviour:
    counts = measures.tool_counts([*turns_a.values(), *turns_b.values()])
    tools = measures.chosen_tools(counts, opts.tools, opts.min_calls)
    labels = measures.names(tools)
    values_a = {c: measures.measure(t, tools) for c, t in turns_a.items()}
    values_b = {c: measures.measure(t, tools) for c, t in turns_b.items()}
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
