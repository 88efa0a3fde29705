"""The measure pass: the answers a plan's `Measured` records compare, each measured once per measure, in chunks,
and the records' verdicts derived from those values as array operations.

A measure's values are kept in the cache by (measure key, answer task id). The key is the judge kind's
definition of the value (`JudgeKind.answer_measure`) with the digest of the code that computes it
(`derived.code_digest`), so a changed metric or library measures again, and an answer that sits in many pairs,
analyses or runs is measured once. Chunks are committed as they finish, each stored on a background thread while
the next one is measured: a run interrupted mid-pass stores every chunk it measured, one killed outright loses at
most the chunk being stored and the one in flight (`CHUNK` answers each), and the next run measures only what is
missing.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine import derived
from engine.execute.cache import Cache
from engine.execute.recorded import hold_recorded
from engine.judges.kinds import judge_kind
from engine.judges.verdicts import compare_columns
from engine.records import OFFLINE_PROVIDER, Measured, MeasuredVerdicts, Prepared, Result

if TYPE_CHECKING:  # numpy is imported where values are read: `vibe plan` counts finished records without it
    import numpy as np

CHUNK = 4000  # answers measured and committed at a time
SHARED = 256  # answers every measure sees before the next ones


def measure_key(record: Measured) -> str:
    """Where a record's values live in the cache: its kind, its measure and the code that computes it."""
    return answer_measure_key(record.judge_kind, record.measure)


def answer_measure_key(kind_name: str, measure: dict[str, Any]) -> str:
    """`measure_key` of a judge kind's measure, for work outside the plan (discovery) that measures answers the
    same way and shares their values."""
    kind = judge_kind(kind_name)
    return derived.key("measure", {"kind": kind_name, "measure": measure}, derived.code_digest(type(kind).__module__))


@dataclass
class MeasurePass:
    """What one pass did: values computed now (none when the cache held them all), answers with no text to
    measure (a generation that failed), whose pairs get no verdict, and where the values were computed (this
    process, or a Ray node and worker, with how many values each)."""

    computed: int = 0
    unanswered: int = 0
    ran_on: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0  # wall time of the measuring (reading texts, measuring, storing)

    def add(self, other: MeasurePass) -> None:
        """Count another pass's work in this one (a run's two execute passes)."""
        self.computed += other.computed
        self.unanswered += other.unanswered
        self.seconds += other.seconds
        for where, n in other.ran_on.items():
            self.ran_on[where] = self.ran_on.get(where, 0) + n


def run_measures(records: Sequence[Measured], cache: Cache,
                 on_chunk: Callable[[int, int], None] = lambda n, total: None) -> MeasurePass:
    """Measure every answer the records compare that the cache has no value for, a chunk of answers at a time,
    every measure of a chunk committed (on a background thread) while the next chunk is measured. A chunk is
    cut into parts of `SHARED` answers, each measured on every measure it lacks by one call of `measure_part`,
    through `chunk_map`: a kind that measures in plain Python (`measure_in_workers`) over this machine's cores
    in worker processes (in this process for a small pass), an encoder in this process; both on the cluster's
    actor pool while a run uses the Ray backend. Within a part every measure sees the same texts in turn, so a
    kind may keep what it found in a text (the metric kind keeps its words).
    `on_chunk(n, total)`: n more of the `total` values missing are measured (progress; first called with 0)."""
    # here, not at the top: `vibe plan` reads this module to count what is measured, and needs no workers
    from engine.background import Background
    from engine.chunk_map import map_chunks, map_parts, release_workers

    done, started = MeasurePass(), time.perf_counter()
    todo: dict[str, tuple[Measured, set[str]]] = {}
    for key, (record, answers) in _by_measure(records).items():
        missing = set(answers) - set(cache.measures(key, answers))
        if missing:
            todo[key] = (record, missing)
    total = sum(len(missing) for _, missing in todo.values())
    on_chunk(0, total)
    everything = [(key, record.judge_kind, record.measure) for key, (record, _) in todo.items()]
    # plain-Python measures over this machine's cores; encoders where encoder work runs (see `chunk_map`)
    groups = [(mapper, [m for m in everything if judge_kind(m[1]).measure_in_workers is in_workers])
              for mapper, in_workers in ((map_parts, True), (map_chunks, False))]
    union = sorted(set().union(*(missing for _, missing in todo.values())))
    with Background() as storing:  # a chunk's values are stored while the workers measure the next one
        for start in range(0, len(union), CHUNK):
            chunk = union[start:start + CHUNK]
            texts = cache.get_many(chunk)
            wanted = 0
            values: dict[str, list[tuple[str, float]]] = {key: [] for key, _, _ in everything}
            for mapper, measures in (group for group in groups if group[1]):
                parts = []
                for first in range(0, len(chunk), SHARED):
                    shared = chunk[first:first + SHARED]
                    asked = [[a for a in shared if a in todo[key][1]] for key, _, _ in measures]
                    wanted += sum(map(len, asked))
                    ids = [[a for a in answers if a in texts] for answers in asked]
                    done.unanswered += sum(len(a) - len(i) for a, i in zip(asked, ids, strict=True))
                    parts.append(([(wire, measure, [str(texts[a].output) for a in answers])
                                   for (_, wire, measure), answers in zip(measures, ids, strict=True)], ids))
                for (_, ids), (measured, where) in zip(parts, mapper(measure_part, [work for work, _ in parts]),
                                                      strict=True):
                    for (key, _, _), answers, column in zip(measures, ids, measured, strict=True):
                        values[key].extend(zip(answers, column, strict=True))
                        done.ran_on[where] = done.ran_on.get(where, 0) + len(answers)
            storing.submit(_store, cache, values)
            done.computed += sum(map(len, values.values()))
            on_chunk(wanted, total)
    release_workers()
    done.seconds = round(time.perf_counter() - started, 3)
    return done


