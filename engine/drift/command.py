"""The `vibe compare` command: its options, and turning a comparison into files and an exit status."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_GATE, EXIT_USAGE = 0, 1, 2  # EXIT_GATE: a gated vibe moved beyond its margin, or was not shown within it


def add_compare(sub: Any) -> None:
    """The `compare` subcommand on the CLI's subparsers."""
    p = sub.add_parser("compare", help="which vibes of a model moved between two runs (a baseline and a candidate), "
                       "with intervals, and whether the spec's gates hold")
    p.add_argument("runs", nargs="+", metavar="RUN", help="the baseline and the candidate run folders (BASE HEAD), "
                   "or with --git one spec")
    p.add_argument("--git", metavar="REF", help="run SPEC as committed at REF and as it is now, then compare the two "
                   "runs (what the GitHub Action does on a pull request)")
    p.add_argument("--out", metavar="DIR", help="where to write compare.json, compare.md and index.html (default: "
                   "compare-BASE-HEAD beside HEAD; with --git, runs/compare-SPEC, which also holds both runs)")
    p.add_argument("--cache", metavar="PATH", help="cache database (default: runs/cache.sqlite)")
    p.add_argument("--served-at", metavar="URL", default="", help="where the --out folder will be served (e.g. its "
                   "GitHub Pages address): compare.md links each moved vibe to its pairs there (default: links "
                   "relative to the folder)")
    p.add_argument("--model", action="append", metavar="SLOT", help="the model slot(s) to compare (default: every "
                   "slot both runs answered with)")
    p.add_argument("--panel", choices=("base", "head"), help="whose judges and vibes measure both runs (needed when "
                   "they differ)")
    p.add_argument("--gate", action="store_true", help="exit 1 when a gated vibe moved beyond its max_shift")
    p.add_argument("--inconclusive", choices=("fail", "pass"), default="fail", help="with --gate: whether a gate "
                   "that is neither beyond nor shown within its margin fails (default: fail)")
    p.add_argument("--plan", action="store_true", help="print what judging the pairs would take (tasks, cached, "
                   "tokens, worst-case $) and stop; without it the plan is printed, then the pairs are judged")
    p.add_argument("--quiet", action="store_true", help="no plan or progress display while the pairs are judged")
    p.add_argument("--labels", action="append", metavar="FILE", type=Path, help="people's labels of one slot's "
                   "compared pairs (id, label_<vibe>: a for the base's answer, b for the head's, or neither): the "
                   "panel's agreement with them, and each shift as people would read it")
    p.set_defaults(func=compare)


def compare(args: argparse.Namespace) -> int:
    """Compare two run folders (or a spec at a git revision and now), write the files, and with --gate turn
    the gates' verdicts into the exit status."""
    from engine.drift.compare import CompareError, compare_runs
    from engine.drift.summary import gate_status, write
    from engine.pipeline import default_cache_path

    cache = Path(args.cache) if args.cache else default_cache_path()
    if args.git:
        if len(args.runs) != 1:
            return _usage("with --git REF give one spec: it is run as committed at REF and as it is now")
        out = Path(args.out) if args.out else Path("runs") / f"compare-{Path(args.runs[0]).stem}"
        base, head = _runs_at(args.git, Path(args.runs[0]), out, cache, args.quiet)
        names: tuple[str, str] | None = _commit_names(args.git, Path(args.runs[0]))
    elif len(args.runs) != 2:
        return _usage("give two run folders (BASE HEAD), or --git REF and one spec")
    else:
        base, head, names = Path(args.runs[0]), Path(args.runs[1]), None
        out = Path(args.out) if args.out else head.parent / f"compare-{base.name}-{head.name}"
    try:
        comparisons, gates, panel = compare_runs(base, head, out, cache, models=args.model, panel=args.panel,
                                                 quiet=args.quiet, plan_only=args.plan, labels=args.labels)
        if args.plan:
            return EXIT_OK
    except CompareError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    write(comparisons, gates, base, head, panel, out, names, args.served_at)
    print((out / "compare.md").read_text(encoding="utf-8"))
    print(f"written: {out / 'compare.json'}, {out / 'compare.md'}, {out / 'index.html'}")
    if not args.gate:
        return EXIT_OK
    held, broken = gate_status(comparisons, inconclusive_fails=args.inconclusive == "fail")
    for line in broken:
        print(f"gate: {line}", file=sys.stderr)
    if not any(s.margin is not None for c in comparisons for s in c.shifts):
        print("gate: the spec declares no gates (gates: {vibe: {max_shift: ...}}); nothing to hold", file=sys.stderr)
    return EXIT_OK if held else EXIT_GATE


def _commit_names(ref: str, spec: Path) -> tuple[str, str]:
    """The two sides of a comparison of `spec` at `ref` and now, named by their commits."""
    import subprocess

    def short(revision: str) -> str:
        found = subprocess.run(["git", "rev-parse", "--short", revision], cwd=spec.resolve().parent,
                               capture_output=True, text=True)
        return found.stdout.strip() if found.returncode == 0 else revision

    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=spec.resolve().parent,
                           capture_output=True, text=True).stdout.strip()
    head = f"`{spec.name}` at `{short('HEAD')}`" + (" with uncommitted changes" if dirty else "")
    return f"`{spec.name}` at `{ref}` (`{short(ref)}`)", head


def _runs_at(ref: str, spec: Path, out: Path, cache: Path, quiet: bool) -> tuple[Path, Path]:
    """`spec` run as the repository held it at `ref` (a copy of that revision's tree, so the spec, the specs it
    extends and its data are all as they were) and as it is now, into out/base-run and out/head-run, sharing
    the cache: what both versions have in common runs once."""
    import subprocess
    import tarfile
    import tempfile

    from engine.diff import git_toplevel
    from engine.pipeline import run_spec

    spec = spec.resolve()
    if not spec.is_file():
        raise FileNotFoundError(f"{spec}: no such spec")
    try:
        top = git_toplevel(spec.parent, f"--git {ref}")
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"{exc}; compare two run folders instead (vibe compare BASE_RUN HEAD_RUN)") from None
    with tempfile.TemporaryDirectory(prefix="vibe-base-") as folder:
        archive = Path(folder) / "tree.tar"
        made = subprocess.run(["git", "archive", "--format=tar", "-o", str(archive), ref], cwd=top,
                              capture_output=True, text=True)
        if made.returncode != 0:
            raise FileNotFoundError(f"git revision {ref!r} cannot be read: {made.stderr.strip()}")
        with tarfile.open(archive) as tar:
            tar.extractall(Path(folder) / "tree", filter="data")
        old = Path(folder) / "tree" / spec.relative_to(top)
        if not old.is_file():
            raise FileNotFoundError(f"{spec.relative_to(top)} does not exist at git revision {ref!r}")
        run_spec(old, out / "base-run", cache, quiet=quiet, report=False)
    run_spec(spec, out / "head-run", cache, quiet=quiet, report=False)
    return out / "base-run", out / "head-run"


def _usage(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_USAGE
