"""Result cache: SQLite in WAL mode, keyed by a task's content hash.

Results are committed within a fraction of a second of arriving (the scheduler writes them in small
transactions), so a killed run loses little more than the calls in flight. Only successes are stored: an
error must be retried next time, never replayed. Nothing secret goes in: requests are stored by hash only,
responses hold text, usage and provider metadata that the providers have already stripped of headers.
The `batches` table remembers the provider batches a run submitted until their answers are read, `derived`
keeps work computed from results (embeddings, chart specs) by the hash of its inputs, and `answer_values` holds
what offline judges measured on each answer alone, one value per (measure, answer), so an answer is measured once
whatever pairs it sits in and however often a run stops. It has a row for every answer on every measure (16 or
more), so each row is small: the measure by a number (`measure_keys` names it), a task id by its 16 bytes.
An answer read from a dataset is never stored: its text is the dataset's, and a task's id already hashes it, so
an open cache only holds it in memory (`hold`).
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.records import Result

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    task_id TEXT PRIMARY KEY,
    stage TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    provider TEXT NOT NULL,
    output TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost REAL NOT NULL,
    latency_s REAL NOT NULL,
    meta TEXT NOT NULL,
    created_at REAL NOT NULL
)
"""
_DERIVED = """
CREATE TABLE IF NOT EXISTS derived (
    key TEXT PRIMARY KEY,
    value BLOB NOT NULL,
    created_at REAL NOT NULL
)
"""

_MEASURES = """
CREATE TABLE IF NOT EXISTS answer_values (
    measure INTEGER NOT NULL,
    answer BLOB NOT NULL,
    value REAL,
    PRIMARY KEY (measure, answer)
) WITHOUT ROWID
"""
_MEASURE_KEYS = """
CREATE TABLE IF NOT EXISTS measure_keys (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE
)
"""

_BATCHES = """
CREATE TABLE IF NOT EXISTS batches (
    batch_id TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    provider TEXT NOT NULL,
    task_ids TEXT NOT NULL,
    submitted_at REAL NOT NULL,
    status TEXT,
    counts TEXT,
    ended_at REAL,
    reason TEXT
)
"""


_TASK_ID = re.compile("[0-9a-f]+")
_READ_VALUES = ("SELECT CASE typeof(answer) WHEN 'blob' THEN lower(hex(answer)) ELSE answer END, value "
                "FROM answer_values WHERE measure = ?")


def _packed(answer: str) -> bytes | str:
    """A task id (lower-case hex, an even number of digits) as its bytes, half the size; any other answer key as
    it is (`_READ_VALUES` turns the bytes back into the same text)."""
    return bytes.fromhex(answer) if len(answer) % 2 == 0 and _TASK_ID.fullmatch(answer) else answer


@dataclass(frozen=True)
class BatchRecord:
    """A provider batch this cache's runs submitted: written before its first poll, so a run that is killed
    while it waits finds it again instead of paying for it twice; `ended_at` is set once its answers are in, or
    once the provider says it no longer has the batch (`status` "gone", `reason` saying what it answered)."""

    batch_id: str
    endpoint: str
    provider: str
    task_ids: tuple[str, ...]
    submitted_at: float
    status: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    ended_at: float | None = None
    reason: str | None = None


