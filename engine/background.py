"""Work handed to one background thread, in order, a bounded number of pieces ahead of the caller.

What it is for: work that lets go of the interpreter lock (zlib compressing, SQLite storing) done while the
caller prepares the next piece, so that on two cores the two run side by side.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

IN_FLIGHT = 2  # pieces handed over and not yet done: what bounds the memory they hold


class Background:
    """Work handed to one thread in order, at most IN_FLIGHT pieces ahead of the caller; `close` waits for the
    last. An error raised on the thread is raised again in the caller, at its next hand-over or at close."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vibe-background")
        self._pending: deque[Future[Any]] = deque()

    def submit(self, work: Callable[..., Any], *args: Any) -> None:
        while len(self._pending) >= IN_FLIGHT:
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(work, *args))

    def close(self) -> None:
        try:
            while self._pending:
                self._pending.popleft().result()
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Background:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
