"""Full size or smoke size for a benchmark script.

`python benchmarks/X.py --smoke` (or VIBE_BENCH_SMOKE=1) runs the smallest workload that still goes through
every code path of the benchmark, in seconds, so that `make test` notices a benchmark that no longer runs to its
last line. Smoke figures measure nothing: only full-size runs go in the README.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

SMOKE = "--smoke" in sys.argv[1:] or os.environ.get("VIBE_BENCH_SMOKE") == "1"


def pick(full: T, smoke: T) -> T:
    """`full` for a measurement, `smoke` for the smoke run."""
    return smoke if SMOKE else full


def positional(index: int, default: int) -> int:
    """An integer argument given on the command line (the flags aside), else `default`."""
    values = [a for a in sys.argv[1:] if not a.startswith("--")]
    return int(values[index]) if len(values) > index else default


def spec(path: Path, smoke_override: str) -> Path:
    """The spec at `path` for a measurement; for the smoke run, a spec in a temporary folder that extends it
    with `smoke_override` (YAML, e.g. a dataset `limit`)."""
    if not SMOKE:
        return path
    child = Path(tempfile.mkdtemp(prefix="vibe-bench-smoke-")) / path.name
    child.write_text(f"extends: {path.resolve()}\n{smoke_override}", encoding="utf-8")
    return child
