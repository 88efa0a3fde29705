"""`vibe` command line. Each subcommand is a thin shell over one stage; errors the user can fix are printed
as one clear message each (exit 2), never as a traceback.

A command imports what it needs when it runs: parsing the arguments and `--help` read no data, schema or
plug-in module (importing them all took 0.6 s before `vibe --help` printed a line). `--timings` prints where a
command spent its time (`engine.timings`)."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from types import FrameType

from engine import timings
from engine.drift.command import add_compare
from engine.drift.monitor_command import add_monitor
from engine.run_command import add_run

EXIT_OK, EXIT_USAGE = 0, 2


def _schema(args: argparse.Namespace) -> int:
    from engine.spec.load import schema

    text = json.dumps(schema(), indent=2) + "\n"
    if args.write:
        Path(args.write).parent.mkdir(parents=True, exist_ok=True)
        Path(args.write).write_text(text, encoding="utf-8")
        print(f"wrote {args.write}; point your editor at it, e.g. a first line "
              f"# yaml-language-server: $schema={args.write}")
    else:
        print(text, end="")
    return EXIT_OK


def _init(args: argparse.Namespace) -> int:
    from engine.scaffold import InitError, init_spec

    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
    try:
        path = init_spec([Path(d) for d in args.data], Path(args.out), models, args.prompt, say=print)
    except InitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {path}; next: vibe validate {path} && vibe run {path}")
    return EXIT_OK


def _validate(args: argparse.Namespace) -> int:
    from engine import readiness
    from engine.spec.load import load_spec
    from engine.spec.problems import SpecError

    if args.extras:
        print(",".join(sorted({extra for path in args.specs for extra in readiness.needed_extras(load_spec(path))})))
        return EXIT_OK
    status = EXIT_OK
    for path in args.specs:
        try:
            with timings.phase("read and check the spec"):
                spec = load_spec(path)
            with timings.phase("check the data"):
                problems = readiness.data_problems(spec) + readiness.missing_extras(spec)
        except SpecError as exc:
            spec, problems = None, exc.problems
        for problem in problems:
            print(problem, file=sys.stderr)
        warnings = readiness.missing_keys(spec) + readiness.missing_data(spec) if spec is not None else []
        for warning in warnings:
            print(f"warning: {warning}", file=sys.stderr)
        for note in readiness.older_kind_names(spec) if spec is not None else []:
            print(f"warning: {note} (still read as before)", file=sys.stderr)
        if problems:
            status = EXIT_USAGE
        else:
            print(f"{path}: valid" + (f" ({len(warnings)} warning(s): it cannot run here as it stands)"
                                      if warnings else ""))
    return status


def _plan(args: argparse.Namespace) -> int:
    from engine.pipeline import default_cache_path, prepare, say_excluded
    from engine.plan_view import finished, missing_keys, outline, print_plan

    shown = outline(args.spec)  # the spec is read once: its warnings come from the spec the plan compiled
    for warning in missing_keys(shown):
        print(f"warning: {warning}", file=sys.stderr)
    say_excluded(shown.excluded)
    cache_path = Path(args.cache) if args.cache else default_cache_path()
    with timings.phase("count finished tasks"):
        if cache_path.exists():
            from engine.execute.cache import Cache

            with Cache(cache_path) as cache:
                cached = finished(shown, cache)
        else:  # no cache to open (nor to create): only the answers read from the data are done
            cached = finished(shown, None)
    with timings.phase("write the plan"):
        if args.json:
            Path(args.json).write_text(prepare(args.spec).plan.to_json(), encoding="utf-8")
        print_plan(shown, cached)
    return EXIT_OK


def _diff(args: argparse.Namespace) -> int:
    from engine.diff import diff_plans, spec_at_revision, to_markdown
    from engine.plan_view import outline

    if args.changed:
        from engine.review import DEFAULT_PATTERNS, comment

        if args.specs:
            raise UsageError("with --changed BASE give no spec files: every changed file matching --pattern is diffed")
        print(comment(args.changed, tuple(args.pattern or DEFAULT_PATTERNS)), end="")
        return EXIT_OK
    if args.git:
        if len(args.specs) != 1:
            raise UsageError("with --git REF give one spec: it is compared with itself at REF")
        path = Path(args.specs[0])
        labels = (f"{path}@{args.git}", str(path))
        from engine.plan_view import outline_of
        from engine.review import prepared_at

        with spec_at_revision(args.git, path) as then:
            base = outline_of(prepared_at(then, labels[0]))
        data_changed, base_doc = then.data_changed, then.document(base.document)
        new = outline(path)
    else:
        if len(args.specs) != 2:
            raise UsageError("give BASE and NEW spec files, or one spec and --git REF")
        base, new = outline(args.specs[0]), outline(args.specs[1])
        labels, data_changed, base_doc = (args.specs[0], args.specs[1]), [], base.document
    with timings.phase("diff the plans"):
        diff = diff_plans(base_doc, base, new.document, new)
        print(to_markdown(diff, *labels, data_changed))
    return EXIT_OK


def _batches(args: argparse.Namespace) -> int:
    import asyncio

    from engine.execute.batches import look_up
    from engine.execute.cache import Cache
    from engine.pipeline import default_cache_path, prepare
    from engine.records import call_endpoints

    prepared = prepare(args.spec)
    with Cache(Path(args.cache) if args.cache else default_cache_path()) as cache:
        found = asyncio.run(look_up(call_endpoints(prepared), cache, cancel=args.cancel))
    if not found:
        print(f"{prepared.spec.name}: no provider batch is waiting to be read")
    for record, state in found:
        print(f"{record.endpoint}: batch {record.batch_id} ({record.provider}), {len(record.task_ids):,} requests, "
              f"{state}")
    return EXIT_OK


def _discover(args: argparse.Namespace) -> int:
    from engine.discover.stage import discover_vibes, vibes_yaml
    from engine.execute.backend import joined, settle
    from engine.execute.cache import Cache
    from engine.execute.run import execute
    from engine.pipeline import default_cache_path, default_run_dir, prepare

    prepared = prepare(args.spec)
    if prepared.spec.discovery is None:
        raise UsageError(f"{args.spec} has no 'discover' block under vibes")
    execution = settle(prepared)  # the spec's backend, as `vibe run` would use it
    with joined(prepared, execution), Cache(Path(args.cache) if args.cache else default_cache_path()) as cache:
        summary = execute(prepared, default_run_dir(prepared.spec), cache, quiet=args.quiet, stages=("generation",),
                          execution=execution)
        if summary.interrupted:
            return 130
        found, origins = discover_vibes(prepared, cache)
    text = vibes_yaml(found, origins)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"{len(found)} vibes written to {args.out}")
    else:
        print(text, end="")
    return EXIT_OK


def _report(args: argparse.Namespace) -> int:
    from engine.pipeline import report_run

    run_dir = Path(args.run_dir)
    if not (run_dir / "manifest.json").exists():
        raise UsageError(f"{run_dir} is not a run directory (no manifest.json); run `vibe run SPEC` first")
    index = report_run(run_dir, Path(args.cache) if args.cache else None)
    print(f"leaderboard: {index}")
    return EXIT_OK


def _publish(args: argparse.Namespace) -> int:
    from engine.report.publish import publish

    try:
        page = publish(Path(args.run_dir), Path(args.site), runs=not args.leaderboard_only)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    mkdocs = Path(sys.executable).parent / "mkdocs"  # beside this interpreter: works without an activated venv
    config = Path(args.site) / "mkdocs.yml"
    print(f"published to {page}\n  preview: {mkdocs} serve -f {config}\n  build:   {mkdocs} build --strict -f {config}")
    return EXIT_OK


def _export(args: argparse.Namespace) -> int:
    from engine.export import ExportError, export

    try:
        written = export(Path(args.run_dir), args.to, Path(args.out) if args.out else None,
                         Path(args.spec) if args.spec else None)
    except ExportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for path in written:
        print(path)
    return EXIT_OK


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("vibe-bench")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """`--version`, looked up only when asked for (the package metadata is not read to print `--help`)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"vibe {_version()}")
        parser.exit()


class UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vibe", description="Find and measure the vibes of language models.")
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument("--timings", action="store_true", help="print where the command spent its time, phase by "
                        "phase, on standard error")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("schema", help="print the spec's JSON Schema")
    p.add_argument("--write", metavar="PATH", help="write it to PATH (for an editor) instead of printing it")
    p.set_defaults(func=_schema)

    p = sub.add_parser("init", help="write a commented, valid spec for a data file (or the embedded default)")
    p.add_argument("data", nargs="*", help="CSV, JSONL, JSON or Parquet of prompts and answers (wide: a column "
                   "per model; long: a model column and an answer column), a file another tool writes, or several "
                   "files of one kind (a file per model) or their folder; none: the embedded default spec")
    p.add_argument("--models", metavar="A,B", help="the answer columns (wide) or model names (long) to compare")
    p.add_argument("--prompt", metavar="COLUMN", help="the column holding the prompts, where none is named like one")
    p.add_argument("--out", metavar="PATH", default="vibe.yaml", help="where to write the spec (default: vibe.yaml)")
    p.set_defaults(func=_init)

    p = sub.add_parser("validate", help="check specs; print every problem as FILE:LINE:COL: field: message")
    p.add_argument("specs", nargs="+")
    p.add_argument("--extras", action="store_true", help="print the vibe-bench extras the specs' models and judges "
                   "need (comma-separated, e.g. embeddings,local) and stop: what to install before running them")
    p.set_defaults(func=_validate)

    p = sub.add_parser("plan", help="compile a spec into its run plan and show calls, tokens and cost")
    p.add_argument("spec")
    p.add_argument("--json", metavar="PATH", help="write the plan as JSON")
    p.add_argument("--cache", metavar="PATH", help="cache database to count finished tasks in")
    p.set_defaults(func=_plan)

    p = sub.add_parser("diff", help="Markdown summary of what a spec change does to the plan and its cost")
    p.add_argument("specs", nargs="*", metavar="SPEC")
    p.add_argument("--git", metavar="REF", help="compare SPEC with its version at this git revision")
    p.add_argument("--changed", metavar="BASE", help="one Markdown comment for every spec file changed, added or "
                   "removed since git revision BASE (what the GitHub Action posts)")
    p.add_argument("--pattern", action="append", metavar="GLOB", help="with --changed: which files are specs "
                   "(repeatable; default: specs/**/*.yaml, specs/**/*.yml and the vibe.yaml vibe init writes)")
    p.set_defaults(func=_diff)

    p = sub.add_parser("discover", help="generate outputs if needed, discover vibes, print them as spec YAML")
    p.add_argument("spec")
    p.add_argument("--out", metavar="PATH", help="write the YAML here instead of stdout")
    p.add_argument("--cache", metavar="PATH", help="cache database (default: runs/cache.sqlite)")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.set_defaults(func=_discover)

    p = sub.add_parser("report", help="(re)render a run directory's static leaderboard")
    p.add_argument("run_dir")
    p.add_argument("--cache", metavar="PATH", help="cache database (default: the one the run used)")
    p.set_defaults(func=_report)

    p = sub.add_parser("publish", help="add a run's leaderboard to the mkdocs site and update the run index")
    p.add_argument("run_dir")
    p.add_argument("--site", default="site", help="the mkdocs project folder (default: site)")
    p.add_argument("--leaderboard-only", action="store_true",
                   help="only merge the run's vibe profiles into the site leaderboard of its reference; do not copy "
                        "the run's pages")
    p.set_defaults(func=_publish)

    p = sub.add_parser("export", help="write a run's verdicts and answers in another tool's format")
    p.add_argument("run_dir")
    p.add_argument("--to", required=True, metavar="FORMAT",  # checked by `export`, which lists plug-ins' too
                   help="llm-comparator: one JSON per comparison for PAIR's LLM Comparator; alpaca-eval: each "
                        "generated model's model_outputs.json; parquet: every verdict, a row per pair, question "
                        "and judge; or a format an installed plug-in adds")
    p.add_argument("--out", metavar="DIR", help="where to write (default: RUN_DIR/export/<format>)")
    p.add_argument("--spec", metavar="PATH", help="the spec that made the run (default: the path its manifest "
                   "records; where that is gone, the copy of the spec and prompts the run folder keeps)")
    p.set_defaults(func=_export)

    p = sub.add_parser("batches", help="the spec's provider batches still to be read, with their state")
    p.add_argument("spec")
    p.add_argument("--cache", metavar="PATH", help="cache database (default: runs/cache.sqlite)")
    p.add_argument("--cancel", action="store_true", help="cancel them (a later `vibe run` still reads the answers "
                   "they finished and asks the rest again)")
    p.set_defaults(func=_batches)

    add_compare(sub)
    add_monitor(sub)

    add_run(sub)
    return parser


def _terminate(signum: int, frame: FrameType | None) -> None:
    from engine.execute.interrupts import terminate_as_interrupt

    terminate_as_interrupt(signum, frame)


def main(argv: list[str] | None = None) -> int:
    with timings.phase("parse the arguments"):
        args = build_parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if not _said(exc):
            raise
    finally:
        if args.timings:
            timings.report(sys.stderr)
    return EXIT_USAGE


def _said(exc: Exception) -> bool:
    """Print an error the user can fix as its one message; False for any other exception (a bug: its traceback
    is the report). The error types are imported only once one is raised."""
    from engine.datasets import DatasetError
    from engine.execute.ray_cluster import ClusterError
    from engine.plan import PlanError
    from engine.run_lock import RunLocked
    from engine.spec.problems import SpecError

    if isinstance(exc, SpecError):
        for problem in exc.problems:
            print(problem, file=sys.stderr)
    elif isinstance(exc, DatasetError | PlanError | UsageError | FileNotFoundError | RunLocked):
        print(f"error: {exc}", file=sys.stderr)
    elif isinstance(exc, ClusterError):
        print(f"error: not started: {exc} (nothing has run; finished work in the cache is kept)", file=sys.stderr)
    else:
        return False
    return True
