"""The stages wired together: spec → items → plan, the part every command shares."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from engine import timings

if TYPE_CHECKING:  # a plan read back from the last command needs none of the modules that compile one
    from engine.records import Prepared
    from engine.spec.model import Spec

T = TypeVar("T")


def prepare(spec_path: str | Path, limit: int | None = None) -> Prepared:
    """The spec, its datasets' items and the plan. `limit`: a seeded sample of at most that many prompts per
    dataset (each dataset's own `seed`), for a quick trial; the tasks of the prompts kept are the same tasks,
    with the same hashes, as in the full run. Read back instead where an earlier command compiled it from the
    same files, environment and code (`prepared_memo`)."""
    from engine import prepared_memo

    found: Prepared = prepared_memo.prepared(spec_path, limit, lambda: _compiled(spec_path, limit))
    return found


def prepared_view(spec_path: str | Path, limit: int | None, of: Callable[[Prepared], T], name: str) -> T:
    """`of(prepare(spec_path, limit))`, kept beside the kept plan under `name` and read back on its own
    (`prepared_memo.view`): what a command shows of a plan, without the plan."""
    from engine import prepared_memo

    found: T = prepared_memo.view(spec_path, limit, lambda: _compiled(spec_path, limit), of, name)
    return found


def _compiled(spec_path: str | Path, limit: int | None) -> Prepared:
    from engine.datasets import load_items
    from engine.planner import compile_plan
    from engine.records import Prepared
    from engine.spec.load import load_spec

    with timings.phase("read and check the spec"):
        spec = load_spec(spec_path)
    if limit is not None:
        spec = replace(spec, datasets={name: replace(ds, limit=limit if ds.limit is None else min(ds.limit, limit))
                                       for name, ds in spec.datasets.items()})
    used = {a.dataset for a in spec.analyses.values()}
    excluded: dict[str, list[str]] = {name: [] for name in used}
    redacted: dict[str, Counter[str]] = {name: Counter() for name in used}
    with timings.phase("read the data"):
        items = {name: load_items(ds, frozenset(spec.models), excluded[name], redacted[name])
                 for name, ds in spec.datasets.items() if name in used}
    with timings.phase("compile the plan"):
        plan = compile_plan(spec, items)
    return Prepared(spec, items, plan, {name: why for name, why in excluded.items() if why},
                    {name: dict(kinds) for name, kinds in redacted.items() if kinds})


def say_excluded(excluded: dict[str, list[str]]) -> None:
    """What the datasets' readers left out (dataset -> why, row by row), on stderr: the first few reasons and how
    many in all."""
    for name, why in excluded.items():
        print(f"dataset {name!r}: {len(why)} left out: " + "; ".join(why[:5]) + (" …" if len(why) > 5 else ""),
              file=sys.stderr)


@dataclass(frozen=True)
class Started:
    """A run whose plan is settled and whose folder is chosen (`start_run`): what `finish_run` runs."""

    prepared: Prepared
    execution: Any  # the spec's `execution:` with the command line's overrides (`execute.backend.settle`)
    run_dir: Path
    phases: Any  # `execute.progress.Phases`: the run's phase times, the plan's among them


def run_spec(spec_path: str | Path, run_dir: Path | None, cache_path: Path, *, quiet: bool = False,
             report: bool = True, backend: str | None = None, address: str | None = None,
             limit: int | None = None) -> tuple[Any, Any, Path]:
    """spec → plan → execute → (discover → plan → execute) → analyze → report. Returns the execution
    summary, the analysis results and the run directory. The manifest is finished last, with the whole run's
    start, end, task counts and the time of every phase. `backend` and `address` override the spec's
    `execution:`; a backend that cannot run raises ClusterError before any task runs."""
    started = start_run(spec_path, run_dir, quiet=quiet, backend=backend, address=address, limit=limit)
    summary, results, _ = finish_run(started, cache_path, quiet=quiet, report=report)
    return summary, results, started.run_dir


def start_run(spec_path: str | Path, run_dir: Path | None, *, quiet: bool = False, backend: str | None = None,
              address: str | None = None, limit: int | None = None,
              check: Callable[[Prepared], None] = lambda prepared: None) -> Started:
    """The first phase of `run_spec`: the plan, `check`ed (`vibe run` refuses one it cannot run here) and
    settled, and the run folder."""
    from engine.execute.backend import settle
    from engine.execute.progress import Phases, thaw

    phases = Phases(quiet=quiet)
    try:
        with phases.phase("plan"):
            prepared = prepare(spec_path, limit)
            check(prepared)
            execution = settle(prepared, backend, address)
        say_excluded(prepared.excluded)  # data left out is said even with --quiet, which hides progress only
        if run_dir is None:
            run_dir = default_run_dir(prepared.spec, limit)
            refuse_another_specs_folder(run_dir, prepared.spec)
    except BaseException:
        thaw()  # what the phase froze, in a process that may go on (tests, a notebook)
        raise
    return Started(prepared, execution, run_dir, phases)


def finish_run(started: Started, cache_path: Path, *, quiet: bool = False,
               report: bool = True) -> tuple[Any, Any, Prepared]:
    """The rest of `run_spec`: the summary, the results and the prepared run as it ended (with the vibes
    discovery added)."""
    from engine.execute.progress import thaw

    try:
        return _run(started.prepared, started.execution, started.run_dir, cache_path, started.phases, quiet, report)
    finally:
        thaw()  # what the phases froze, in a process that may go on (tests, a notebook)


def _run(prepared: Prepared, execution: Any, run_dir: Path, cache_path: Path, phases: Any, quiet: bool,
         report: bool) -> tuple[Any, Any, Prepared]:
    """`run_spec` once its plan is settled and its folder chosen: the summary, the results and the prepared run
    as it ended (with the vibes discovery added)."""
    from engine import derived
    from engine.analyze.run_results import analyze_run, unanalyzed
    from engine.chunk_map import stop_beside
    from engine.discover.stage import discover_vibes, with_vibes, write_discovered
    from engine.execute.backend import joined
    from engine.execute.cache import Cache
    from engine.execute.measures import finished_results
    from engine.execute.run import execute
    from engine.registry import get_method
    from engine.run_lock import holding

    origins: dict[str, str] = {}
    with (holding(run_dir), joined(prepared, execution), Cache(cache_path) as cache,
          derived.kept_in(cache) as counted):  # derived work computed and read back, by kind
        try:
            wants_discovery = prepared.spec.discovery is not None and any(
                get_method(a.method).discovers for a in prepared.spec.analyses.values())
            with phases.phase("execute") as ended:  # with discovery ahead, the second pass writes the folder
                summary = execute(prepared, run_dir, cache, quiet=quiet, write=not wants_discovery,
                                  execution=execution)
                ended.interrupted = summary.interrupted
            if wants_discovery and not summary.interrupted:
                try:
                    with phases.phase("discover"):
                        for analysis in prepared.spec.analyses.values():  # beside discovery, on an idle core
                            method = get_method(analysis.method)
                            if method.discovers:
                                method.start_ahead(prepared, analysis, cache)
                        found, origins = discover_vibes(prepared, cache)
                        write_discovered(found, origins, run_dir)
                        prepared = with_vibes(prepared, found)
                except KeyboardInterrupt:  # still leave a run directory that says what is done, and that it stopped
                    execute(prepared, run_dir, cache, quiet=True, stages=(), execution=execution)
                    _update_manifest(run_dir, lambda manifest: manifest.update(status="interrupted"))
                    finish_manifest(run_dir, phases, summary, counted)
                    raise
                first = summary
                with phases.phase("execute discovered") as ended:
                    summary = execute(prepared, run_dir, cache, quiet=quiet, execution=execution)
                    ended.interrupted = summary.interrupted
                summary.ran_now += first.ran_now
                summary.measured.add(first.measured)
                summary.free_text_fallbacks = {**first.free_text_fallbacks, **summary.free_text_fallbacks}
            if summary.interrupted:  # Ctrl-C: no analysis of what happened to finish; it stays cached
                results = unanalyzed(prepared, run_dir)
            else:
                with phases.phase("analyze"):
                    finished = finished_results(prepared, cache, summary.measures)
                    finish_manifest(run_dir, phases, summary, counted)
                    if prepared.excluded:  # what the readers left out, beside the counts
                        _update_manifest(run_dir, lambda manifest: manifest.update(excluded=prepared.excluded))
                    if prepared.redacted:
                        _update_manifest(run_dir, lambda manifest: manifest.update(redacted=prepared.redacted))
                    results = analyze_run(prepared, finished, run_dir, origins)
            if report and not summary.interrupted:
                from engine.report.render import render_report

                with phases.phase("report"):
                    render_report(results, prepared, run_dir, finished)
        finally:
            stop_beside()  # work started ahead that the run did not come to read
    finish_manifest(run_dir, phases, summary, counted)
    return summary, results, prepared


def _update_manifest(run_dir: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Apply `change` to the manifest the execute pass wrote (nothing to do when it wrote none)."""
    import json

    path = run_dir / "manifest.json"
    if path.exists():
        manifest = json.loads(path.read_text(encoding="utf-8"))
        change(manifest)
        path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def finish_manifest(run_dir: Path, phases: Any, summary: Any, counted: dict[str, dict[str, int]]) -> None:
    """The whole run's times and counts over what each execute pass wrote (a pass sees only its own part),
    and how much derived work was computed this run or read back from the cache."""
    def change(manifest: dict[str, Any]) -> None:
        manifest.update(phases.record())
        manifest["tasks"] = {**manifest.get("tasks", {}), "ran_now": summary.ran_now}
        if "measured" in manifest:  # the values both execute passes measured, not the last pass's alone
            manifest["measured"].update(computed=summary.measured.computed, ran_on=summary.measured.ran_on,
                                        seconds=round(summary.measured.seconds, 3))
        manifest["free_text_fallbacks"] = summary.free_text_fallbacks
        manifest["derived"] = counted

    _update_manifest(run_dir, change)


def report_run(run_dir: Path, cache_path: Path | None = None) -> Path:
    """Re-render a run's leaderboard from the run folder's own copies of its spec and prompts (never the spec
    file or data as they are now), its discovered vibes, and the cache; from the folder's own results where the
    cache is gone."""
    import contextlib
    import json

    from engine.analyze.run_results import analyze_run
    from engine.discover.stage import read_discovered, with_vibes
    from engine.execute.cache import Cache
    from engine.execute.measures import finished_results
    from engine.execute.snapshot import prepared_from, read_results
    from engine.report.render import render_report

    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    # what the run asked, as it asked it: the spec and data may have changed since, and a report of a finished
    # run must not become a report of something else
    prepared = prepared_from(run_dir) or prepare(manifest["spec_path"])  # the latter: folders that keep no copy
    found, origins = read_discovered(run_dir)
    if found:
        prepared = with_vibes(prepared, found)
    cache = cache_path or Path(manifest.get("cache_path") or default_cache_path())
    with Cache(cache) if cache.is_file() else contextlib.nullcontext() as opened:
        finished = (finished_results(prepared, opened) if opened is not None
                    else read_results(run_dir, prepared.plan))
        return render_report(analyze_run(prepared, finished, run_dir, origins), prepared, run_dir, finished)


def refuse_another_specs_folder(run_dir: Path, spec: Spec) -> None:
    """Two spec files with the same `name:` share a default run folder: the second would overwrite the first's
    results without a word. Refused before any work, naming both files and the ways out."""
    import json

    from engine.plan import PlanError

    manifest = run_dir / "manifest.json"
    if not manifest.is_file():
        return
    try:
        other = json.loads(manifest.read_text(encoding="utf-8")).get("spec_path")
    except (ValueError, OSError):
        return
    if other and Path(other).resolve() != Path(spec.path).resolve():
        raise PlanError(f"{run_dir} holds the run of {other}, another spec named {spec.name!r}: running "
                        f"{spec.path} there would overwrite its results. Give one of them another `name:`, pass "
                        f"--out DIR, or delete {run_dir} if that run is no longer wanted")


def default_run_dir(spec: Spec, limit: int | None = None) -> Path:
    """runs/<spec name>, or the spec's report.output_dir; a --limit trial gets a folder of its own, so it
    never overwrites the full run's pages."""
    folder = Path(spec.report.get("output_dir") or Path("runs") / spec.name)
    return folder if limit is None else folder.with_name(f"{folder.name}-limit{limit}")


def default_cache_path() -> Path:
    """One cache for every spec of a project: a generation shared by two specs is made once."""
    return Path("runs") / "cache.sqlite"
