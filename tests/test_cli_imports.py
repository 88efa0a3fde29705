"""The everyday commands import only what they need: `vibe --help` reads no data, schema, execution or plug-in
module (importing them all made it take 0.6 s), and `--timings` says where a command spent its time."""

from __future__ import annotations

import json
import os
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
        heavy = sorted(m for m in modules if m.startswith(("engine.datasets", "engine.execute",
                                                           "engine.builtin_plugins", "engine.registry", "engine.spec",
                                                           "numpy", "yaml", "jsonschema")))
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


SPEC = """\
name: checks
models:
  a: {provider: recorded}
  b: {provider: recorded}
judges:
  m: {kind: metric}
datasets:
  d:
    source: {path: data.jsonl}
    fields: {id: id, prompt: q, outputs: {a: a, b: b}, preference: winner}
    labels: {source: human}
vibes:
  - {name: verbosity, low: short, high: long, metric: length_words}
analyses:
  vibecheck: {dataset: d, models: [a, b], judges: [m]}
"""


def _validate(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "engine", "validate", str(folder / "spec.yaml")],
                          capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "XDG_CACHE_HOME": str(folder / "cache")})


def test_validate_checks_the_data_by_its_content_and_imports_only_the_plug_ins_it_names(tmp_path: Path) -> None:
    """The second `vibe validate` of unchanged data reads its findings back (the schema too) and imports no plug-in
    module the spec does not name, nor the statistics libraries a method analyses with; a file changed under the
    same name is checked again: a label that names no model is then found."""
    rows = [{"id": f"p{i}", "q": f"Q{i}?", "a": "x " * (i + 1), "b": "y", "winner": "a" if i % 2 else "b"}
            for i in range(6)]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "spec.yaml").write_text(SPEC, encoding="utf-8")
    first, second = _validate(tmp_path), _validate(tmp_path)
    assert first.returncode == second.returncode == 0, first.stderr[-2000:]
    kept = {p.parent.name for p in (tmp_path / "cache" / "vibe").rglob("*.json")}
    assert kept == {"schema", "data-checks"}
    imported = {line.split("|")[-1].strip() for line in second.stderr.splitlines() if line.startswith("import time:")}
    plug_ins = {m for m in imported if m.startswith("engine.builtin_plugins.")}
    named = ("engine.builtin_plugins.judges.metric", "engine.builtin_plugins.methods.vibecheck")
    assert all(m.startswith(named) for m in plug_ins), sorted(plug_ins)
    assert not {m for m in imported if m.split(".")[0] in ("scipy", "statsmodels", "sklearn")}  # no statistics
    rows[3]["winner"] = "c"
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    changed = _validate(tmp_path)
    assert changed.returncode == 2 and "datasets.d.fields.preference" in changed.stderr and "'c'" in changed.stderr


def test_unchanged_data_is_not_parsed_again(monkeypatch, tmp_path: Path) -> None:
    from engine import readiness
    from engine.spec.load import load_spec

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rows = [{"id": f"p{i}", "q": f"Q{i}?", "a": "x", "b": "y", "winner": "z"} for i in range(3)]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "spec.yaml").write_text(SPEC, encoding="utf-8")
    parsed, read = [], []
    real = readiness._dataset_findings
    monkeypatch.setattr(readiness, "_dataset_findings", lambda *a: parsed.append(1) or real(*a))
    from engine.datasets import files, shapes

    reader = files.located_rows
    for module in (files, shapes):  # the reader and the table formats' name for it
        monkeypatch.setattr(module, "located_rows", lambda *a: read.append(a[0]) or reader(*a))
    spec = load_spec(tmp_path / "spec.yaml")
    first, second = readiness.data_problems(spec), readiness.data_problems(spec)
    assert parsed == [1] and [str(p) for p in first] == [str(p) for p in second] and "'z'" in str(first[0])
    assert read == [tmp_path / "data.jsonl"]  # its columns and its labels checked from one reading of the file


def test_the_kept_schema_is_the_built_one_and_a_new_plug_in_line_changes_its_key(monkeypatch, tmp_path) -> None:
    from engine import plugin_tables
    from engine.spec import load
    from engine.spec.schema_inputs import schema_inputs

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert load.schema() == load._built_schema() == load.schema()  # built, kept, read back
    before = schema_inputs(load._schema_file())
    monkeypatch.setitem(plugin_tables.JUDGE_KINDS, "exclamations", "exclamation_judge")
    assert schema_inputs(load._schema_file()) != before
    assert "exclamations" in load.schema()["properties"]["judges"]["additionalProperties"]["properties"]["kind"]["enum"]


def test_a_kept_plan_is_printed_without_reading_data_yaml_or_package_metadata(tmp_path: Path) -> None:
    """The second `vibe plan` of an unchanged spec reads the outline of the plan kept by the first
    (`engine.prepared_memo.view`): it parses no YAML, reads no installed package's metadata, starts no worker pool,
    imports no numerical library and none of the modules a plan is made of; each had cost it 10–20 ms of a 0.2 s
    target."""
    rows = [{"id": f"p{i}", "q": f"Q{i}?", "a": "x", "b": "y", "winner": "a"} for i in range(3)]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "spec.yaml").write_text(SPEC, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "VIBE_NO_PLAN_CACHE"} | {"XDG_CACHE_HOME": str(tmp_path)}
    for _ in range(2):
        done = subprocess.run([sys.executable, "-X", "importtime", "-m", "engine", "--timings", "plan",
                               str(tmp_path / "spec.yaml"), "--cache", str(tmp_path / "none.sqlite")],
                              capture_output=True, text=True, cwd=ROOT, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
    assert "read the plan kept from the last command" in done.stderr
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    heavy = sorted(m for m in imported if m.split(".")[0] in ("yaml", "numpy", "scipy", "multiprocessing")
                   or m in ("importlib.metadata", "engine.chunk_map", "engine.spec.load", "engine.records",
                            "engine.spec.model", "engine.builtin_plugins"))
    assert not heavy, heavy  # the plan's outline is read, not the plan: none of the modules a plan is made of