class Cache:
    """The run cache: every finished task's result by its hash, and derived work by its key, in one SQLite file
    that several processes may share."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable across process kills
        self._db.execute(_SCHEMA)
        self._db.execute(_DERIVED)
        self._db.execute(_MEASURES)
        self._db.execute(_MEASURE_KEYS)
        self._db.execute(_BATCHES)
        self._measure_ids: dict[str, int] = {}
        self._adopt_text_measures()
        if "reason" not in {row[1] for row in self._db.execute("PRAGMA table_info(batches)")}:
            self._db.execute("ALTER TABLE batches ADD COLUMN reason TEXT")  # a cache from before gone batches
        # Results decoded once per process: a run reads its finished tasks several times (execute, each
        # discovery pass, analysis), and a stored result never changes under its task id except by our own put.
        self._decoded: dict[str, Result] = {}
        self._held: dict[str, Result] = {}

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def put(self, result: Result) -> None:
        row = (result.task_id, result.stage, result.endpoint, result.provider, json.dumps(result.output),
               result.input_tokens, result.output_tokens, result.cost, result.latency_s,
               json.dumps(result.meta, sort_keys=True), time.time())
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO results VALUES (?,?,?,?,?,?,?,?,?,?,?)", row)
            self._decoded.pop(result.task_id, None)

    def put_many(self, results: Sequence[Result]) -> None:
        rows = [(r.task_id, r.stage, r.endpoint, r.provider, json.dumps(r.output), r.input_tokens,
                 r.output_tokens, r.cost, r.latency_s, json.dumps(r.meta, sort_keys=True), time.time())
                for r in results]
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO results VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
            self._db.execute("COMMIT")
            for row in rows:
                self._decoded.pop(row[0], None)
            # a text output reads back as the same text: keep the result as given, not a copy decoded again
            self._decoded.update((r.task_id, r) for r in results if isinstance(r.output, str))

    def hold(self, results: Iterable[Result]) -> None:
        """Results this object knows and returns without the file storing them: answers read from a dataset,
        whose text the dataset keeps (`engine.execute.recorded` holds a plan's before anything reads it). The
        result is kept as given, so its text stays one string shared with the dataset's item."""
        with self._lock:
            self._held.update((r.task_id, r) for r in results)

    def holds(self, task_id: str) -> bool:
        return task_id in self._held

    def _select(self, columns: str, keys: Iterable[str], table: str = "results",
                key: str = "task_id") -> list[tuple[Any, ...]]:
        ids = list(keys)
        rows: list[tuple[Any, ...]] = []
        with self._lock:
            for start in range(0, len(ids), 900):  # stay under SQLite's bound-parameter limit
                chunk = ids[start:start + 900]
                marks = ",".join("?" * len(chunk))
                rows.extend(self._db.execute(f"SELECT {columns} FROM {table} WHERE {key} IN ({marks})", chunk))
        return rows

    def get_many(self, task_ids: Iterable[str]) -> dict[str, Result]:
        ids = list(task_ids)
        held, decoded = self._held, self._decoded
        decoded.update((row[0], Result(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5], row[6], row[7],
                                       row[8], json.loads(row[9])))
                       for row in self._select("*", [i for i in ids if i not in decoded and i not in held]))
        return {i: held[i] if i in held else decoded[i] for i in ids if i in held or i in decoded}

    def known(self, task_ids: Iterable[str]) -> set[str]:
        ids = list(task_ids)
        return ({i for i in ids if i in self._held}
                | {row[0] for row in self._select("task_id", [i for i in ids if i not in self._held])})

    def written_at(self, task_ids: Iterable[str]) -> dict[str, float]:
        """When each stored task's result was written (absent: not stored): a task asked again has a new time,
        so a kept run (`engine.run_memo`) sees that its answers changed without reading them."""
        return {row[0]: row[1] for row in self._select("task_id, created_at", task_ids)}

    def get_derived(self, keys: Iterable[str]) -> dict[str, bytes]:
        """Work computed from results (embeddings, discovery), stored by the content hash of its inputs."""
        return dict(self._select("key, value", keys, table="derived", key="key"))

    def put_derived(self, items: dict[str, bytes]) -> None:
        now = time.time()
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO derived VALUES (?,?,?)",
                                 [(k, v, now) for k, v in items.items()])
            self._db.execute("COMMIT")

    def measures(self, measure: str, answers: Iterable[str]) -> dict[str, float]:
        """The stored values of `measure` (a key from `engine.execute.measures`) for those of `answers` it has."""
        wanted = set(answers)
        with self._lock:
            number = self._measure_number(measure, add=False)
            if number is None:
                return {}
            rows = self._db.execute(_READ_VALUES, (number,))  # ids read back as hex by SQLite: no Python per row
            return {answer: math.nan if value is None else value for answer, value in rows if answer in wanted}

    def put_measures(self, measure: str, values: Iterable[tuple[str, float]]) -> None:
        """Store values of `measure`, one per answer, in one transaction."""
        with self._lock:
            self._db.execute("BEGIN")
            number = self._measure_number(measure, add=True)
            self._db.executemany("INSERT OR REPLACE INTO answer_values VALUES (?,?,?)",
                                 [(number, _packed(answer), None if math.isnan(value) else value)
                                  for answer, value in values])
            self._db.execute("COMMIT")

    def _measure_number(self, key: str, add: bool) -> int | None:
        """The number `answer_values` knows a measure by (a new one, with `add`; within a transaction then)."""
        if key not in self._measure_ids:
            row = self._db.execute("SELECT id FROM measure_keys WHERE key = ?", (key,)).fetchone()
            if row is None and not add:
                return None
            if row is None:
                row = (self._db.execute("INSERT INTO measure_keys (key) VALUES (?)", (key,)).lastrowid,)
            self._measure_ids[key] = row[0]
        return self._measure_ids[key]

    def _adopt_text_measures(self) -> None:
        """A cache from before measures were numbered keeps its values in a `measures` table of text keys: they
        move to `answer_values` once, in one transaction (an interrupted move leaves the old table whole)."""
        def old_table() -> bool:
            return self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'measures'").fetchone() is not None

        if not old_table():
            return
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")  # another process may be moving them: one does, the other waits
            try:
                if old_table():
                    for (key,) in self._db.execute("SELECT DISTINCT measure FROM measures").fetchall():
                        number = self._measure_number(key, add=True)
                        rows = self._db.execute("SELECT answer, value FROM measures WHERE measure = ?", (key,))
                        self._db.executemany("INSERT OR REPLACE INTO answer_values VALUES (?,?,?)",
                                             [(number, _packed(answer), value) for answer, value in rows])
                    self._db.execute("DROP TABLE measures")
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                self._measure_ids.clear()  # numbers handed out in the rolled-back transaction are gone
                raise

    def add_batch(self, record: BatchRecord) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO batches VALUES (?,?,?,?,?,?,?,?,?)", (
                record.batch_id, record.endpoint, record.provider, json.dumps(record.task_ids), record.submitted_at,
                record.status, json.dumps(record.counts), record.ended_at, record.reason))

    def end_batch(self, batch_id: str, status: str, counts: dict[str, int], reason: str | None = None) -> None:
        with self._lock:
            self._db.execute("UPDATE batches SET status = ?, counts = ?, ended_at = ?, reason = ? WHERE batch_id = ?",
                             (status, json.dumps(counts), time.time(), reason, batch_id))

    def batches(self, endpoint: str | None = None, open_only: bool = False) -> list[BatchRecord]:
        """Batches in submission order; `open_only`: those whose answers have not been read yet."""
        query = ("SELECT batch_id, endpoint, provider, task_ids, submitted_at, status, counts, ended_at, reason "
                 "FROM batches WHERE (? IS NULL OR endpoint = ?)" + (" AND ended_at IS NULL" if open_only else ""))
        with self._lock:
            rows = list(self._db.execute(query + " ORDER BY submitted_at", (endpoint, endpoint)))
        return [BatchRecord(r[0], r[1], r[2], tuple(json.loads(r[3])), r[4], r[5], json.loads(r[6] or "{}"), r[7], r[8])
                for r in rows]
