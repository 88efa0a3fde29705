"""Work handed to background threads, a bounded number of pieces ahead of the caller.

What it is for: work that lets go of the interpreter lock (zlib compressing, SQLite storing) done while the
caller prepares the next piece, so that on two cores the two run side by side; with a thread per core, pieces
that stand alone (compressing separate parts of a file, or separate files) also run side by side.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class Background:
    """Work handed to `threads` threads, at most one piece more than there are threads ahead of the caller (what
    bounds the memory they hold); `close` waits for the last. With one thread pieces run in the order given;
    with more they run side by side, so each must stand alone, and what must happen in order is `then`: it is
    called with a piece's result in the caller's thread, in the order the pieces were given. An error raised on
    a thread is raised again in the caller, at its next hand-over or at close."""

    def __init__(self, threads: int = 1) -> None:
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="vibe-background")
        self._ahead = threads + 1
        self._pending: deque[tuple[Future[Any], Callable[[Any], object] | None]] = deque()

    def submit(self, work: Callable[..., Any], *args: Any, then: Callable[[Any], object] | None = None) -> None:
        while len(self._pending) >= self._ahead:
            self._finish_oldest()
        self._pending.append((self._pool.submit(work, *args), then))

    def _finish_oldest(self) -> None:
        future, then = self._pending.popleft()
        result = future.result()
        if then is not None:
            then(result)

    def close(self) -> None:
        try:
            while self._pending:
                self._finish_oldest()
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Background:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
