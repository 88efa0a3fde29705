"""The measure pass: the answers a plan's `Measured` records compare, each measured once per measure, in chunks,
and the records' verdicts derived from those values as array operations.

A measure's values are kept in the cache by (measure key, answer task id). The key is the judge kind's
definition of the value (`JudgeKind.answer_measure`) with the digest of the code that computes it
(`derived.code_digest`), so a changed metric or library measures again, and an answer that sits in many pairs,
analyses or runs is measured once. Chunks are committed as they finish: a run stopped mid-pass keeps every
chunk before the one in flight (`CHUNK` answers), and the next run measures only what is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from engine import derived
from engine.execute.cache import Cache
from engine.judges.kinds import judge_kind
from engine.judges.verdicts import compare_columns
from engine.records import OFFLINE_PROVIDER, Measured, MeasuredVerdicts, Plan, Result

CHUNK = 4000  # answers measured and committed at a time


def measure_key(record: Measured) -> str:
    """Where a record's values live in the cache: its kind, its measure and the code that computes it."""
    kind = judge_kind(record.judge_kind)
    return derived.key("measure", {"kind": record.judge_kind, "measure": record.measure},
                       derived.code_digest(type(kind).__module__))


@dataclass
class MeasurePass:
    """What one pass did: values computed now (none when the cache held them all), and answers with no text to
    measure (a generation that failed), whose pairs get no verdict."""

    computed: int = 0
    unanswered: int = 0


def run_measures(records: Sequence[Measured], cache: Cache,
                 on_chunk: Callable[[int, int], None] = lambda n, total: None) -> MeasurePass:
    """Measure every answer the records compare that the cache has no value for. `on_chunk(n, total)`: n more
    of the `total` values missing are measured (progress; first called with n = 0)."""
    done = MeasurePass()
    todo = []
    for key, (record, answers) in _by_measure(records).items():
        have = cache.measures(key, answers)
        todo.append((key, record, sorted(set(answers) - set(have))))
    total = sum(len(missing) for _, _, missing in todo)
    on_chunk(0, total)
    for key, record, missing in todo:
        kind = judge_kind(record.judge_kind)
        for start in range(0, len(missing), CHUNK):
            chunk = missing[start:start + CHUNK]
            texts = cache.get_many(chunk)
            ids = [answer for answer in chunk if answer in texts]
            values = kind.measure_answers(record.measure, [str(texts[answer].output) for answer in ids])
            cache.put_measures(key, zip(ids, map(float, values), strict=True))
            done.computed += len(ids)
            done.unanswered += len(chunk) - len(ids)
            on_chunk(len(chunk), total)
    return done


def _by_measure(records: Iterable[Measured]) -> dict[str, tuple[Measured, list[str]]]:
    """Measure key -> a record of it and every answer the records of that key compare (each once, in order)."""
    out: dict[str, tuple[Measured, dict[str, None]]] = {}
    for record in records:
        answers = out.setdefault(measure_key(record), (record, {}))[1]
        answers.update(dict.fromkeys(record.pairs.outputs_a))
        answers.update(dict.fromkeys(record.pairs.outputs_b))
    return {key: (record, list(answers)) for key, (record, answers) in out.items()}


def measured_done(plan: Plan, cache: Cache) -> set[str]:
    """The ids of the plan's `Measured` records every answer of which has a stored value."""
    out: set[str] = set()
    for key, (_, answers) in _by_measure(plan.measured).items():
        have = cache.measures(key, answers)
        out.update(m.id for m in plan.measured if measure_key(m) == key
                   and all(a in have for a in (*m.pairs.outputs_a, *m.pairs.outputs_b)))
    return out


def verdicts(record: Measured, values: dict[str, float]) -> MeasuredVerdicts:
    """A record's verdict columns from its answers' values (NaN where an answer has none)."""
    value_a = np.array([values.get(a, np.nan) for a in record.pairs.outputs_a], dtype=float)
    value_b = np.array([values.get(b, np.nan) for b in record.pairs.outputs_b], dtype=float)
    return MeasuredVerdicts(compare_columns(value_a, value_b, record.tolerance, record.relative), value_a, value_b)


ValuesOf = Callable[[str, list[str]], dict[str, float]]  # (measure key, answers) -> the values stored


def measure_values(records: Sequence[Measured], values_of: ValuesOf) -> dict[str, dict[str, float]]:
    """Measure key -> answer -> value, for every answer the records compare that has one."""
    return {key: values_of(key, answers) for key, (_, answers) in _by_measure(records).items()}


def measured_results(records: Sequence[Measured], values_of: ValuesOf) -> dict[str, Result]:
    """Each record's result (its `MeasuredVerdicts`), the values read once per measure through `values_of(key,
    answers)`: the cache's, or a run folder's."""
    values = measure_values(records, values_of)
    return {record.id: Result(record.id, record.stage, record.judge, OFFLINE_PROVIDER,
                              verdicts(record, values[measure_key(record)])) for record in records}


def finished_results(plan: Plan, cache: Cache) -> dict[str, Result]:
    """Every finished task's result from the cache, with every `Measured` record's verdicts: what analyses read."""
    results = cache.get_many(t.id for t in plan.tasks)
    results.update(measured_results(plan.measured, cache.measures))
    return results


def done_ids(plan: Plan, cache: Cache) -> set[str]:
    """The plan's finished tasks and complete `Measured` records: what `vibe plan` counts as cached."""
    return cache.known(t.id for t in plan.tasks) | measured_done(plan, cache)