def _store(cache: Cache, values: dict[str, list[tuple[str, float]]]) -> None:
    for key, measured_values in values.items():
        cache.put_measures(key, measured_values)


def measure_part(work: list[tuple[str, dict[str, Any], list[str]]]) -> tuple[list[list[float]], str]:
    """Each (judge kind's wire name, measure, texts) measured, and where this ran: the unit `run_measures` sends
    through `chunk_map.map_parts` (a module-level function, so a worker imports it by name)."""
    out = [[float(v) for v in judge_kind(wire).measure_answers(measure, texts)] if texts else []
           for wire, measure, texts in work]
    return out, _here()


def _here() -> str:
    """This process, named by its Ray node when it is a Ray worker, or by its pid when it is a local worker."""
    from engine.chunk_map import in_worker

    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        return f"ray node {ray.get_runtime_context().get_node_id()[:12]} pid {os.getpid()}"
    return f"this machine pid {os.getpid()}" if in_worker() else "this process"


def _by_measure(records: Iterable[Measured]) -> dict[str, tuple[Measured, list[str]]]:
    """Measure key -> a record of it and every answer the records of that key compare (each once, in order). The
    vibes of an analysis share their pairs, so measures over the same pairs share one list of answers."""
    keyed: dict[str, list[Measured]] = {}
    for record in records:
        keyed.setdefault(measure_key(record), []).append(record)
    lists: dict[tuple[str, ...], list[str]] = {}
    out = {}
    for key, group in keyed.items():
        sets = tuple(dict.fromkeys(m.pairs.id for m in group))
        if sets not in lists:
            pairs = {m.pairs.id: m.pairs for m in group}
            lists[sets] = list(dict.fromkeys(a for s in sets for column in (pairs[s].outputs_a, pairs[s].outputs_b)
                                             for a in column))
        out[key] = (group[0], lists[sets])
    return out


ValuesOf = Callable[[str, list[str]], dict[str, float]]  # (measure key, answers) -> the values stored


@dataclass(frozen=True)
class MeasureTable:
    """What a plan's `Measured` records read: every answer they compare (sorted) and, per measure key, the
    answers' values in that order (NaN where an answer has none). A run folder keeps it (measures.npz); the run
    that wrote it hands it to its analysis, which reads the records' verdicts from it rather than from the cache
    again (reading a measure's values back from SQLite costs about a second per million)."""

    answers: list[str]
    columns: dict[str, np.ndarray]

    def measured(self) -> int:
        """How many values the table holds."""
        return sum(int((column == column).sum()) for column in self.columns.values())


def measure_table(records: Sequence[Measured], values_of: ValuesOf) -> MeasureTable:
    """The records' `MeasureTable`, each measure's values read through `values_of(key, answers)` (the cache's),
    one measure at a time: only one measure's values are ever held as Python objects."""
    import numpy as np

    by_measure = _by_measure(records)
    answers = sorted({a for _, compared in by_measure.values() for a in compared})
    columns = {}
    for key, (_, compared) in by_measure.items():
        values = values_of(key, compared)
        columns[key] = np.array([values.get(a, np.nan) for a in answers], dtype=float)
    return MeasureTable(answers, columns)


def measured_results(records: Sequence[Measured], table: MeasureTable) -> dict[str, Result]:
    """Each record's result: its `MeasuredVerdicts`, from its answers' values in `table` (NaN where the table
    has none). The records of one set of pairs look their answers up once."""
    import numpy as np

    position = {answer: row for row, answer in enumerate(table.answers)}
    rows: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # pair set id -> its answers' rows (-1: not in the table)
    nothing = np.full(len(table.answers), np.nan)
    out: dict[str, Result] = {}
    for record in records:
        pairs = record.pairs
        if pairs.id not in rows:
            rows[pairs.id] = (_rows(position, pairs.outputs_a), _rows(position, pairs.outputs_b))
        column = table.columns.get(measure_key(record), nothing)
        value_a, value_b = (np.where(at >= 0, column[at], np.nan) for at in rows[pairs.id])
        out[record.id] = Result(record.id, record.stage, record.judge, OFFLINE_PROVIDER, MeasuredVerdicts(
            compare_columns(value_a, value_b, record.tolerance, record.relative), value_a, value_b))
    return out


def _rows(position: dict[str, int], answers: Sequence[str]) -> np.ndarray:
    import numpy as np

    return np.fromiter((position.get(a, -1) for a in answers), dtype=np.int64, count=len(answers))


def finished_results(prepared: Prepared, cache: Cache, table: MeasureTable | None = None) -> dict[str, Result]:
    """Every finished task's result (the cache's, and the answers read from the datasets), with every `Measured`
    record's verdicts: what analyses read. `table`: the plan's measured values where the caller holds them
    already (the run that just wrote them), else read from the cache."""
    hold_recorded(prepared, cache)
    plan = prepared.plan
    results = cache.get_many(t.id for t in plan.tasks)
    if table is None:
        table = measure_table(plan.measured, cache.measures)
    results.update(measured_results(plan.measured, table))
    return results
