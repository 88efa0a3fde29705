"""People against each other: on the pairs two or more people labelled, how often one agrees with the rest, and
how often a judge put in a person's place does. A judge that matches people as well as they match each other is
as good a labeller as a person is on this vibe."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.api.analysis import HumanLabel, stats


@dataclass
class HumanHuman:
    """People against each other on the pairs two or more labelled, beside a judge in a person's place."""

    vibe: str
    judge: str
    pairs: int
    human: float  # leave-one-out agreement among people
    judge_agreement: float  # the judge in the left-out person's place, on the same pairs
    low: float = math.nan  # 95% interval of judge_agreement − human, pairs the units (`stats.verdict_interval`)
    high: float = math.nan


def human_human(labels: Sequence[HumanLabel], verdicts: dict[str, int], vibe: str, judge: str) -> HumanHuman | None:
    """Leave-one-out agreement among people on the pairs two or more labelled, and the judge's in the left-out
    person's place: each label (or the judge's verdict) against the most common label of the others on the
    pair, a tie between labels counting the share of them it matches."""
    by_pair: dict[str, list[int]] = {}
    for label in labels:
        by_pair.setdefault(label.pair, []).append(label.verdict)
    shared = {pair: values for pair, values in by_pair.items() if len(values) > 1 and pair in verdicts}
    if not shared:
        return None
    human, machine, gaps = [], [], []
    for pair, values in shared.items():
        mine = []
        for i, value in enumerate(values):
            others = values[:i] + values[i + 1:]
            human.append(_matches(value, others))
            machine.append(_matches(verdicts[pair], others))
            mine.append(machine[-1] - human[-1])
        gaps.append(float(np.mean(mine)))  # a pair is one unit, however many labelled it
    low, high = stats.verdict_interval(np.array(gaps))
    return HumanHuman(vibe, judge, len(shared), float(np.mean(human)), float(np.mean(machine)), low, high)


def _matches(value: int, others: list[int]) -> float:
    counts = Counter(others)
    top = max(counts.values())
    modes = [v for v, c in counts.items() if c == top]
    return (value in modes) / len(modes)
