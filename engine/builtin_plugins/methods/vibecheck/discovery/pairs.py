"""The training pairs discovery reads, and what it measures on them with the offline panel's metrics: the
measure pass's own unit of work and, within a run, its cache, so the values discovery measured are the
values the run keeps."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from engine.api.analysis import stats
from engine.api.judging import compare

if TYPE_CHECKING:
    from engine.api.execution import Cache

TOLERANCE = 0.05


@dataclass(frozen=True)
class TrainingPair:
    output_a: str
    output_b: str
    a_preferred: bool | None  # None when the pair has no (non-tie) human label
    answers: tuple[str, str] | None = None  # the two answers' task ids, where they come from a run
    unit: str | None = None  # the conversation a turn belongs to (the independent unit); None: the pair itself


def metric_columns(metrics: Sequence[str], pairs: Sequence[TrainingPair],
                   store: Cache | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each metric's (verdicts, strengths) on the pairs, as the metric judge gives them: its verdict (the sign of
    A − B beyond the relative tolerance) and the signed strength (a − b) / (|a| + |b|). Every metric is measured
    on every answer in one pass over parts of answers, spread over this machine's cores (`map_parts`, through
    the measure pass's own unit of work, so the values are the measure pass's). With a run's cache (`store`)
    and pairs that name their answers, a value the cache holds is read rather than measured, and the values
    measured are stored under the measure pass's keys: the run measures a discovered metric's vibe on every
    answer next, and finds the training answers done."""
    from engine.api.execution import SHARED, answer_measure_key, map_parts, measure_part, release_workers

    if not metrics:
        return {}
    texts = [p.output_a for p in pairs] + [p.output_b for p in pairs]
    named = [p.answers for p in pairs if p.answers is not None]
    ids = [a for a, _ in named] + [b for _, b in named] if len(named) == len(pairs) else []
    keys = {m: answer_measure_key("metric", {"metric": m}) for m in metrics}
    values = {m: np.full(len(texts), np.nan) for m in metrics}
    missing = {m: np.ones(len(texts), dtype=bool) for m in metrics}
    if store is not None and ids:
        for m in metrics:
            known = store.measures(keys[m], ids)
            missing[m] = np.array([answer not in known for answer in ids], dtype=bool)
            values[m] = np.array([known.get(answer, np.nan) for answer in ids], dtype=float)
    windows = [{m: start + np.flatnonzero(missing[m][start:start + SHARED]) for m in metrics}
               for start in range(0, len(texts), SHARED)]
    windows = [rows for rows in windows if any(len(r) for r in rows.values())]  # what the cache held is done
    parts = [[("metric", {"metric": m}, [texts[i] for i in rows[m].tolist()]) for m in metrics] for rows in windows]
    for rows, (columns, _) in zip(windows, map_parts(measure_part, parts), strict=True):
        for m, column in zip(metrics, columns, strict=True):
            values[m][rows[m]] = column
    release_workers()
    if store is not None and ids:
        for m in metrics:
            store.put_measures(keys[m], [(ids[i], float(values[m][i])) for i in np.flatnonzero(missing[m]).tolist()])
    return {metric: judged(values[metric][:len(pairs)], values[metric][len(pairs):]) for metric in metrics}


def judged(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The metric judge's (verdicts, strengths) on pairs whose two answers measure `a` and `b`."""
    verdicts = [compare(x, y, TOLERANCE, relative=True) for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    return np.array(verdicts, dtype=float), stats.strengths(a, b)
