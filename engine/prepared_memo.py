"""A compiled plan kept between commands: `vibe plan`, `vibe diff` and `vibe run` of a spec whose inputs did
not change read back the prepared run (spec, items, plan) instead of reading the data and compiling again.

What the plan was worked out from is recorded while it is worked out (`recorded_reads`), not listed by hand, so
a new input cannot be forgotten:
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
a miss. What a command shows of the plan (its outline) is kept beside it as a view (`view`), read back without
the prepared run. `VIBE_NO_PLAN_CACHE=1` turns it off.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import os
import pickle
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from engine import recorded_reads, timings, user_cache

KIND = "prepared"
OFF = "VIBE_NO_PLAN_CACHE"
_returned: dict[str, str] = {}  # memo name -> the digest of the kept plan this process read or wrote under it


def _env_state(reads: recorded_reads.Reads) -> dict[str, str | None]:
    names = set(os.environ) if reads.whole_env else reads.env
    return {name: os.environ.get(name) for name in sorted(names)}


def _unchanged(inputs: dict[str, Any]) -> bool:
    env = inputs["env"]
    if inputs.get("whole_env") and set(env) != set(os.environ):
        return False
    return (all(os.environ.get(name) == value for name, value in env.items()) and user_cache.stamps_hold(inputs["code"])
            and recorded_reads.files_hold(inputs["files"]))


def prepared(spec_path: str | Path, limit: int | None, compute: Callable[[], Any]) -> Any:
    """`compute()` (the prepared run of `spec_path`), or the one kept from an earlier command whose every input
    is as it was then."""
    if os.environ.get(OFF):
        return compute()
    name = _name(spec_path, limit)
    inputs = user_cache.read(KIND, name)
    if inputs is not None and _unchanged(inputs):
        with timings.phase("read the plan kept from the last command"):
            kept = _read_pickle(f"{name}.pickle", inputs.get("pickle"))
        if kept is not None:
            sys.stderr.write(inputs.get("said", ""))
            _returned[name] = inputs["pickle"]
            return kept
    said = io.StringIO()
    with recorded_reads.recorded(this_thread=True) as reads, _tee(said):
        value = compute()
        sources = [str(p) for ds in getattr(getattr(value, "spec", None), "datasets", {}).values()
                   for p in getattr(ds.source, "paths", ())]
    files = reads.consulted(sources)
    digest = _write_pickle(f"{name}.pickle", value)
    if digest is None:  # a value that cannot be kept is compiled each time
        return value
    _returned[name] = digest
    user_cache.write(KIND, name, {"env": _env_state(reads), "whole_env": reads.whole_env, "files": files,
                                  "code": recorded_reads.code_stamps(), "said": said.getvalue(), "pickle": digest})
    return value


def view(spec_path: str | Path, limit: int | None, compute: Callable[[], Any], of: Callable[[Any], Any],
         view_name: str) -> Any:
    """`of(prepared run)`, kept beside the prepared run it was worked out from and read back on its own while
    that run's inputs, and the code `of` ran, are as they were: `vibe plan` and `vibe diff` read a plan's outline
    (`plan_outline`) without the prepared run and the modules its classes live in."""
    if os.environ.get(OFF):
        return of(compute())
    name = _name(spec_path, limit)
    inputs = user_cache.read(KIND, name)
    kept = inputs.get("views", {}).get(view_name) if isinstance(inputs, dict) else None
    if inputs is not None and kept is not None and _unchanged(inputs) and user_cache.stamps_hold(kept["code"]):
        with timings.phase("read the plan kept from the last command"):
            value = _read_pickle(f"{name}.{view_name}.pickle", kept["pickle"])
        if value is not None:
            sys.stderr.write(inputs.get("said", ""))
            return value
    value = of(prepared(spec_path, limit, compute))
    inputs = user_cache.read(KIND, name)  # the record `prepared` just read or wrote, if it kept the run
    if isinstance(inputs, dict) and inputs.get("pickle") == _returned.get(name):
        digest = _write_pickle(f"{name}.{view_name}.pickle", value)
        if digest is not None:
            inputs.setdefault("views", {})[view_name] = {"pickle": digest, "code": recorded_reads.code_stamps()}
            user_cache.write(KIND, name, inputs)
    return value


def _name(spec_path: str | Path, limit: int | None) -> str:
    return user_cache.digest([os.path.abspath(spec_path), limit, sys.version, sys.executable])


def digest(spec_path: str | Path, limit: int | None) -> str | None:
    """The digest of the prepared run `prepared` returned in this process for these arguments (None: none was
    kept): what a later piece of work kept on top of it (`run_memo`) names it by."""
    return _returned.get(_name(spec_path, limit))


def _read_pickle(file: str, digest: str | None) -> Any:
    """The value pickled in `file` if its bytes are the ones `digest` names (another command may have kept a
    newer one since the record was written: only the one it describes is read), else None; also None where it
    cannot be read back (a class renamed, a file cut short). Unpickled with the cycle collector paused: tens of
    thousands of new objects would set it off over and over to find no garbage (half the time of reading a
    10,000-task plan)."""
    data = user_cache.read_bytes(KIND, file) or b""
    if hashlib.sha256(data).hexdigest() != digest:
        return None
    paused = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(data)
    except Exception:
        return None
    finally:
        if paused:
            gc.enable()


def _write_pickle(file: str, value: Any) -> str | None:
    """Keep `value` pickled in `file`; the digest of its bytes, or None where it cannot be pickled."""
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None
    user_cache.write_bytes(KIND, file, data)
    return hashlib.sha256(data).hexdigest()


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
