"""Compare two run directories file by file, apart from what records when or how long.

Used to show that a refactor changes no result: run each example spec with the old and the new code (one
cache, so the second run also proves every task hash unchanged: it makes no calls) and compare the folders.

    python scripts/compare_run_dirs.py OLD_RUN_DIR NEW_RUN_DIR

JSON files are compared as data without their timing fields; gzipped files, and the explorer's chunks (gzipped
JSON in base64), by their content; text files
(HTML, Markdown, CSV, SVG) with timestamps and durations masked. Prints one line per differing or missing
file, then `identical=<true|false> files=<n>`.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any

TIMING_KEYS = {"started_at", "finished_at", "wall_s", "phases_s", "ran_now", "derived", "cache_path", "versions"}
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[+-]\d\d:\d\d|Z)?")
DURATION = re.compile(r"\d+(?:\.\d+)? s\b")
EXPLORER_CHUNK = re.compile(r'vibeExplorer\.chunk\((\d+), "([A-Za-z0-9+/=]*)"\);\n')


def _without_timing(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_timing(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [_without_timing(v) for v in value]
    return value


def _comparable(path: Path) -> Any:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    if path.suffix == ".json":
        return _without_timing(json.loads(data))
    if path.suffix in (".png", ".sqlite"):
        return None  # rasterised charts differ by font hinting run to run; their SVGs are compared
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    if chunk := EXPLORER_CHUNK.fullmatch(text):  # the same rows compressed by another compressor are the same
        return chunk[1], json.loads(gzip.decompress(base64.b64decode(chunk[2])))
    return DURATION.sub("<duration>", TIMESTAMP.sub("<time>", text))


def compare(old: Path, new: Path) -> tuple[list[str], int]:
    names = {p.relative_to(old) for p in old.rglob("*") if p.is_file()} | {
        p.relative_to(new) for p in new.rglob("*") if p.is_file()}
    problems = []
    for name in sorted(names):
        a, b = old / name, new / name
        if not a.exists() or not b.exists():
            problems.append(f"only in {'new' if b.exists() else 'old'}: {name}")
        elif a.read_bytes() != b.read_bytes() and _comparable(a) != _comparable(b):
            problems.append(f"differs: {name}")
    return problems, len(names)


def main(argv: list[str]) -> int:
    problems, n = compare(Path(argv[0]), Path(argv[1]))
    for line in problems:
        print(line)
    print(f"identical={str(not problems).lower()} files={n}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
