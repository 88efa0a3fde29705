"""Live progress per stage (done/total, rate, ETA, tokens and dollars so far) with rich, and one line per
phase of a run (planning, execution, discovery, analysis, the report) with its time: a spinner while it runs
on a terminal, a log line when it ends, on a terminal or not."""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from engine import timings
from engine.records import Result, Task

if TYPE_CHECKING:
    from engine.execute.ray_generation import Replica


class RunProgress:
    """A bar per stage (in `order`, the plan's) with tasks to run."""

    def __init__(self, tasks: list[Task], order: tuple[str, ...], quiet: bool = False):
        console = Console(stderr=True)
        self.enabled = not quiet and console.is_terminal
        self.tokens = 0
        self.cost = 0.0
        self._progress = Progress(
            TextColumn("{task.description:<16}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("[progress.data.speed]{task.fields[rate]}"),
            TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[spend]}"),
            console=console, disable=not self.enabled, transient=False,
        )
        counts = Counter(t.stage for t in tasks)
        self._ids: dict[str, TaskID] = {
            stage: self._progress.add_task(stage, total=counts[stage], rate="", spend="")
            for stage in order if counts[stage]}
        # without a terminal: one line per stage when its last task ends, with its count and time
        self._log = None if quiet or self.enabled else console
        self._total, self._left = dict(counts), dict(counts)
        self._started = time.perf_counter()
        self._replica_rows: dict[str, TaskID] = {}
        self._announced: set[str] = set()  # without a terminal: replicas whose start has been logged
        self._batch_states: dict[str, str] = {}  # without a terminal: each batch's last logged state
        self._measured = 0  # answers the measure pass has measured
        self._measure_started = self._started
        self._last_line: dict[str, float] = {}  # without a terminal: when each stage last printed a line

    def __enter__(self) -> RunProgress:
        self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.__exit__(None, None, None)

    def replica(self, replica: Replica) -> None:
        """A model replica on the Ray backend came up, finished a batch or was lost: one row per replica with
        its task count and where it runs (without a terminal, a line when it comes up or is lost)."""
        state = "lost" if replica.lost else f"on {replica.where}"
        if self._log is not None:
            if replica.label not in self._announced or replica.lost:
                self._log.print(f"ray: {replica.label} {state}", highlight=False)
                self._announced.add(replica.label)
            return
        if not self.enabled:
            return
        row = self._replica_rows.get(replica.label)
        if row is None:
            row = self._replica_rows[replica.label] = self._progress.add_task(
                f"  {replica.label}", total=None, rate="", spend="")
        self._progress.update(row, completed=replica.tasks, spend=state)

    def batch(self, label: str, state: str) -> None:
        """A provider batch was submitted or polled: one row per batch with its state and counts (without a
        terminal, a line whenever its state changes)."""
        if self._log is not None:
            if self._batch_states.get(label) != state:
                self._log.print(f"batch {label}: {state}", highlight=False)
            self._batch_states[label] = state
            return
        if not self.enabled:
            return
        row = self._replica_rows.get(label)
        if row is None:
            row = self._replica_rows[label] = self._progress.add_task(f"  batch {label[-12:]}", total=None, rate="",
                                                                      spend="")
        self._progress.update(row, spend=state)

    def measured(self, answers: int, total: int) -> None:
        """The measure pass measured `answers` more of the `total` it lacks (first called with 0): a row with its
        rate on a terminal; without one, a line at each tenth with answers per second (a large pass takes
        minutes)."""
        if answers == 0:
            self._measure_started, self._measured = time.perf_counter(), 0
        before, self._measured = self._measured, self._measured + answers
        if self._log is not None:
            if answers and (10 * self._measured // total > 10 * before // total):
                rate = self._measured / max(time.perf_counter() - self._measure_started, 1e-9)
                self._log.print(f"measure: {self._measured:,}/{total:,} answer values, {rate:,.0f}/s",
                                highlight=False)
            return
        if not self.enabled or not total:
            return
        row = self._replica_rows.get("measure")
        if row is None:
            row = self._replica_rows["measure"] = self._progress.add_task("measure", total=total, rate="", spend="")
        self._progress.update(row, total=total, completed=self._measured)
        speed = self._progress.tasks[row].speed
        self._progress.update(row, rate=f"{speed:,.0f}/s" if speed else "")

    def _log_task(self, log: Console, stage: str) -> None:
        """Without a terminal (CI, a notebook, `| tee`): a line when a stage ends, and while it runs at each
        tenth of its tasks or after 30 s without a line, whichever comes first."""
        total, done, now = self._total[stage], self._total[stage] - self._left[stage], time.perf_counter()
        elapsed = now - self._started
        if done == total:
            log.print(f"{stage}: {total:,} tasks done after {elapsed:.1f} s", highlight=False)
        elif 10 * done // total > 10 * (done - 1) // total or now - self._last_line.get(stage, self._started) >= 30:
            log.print(f"{stage}: {done:,}/{total:,} tasks after {elapsed:.1f} s", highlight=False)
        else:
            return
        self._last_line[stage] = now

    def advance(self, task: Task, result: Result | None) -> None:
        if result is not None:
            self.tokens += result.input_tokens + result.output_tokens
            self.cost += result.cost
        self._left[task.stage] -= 1
        if self._log is not None:
            self._log_task(self._log, task.stage)
        if not self.enabled:
            return
        task_id = self._ids[task.stage]
        self._progress.advance(task_id)
        speed = self._progress.tasks[task_id].speed
        self._progress.update(task_id, rate=f"{speed:.1f}/s" if speed else "",
                              spend=f"{self.tokens:,} tok ${self.cost:.4f}")


@dataclass
class PhaseEnd:
    """How a phase ended, as its block says: `interrupted` where it stopped early without raising."""

    interrupted: bool = False


class Phases:
    """Times the phases of a run for the manifest and says each one's end on stderr (unless quiet)."""

    def __init__(self, quiet: bool = False):
        self.console = Console(stderr=True)
        self.quiet = quiet
        self.started = datetime.now(UTC)
        self.seconds: dict[str, float] = {}
        self.peak_mb: dict[str, float] = {}  # the process's peak RSS when each phase ended (it only grows)

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[PhaseEnd]:
        """Time the block as phase `name` and say how it ended; the block marks the `PhaseEnd` it is given
        interrupted where it stopped early on its own (the execute pass catches Ctrl-C to keep its work)."""
        start = time.perf_counter()
        end = PhaseEnd()
        status = (self.console.status(f"{name} …") if self.console.is_terminal and not self.quiet
                  else contextlib.nullcontext())
        if not self.quiet and not self.console.is_terminal:  # piped output says what is starting, too
            self.console.print(f"{name} …", highlight=False)
        try:
            with status, timings.phase(f"run: {name}"):  # `vibe --timings run` lists the run's phases too
                yield end
        except KeyboardInterrupt:  # said even when quiet: the last line must not read as if the run were done
            self._interrupted(name, start)
            raise
        if end.interrupted:
            self._interrupted(name, start)
            return
        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
        self.peak_mb[name] = peak_rss_mb()
        release_freed_memory()
        if not self.quiet:
            self.console.print(f"{name}: done in {self.seconds[name]:.1f} s", highlight=False)

    def _interrupted(self, name: str, start: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
        self.console.print(f"{name}: interrupted after {time.perf_counter() - start:.1f} s; what finished before it "
                           "is kept in the cache, and the same command picks up from there", highlight=False)

    def record(self) -> dict[str, object]:
        """started_at, finished_at, wall_s of the whole run and seconds per phase."""
        now = datetime.now(UTC)
        return {"started_at": self.started.isoformat(timespec="seconds"),
                "finished_at": now.isoformat(timespec="seconds"),
                "wall_s": round((now - self.started).total_seconds(), 3),
                "phases_s": {name: round(s, 3) for name, s in self.seconds.items()},
                "peak_rss_mb": {name: round(mb, 1) for name, mb in self.peak_mb.items()}}


def release_freed_memory() -> None:
    """Hand the heap a phase freed back to the system. A phase's transient structures (discovery's index, the
    analysis' per-pair records) are freed when it ends, but glibc keeps freed heap pages for reuse, so without
    this the next phase starts from the last one's high-water mark instead of from what is still in use.

    What outlives a phase (the items, the plan, the results) is then frozen out of the cyclic collector's
    view: each full collection walks every object it tracks, and a large run holds millions that later phases
    only read. They are still freed when nothing refers to them; only a reference cycle among them would wait
    for `thaw`, which the run calls when it ends."""
    import ctypes
    import gc
    import sys

    gc.collect()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):  # not glibc (musl, say): no malloc_trim to call
            ctypes.CDLL("libc.so.6").malloc_trim(0)
    gc.freeze()


def thaw() -> None:
    """Give the objects `release_freed_memory` froze back to the cyclic collector (at the end of a run)."""
    import gc

    gc.unfreeze()


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MiB. On Linux the kernel's high-water mark of this program
    (VmHWM): getrusage's ru_maxrss also keeps the peak of the process before it exec'd, which for a run started
    by a large parent (a test worker, a notebook) is the parent's size, not the run's. Elsewhere ru_maxrss
    (macOS reports bytes)."""
    import resource
    import sys

    try:
        with open("/proc/self/status", encoding="ascii") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration, IndexError, ValueError):
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024
