"""What a piece of work read, recorded while it runs rather than listed by hand, so that work kept from an earlier
command (`prepared_memo`'s compiled plan, `run_memo`'s finished run) is read back only while every input is as it
was: a new kind of input cannot be forgotten.

Recorded: every file opened (Python's `open` audit event; written files too, so a page deleted since counts) and
every folder listed (`os.listdir`/`os.scandir`, which a glob also calls), each by the digest of its bytes or of
its entries; for one thread's work, every environment variable it read, by value; and the code, as every
imported module's file by size and modification time. Files the import system and the user cache touch are left
out."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import threading
from collections.abc import Iterable, Iterator, MutableMapping
from pathlib import Path
from typing import Any

from engine import user_cache

_recordings: list[Reads] = []  # those in progress, innermost last (an audit hook cannot be removed, only idle)
_hooked: list[bool] = []


class Reads:
    """What one recording saw (`thread`: only that thread's reads; None: every thread's)."""

    def __init__(self, thread: int | None = None) -> None:
        self.thread = thread
        self.files: set[str] = set()
        self.listed: set[str] = set()  # folders whose entries were listed (a folder of logs, a glob's folder)
        self.env: set[str] = set()
        self.whole_env = False

    def consulted(self, also: Iterable[str | Path] = ()) -> dict[str, str | None]:
        """Each file and folder read (and `also`: files read outside Python, as a Parquet reader's), by its state
        now (`file_state`)."""
        skipped = (str(user_cache.folder()), "/proc/", "/sys/", "/dev/", sys.prefix, sys.base_prefix)
        imports = {os.path.abspath(entry or ".") for entry in sys.path}  # listed by the import system
        listed = {path for path in self.listed if path not in imports and not os.path.exists(f"{path}/__init__.py")}
        paths = self.files | listed | {os.path.abspath(p) for p in also}
        return {path: file_state(path) for path in sorted(paths)
                if not path.startswith(skipped) and "__pycache__" not in path and not path.endswith((".py", ".so"))}


class _WatchedEnviron(MutableMapping[str, str]):
    """`os.environ` as seen while recording: every read by the recording thread is noted, writes go through."""

    def __init__(self, real: MutableMapping[str, str], reads: Reads):
        self.real, self.reads = real, reads

    def _noted(self) -> bool:
        return threading.get_ident() == self.reads.thread

    def __getitem__(self, key: str) -> str:
        if self._noted():
            self.reads.env.add(key)
        return self.real[key]

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str) and self._noted():
            self.reads.env.add(key)
        return key in self.real

    def __setitem__(self, key: str, value: str) -> None:
        self.real[key] = value

    def __delitem__(self, key: str) -> None:
        del self.real[key]

    def __iter__(self) -> Iterator[str]:
        self.reads.whole_env |= self._noted()
        return iter(self.real)

    def __len__(self) -> int:
        self.reads.whole_env |= self._noted()
        return len(self.real)

    def copy(self) -> dict[str, str]:
        self.reads.whole_env |= self._noted()
        return dict(self.real)


def _on_audit(event: str, args: tuple[Any, ...]) -> None:
    if not _recordings or not args or not isinstance(args[0], str | bytes | os.PathLike):
        return
    thread = threading.get_ident()
    if event == "open":
        for reads in _recordings:
            if reads.thread in (None, thread):
                reads.files.add(os.path.abspath(os.fsdecode(args[0])))
    elif event in ("os.listdir", "os.scandir"):  # a file added to a folder that was read is a new input
        for reads in _recordings:
            if reads.thread in (None, thread):
                reads.listed.add(os.path.abspath(os.fsdecode(args[0])))


@contextlib.contextmanager
def recorded(this_thread: bool = False) -> Iterator[Reads]:
    """Record what the body reads: by every thread (a run's, whose pages are written beside its work), or with
    `this_thread` by this thread alone, with the environment variables it reads (`os.environ` is then watched:
    for a short piece of work in one thread, such as compiling a plan; a server or a cluster left running in the
    process reads files and the environment as it pleases, and those reads are not the work's inputs)."""
    reads = Reads(threading.get_ident() if this_thread else None)
    if not _hooked:
        sys.addaudithook(_on_audit)
        _hooked.append(True)
    real = os.environ
    _recordings.append(reads)
    if this_thread:  # a view over the same environment, not a new one (B003's worry): writes reach the real one
        os.environ = _WatchedEnviron(real, reads)  # type: ignore[assignment]  # noqa: B003
    try:
        yield reads
    finally:
        os.environ = real  # noqa: B003
        _recordings.remove(reads)


def code_stamps() -> list[list[Any]]:
    """Every imported module's file by size and modification time (`user_cache.stamp`): vibe's own, a plug-in's
    (installed, editable or beside the spec) and the libraries'. An upgrade or an edit of any of them changes a
    stamp."""
    stamps = []
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str):
            with contextlib.suppress(OSError):
                stamps.append(user_cache.stamp(Path(path)))
    return stamps


def file_state(path: str) -> str | None:
    """A file by the digest of its bytes; a folder by its entries' names (what listing it gave); None: neither."""
    try:
        if os.path.isfile(path):
            return user_cache.file_digest(Path(path))
        if os.path.isdir(path):
            return "folder:" + hashlib.sha256("\n".join(sorted(os.listdir(path))).encode()).hexdigest()
    except OSError:
        pass
    return None


def files_hold(files: dict[str, str | None]) -> bool:
    """Whether every file and folder `Reads.consulted` gave is as it was."""
    return all(file_state(path) == state for path, state in files.items())
