"""Stopping a run: Ctrl-C and SIGTERM end it within seconds in every phase, with what finished kept.

`asyncio.run` turns the first Ctrl-C into a cancellation that its coroutine sees only at the next `await`, so
synchronous work on the event loop's thread (a measure pass: minutes at scale) ran to its end before the run
stopped. And a KeyboardInterrupt raised at an arbitrary instruction can land inside a library's bookkeeping
(anyio's cancel scopes) and end in a traceback rather than a stop."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt at once inside (Python's own handler), wherever the work stands."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def terminate_as_interrupt(signum: int, frame: object) -> None:
    """The SIGTERM handler (a cancelled CI job, `kill`): stop as Ctrl-C does, through whatever handles Ctrl-C
    at that moment, so that asyncio cancels its task cleanly."""
    if not callable(signal.getsignal(signal.SIGINT)):  # Ctrl-C ignored (a background job): stop at once
        raise KeyboardInterrupt
    signal.raise_signal(signal.SIGINT)
