"""Looks that share no prompt with the baseline, as a day's agent logs do: each unit ranked among every unit
before it, so that `anytime`'s e-processes watch the model without a pair to judge.

A unit (a conversation, or a prompt) gets a value on each vibe: the mean, over its answers, of the measure the
panel's judge compares when it judges a pair (`JudgeKind.answer_measure`: a metric's count, an embedding's
position on the vibe's axis). A vibe no panel judge measures on one answer alone (an LLM judge reads two answers
at once) is left out, and the page says so.

Each look's units, in the order they are bet on, get the smoothed conformal p-value of their value among every
unit before them, the baseline's first (Vovk, Gammerman & Shafer, "Algorithmic Learning in a Random World", 2nd
ed., 2022, §2.1 and ch. 8):

    pⱼ = (#{earlier values > vⱼ} + θⱼ · (#{earlier values = vⱼ} + 1)) / (earlier units + 1),   θⱼ ~ U(0, 1)

If the model did not change, the baseline's units and every look's are exchangeable, and then these p-values are
independent and uniform on (0, 1), ties and all (θ breaks them). So xⱼ = 1 − 2pⱼ lies in (−1, 1) with mean 0
given everything before it, which is exactly the null `anytime`'s e-processes bet against: "moved up" and "moved
down" keep Ville's guarantee, and the family's with them. A model that starts writing more of something gives
units ranked above most earlier ones: pⱼ near 0, xⱼ near +1, and the gambler's wealth grows.

The running mean of x is a rank shift: +1 when every new unit sits above every unit before it, 0 when new units
rank as a fresh draw of the old ones would. Earlier looks join the reference, so after a change the contrast fades
as changed units accumulate; the e-processes' windowed stakes find a change while it is fresh.

θⱼ is drawn from a generator seeded by the vibe, the look and the unit's id, so a look gives the same values
however often the monitor is started again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.datasets.items import Item
from engine.judges.kinds import kind_of, scores
from engine.plan import vibe_fields
from engine.spec.model import Judge, Vibe

Measure = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class AnswerMeasures:
    """How each vibe is measured on one answer, and the vibes that cannot be."""

    by_vibe: dict[str, Measure]
    judge: dict[str, str]  # vibe -> the judge whose measure it is
    left_out: dict[str, str]  # vibe -> why it cannot be watched without pairs


def answer_measures(vibes: Sequence[Vibe], judges: Sequence[Judge]) -> AnswerMeasures:
    """For each vibe, the first panel judge that scores it and measures each answer alone."""
    by_vibe: dict[str, Measure] = {}
    judge_of: dict[str, str] = {}
    left_out: dict[str, str] = {}
    for vibe in vibes:
        for judge in judges:
            if (vibe.judges and judge.name not in vibe.judges) or not scores(judge, vibe):
                continue
            kind = kind_of(judge)
            measure = kind.answer_measure(vibe_fields(vibe), kind.pair_config(judge))
            if measure is not None:
                by_vibe[vibe.name] = _measuring(kind.measure_answers, measure.definition)
                judge_of[vibe.name] = judge.name
                break
        else:
            left_out[vibe.name] = ("no judge of the panel measures it on one answer alone (an LLM judge reads two "
                                   "answers at once), so without shared prompts it cannot be watched")
    return AnswerMeasures(by_vibe, judge_of, left_out)


def _measuring(measure_answers: Callable[..., Sequence[float]], definition: dict) -> Measure:
    return lambda texts: np.asarray(measure_answers(definition, list(texts)), dtype=float)


def unit_values(items: Sequence[Item], model: str, measures: AnswerMeasures) -> tuple[
        list[str], str, dict[str, list[float | None]]]:
    """The units of `model`'s recorded answers in `items` (conversations where items are turns, else prompts),
    sorted by id, and each vibe's value per unit: the mean of its measure over the unit's answers (None where the
    measure has no value)."""
    answered = [item for item in items if model in item.outputs]
    unit = "conversations" if any(item.conversation for item in answered) else "prompts"
    order = sorted({item.cluster for item in answered})
    rows = {u: k for k, u in enumerate(order)}
    index = np.array([rows[item.cluster] for item in answered], dtype=int)
    counts = np.bincount(index, minlength=len(order)) if len(index) else np.zeros(0)
    texts = [item.outputs[model] for item in answered]
    values = {}
    for vibe, measure in measures.by_vibe.items():
        measured = measure(texts) if texts else np.zeros(0)
        sums = np.bincount(index, weights=measured, minlength=len(order)) if len(index) else np.zeros(0)
        means = sums / np.maximum(counts, 1)
        values[vibe] = [float(v) if np.isfinite(v) else None for v in means]
    return order, unit, values


def rank_shifts(reference: Sequence[float | None], values: Sequence[float | None],
                thetas: Sequence[float]) -> list[float | None]:
    """xⱼ = 1 − 2pⱼ for each value in turn: pⱼ its smoothed conformal p-value among `reference` and the values
    before it (see the module docstring), θⱼ = `thetas[j]` breaking its ties. A unit with no value (None) gets
    none and joins no reference."""
    earlier = np.sort(np.asarray([v for v in reference if v is not None], dtype=float))
    out: list[float | None] = []
    for value, theta in zip(values, thetas, strict=True):
        if value is None:
            out.append(None)
            continue
        at, after = np.searchsorted(earlier, value, side="left"), np.searchsorted(earlier, value, side="right")
        p = (len(earlier) - after + theta * (after - at + 1)) / (len(earlier) + 1)
        out.append(1.0 - 2.0 * float(p))
        earlier = np.insert(earlier, at, value)
    return out


def tie_breaks(seeds: Sequence[str]) -> list[float]:
    """θ for each unit, uniform on [0, 1), drawn from a generator seeded by its name: the same on every start."""
    return [float(np.random.default_rng(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")).random())
            for seed in seeds]
