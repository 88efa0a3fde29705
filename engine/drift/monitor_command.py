"""The `vibe monitor` command: its options, the looks it is given, and the exit status its gates set."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from engine.drift.command import EXIT_GATE, EXIT_OK, EXIT_USAGE

DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")


def add_monitor(sub: Any) -> None:
    """The `monitor` subcommand on the CLI's subparsers."""
    p = sub.add_parser("monitor", help="watch a model's vibes over later runs or log batches against a baseline, "
                       "with claims that hold however often it is looked at")
    p.add_argument("baseline", metavar="BASE_RUN", help="the baseline run folder")
    p.add_argument("looks", nargs="+", metavar="LOOK", help="later run folders, data files in the baseline "
                   "dataset's format, or a folder of such files (each file a look, in name order); for a baseline of "
                   "agent logs, a folder of logs (one look) or a folder of such folders (each a look: a day's logs, "
                   "in name order); looks already in the monitor's state are not judged again")
    p.add_argument("--out", metavar="DIR", help="where the state, monitor.md, monitor.json and index.html live "
                   "(default: monitor-BASE beside the baseline)")
    p.add_argument("--model", metavar="SLOT", help="the model slot to watch (needed when the baseline has several)")
    p.add_argument("--cache", metavar="PATH", help="cache database (default: runs/cache.sqlite)")
    p.add_argument("--gate", action="store_true", help="exit 1 once a gated vibe has moved beyond its max_shift "
                   "(at the look it crosses and every look after: a crossed gate stays crossed); unpaired, once any "
                   "vibe has moved")
    p.add_argument("--unpaired", action="store_true", help="the looks share no prompt with the baseline: rank "
                   "each unit among every unit before it on each vibe a judge measures on one answer (the default "
                   "for a baseline of agent logs, whose sessions rarely repeat a prompt)")
    p.add_argument("--quiet", action="store_true", help="no plan or progress display while a look is judged")
    p.set_defaults(func=monitor)


def looks_of(paths: list[str], folders: bool = False) -> list[tuple[str, Path]]:
    """Each look's name and path, in the order given: a run folder, a data file, or every data file of a folder
    that is not a run folder (sorted by name); with `folders` (a baseline dataset read from folders, as agent logs
    are), a folder is one look, and a folder holding only folders is one look per folder (sorted by name). Names
    must be unique: they key the monitor's state."""
    out: list[tuple[str, Path]] = []
    for text in paths:
        path = Path(text)
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such run folder, data file or folder of data files")
        if folders and path.is_dir() and not (path / "manifest.json").is_file():
            inside = sorted(p for p in path.iterdir() if not p.name.startswith("."))
            days = inside if inside and all(p.is_dir() for p in inside) else [path]
            out += [(p.name, p) for p in days]
        elif path.is_dir() and not (path / "manifest.json").is_file():
            files = sorted(p for p in path.iterdir() if p.suffix in DATA_SUFFIXES and p.is_file())
            if not files:
                raise FileNotFoundError(f"{path}: neither a run folder (no manifest.json) nor a folder of data files "
                                        f"({', '.join(DATA_SUFFIXES)})")
            out += [(p.stem, p) for p in files]
        else:
            out.append((path.name if path.is_dir() else path.stem, path))
    seen: dict[str, Path] = {}
    for name, path in out:
        if name in seen:
            raise FileNotFoundError(f"{path}: a second look named {name!r} (the first: {seen[name]}); each look's "
                                    "name (its folder's or file's) must be unique")
        seen[name] = path
    return out


def monitor(args: argparse.Namespace) -> int:
    """Judge every look not yet in the monitor's state, one line each, with the state and the page written after
    each look (a look that cannot be judged stops the call, and the page shows the looks before it and why it
    stopped); then, with --gate, turn a crossed gate into the exit status."""
    from engine.drift.compare import CompareError, Run
    from engine.drift.monitor import (
        batch_run,
        gate_broken,
        judge_look,
        look_line,
        measure_look,
        read_state,
        reads_sessions,
        start,
        watch,
        write_state,
    )
    from engine.drift.monitor_report import write
    from engine.pipeline import default_cache_path

    base_dir = Path(args.baseline)
    out = Path(args.out) if args.out else base_dir.parent / f"monitor-{base_dir.name}"
    cache = Path(args.cache) if args.cache else default_cache_path()
    try:
        base = Run.open(base_dir)
        folders = reads_sessions(base)
        state = start(base, base_dir, args.model, read_state(out), unpaired=args.unpaired or folders)
    except CompareError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    looks = looks_of(args.looks, folders)
    known = {look.name: look for look in state.looks}
    stopped = None
    judged = 0
    for name, path in looks:
        try:
            if name in known:
                if Path(known[name].source).resolve() != path.resolve():
                    raise CompareError(f"{path}: the monitor already holds a look named {name!r}, read from "
                                       f"{known[name].source}")
                continue
            if state.design == "unpaired":
                batch = measure_look(state, base, name, path)
            else:
                run = (path if (path / "manifest.json").is_file()
                       else batch_run(base, path, out / "looks" / name / "answers", cache, args.quiet))
                batch = judge_look(state, base, run, name, path, out, cache, args.quiet)
        except CompareError as exc:
            stopped = f"look {name} ({path}): {exc}"
            break
        state.looks.append(batch)
        write_state(state, out)  # each look kept, shown and written as soon as it is judged
        watches = watch(state)
        print(look_line(state, watches, len(state.looks) - 1), flush=True)
        write(state, watches, out)
        judged += 1
    if not state.looks:
        print(f"error: {stopped}", file=sys.stderr)
        return EXIT_USAGE
    watches = watch(state)
    if not judged:
        print(look_line(state, watches, len(state.looks) - 1))
    if stopped or not judged:
        write(state, watches, out, stopped)
    print(f"written: {out / 'monitor.md'}, {out / 'monitor.json'}, {out / 'index.html'} (state: {out}/"
          "monitor-state.json)")
    if stopped:
        print(f"error: {stopped}", file=sys.stderr)
        return EXIT_USAGE
    if not args.gate:
        return EXIT_OK
    broken = gate_broken(state, watches)
    for line in broken:
        print(f"gate: {line}", file=sys.stderr)
    if not state.gated and state.design != "unpaired":
        print("gate: the baseline spec declares no gates (gates: {vibe: {max_shift: ...}}); nothing to hold",
              file=sys.stderr)
    return EXIT_GATE if broken else EXIT_OK
