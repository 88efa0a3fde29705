"""`vibe compare`: two runs of one spec, their answers paired per model slot on shared prompts, judged by one
panel, each vibe's shift tested and gated. Real runs of recorded answers through the CLI; the statistics by
hand and in seeded simulations through the same functions."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.drift.shift import gate, prompts_needed, shift_of

SPEC = """\
name: drift
models: {terse: {provider: recorded}, chatty: {provider: recorded}}
judges: {metrics: {kind: metric}}
datasets: {d: {source: {path: DATA}, fields: {id: id, prompt: q, outputs: {terse: terse, chatty: chatty}}}}
vibes:
  - {name: verbosity, low: short, high: long, metric: length_words}
  - {name: enthusiasm, low: calm, high: excited, metric: exclamations}
gates: GATES
analyses: {vibecheck: {dataset: d, models: [terse, chatty], judges: [metrics]}}
"""


def _run(folder: Path, name: str, chatty_words: int, gates: str = "{verbosity: {max_shift: 0.1}}",
         prompts: range = range(40), spec_text: str = SPEC) -> Path:
    """A run of the spec whose chatty answers have `chatty_words` words (terse ones: 3), in its own folder."""
    rows = [{"id": f"p{i}", "q": f"Question {i}?", "terse": "Short answer here.",
             "chatty": " ".join(["word"] * chatty_words) + ("!" if i % 2 else ".")} for i in prompts]
    (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    spec = folder / f"{name}.yaml"
    spec.write_text(spec_text.replace("DATA", f"{name}.jsonl").replace("GATES", gates), encoding="utf-8")
    done = _vibe(folder, "run", str(spec), "--out", str(folder / "runs" / name), "--no-report", "--quiet")
    assert done.returncode == 0, done.stderr
    return folder / "runs" / name


def _vibe(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def test_a_planted_shift_fails_the_gate_and_a_rerun_passes_it(tmp_path: Path) -> None:
    """Head's chatty answers have 10 words instead of 40 on every prompt: the metric judge calls the base longer on
    all 40 pairs (ν = +1), so verbosity's shift is −1 exactly, far beyond ±0.1: the gate fails (exit 1). Enthusiasm
    (exclamation marks per word) is not gated: the 20 answers with a '!' have it in 10 words instead of 40, so the
    head sits higher on those 20 and ties on the rest, a shift of +0.5. A re-run of the base (the same answers in
    another folder) moved nothing: every verdict is a tie, TOST shows ±0.1 and the gate passes."""
    base, head, again = _run(tmp_path, "base", 40), _run(tmp_path, "head", 10), _run(tmp_path, "again", 40)
    out = tmp_path / "cmp"
    priced = _vibe(tmp_path, "compare", str(base), str(head), "--model", "chatty", "--out", str(out), "--plan",
                   "--cache", str(tmp_path / "c.sqlite"))
    assert priced.returncode == 0, priced.stderr
    assert "plan for compare-chatty" in priced.stdout and not (out / "compare.json").exists()  # priced, not run
    moved = _vibe(tmp_path, "compare", str(base), str(head), "--model", "chatty", "--out", str(out), "--gate",
                  "--cache", str(tmp_path / "c.sqlite"), "--quiet")
    assert moved.returncode == 1, moved.stderr
    assert "gate: chatty · verbosity: FAIL: shift -1.000 is beyond ±0.1" in moved.stderr
    body = json.loads((out / "compare.json").read_text())
    (chatty,) = body["comparisons"]
    shifts = {s["vibe"]: s for s in chatty["shifts"]}
    assert chatty["shared"] == 40 and shifts["verbosity"]["shift"] == -1.0
    assert shifts["verbosity"]["verdict"] == "fail"
    assert shifts["enthusiasm"]["shift"] == 0.5 and shifts["enthusiasm"]["margin"] is None
    assert "| **verbosity** | -1.000 |" in (out / "compare.md").read_text()
    page = (out / "index.html").read_text()
    assert "<td><strong>verbosity</strong></td><td>-1.000</td><td>[-1.000, -1.000]</td>" in page
    assert (out / "assets" / "style.css").is_file()
    same = _vibe(tmp_path, "compare", str(base), str(again), "--out", str(tmp_path / "same"), "--gate",
                 "--cache", str(tmp_path / "c.sqlite"), "--quiet")
    assert same.returncode == 0, same.stderr
    for comparison in json.loads((tmp_path / "same" / "compare.json").read_text())["comparisons"]:
        verbosity = next(s for s in comparison["shifts"] if s["vibe"] == "verbosity")
        assert verbosity["shift"] == 0.0 and verbosity["verdict"] == "pass" and verbosity["p_equivalent"] == 0.0


def test_compare_export_and_report_work_from_run_folders_alone(tmp_path: Path) -> None:
    """The spec, its data and the cache deleted and the runs moved to an empty folder: the three commands still
    run, on the copies the run folders keep."""
    work = tmp_path / "work"
    work.mkdir()
    base, head = _run(work, "base", 40), _run(work, "head", 12)
    alone = tmp_path / "alone"
    shutil.copytree(base, alone / "base")
    shutil.copytree(head, alone / "head")
    shutil.rmtree(work)
    done = _vibe(alone, "compare", "base", "head", "--model", "chatty", "--out", "cmp", "--cache", "c.sqlite",
                 "--quiet")
    assert done.returncode == 0, done.stderr
    assert (alone / "cmp" / "compare.json").is_file()
    exported = subprocess.run([sys.executable, "-m", "engine", "export", "base", "--to", "llm-comparator", "--out",
                               "exported"], cwd=alone, capture_output=True, text=True, timeout=600)
    assert exported.returncode == 0, exported.stderr
    examples = json.loads((alone / "exported" / "vibecheck-terse-vs-chatty.json").read_text())["examples"]
    assert {e["input_text"] for e in examples} == {f"Question {i}?" for i in range(40)}
    reported = _vibe(alone, "report", "head")
    assert reported.returncode == 0, reported.stderr
    assert "verbosity" in (alone / "head" / "index.html").read_text()


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    base = _run(tmp_path, "base", 40)
    elsewhere = _run(tmp_path, "elsewhere", 40, prompts=range(100, 120))  # other prompt ids
    done = _vibe(tmp_path, "compare", str(base), str(elsewhere), "--cache", str(tmp_path / "c.sqlite"), "--quiet")
    assert done.returncode == 2 and "the runs share no prompt (same id and text)" in done.stderr
    done = _vibe(tmp_path, "compare", str(base), str(base), "--model", "nobody", "--quiet")
    assert done.returncode == 2 and "no model slot nobody answered in both runs; shared: terse, chatty" in done.stderr
    done = _vibe(tmp_path, "compare", str(tmp_path), str(base), "--quiet")
    assert done.returncode == 2 and "not a run folder (no manifest.json)" in done.stderr
    asks = "  - {name: questions, low: states, high: asks, metric: questions_to_user}\n"
    more = SPEC.replace("vibes:\n", "vibes:\n" + asks)
    other = _run(tmp_path, "other", 40, spec_text=more)
    done = _vibe(tmp_path, "compare", str(base), str(other), "--cache", str(tmp_path / "c.sqlite"), "--quiet")
    assert done.returncode == 2
    assert "the two runs' panels differ (vibes): pass --panel base or --panel head" in done.stderr
    chosen = _vibe(tmp_path, "compare", str(base), str(other), "--panel", "base", "--out", str(tmp_path / "cmp"),
                   "--cache", str(tmp_path / "c.sqlite"), "--quiet")
    assert chosen.returncode == 0, chosen.stderr
    measured = json.loads((tmp_path / "cmp" / "compare.json").read_text())["comparisons"][0]["shifts"]
    assert [s["vibe"] for s in measured] == ["verbosity", "enthusiasm"]  # the base panel's vibes only
    # with discovery on, a gate can only be checked against the vibes the runs found: at compare time
    found = SPEC.replace("vibes:\n", "vibes:\n  - {discover: {method: statistical, max_vibes: 2}}\n")
    gated = _run(tmp_path, "found", 40, gates="{curtness: {max_shift: 0.1}}", spec_text=found)
    done = _vibe(tmp_path, "compare", str(gated), str(gated), "--cache", str(tmp_path / "c.sqlite"), "--quiet")
    assert done.returncode == 2 and "gates: curtness name no vibe the panel measures (verbosity, enthusiasm" \
        in done.stderr
    (tmp_path / "typo.yaml").write_text(SPEC.replace("DATA", "base.jsonl").replace(
        "GATES", "{verbosty: {max_shift: 0.1}}"), encoding="utf-8")
    done = _vibe(tmp_path, "validate", "typo.yaml")
    assert done.returncode == 2 and "typo.yaml:8:19: gates.verbosty: gate names no declared " \
        "vibe 'verbosty' (did you mean 'verbosity'?)" in done.stderr


def test_the_shift_and_its_tests_by_hand() -> None:
    """ν = +1 (base higher) on 3 prompts, −1 on 1: shift −(3 − 1)/4 = −0.5; sd of −ν: 1.0, se 0.5, t = 1 on
    3 df; two-sided p = 0.391. Margin 0.1: beyond by t = (0.5 − 0.1)/0.5 = 0.8, p = 0.241; TOST p =
    P(T ≥ (−0.5 + 0.1)/0.5 ... ) = max(sf(−0.8), cdf(−1.2)) = 0.759."""
    from scipy.stats import t

    s = shift_of("v", np.array([1, 1, 1, -1]), margin=0.1)
    assert (s.n, s.shift) == (4, -0.5)
    assert s.p_moved == pytest.approx(2 * t(3).sf(1.0)) and s.p_moved == pytest.approx(0.391, abs=1e-3)
    assert s.p_beyond == pytest.approx(t(3).sf(0.8)) and s.p_equivalent == pytest.approx(t(3).sf(-0.8))
    (gated,) = gate([s])
    assert gated.verdict == "inconclusive" and gated.prompts_needed == prompts_needed(gated)
    # sd 1.0, gap 0.4 beyond the margin: ((1.645 + 0.842) × 1.0 / 0.4)² = 38.7 → 39 prompts
    assert gated.prompts_needed == 39
    assert shift_of("v", np.array([np.nan, 1.0])).n == 1  # a prompt without a verdict is left out


def test_calibration_no_drift_rarely_fails_and_a_shift_of_the_margin_is_caught() -> None:
    """Seeded simulations through the real functions, three gated vibes, margin 0.1, 700 prompts (the size at which a
    shift of the margin has 80% power after Holm over three: ((2.39 + 0.84) × 0.77 / 0.1)² ≈ 620). No drift (both
    runs drawn alike: ν symmetric, 30% each way): a gate fails in at most 5% of comparisons (it fails in none:
    failing needs a shift beyond the margin). A shift of the margin's size on one vibe (ν tilted by 0.1) is caught
    (moved, Holm over the three, and not passed) in at least 80%."""
    rng = np.random.default_rng(20261124)
    runs, n, margin = 300, 700, 0.1
    failed = caught = passed_null = 0
    for _ in range(runs):
        null = [shift_of(f"v{j}", rng.choice([-1, 0, 1], size=n, p=[0.3, 0.4, 0.3]), margin) for j in range(3)]
        checked = gate(null)
        failed += any(s.verdict == "fail" for s in checked)
        passed_null += all(s.verdict == "pass" for s in checked)
        tilted = [shift_of("v0", rng.choice([-1, 0, 1], size=n, p=[0.35, 0.4, 0.25]), margin),
                  *(shift_of(f"v{j}", rng.choice([-1, 0, 1], size=n, p=[0.3, 0.4, 0.3]), margin) for j in (1, 2))]
        first = gate(tilted)[0]
        caught += first.p_moved_adjusted is not None and first.p_moved_adjusted < 0.05 and first.verdict != "pass"
    assert failed / runs <= 0.05
    assert caught / runs >= 0.8, caught / runs
    assert passed_null / runs >= 0.8  # and no drift is shown as such: every gate passes TOST (85% here)
