"""The `vibe run` command: its options, the checks that refuse a run which cannot start here, and what it
prints when the run ends."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.records import Prepared

EXIT_OK, EXIT_FAILED_TASKS, EXIT_USAGE = 0, 1, 2


def add_run(sub: Any) -> None:
    """The `run` subcommand on the CLI's subparsers."""
    p = sub.add_parser("run", help="execute a spec's plan (cached, resumable) and write the run directory")
    p.add_argument("spec")
    p.add_argument("--out", metavar="DIR", help="run directory (default: runs/<spec name>)")
    p.add_argument("--cache", metavar="PATH", help="cache database (default: runs/cache.sqlite)")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.add_argument("--no-report", action="store_true", help="skip writing the HTML leaderboard")
    p.add_argument("--backend", choices=("local", "ray"),
                   help="where local models and encoders run (default: the spec's execution.backend, else local)")
    p.add_argument("--address", metavar="ADDR", help="Ray cluster address for --backend ray (default: the spec's "
                   "execution.address, else $RAY_ADDRESS, else auto)")
    p.add_argument("--limit", type=positive, metavar="N", help="a seeded sample of N prompts per dataset, for a "
                   "quick trial (its own run folder, runs/<name>-limitN, unless --out)")
    p.set_defaults(func=run)


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return int(text)


class _NotStarted(Exception):
    """A run refused before any task: the problems to print, then why nothing ran."""

    def __init__(self, problems: list[Any], why: str):
        super().__init__(why)
        self.problems, self.why = problems, why


def _refuse_what_cannot_run(prepared: Prepared) -> None:
    """`start_run`'s check: a run that would fail here for want of an extra or an API key is refused."""
    from engine import readiness

    absent = readiness.missing_extras(prepared.spec)
    if absent:
        raise _NotStarted(absent, "error: not started: install the extra first (nothing has run; finished work in "
                                  "the cache is kept).")
    missing = readiness.missing_keys(prepared.spec)
    if missing:
        raise _NotStarted(missing, "error: not started: every call to these endpoints would fail. Set the variables, "
                                   "or mark the judges optional (nothing has run; finished work in the cache is kept).")


def run(args: argparse.Namespace) -> int:
    """Refuse a run that cannot start here (an extra missing, an API key unset), else run it and print what it
    did, each analysis' one-line summary and where its leaderboard is; the exit status says whether every task
    finished (1 when some did not, 130 when interrupted). A run whose every input is as when the same command
    last finished has nothing to do (`engine.run_memo`): it says so and prints what that run printed."""
    from engine import prepared_memo, recorded_reads, run_memo
    from engine.pipeline import default_cache_path, finish_run, start_run

    cache = Path(args.cache) if args.cache else default_cache_path()
    try:
        started = start_run(args.spec, Path(args.out) if args.out else None, quiet=args.quiet, backend=args.backend,
                            address=args.address, limit=args.limit, check=_refuse_what_cannot_run)
    except _NotStarted as refused:
        for problem in refused.problems:
            print(problem, file=sys.stderr)
        print(refused.why, file=sys.stderr)
        return EXIT_USAGE
    run_dir, execution = started.run_dir, started.execution
    key = run_memo.name(args.spec, args.limit, run_dir, cache, [not args.no_report, execution.backend,
                                                                execution.address])
    plan = prepared_memo.digest(args.spec, args.limit)
    kept = run_memo.kept(key, plan, lambda ids: _written_at(cache, ids))
    if kept is not None:
        print(f"nothing to do: {run_dir} holds the run of these same inputs (plan, cached answers, code and every "
              "file it read or wrote), left as it is; what that run said:", file=sys.stderr)
        print("\n".join(kept["said"]))
        return int(kept["status"])
    with recorded_reads.recorded() as reads:
        summary, results, final = finish_run(started, cache, quiet=args.quiet, report=not args.no_report)
    said, status = _said(summary, results, run_dir), _status(summary)
    print("\n".join(said))
    for endpoint, message in sorted(summary.endpoint_errors.items()):
        print(f"  stopped {endpoint}: {message}", file=sys.stderr)
    if summary.interrupted:
        print("interrupted: finished results are cached; run the same command again to resume", file=sys.stderr)
        if summary.open_batches:
            print(f"  {summary.open_batches} provider batch(es) keep running: the same command collects their "
                  f"answers (nothing is sent twice); `vibe batches {args.spec}` shows them, --cancel cancels them",
                  file=sys.stderr)
    elif status == EXIT_OK and not summary.endpoint_errors:
        from dataclasses import replace

        ids = [t.id for t in final.plan.tasks]
        nothing_now = replace(summary, ran_now=0, cost=0.0, measured=type(summary.measured)())
        again = [_done(nothing_now, results.spec_name, run_dir), *said[1:]]  # as a run with nothing to do says it
        run_memo.keep(key, plan, reads, ids, _written_at(cache, ids), {"said": again, "status": status})
    return status


def _said(summary: Any, results: Any, run_dir: Path) -> list[str]:
    """What a run prints on stdout: what it did, each analysis' one-line summary and where its pages are."""
    from engine.registry import get_method

    lines = [_done(summary, results.spec_name, run_dir)]
    for method in map(get_method, results.methods if not summary.interrupted else ()):  # no partial "results"
        for section in method.sections:
            for result in results.of(section):
                if (line := method.summary(section, result)) is not None:
                    lines.append(line)
    if (run_dir / "index.html").exists():
        lines.append(f"  leaderboard: {run_dir / 'index.html'}")
    return lines


def _done(summary: Any, spec_name: str, run_dir: Path) -> str:
    failed = summary.total - summary.done
    per_answer = f"; {summary.measured.computed:,} answer values measured" if summary.measured.computed else ""
    read = f"{summary.read:,} answers read from the data, " if summary.read else ""
    return (f"{spec_name}: {summary.done:,}/{summary.total:,} tasks done ({summary.ran_now:,} run now, {read}"
            f"{failed:,} not done){per_answer}, ${summary.cost:.4f} spent; outputs in {run_dir}")


def _written_at(cache_path: Path, task_ids: list[str]) -> dict[str, float]:
    """When the cache wrote each of these tasks (`Cache.written_at`); nothing when there is no cache file."""
    from engine.execute.cache import Cache

    if not cache_path.is_file():
        return {}
    with Cache(cache_path) as cache:
        return cache.written_at(task_ids)


def _status(summary: Any) -> int:
    if summary.interrupted:
        return 130
    return EXIT_FAILED_TASKS if summary.total - summary.done else EXIT_OK
