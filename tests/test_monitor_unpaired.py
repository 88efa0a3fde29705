"""`vibe monitor` on looks that share no prompt with the baseline (a day's folder of agent logs): each unit ranked
among every unit before it (`engine.drift.unpaired`), by hand; seeded nulls through the real functions hold the
family's level and a planted change is found; and the command end to end on day folders of logs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine.drift.anytime import track
from engine.drift.unpaired import rank_shifts, tie_breaks

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import agent_logs
from test_report import open_pages

VIBE = [sys.executable, "-m", "engine"]


def test_rank_shifts_by_hand() -> None:
    """Reference 1, 2, 2, 3 and θ = ½ throughout: a 2 has one value above it and two equal, p = (1 + ½·3)/5 =
    ½, x = 0; then a 4 (six values before it, none above or equal) p = ½/6, x = 5/6; then a 0, below all seven,
    p = (6 + ½)/7, x = −6/7."""
    assert rank_shifts([1, 2, 2, 3], [2, 4, 0], [0.5, 0.5, 0.5]) == pytest.approx([0.0, 5 / 6, -6 / 7])
    assert tie_breaks(["a|day-1|s1", "a|day-1|s2"]) == tie_breaks(["a|day-1|s1", "a|day-1|s2"])
    assert len(set(tie_breaks([f"unit {k}" for k in range(50)]))) == 50


def _monitors(draw, shift_at: int | None, monitors: int, seed: int) -> list[int | None]:
    """`monitors` streams of 30 baseline units and 20 looks of 10 units, through `rank_shifts` and
    `anytime.track` at a family of 2 claims (α = 0.05): the first look at which a claim was made, or None."""
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(monitors):
        history = list(draw(rng, 30, False))
        batches = []
        for look in range(20):
            values = draw(rng, 10, shift_at is not None and look >= shift_at)
            batches.append(np.array(rank_shifts(history, values, rng.random(10))))
            history += list(values)
        looks = track(batches, 0.0, 2 / 0.05)
        found.append(next((k for k, lk in enumerate(looks)
                           if max(lk.e_above or 0.0, lk.e_below or 0.0) >= 2 / 0.05), None))
    return found


def _counts(rng: np.random.Generator, n: int, moved: bool) -> np.ndarray:
    """A measure that is 0 in most units (heavy ties), more often positive once the model moved."""
    return rng.poisson(1.2 if moved else 0.4, n).astype(float)


def _skewed(rng: np.random.Generator, n: int, moved: bool) -> np.ndarray:
    return rng.lognormal(1.0 if moved else 0.0, 1.0, n)  # a move of one SD of the log


@pytest.mark.parametrize("draw", [_counts, _skewed], ids=["tied counts", "skewed values"])
def test_seeded_nulls_hold_the_level_and_a_planted_move_is_found(draw) -> None:
    """400 monitors that never move: claims in at most 5% of them (the guarantee; at most 32 of 400 allows for
    chance, where a valid monitor expects at most 20); 200 that move at look 5: found in at least 90%, within 5
    looks in the median."""
    nulls = _monitors(draw, None, 400, seed=1)
    assert sum(f is not None for f in nulls) <= 32, sum(f is not None for f in nulls)
    moved = _monitors(draw, 5, 200, seed=2)
    assert sum(f is not None for f in moved) >= 180
    assert np.median([f - 5 for f in moved if f is not None]) <= 5


def _logs(root: Path, days: int, per_day: int, switch: int | None) -> None:
    """`agent_logs.day_logs`, with a spec whose panel adds an embedding judge for a vibe without a metric."""
    agent_logs.day_logs(root, days, per_day, switch)
    spec = agent_logs.MONITOR_SPEC.format(a=agent_logs.MODELS["a"], b=agent_logs.MODELS["b"])
    spec = spec.replace("judges: {metrics: {kind: metric}}",
                        "judges: {metrics: {kind: metric}, minilm: {kind: embedding_axis}}")
    spec = spec.replace("  - {name: hedging, low: direct, high: hedged, metric: hedging}",
                        "  - {name: warmth, low: cold, high: warm, judges: [minilm]}")
    spec = spec.replace("judges: [metrics]}", "judges: [metrics, minilm]}")
    (root / "spec.yaml").write_text(spec)


def test_a_model_switch_in_day_folders_of_logs_is_found_and_said(tmp_path: Path) -> None:
    """12 day folders of 20 sessions, agent a switching to one that closes with a bulleted summary on day 5:
    `vibe monitor BASE days` reads each day's folder as a look (no run, no pair), ranks its sessions, and says
    headings moved up, on day 5 or after; warmth, measured by the embedding judge on one answer alone, is watched
    too. Started again on the same folders it judges nothing new and says the same. The page names the estimator
    and passes the browser checks."""
    _logs(tmp_path, 12, 20, switch=5)
    done = subprocess.run([*VIBE, "run", "spec.yaml", "--out", "runs/base", "--cache", "c.sqlite", "--quiet"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    command = [*VIBE, "monitor", "runs/base", "days", "--model", "a", "--out", "mon", "--cache", "c.sqlite", "--quiet"]
    first = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0].startswith("look 1 day-01: 20 conversations; no vibe moved")
    said = json.loads((tmp_path / "mon" / "monitor.json").read_text())
    assert said["design"] == "unpaired" and len(said["looks"]) == 12
    moved = {w["vibe"]: w["above"] for w in said["vibes"] if w["above"] is not None or w["below"] is not None}
    assert "headings" in moved and moved["headings"] >= 4, moved  # 0-based: day 5 or later
    assert {w["vibe"] for w in said["vibes"]} == {"formatting", "headings", "verbosity", "warmth"}
    again = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 0 and again.stdout.splitlines()[0] == lines[-2], again.stdout
    page = " ".join((tmp_path / "mon" / "index.html").read_text().split())
    assert "vibes moved" in page and "headings moved up" in page and "running rank shift" in page
    assert "smoothed conformal p-value" in page and "Measured: formatting by metrics" in page
    assert "warmth by minilm" in page
    assert open_pages([tmp_path / "mon" / "index.html"], tmp_path, widths=(1280, 390)) == []
