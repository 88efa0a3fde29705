"""What the everyday commands work out from files that rarely change, kept on disk under a digest of what it was worked
out from: the spec schema (built by importing every plug-in), the checks `vibe validate` makes of a data file (built
by parsing all of it) and the digest of the code a cached piece of derived work depends on (built by parsing every
module it imports). A second `vibe validate` of unchanged data then hashes the files instead of parsing them. Values
are JSON (bytes where JSON cannot hold them: `engine.prepared_memo`'s kept plans); the folder is
`$XDG_CACHE_HOME/vibe` (else `~/.cache/vibe`), and a folder that cannot be written only means the work is done every
time. Each kind keeps its most recently used files only (`KEEP_FILES`, `KEEP_BYTES`): every edit of the code, every
spec in a temporary folder adds one, and a cache nobody prunes grows without end."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

KEEP_FILES = 256  # per kind: enough for every spec and version a person works on at once
KEEP_BYTES = 512 << 20  # per kind: a kept plan of 100,000 tasks is some 30 MB


def folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "vibe"


def digest(inputs: Any) -> str:
    """A short digest of JSON-able `inputs` (anything else by its `str`)."""
    return hashlib.sha256(json.dumps(inputs, default=str, sort_keys=True).encode("utf-8")).hexdigest()[:24]


def file_digest(path: Path) -> str:
    """The digest of a file's bytes, read in blocks (hashing is several times faster than parsing)."""
    sha = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def remembered(kind: str, inputs: Any, compute: Callable[[], Any]) -> Any:
    """`compute()`'s JSON value, or the one kept for the same `kind` and `inputs`."""
    name = digest(inputs)
    kept = read(kind, name)
    if kept is not None:
        return kept
    value = compute()
    write(kind, name, value)
    return value


def read(kind: str, name: str) -> Any:
    """The value kept as `name` (a digest, or a name the caller checks itself), None when there is none."""
    try:
        return json.loads(_used(folder() / kind / f"{name}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write(kind: str, name: str, value: Any) -> None:
    write_bytes(kind, f"{name}.json", json.dumps(value).encode("utf-8"))


def read_bytes(kind: str, file: str) -> bytes | None:
    """A file kept with `write_bytes` (a value JSON cannot hold), None when there is none."""
    try:
        return _used(folder() / kind / file).read_bytes()
    except OSError:
        return None


def write_bytes(kind: str, file: str, data: bytes) -> None:
    kept = folder() / kind / file
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        partial = kept.with_name(f"{kept.name}.{os.getpid()}.partial")
        partial.write_bytes(data)
        partial.replace(kept)  # whole or absent: a reader never sees half a value
        _prune(kept.parent)
    except OSError:
        pass


def _used(path: Path) -> Path:
    """`path`, its modification time set to now: what was read last is pruned last."""
    os.utime(path)
    return path


def _prune(kind: Path) -> None:
    """Remove a kind's least recently used files beyond `KEEP_FILES` or `KEEP_BYTES` (a value whose files are
    partly removed is a miss, as any unreadable one)."""
    entries = []
    for entry in os.scandir(kind):
        with contextlib.suppress(OSError):
            stat = entry.stat()
            entries.append((stat.st_mtime_ns, stat.st_size, entry.path))
    entries.sort(reverse=True)
    total = 0
    for n, (_, size, path) in enumerate(entries):
        total += size
        if n >= KEEP_FILES or total > KEEP_BYTES:
            with contextlib.suppress(OSError):
                os.remove(path)


def stamp(path: Path) -> list[Any]:
    """A file's path, size and modification time: what stands for its bytes where reading them costs too much
    (a module's source, as for `make`)."""
    stat = path.stat()
    return [str(path), stat.st_size, stat.st_mtime_ns]


def stamps_hold(stamps: list[list[Any]]) -> bool:
    """Whether every file stamped with `stamp` still has the size and time it had (a file gone: no)."""
    try:
        return all(stamp(Path(kept[0])) == kept for kept in stamps)
    except (OSError, TypeError, IndexError):
        return False
