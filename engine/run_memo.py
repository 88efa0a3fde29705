"""A finished run kept between commands, as `make` keeps a target: `vibe run` into a folder whose last run
finished from the same inputs has nothing to do, says so and leaves the folder as it is, instead of reading the
cache, discovering, analysing and rendering the same pages again (a second of importing scipy and statsmodels
alone).

The same inputs are:
- the same command: spec, `--limit`, run folder, cache file, backend, whether pages are written;
- the same prepared run (`prepared_memo`'s kept plan: the spec, its data and everything the plan was compiled
  from), so a spec or data change runs;
- the same answers: every task of the run's final plan (after discovery) in the cache, each written when it was
  then (a task asked again, or a cache emptied, runs);
- the same code: every module imported by the end of the run, by size and modification time;
- every file the run opened, read or written (labels, persona profiles, templates, the pages themselves), and
  every folder it listed, by content (`recorded_reads`): a page deleted or edited since is written again.
What is kept is what the run said (its lines and exit status), not its figures: the folder holds those. Only a
run that finished every task is kept. Kept under the user cache (`user_cache`); anything unreadable is a miss.
`VIBE_NO_PLAN_CACHE=1`, which turns off the kept plan this stands on, turns it off too."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from engine import recorded_reads, user_cache

KIND = "runs"


def name(spec_path: str | Path, limit: int | None, run_dir: Path, cache_path: Path, flags: Sequence[Any]) -> str:
    """What names a kept run: the command's arguments (`flags`: those that change what a run writes)."""
    return user_cache.digest([os.path.abspath(spec_path), limit, os.path.abspath(run_dir),
                              os.path.abspath(cache_path), list(flags), sys.version, sys.executable])


def kept(key: str, plan: str | None, written_at: Callable[[list[str]], dict[str, float]]) -> dict[str, Any] | None:
    """What the run named `key` kept when it finished, if its every input is as it was: `plan`, the prepared
    run's digest (None: no kept plan, so nothing is kept either); `written_at(task ids)`, when the cache wrote
    each of those tasks (the kept run's final plan's)."""
    record = user_cache.read(KIND, key) if plan is not None else None
    try:
        if (record is None or record["plan"] != plan or not user_cache.stamps_hold(record["code"])
                or not recorded_reads.files_hold(record["files"])
                or _digest(written_at(record["tasks"])) != record["written"]):
            return None
        value: dict[str, Any] = record["kept"]
        return value
    except (KeyError, TypeError):  # a record of another shape: a miss
        return None


def keep(key: str, plan: str | None, reads: recorded_reads.Reads, task_ids: list[str],
         written: dict[str, float], value: dict[str, Any]) -> None:
    """Keep what a finished run says (`value`, JSON) under `key` with what it was made from (see the module's
    docstring); `reads`: what the run read and wrote, recorded while it ran; `task_ids`: its final plan's."""
    if plan is None:
        return
    user_cache.write(KIND, key, {"plan": plan, "code": recorded_reads.code_stamps(), "files": reads.consulted(),
                                 "tasks": task_ids, "written": _digest(written), "kept": value})


def _digest(written: dict[str, float]) -> str:
    return user_cache.digest(sorted(written.items()))
