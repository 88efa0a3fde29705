"""Arena-scale input: a fault deep in a large file is named by its row before any work starts, and the work an
earlier run finished is kept."""

from __future__ import annotations

import csv
import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROWS = 100_000
BAD = 90_000  # 1-based data row: the 90,000th pair
SPEC = """\
name: big
extends: vibe:offline-panel
models: {{a: {{provider: recorded}}, b: {{provider: recorded}}}}
datasets:
  pairs:
    source: {{path: {path}}}
    fields: {{id: id, prompt: prompt, preference: preference, outputs: {{a: a, b: b}}}}
analyses:
  vibecheck: {{dataset: pairs, models: [a, b], judges: [metrics], vibes: [verbosity], split: {{train: 0.5, seed: 0}}}}
"""


def _row(i: int) -> dict[str, str]:
    return {"id": f"p{i}", "prompt": f"question {i}", "a": "short answer " * (i % 7 + 1),
            "b": "a longer answer here " * (i % 5 + 1), "preference": "a" if i % 3 else "b"}


def _write(path: Path, rows: int, fault: dict[str, str] | None = None) -> None:
    if path.suffix == ".jsonl":
        lines = [json.dumps(_row(i)) for i in range(rows)]
        if fault is not None:
            lines[BAD - 1] = fault["line"]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, ["id", "prompt", "a", "b", "preference"])
        writer.writeheader()
        for i in range(rows):
            writer.writerow({**_row(i), **(fault or {})} if i == BAD - 1 else _row(i))


def _vibe(folder: Path, data: Path) -> subprocess.CompletedProcess[str]:
    (folder / "spec.yaml").write_text(SPEC.format(path=data.name), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "engine", "run", "spec.yaml", "--out", "run", "--cache", "c.sqlite",
                           "--quiet"], cwd=folder, capture_output=True, text=True, timeout=600)


FAULTS = [("pairs.csv", {"preference": "model_c"}, f"pairs.csv: row {BAD})"),
          ("pairs.csv", {"id": "p5"}, f"pairs.csv: row {BAD}: id 'p5' is taken by"),
          ("pairs.jsonl", {"line": '{"id": "p89999", "prompt": "unclosed'}, f"pairs.jsonl:{BAD}: invalid JSON line")]


@pytest.mark.slow
def test_a_fault_in_row_90000_of_100000_is_named_before_any_work(tmp_path: Path) -> None:
    """A first run on the file's first 300 rows finishes; then the whole file, with one fault at row 90,000 (a
    label naming no model, a taken id, a broken JSON line, in turn), is refused with that row (and the field)
    named before anything is planned or measured, and the earlier run's cache and run folder are as they were
    after each refusal. (One first run serves the three faults, where each once had its own.)"""
    data = tmp_path / "pairs.csv"
    _write(data, 300)
    first = _vibe(tmp_path, data)
    assert first.returncode == 0, first.stderr[-2000:]
    kept = {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir() if p.is_file()}
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        stored = db.execute("SELECT COUNT(*) FROM results").fetchone()[0] + db.execute(
            "SELECT COUNT(*) FROM answer_values").fetchone()[0]
    assert stored == 600  # 300 pairs' answers, each measured once (verbosity); the answers are the data's
    for name, fault, said in FAULTS:
        data = tmp_path / name
        _write(data, ROWS, fault)
        second = _vibe(tmp_path, data)
        assert second.returncode != 0 and said in second.stderr, second.stderr[-2000:]
        assert "Traceback" not in second.stderr
        assert {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir() if p.is_file()} == kept
        with sqlite3.connect(tmp_path / "c.sqlite") as db:
            assert db.execute("SELECT COUNT(*) FROM results").fetchone()[0] + db.execute(
                "SELECT COUNT(*) FROM answer_values").fetchone()[0] == stored


GROWTH_SPEC = """\
name: growth
extends: vibe:offline-panel
models: {a: {provider: recorded}, b: {provider: recorded}}
datasets:
  pairs:
    source: {path: pairs.jsonl}
    fields: {id: id, prompt: prompt, preference: preference, outputs: {a: a, b: b}}
vibes:
  - discover: {method: statistical, max_vibes: 4}
analyses:
  vibecheck: {dataset: pairs, models: [a, b], judges: [metrics], split: {train: 0.5, seed: 0},
              vibes: [verbosity, formatting, warmth, enthusiasm, interactivity, hedging]}
  rankings: {dataset: pairs, models: [a, b], methods: [bradley_terry, elo], outcomes: labels}
"""
WORDS = ("sure great maybe perhaps thanks the answer is here and then we can see why it works well so "
         "**note** - first - second 1. step I think you might want to").split()


