"""A compiled plan kept between commands: `vibe plan`, `vibe diff` and `vibe run` of a spec whose inputs did
not change read back the prepared run (spec, items, plan) instead of reading the data and compiling again.

What the plan was worked out from is recorded while it is worked out, not listed by hand, so a new input cannot
be forgotten:
- every file opened (Python's `open` audit event: the spec, its data, persona profiles, labels files) and every
  dataset's source files (a Parquet reader opens them outside Python), each by the digest of its bytes, and every
  folder listed (a folder of agent logs; `os.listdir`/`os.scandir`, which a glob also calls) by its entries;
- every environment variable read (a `${VAR}` in the spec, an API key whose absence leaves an optional judge
  out), by its value; a read of the whole environment records all of it;
- the code: the file of every module imported by then (vibe's, its plug-ins', the libraries'), by size and
  modification time, and the Python that ran it;
- what was written to stderr meanwhile, said again when the plan is read back.
A change to any of them is a miss and the plan is compiled afresh. Kept under the user cache (`user_cache`) as
a pickle beside a JSON record of those inputs, written only by this user's own commands; anything unreadable is
a miss. `VIBE_NO_PLAN_CACHE=1` turns it off.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import os
import pickle
import sys
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any

from engine import timings, user_cache

KIND = "prepared"
OFF = "VIBE_NO_PLAN_CACHE"
_recording: list[_Reads] = []  # the recording in progress, if any (the audit hook cannot be removed, only idle)
_hooked: list[bool] = []


class _Reads:
    def __init__(self) -> None:
        self.files: set[str] = set()
        self.listed: set[str] = set()  # folders whose entries were listed (a folder of logs, a glob's folder)
        self.env: set[str] = set()
        self.whole_env = False


class _WatchedEnviron(MutableMapping[str, str]):
    """`os.environ` as seen while a plan compiles: every read is noted, writes go through."""

    def __init__(self, real: MutableMapping[str, str], reads: _Reads):
        self.real, self.reads = real, reads

    def __getitem__(self, key: str) -> str:
        self.reads.env.add(key)
        return self.real[key]

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.reads.env.add(key)
        return key in self.real

    def __setitem__(self, key: str, value: str) -> None:
        self.real[key] = value

    def __delitem__(self, key: str) -> None:
        del self.real[key]

    def __iter__(self) -> Iterator[str]:
        self.reads.whole_env = True
        return iter(self.real)

    def __len__(self) -> int:
        self.reads.whole_env = True
        return len(self.real)

    def copy(self) -> dict[str, str]:
        self.reads.whole_env = True
        return dict(self.real)


def _on_audit(event: str, args: tuple[Any, ...]) -> None:
    if not _recording or not args or not isinstance(args[0], str | bytes | os.PathLike):
        return
    if event == "open":
        _recording[0].files.add(os.path.abspath(os.fsdecode(args[0])))
    elif event in ("os.listdir", "os.scandir"):  # a file added to a folder that was read is a new input
        _recording[0].listed.add(os.path.abspath(os.fsdecode(args[0])))


@contextlib.contextmanager
def _recorded() -> Iterator[_Reads]:
    reads = _Reads()
    if not _hooked:
        sys.addaudithook(_on_audit)
        _hooked.append(True)
    real = os.environ
    _recording[:] = [reads]
    # a view over the same environment, not a new one (B003's worry): writes reach the real one and children
    os.environ = _WatchedEnviron(real, reads)  # type: ignore[assignment]  # noqa: B003
    try:
        yield reads
    finally:
        os.environ = real  # noqa: B003
        _recording.clear()


def _code_stamps() -> list[list[Any]]:
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


def _file_state(path: str) -> str | None:
    """A file by the digest of its bytes; a folder by its entries' names (what listing it gave); None: neither."""
    try:
        if os.path.isfile(path):
            return user_cache.file_digest(Path(path))
        if os.path.isdir(path):
            return "folder:" + hashlib.sha256("\n".join(sorted(os.listdir(path))).encode()).hexdigest()
    except OSError:
        pass
    return None


def _env_state(reads: _Reads) -> dict[str, str | None]:
    names = set(os.environ) if reads.whole_env else reads.env
    return {name: os.environ.get(name) for name in sorted(names)}


def _unchanged(inputs: dict[str, Any]) -> bool:
    env = inputs["env"]
    if inputs.get("whole_env") and set(env) != set(os.environ):
        return False
    return (all(os.environ.get(name) == value for name, value in env.items()) and user_cache.stamps_hold(inputs["code"])
            and all(_file_state(path) == state for path, state in inputs["files"].items()))


def prepared(spec_path: str | Path, limit: int | None, compute: Callable[[], Any]) -> Any:
    """`compute()` (the prepared run of `spec_path`), or the one kept from an earlier command whose every input
    is as it was then."""
    if os.environ.get(OFF):
        return compute()
    name = user_cache.digest([os.path.abspath(spec_path), limit, sys.version, sys.executable])
    inputs = user_cache.read(KIND, name)
    if inputs is not None and _unchanged(inputs):
        try:
            with timings.phase("read the plan kept from the last command"):
                data = user_cache.read_bytes(KIND, f"{name}.pickle") or b""
                # another command may have kept a newer plan since these inputs were written: only the one they
                # describe is read
                kept = _loads(data) if hashlib.sha256(data).hexdigest() == inputs.get("pickle") else None
        except Exception:  # a kept plan that cannot be read back (a class renamed, a file cut short) is a miss
            kept = None
        if kept is not None:
            sys.stderr.write(inputs.get("said", ""))
            return kept
    said = io.StringIO()
    with _recorded() as reads, _tee(said):
        value = compute()
        sources = [str(p) for ds in getattr(getattr(value, "spec", None), "datasets", {}).values()
                   for p in getattr(ds.source, "paths", ())]
    skipped = (str(user_cache.folder()), "/proc/", "/sys/", "/dev/", sys.prefix, sys.base_prefix)
    imports = {os.path.abspath(entry or ".") for entry in sys.path}  # listed by the import system, not the data
    listed = {path for path in reads.listed if path not in imports and not os.path.exists(f"{path}/__init__.py")}
    consulted = reads.files | listed | {os.path.abspath(p) for p in sources}
    files = {path: _file_state(path) for path in sorted(consulted)
             if not path.startswith(skipped) and "__pycache__" not in path and not path.endswith((".py", ".so"))}
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):  # a value that cannot be kept is compiled each time
        return value
    user_cache.write_bytes(KIND, f"{name}.pickle", data)
    user_cache.write(KIND, name, {"env": _env_state(reads), "whole_env": reads.whole_env, "files": files,
                                  "code": _code_stamps(), "said": said.getvalue(),
                                  "pickle": hashlib.sha256(data).hexdigest()})
    return value


def _loads(data: bytes) -> Any:
    """The kept plan, unpickled with the cycle collector paused: tens of thousands of new objects would set it
    off over and over to find no garbage (half the time of reading a 10,000-task plan)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(data)
    finally:
        if paused:
            gc.enable()


class _Tee(io.TextIOBase):
    def __init__(self, real: Any, copy: io.StringIO):
        self.real, self.copy = real, copy

    def write(self, text: str) -> int:
        self.copy.write(text)
        return int(self.real.write(text))

    def flush(self) -> None:
        self.real.flush()


@contextlib.contextmanager
def _tee(copy: io.StringIO) -> Iterator[None]:
    with contextlib.redirect_stderr(_Tee(sys.stderr, copy)):
        yield
