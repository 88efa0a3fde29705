"""Several agents on one board: each agent's standing on each measure, and which of them differ.

A standing is the agent's median conversation with the distribution-free interval for a median: from the k-th
smallest to the k-th largest of its n conversations' values, k the largest with P(Binomial(n, ½) < k) ≤ 2.5%.
That interval holds at least 95% for any distribution, skewed counts and tied shares included (on discrete
values it is conservative), where a mean's t or bootstrap interval falls short at the dozens of sessions an
everyday log folder holds; below 6 conversations no interval reaches 95%, and none is given.

The standings rank the agents; whether two of them differ is the pairwise comparisons' to say
(`analysis._compare`, Holm over every measure of every comparison), and each row names the pairs that do."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy import stats as scipy_stats

LEVEL = 0.95


@dataclass(frozen=True)
class Standing:
    agent: str
    median: float | None
    ci_low: float | None  # the median's distribution-free interval; None below 6 conversations
    ci_high: float | None
    mean: float | None
    conversations: int  # conversations of this agent with a value of the measure
    rank: int = 0  # 1 for the highest median (ties broken by the mean; equal agents share a rank)


@dataclass(frozen=True)
class BoardRow:
    measure: str
    description: str
    standings: list[Standing]  # in the analysis' order of the agents
    differing: list[str]  # "a > b, c": each agent above the agents it differs from at 5% after Holm


@cache
def _order_statistic(n: int, level: float = LEVEL) -> int:
    """k, 1-based, of the widest-needed order statistics [x_(k), x_(n−k+1)] for a median at `level`; 0 where
    even the sample's range falls short (n ≤ 5 at 95%)."""
    tail = (1 - level) / 2
    below = int(scipy_stats.binom.ppf(tail, n, 0.5))  # the least j with P(B ≤ j) ≥ tail
    return below + 1 if scipy_stats.binom.cdf(below, n, 0.5) <= tail else below


def standing(agent: str, values: np.ndarray) -> Standing:
    """The agent's median conversation on a measure, with the median's distribution-free 95% interval."""
    x = np.sort(values[~np.isnan(values)])
    if not len(x):
        return Standing(agent, None, None, None, None, 0)
    k = _order_statistic(len(x))
    low, high = (float(x[k - 1]), float(x[len(x) - k])) if k else (None, None)
    return Standing(agent, float(np.median(x)), low, high, float(x.mean()), len(x))


def ranks(standings: Sequence[Standing]) -> list[Standing]:
    """The standings with their rank: by median, then mean, highest first; equal agents share the rank."""
    def key(s: Standing) -> tuple[float, float]:
        return (-(s.median if s.median is not None else -math.inf), -(s.mean if s.mean is not None else -math.inf))

    measured = sorted((s for s in standings if s.median is not None), key=key)
    rank_of: dict[str, int] = {}
    for place, s in enumerate(measured, start=1):
        before = measured[place - 2] if place > 1 else None
        rank_of[s.agent] = rank_of[before.agent] if before is not None and key(before) == key(s) else place
    return [Standing(s.agent, s.median, s.ci_low, s.ci_high, s.mean, s.conversations, rank_of.get(s.agent, 0))
            for s in standings]