def _phase_peaks_mb(folder: Path, pairs: int, pages: bool = True) -> dict[str, float]:
    """`vibe run` on `pairs` synthetic pairs in a process of its own (with its pages, or not): its peak RSS by
    the end of each phase, as the manifest records it."""
    import random

    rng = random.Random(pairs)
    folder.mkdir()
    with (folder / "pairs.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(pairs):
            a, b = (" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, n))) for n in (60, 30))
            fh.write(json.dumps({"id": f"p{i}", "prompt": f"q {i}", "a": a, "b": b,
                                 "preference": "a" if rng.random() < 0.6 else "b"}) + "\n")
    (folder / "spec.yaml").write_text(GROWTH_SPEC, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "engine", "run", "spec.yaml", "--out", "run", "--cache", "c.sqlite",
                           "--quiet", *(() if pages else ("--no-report",))], cwd=folder, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads((folder / "run" / "manifest.json").read_text())["peak_rss_mb"])


@pytest.mark.slow
def test_peak_memory_per_pair_does_not_grow_with_the_pairs(tmp_path: Path) -> None:
    """What a pair adds to a run's peak memory (plan, measure pass, discovery, analysis, rankings, pages) is no
    more between 4,000 and 10,000 pairs than between 1,000 and 4,000: memory grows linearly in the pairs, or
    less, never faster. Measured with 16,000 as the last size: 8.4–8.6 and 8.2–8.3 KB a pair (13.7 and 14.4
    before the measure workers and the per-comparison measure table); the 25% allowed is for the few megabytes
    by which a process's peak varies between runs (an n² term would make the second figure 2.3 times the first
    at these sizes). `benchmarks/scale.py` measures the growth exponent up to 100,000 pairs.
    The pages are measured apart: their charts start a JavaScript engine of a fixed size (the peak reaches about
    440 MB at 1,000 pairs and at 4,000 alike), which would hide the growth below it; what they add over the
    analysis' peak must not grow with the pairs (measured at 1,000 and 10,000 pairs; the 4,000-pair run writes
    none)."""
    by_phase = {n: _phase_peaks_mb(tmp_path / str(n), n, pages=n != 4_000) for n in (1_000, 4_000, 10_000)}
    peaks = {n: phases["analyze"] for n, phases in by_phase.items()}  # every phase up to the pages
    early = (peaks[4_000] - peaks[1_000]) / 3_000
    late = (peaks[10_000] - peaks[4_000]) / 6_000
    assert late <= 1.25 * early, (by_phase, early * 1024, late * 1024)
    pages = {n: phases["report"] - phases["analyze"] for n, phases in by_phase.items() if "report" in phases}
    assert pages[10_000] <= pages[1_000] + 10, by_phase


def test_a_runs_peak_memory_is_its_own_not_that_of_the_process_that_started_it() -> None:
    """A run started by a large process (a test worker, a notebook) reports its own peak: getrusage's ru_maxrss
    keeps the parent's size across the exec (the peak-memory test saw 279 MB at every phase of a 1,000-pair run
    under xdist, where the run alone peaks at 54 MB while it plans)."""
    big = bytearray(300 * 2**20)
    big[::4096] = b"\1" * len(big[::4096])  # touched: resident, not just reserved
    code = "from engine.execute.progress import peak_rss_mb; print(peak_rss_mb())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert float(done.stdout) < 150, done.stdout
    del big


@pytest.mark.parametrize("data", ["héllo 😀\nline two\n".encode(), "ok\nbad é here\n".encode("latin-1"),
                                  "ok\n😀".encode()[:-1], "hi".encode("utf-16"), b"aaaaa" + "é😀".encode() + b"\n\xff",
                                  b"", b"ab\n" + "😀".encode()[:2] + b"x\n"])
def test_the_utf8_check_reads_a_block_at_a_time_and_names_the_same_byte(tmp_path: Path, data: bytes) -> None:
    """A table or JSON-lines file is checked block by block (decoded whole, text with one emoji is a string of 4
    bytes a character: 1.8 GB for 440 MB of Arena answers); a byte that is not UTF-8 is named at the line and
    column a whole-file decode names, wherever the blocks cut a character."""
    from engine.text_files import NotUtf8, check_utf8, read_utf8

    path = tmp_path / "data.csv"
    path.write_bytes(data)

    def said(check: Callable[[Path], object]) -> str | None:
        try:
            check(path)
        except NotUtf8 as exc:
            return str(exc)
        return None

    whole = said(read_utf8)
    assert all(said(lambda p, size=size: check_utf8(p, size)) == whole for size in (1, 2, 3, 4, 5, 7, 1 << 22))


def test_pure_python_parts_run_on_this_machines_cores_with_the_same_values(shared_data: Path) -> None:
    """The measure pass's parts (and discovery's metric columns) go to worker processes, one per core, when
    there are enough of them: every value equals the one measured in this process, and each part says which
    worker measured it. Too few parts stay here."""
    import os

    from engine.chunk_map import MIN_PARTS, cores, map_parts
    from engine.execute.measures import measure_part

    with (shared_data / "arena" / "vibecheck_llama3-70b_vs_not_llama_creative_writing.csv").open(
            newline="", encoding="utf-8") as fh:
        texts = [row["not_llama"] for row in csv.DictReader(fh)][:MIN_PARTS * 20]
    parts = [[("metric", {"metric": m}, texts[i:i + 20]) for m in ("readability", "hedging", "phrases:i think")]
             for i in range(0, len(texts), 20)]
    here = [measure_part(part) for part in parts]
    spread = map_parts(measure_part, parts)
    assert [values for values, _ in spread] == [values for values, _ in here]
    assert {where for _, where in here} == {"this process"}
    if cores() > 1:
        workers = {where for _, where in spread}
        assert all(w.startswith("this machine pid ") and w != f"this machine pid {os.getpid()}" for w in workers)
    assert {where for _, where in map_parts(measure_part, parts[:MIN_PARTS - 1])} == {"this process"}


def test_work_started_beside_runs_in_a_process_of_its_own_and_the_ceiling_reads_what_it_fitted(
        shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`run_beside` runs a function in a process of its own, which ends with it; the black-box ceiling started
    that way (`ceiling.start`, as VibeCheck does while discovery runs) is read by `ceiling`, equal to the fit
    made here; `stop_beside` does not wait for work nobody read; with one core nothing starts and `ceiling`
    fits in this process."""
    import os
    import time
    from concurrent.futures.process import BrokenProcessPool

    from engine import chunk_map
    from engine.builtin_plugins.methods.vibecheck import ceiling

    if chunk_map.cores() < 2:
        pytest.skip("one core: nothing runs beside")
    assert chunk_map.run_beside(os.getpid).result(timeout=60) not in (None, os.getpid())
    with (shared_data / "arena" / "vibecheck_llama3-70b_vs_not_llama_creative_writing.csv").open(
            newline="", encoding="utf-8") as fh:
        rows = [(row["llama-3-70b-instruct"], row["not_llama"]) for row in csv.DictReader(fh)]
    train, test = rows[:60], rows[60:120]
    ceiling._started.append((object(), train, test, None))  # a fit an earlier run started and never read
    ceiling.start(train, test)
    ((_, _, _, fit),) = ceiling._started  # the earlier run's is let go
    assert fit.result(timeout=120) == ceiling.measured(train, test)
    assert ceiling.ceiling(train, test, None) == ceiling.measured(train, test) and not ceiling._started

    slow = chunk_map.run_beside(time.sleep, 60)
    assert slow is not None
    begun = time.perf_counter()
    chunk_map.stop_beside()
    with pytest.raises(BrokenProcessPool):  # its process was stopped, not waited for
        slow.result(timeout=10)
    assert time.perf_counter() - begun < 10

    monkeypatch.setattr(chunk_map, "cores", lambda: 1)
    ceiling.start(train, test)
    assert not ceiling._started and ceiling.ceiling(train, test, None) == ceiling.measured(train, test)


def test_gzip_members_read_back_as_one_stream_and_give_the_same_bytes_for_the_same_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file compressed a member at a time on background threads is one gzip file to `gzip`, `zcat` and pandas:
    members cut at 1 KiB here, so 200 records make many; the same writes give the same bytes, whether one thread
    compresses the members or four side by side; no writes give a valid empty file; an error on a thread reaches
    the caller."""
    import gzip
    import shutil
    import subprocess

    import pandas as pd

    from engine import gzip_members

    monkeypatch.setattr(gzip_members, "MEMBER_BYTES", 1024)
    records = [{"id": i, "text": "é" * (i % 500) + " 🎉"} for i in range(200)]
    paths = [tmp_path / "one.jsonl.gz", tmp_path / "two.jsonl.gz", tmp_path / "four-threads.jsonl.gz"]
    for path, threads in zip(paths, (1, 1, 4), strict=True):
        monkeypatch.setattr(gzip_members, "cores", lambda threads=threads: threads)
        with gzip_members.gzip_text(path) as fh:
            for record in records:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    data = paths[0].read_bytes()
    assert data == paths[1].read_bytes() == paths[2].read_bytes() and data.count(b"\x1f\x8b\x08") > 5  # many
    assert [json.loads(line) for line in gzip.decompress(data).decode("utf-8").splitlines()] == records
    assert pd.read_json(paths[0], lines=True)["id"].tolist() == list(range(200))
    if shutil.which("zcat"):
        assert subprocess.run(["zcat", str(paths[0])], capture_output=True, check=True).stdout.count(b"\n") == 200
    with gzip_members.GzipMembers(tmp_path / "empty.gz"):
        pass
    assert gzip.decompress((tmp_path / "empty.gz").read_bytes()) == b""

    def broken(data: bytes) -> bytes:
        raise OSError("No space left on device")

    monkeypatch.setattr(gzip_members, "compress", broken)
    with pytest.raises(OSError, match="No space left"), gzip_members.gzip_text(tmp_path / "full.gz") as fh:
        fh.write("x" * 5000)
