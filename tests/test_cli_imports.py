"""The everyday commands import only what they need: `vibe --help` reads no data, schema, execution or plug-in
module (importing them all made it take 0.6 s), and `--timings` says where a command spent its time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _imported(*args: str) -> set[str]:
    """The modules a fresh `python -m engine ARGS` imports, from the interpreter's own import log."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "engine", *args], capture_output=True,
                          text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}


def test_help_imports_no_data_execution_or_plug_in_module() -> None:
    for args in (("--help",), ("run", "--help"), ("export", "--help")):
        modules = _imported(*args)
        assert "engine.cli" in modules
        heavy = sorted(m for m in modules if m.startswith(("engine.datasets", "engine.execute", "engine.builtin_plugins",
                                                           "engine.registry", "engine.spec", "numpy", "yaml",
                                                           "jsonschema")))
        assert not heavy, (args, heavy)


def test_timings_name_each_phase_of_a_command(tmp_path: Path) -> None:
    """`vibe --timings plan SPEC` prints a line per phase (reading the spec, the data, compiling the plan,
    counting finished tasks, writing the plan) and the whole, after the command's own output."""
    done = subprocess.run([sys.executable, "-m", "engine", "--timings", "plan", "specs/llama-vs-gpt.yaml",
                           "--cache", str(tmp_path / "none.sqlite")], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("timing:")]
    phases = [line.split(" s  ", 1)[1] for line in lines]
    assert phases[:2] == ["parse the arguments", "read and check the spec"]
    assert {"read the data", "compile the plan", "count finished tasks", "write the plan"} <= set(phases)
    assert phases[-1].startswith("in all") and all(float(line.split()[1]) >= 0 for line in lines)
