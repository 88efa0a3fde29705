"""Where a command spends its time: named phases, timed as they run, printed by `vibe --timings` so that a slow
command says which part of it is slow. Recording costs a clock read per phase, so phases are always recorded;
only the report is asked for."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

_START = time.perf_counter()
_phases: list[tuple[str, float]] = []


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Time the block as `name` (a phase run twice is reported twice, in order)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        _phases.append((name, time.perf_counter() - start))


def report(out: TextIO) -> None:
    """Every phase so far with its seconds, and the whole process's since this module was imported (the
    interpreter's start and the imports before it are not counted)."""
    for name, seconds in _phases:
        print(f"timing: {seconds:7.3f} s  {name}", file=out)
    print(f"timing: {time.perf_counter() - _START:7.3f} s  in all, from the first import of vibe's code", file=out)
