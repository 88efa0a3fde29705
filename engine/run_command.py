"""The `vibe run` command: its options, the checks that refuse a run which cannot start here, and what it
prints when the run ends."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

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


def run(args: argparse.Namespace) -> int:
    """Refuse a run that cannot start here (an extra missing, an API key unset), else run it and print what it
    did, each analysis' one-line summary and where its leaderboard is; the exit status says whether every task
    finished (1 when some did not, 130 when interrupted)."""
    from engine import readiness
    from engine.pipeline import default_cache_path, run_spec
    from engine.spec.load import load_spec

    spec = load_spec(args.spec)
    absent = readiness.missing_extras(spec)
    if absent:
        for problem in absent:
            print(problem, file=sys.stderr)
        print("error: not started: install the extra first (nothing has run; finished work in the cache is kept).",
              file=sys.stderr)
        return EXIT_USAGE
    missing = readiness.missing_keys(spec)
    if missing:
        for problem in missing:
            print(problem, file=sys.stderr)
        print("error: not started: every call to these endpoints would fail. Set the variables, or mark the judges "
              "optional (nothing has run; finished work in the cache is kept).", file=sys.stderr)
        return EXIT_USAGE
    summary, results, run_dir = run_spec(args.spec, Path(args.out) if args.out else None,
                                         Path(args.cache) if args.cache else default_cache_path(), quiet=args.quiet,
                                         report=not args.no_report, backend=args.backend, address=args.address,
                                         limit=args.limit)
    failed = summary.total - summary.done
    per_answer = f"; {summary.measured.computed:,} answer values measured" if summary.measured.computed else ""
    read = f"{summary.read:,} answers read from the data, " if summary.read else ""
    print(f"{results.spec_name}: {summary.done:,}/{summary.total:,} tasks done ({summary.ran_now:,} run now, {read}"
          f"{failed:,} not done){per_answer}, ${summary.cost:.4f} spent; outputs in {run_dir}")
    from engine.registry import get_method

    for method in map(get_method, results.methods if not summary.interrupted else ()):  # no partial "results"
        for section in method.sections:
            for result in results.of(section):
                if (line := method.summary(section, result)) is not None:
                    print(line)
    if (run_dir / "index.html").exists():
        print(f"  leaderboard: {run_dir / 'index.html'}")
    for endpoint, message in sorted(summary.endpoint_errors.items()):
        print(f"  stopped {endpoint}: {message}", file=sys.stderr)
    if summary.interrupted:
        print("interrupted: finished results are cached; run the same command again to resume", file=sys.stderr)
        if summary.open_batches:
            print(f"  {summary.open_batches} provider batch(es) keep running: the same command collects their "
                  f"answers (nothing is sent twice); `vibe batches {args.spec}` shows them, --cancel cancels them",
                  file=sys.stderr)
        return 130
    return EXIT_FAILED_TASKS if failed else EXIT_OK
