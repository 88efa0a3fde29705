"""Where chunked work runs: on a cluster's actor pool while a run uses the Ray backend; otherwise encoder work
in this process (`map_chunks`, or on a thread per core with `map_threads`) and pure-Python work on this
machine's cores (`map_parts`).

The encoders (MiniLM sentence embeddings, BERTScore token embeddings) split their work into chunks that are
each one self-contained call of a module-level function, the same chunks on every backend. A text's vector
depends slightly (in the 7th digit) on which texts share its padded batch, so running the same chunks through
the same function is what makes a cluster's numbers identical to this process's. An encoder already uses every
core through torch, so its chunks stay in this process; pure-Python work (the measure pass's metrics) holds one
core in this process, so `map_parts` spreads it over worker processes, one per core.
"""

from __future__ import annotations

import atexit
import multiprocessing
import signal
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol, TypeVar

from engine.background import cores

T = TypeVar("T")
R = TypeVar("R")


class Mapper(Protocol):
    def __call__(self, fn: Callable[[Any], Any], chunks: Sequence[Any]) -> list[Any]: ...


_mapper: list[Mapper] = []


def use(mapper: Mapper | None) -> None:
    """Send chunked work to `mapper` from now on; None: run it in this process."""
    _mapper[:] = [mapper] if mapper is not None else []


def map_chunks(fn: Callable[[T], R], chunks: Sequence[T]) -> list[R]:
    """[fn(chunk) for chunk in chunks], wherever chunked work runs now; `fn` must be importable by name."""
    if not chunks:
        return []
    if _mapper:
        return _mapper[0](fn, list(chunks))
    return [fn(chunk) for chunk in chunks]


def map_threads(fn: Callable[[T], R], chunks: Sequence[T]) -> list[R]:
    """[fn(chunk) for chunk in chunks] for work that spends its time in native code that lets go of the GIL
    (an encoder's forward pass on one thread each): on the cluster while one is in use, else on a thread per
    core of this process, which holds the model once where worker processes would each load it. `fn` must be
    importable by name, as for `map_chunks`."""
    if not chunks:
        return []
    if _mapper:
        return _mapper[0](fn, list(chunks))
    if len(chunks) < 2 or cores() < 2:
        return [fn(chunk) for chunk in chunks]
    with ThreadPoolExecutor(min(cores(), len(chunks))) as pool:
        return list(pool.map(fn, chunks))


MIN_PARTS = 8  # fewer parts than this run in this process: starting workers would cost more than they save
_pool: list[ProcessPoolExecutor] = []


def map_parts(fn: Callable[[T], R], chunks: Sequence[T]) -> list[R]:
    """[fn(chunk) for chunk in chunks] for CPU-bound pure-Python work: on the cluster while one is in use, else
    over worker processes on this machine's cores (started on first use, kept until `release_workers`) when
    there are at least `MIN_PARTS` chunks and two cores, else here. `fn` must be importable by name and its
    chunks picklable. As with any use of `multiprocessing`, a script that runs the pipeline itself (rather than
    `vibe` or `python -m engine`) keeps its top-level code under `if __name__ == "__main__":`, since each
    worker imports the main module."""
    if not chunks:
        return []
    if _mapper:
        return _mapper[0](fn, list(chunks))
    if len(chunks) < MIN_PARTS or cores() < 2:
        return [fn(chunk) for chunk in chunks]
    try:
        return list(_local_pool().map(fn, chunks))
    except (OSError, NotImplementedError, BrokenProcessPool):  # no process semaphores here, or a worker died
        _pool.clear()
        return [fn(chunk) for chunk in chunks]


_beside: list[ProcessPoolExecutor] = []


def run_beside(fn: Callable[..., R], *args: Any) -> Future[R] | None:
    """`fn(*args)` on a process of its own while this one goes on: one-core work that a core left idle can do
    before its result is read. The process ends with the work (its memory goes with it). None where this
    machine has one core, a cluster runs the chunked work, or no process can start: the caller then computes
    the result when it needs it. `fn` must be importable by name and `args` picklable."""
    if _mapper or cores() < 2:
        return None
    try:
        if not _beside:
            _beside.append(ProcessPoolExecutor(1, mp_context=_context(), initializer=_leave_interrupts_to_the_run,
                                               max_tasks_per_child=1))
        return _beside[0].submit(fn, *args)
    except (OSError, NotImplementedError, BrokenProcessPool, RuntimeError):
        _beside.clear()
        return None


def stop_beside() -> None:
    """Work started beside that nobody read is cancelled and its process stopped, not waited for: a run that
    ends (or is interrupted) before it reads a result does not wait for it. (`_processes` is the executor's own
    table of its worker processes; it has no public way to stop a running one.)"""
    while _beside:
        pool = _beside.pop()
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)


atexit.register(stop_beside)


def release_workers() -> None:
    """Stop `map_parts`' worker processes (the next call starts them again): a pass that is over hands their
    memory back instead of keeping it through the phases that follow."""
    if _pool:
        _pool.pop().shutdown()


def in_worker() -> bool:
    """Whether this process is one of `map_parts`' workers (a child of the run's process)."""
    return multiprocessing.parent_process() is not None


def _local_pool() -> ProcessPoolExecutor:
    if not _pool:
        _pool.append(ProcessPoolExecutor(cores(), mp_context=_context(), initializer=_leave_interrupts_to_the_run))
        atexit.register(_pool[0].shutdown)
    return _pool[0]


def _context() -> Any:
    """A worker starts from a clean process, not a fork of this one and its threads (SQLite, asyncio); the
    server imports the measure code once, for every worker it forks."""
    context = multiprocessing.get_context("forkserver" if sys.platform != "win32" else "spawn")
    if sys.platform != "win32":
        context.set_forkserver_preload(["engine.execute.measures"])
    return context


def _leave_interrupts_to_the_run() -> None:
    """A worker ignores Ctrl-C, which the terminal sends its whole process group: the run's process stops and
    cancels what is queued; a worker that died of it would break the pool instead, mid-part."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
