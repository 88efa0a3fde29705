"""What the result cache keeps on disk: answers read from a dataset are held, never stored; measured values are
small rows (a numbered measure, a task id as bytes); a cache written before keeps every value it had."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

from engine.execute.cache import Cache
from engine.records import Result

TASK = "0123456789abcdef0123456789abcdef"  # a task id: 32 lower-case hex digits
OTHER = "fedcba9876543210fedcba9876543210"


def test_a_held_answer_is_known_and_read_but_never_written(tmp_path: Path) -> None:
    text = "an answer from the dataset"
    with Cache(tmp_path / "c.sqlite") as cache:
        cache.hold([Result(TASK, "generation", "a", "recorded", text, meta={"source": "d"})])
        assert cache.known([TASK, OTHER]) == {TASK}
        assert cache.get_many([TASK, OTHER])[TASK].output is text  # the dataset's string, not a copy
    with Cache(tmp_path / "c.sqlite") as cache:
        assert cache.known([TASK]) == set()
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM results").fetchone() == (0,)


def test_values_round_trip_with_task_ids_as_bytes_and_other_keys_as_text(tmp_path: Path) -> None:
    key = "metric:" + "x" * 65  # measure keys are long: each is stored once
    with Cache(tmp_path / "c.sqlite") as cache:
        cache.put_measures(key, [(TASK, 1.5), (OTHER, math.nan), ("turn 2 of c1", -3.0), ("ABCD", 2.0)])
        cache.put_measures("other", [(TASK, 7.0)])
    with Cache(tmp_path / "c.sqlite") as cache:  # a fresh object numbers nothing anew
        got = cache.measures(key, [TASK, OTHER, "turn 2 of c1", "ABCD", "absent"])
        assert cache.measures("never stored", [TASK]) == {}
        assert cache.measures("other", [TASK, OTHER]) == {TASK: 7.0}
    assert got.keys() == {TASK, OTHER, "turn 2 of c1", "ABCD"}
    assert got[TASK] == 1.5 and math.isnan(got[OTHER]) and got["turn 2 of c1"] == -3.0 and got["ABCD"] == 2.0
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        assert db.execute("SELECT id, key FROM measure_keys ORDER BY id").fetchall() == [(1, key), (2, "other")]
        stored = dict(db.execute("SELECT answer, typeof(answer) FROM answer_values WHERE measure = 1").fetchall())
    # the hex ids as their 16 bytes; upper-case hex would not read back the same, so it stays text
    assert stored == {bytes.fromhex(TASK): "blob", bytes.fromhex(OTHER): "blob", "turn 2 of c1": "text",
                      "ABCD": "text"}


def test_a_cache_from_before_numbered_measures_keeps_its_values(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE measures (measure TEXT NOT NULL, answer TEXT NOT NULL, value REAL, "
                   "PRIMARY KEY (measure, answer)) WITHOUT ROWID")
        db.executemany("INSERT INTO measures VALUES (?,?,?)",
                       [("m1", TASK, 0.25), ("m1", OTHER, None), ("m2", TASK, 4.0), ("m2", "plain", 1.0)])
    with Cache(path) as cache:
        m1, m2 = cache.measures("m1", [TASK, OTHER]), cache.measures("m2", [TASK, "plain"])
        cache.put_measures("m1", [("plain", 9.0)])  # new values beside the adopted ones
    assert m1[TASK] == 0.25 and math.isnan(m1[OTHER]) and m2 == {TASK: 4.0, "plain": 1.0}
    with Cache(path) as cache:  # adopted once: the old table is gone, nothing is lost or moved twice
        assert cache.measures("m1", [TASK, "plain"]) == {TASK: 0.25, "plain": 9.0}
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT name FROM sqlite_master WHERE name = 'measures'").fetchone() is None
        assert db.execute("SELECT COUNT(*) FROM answer_values").fetchone() == (5,)


RECORDED_SPEC = """\
name: layout
models: {a: {provider: recorded}, b: {provider: recorded}}
datasets:
  d:
    source: {path: data.jsonl}
    fields: {id: id, prompt: q, outputs: {a: a, b: b}}
vibes: [{name: verbosity, low: short answers, high: long answers, metric: length_words}]
judges: {m: {kind: metric}}
analyses:
  vibecheck: {dataset: d, models: [a, b], judges: [m]}
"""


def test_answers_read_from_the_data_are_done_with_or_without_a_cache(tmp_path: Path) -> None:
    """What `vibe plan` counts as done, and what an analysis reads: the recorded answers, from the data, whether
    or not a cache file exists, and none of them written to one."""
    import json

    from engine.execute.measures import finished_results
    from engine.pipeline import prepare
    from engine.plan_view import finished, outline_of

    (tmp_path / "data.jsonl").write_text("".join(json.dumps({"id": f"p{i}", "q": f"q{i}", "a": "short",
                                                             "b": "a longer answer " * i}) + "\n" for i in range(1, 4)))
    (tmp_path / "spec.yaml").write_text(RECORDED_SPEC)
    prepared = prepare(tmp_path / "spec.yaml")
    recorded = {t.id for t in prepared.plan.tasks if t.provider == "recorded"}
    assert len(recorded) == 6 and finished(outline_of(prepared), None) == recorded
    with Cache(tmp_path / "c.sqlite") as cache:
        assert finished(outline_of(prepared), cache) >= recorded
        texts = {r.output for r in finished_results(prepared, cache).values() if r.task_id in recorded}
    assert texts == {"short"} | {"a longer answer " * i for i in (1, 2, 3)}
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM results").fetchone() == (0,)


def test_the_measured_values_a_run_hands_its_analysis_are_the_caches_and_the_folders(tmp_path: Path) -> None:
    """The run reads every measure back once, for its folder (measures.npz), and hands that table to its
    analysis instead of reading the cache again: the verdicts and values are the ones read from the cache and
    from the folder, and the values are the answers' word counts."""
    import json

    import numpy as np

    from engine.execute.measures import finished_results
    from engine.execute.snapshot import prepared_from, read_results
    from engine.pipeline import run_spec

    (tmp_path / "data.jsonl").write_text("".join(json.dumps({"id": f"p{i}", "q": f"q{i}", "a": "short",
                                                             "b": "a longer answer " * i}) + "\n" for i in range(1, 4)))
    (tmp_path / "spec.yaml").write_text(RECORDED_SPEC)
    summary, _, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True,
                                   report=False)
    assert summary.measures is not None
    prepared = prepared_from(run_dir)
    assert prepared is not None
    (record,) = prepared.plan.measured
    with Cache(tmp_path / "c.sqlite") as cache:
        handed = finished_results(prepared, cache, summary.measures)[record.id].output
        cached = finished_results(prepared, cache)[record.id].output
    kept = read_results(run_dir, prepared.plan)[record.id].output
    for verdicts in (cached, kept):
        assert np.array_equal(verdicts.scores, handed.scores, equal_nan=True)
        assert np.array_equal(verdicts.value_a, handed.value_a) and np.array_equal(verdicts.value_b, handed.value_b)
    assert handed.value_a.tolist() == [1, 1, 1] and handed.value_b.tolist() == [3, 6, 9]
