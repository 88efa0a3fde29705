"""One `vibe run` writes a run folder at a time. Two runs of one spec started at once used to write the same
folder together, each overwriting the other's results and manifest; now the second is refused at once, naming
the process that holds the folder, before it does any work. The lock is the operating system's (an advisory
`flock` on a file in the folder, which publishing leaves out), so it is released when the holding process ends
however it ends; where the system has none (Windows), runs go on unlocked, as before."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_FILE = ".vibe-run.lock"


class RunLocked(Exception):
    """Another process is writing the run folder."""


@contextmanager
def holding(run_dir: Path) -> Iterator[None]:
    """Hold `run_dir` for this process while the block runs; `RunLocked` when another process holds it."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / LOCK_FILE).open("a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "a process that did not say which"
            raise RunLocked(f"{run_dir} is being written by another vibe run ({holder}): wait for it to finish, "
                            "or give this run another folder with --out DIR") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} on {socket.gethostname()}, since "
                     f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime())}\n")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
