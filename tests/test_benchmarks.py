"""Every script in benchmarks/ runs to its last line in smoke mode.

A benchmark is only read by someone reproducing the README's Measured table, so one that stopped running would
otherwise be found by that reader. Each runs here at its smallest size (`--smoke`), as a subprocess the way a
reader runs it, and must end with the `key=value` line its docstring promises. The figures themselves mean
nothing at that size and are not checked.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if p.name != "sizes.py")
# scripts `make test` runs at full size elsewhere, reading their last line there: no smoke run of them here
FULL_SIZE = {"budget": "tests/test_budget.py"}
NUMBER = r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?|nan|inf"


def promised_keys(script: Path) -> list[str]:
    """The keys of the docstring's `Last line: a=<float> b=<int>` (the paragraph may wrap)."""
    doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
    found = re.search(r"^Last line: (.+(?:\n  .+)*)", doc, re.MULTILINE)
    assert found, f"{script.name}: the docstring does not say what its last line is"
    return re.findall(r"(\w+)=<\w+>", found.group(1))


def test_every_benchmark_is_covered() -> None:
    assert len(SCRIPTS) >= 9
    for script in SCRIPTS:
        assert promised_keys(script), script.name


@pytest.mark.slow
# the smoke runs that take every core (a Ray cluster; the local model through llama.cpp) take turns with the
# Ray and local-model tests on one worker
@pytest.mark.parametrize("script", [pytest.param(p, marks=pytest.mark.xdist_group("ray"))
                                    if p.stem in ("ray_scaling", "drift") else p for p in SCRIPTS
                                    if p.stem not in FULL_SIZE],
                         ids=[p.stem for p in SCRIPTS if p.stem not in FULL_SIZE])
def test_benchmark_smoke_run_ends_with_its_line(script: Path) -> None:
    env = {**os.environ, "VIBE_BENCH_SMOKE": "1", "PYTHONUNBUFFERED": "1"}
    done = subprocess.run([sys.executable, str(script), "--smoke"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=420)
    assert done.returncode == 0, f"{script.name} exited {done.returncode}:\n{done.stderr[-3000:]}"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert lines, f"{script.name} printed nothing"
    keys = promised_keys(script)
    pattern = " ".join(rf"{key}=(?:{NUMBER})" for key in keys)
    assert re.fullmatch(pattern, lines[-1].strip(), re.IGNORECASE), (
        f"{script.name}: last line {lines[-1]!r} is not {' '.join(k + '=<number>' for k in keys)}")
