"""`vibe monitor`: a baseline run and later looks (run folders, or data files run as the baseline's spec), each
look's verdicts on the prompts it shares with the baseline fed to anytime-valid e-processes. The e-process by
hand; its level and power in seeded streams through the real functions; the command on real runs of recorded
answers, stopped by SIGKILL midway and started again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from test_compare import SPEC as COMPARED
from test_report import open_pages

from engine.drift.anytime import CAP, log_wealth, running_interval, stakes, track
from engine.drift.monitor import State, unit_batch, watch

SPEC = COMPARED.replace("GATES", "{verbosity: {max_shift: 0.1}}")  # two recorded models, a metric panel


def test_the_e_process_by_hand() -> None:
    """Units 1, 1, 0, −1, 1 against "the shift is above 0.1". Before each unit the stake is the aGRAPA bet from
    the units before it and one pseudo-unit (mean 0, variance 1), capped at 0.5/1.1:
    unit 1: mean 0, edge −0.1: no stake, factor 1;
    unit 2: mean 1/2, variance (1 + 1 − 2·¼)/2 = 3/4, edge 0.4: λ = 0.4/(0.75 + 0.16) = 0.43956, factor 1 + λ·0.9;
    unit 3: mean 2/3, variance 5/9, edge 0.5667: λ = 0.6464, capped at 0.45455, factor 1 − 0.45455·0.1;
    unit 4: mean 1/2, variance 1/2, edge 0.4: λ = 0.606, capped, factor 1 − 0.45455·1.1 = 0.5;
    unit 5: mean 1/5, variance 3.8/5, edge 0.1: λ = 0.1/0.77 = 0.12987, factor 1 + 0.12987·0.9."""
    x = np.array([1.0, 1.0, 0.0, -1.0, 1.0])
    cap = CAP / 1.1
    lam = [0.0, 0.4 / 0.91, cap, cap, 0.1 / 0.77]
    assert stakes(x, 0.1, 1) == pytest.approx(lam, abs=1e-12)
    factors = [1.0, 1 + lam[1] * 0.9, 1 - cap * 0.1, 1 - cap * 1.1, 1 + lam[4] * 0.9]
    assert np.exp(log_wealth(x, 0.1, 1)) == pytest.approx(np.cumprod(factors), rel=1e-12)
    assert np.exp(log_wealth(x, 0.1, 1))[-1] == pytest.approx(0.74394, abs=1e-5)
    # the mirror image ("below −0.1") stakes nothing while the units sit above it
    assert (stakes(x, -0.1, -1)[:3] == 0).all()
    looks = track([x[:2], x[2:]], 0.1, threshold=20)
    assert [look.units for look in looks] == [2, 5]
    assert looks[1].e_above == pytest.approx(0.74394, abs=1e-5)
    assert looks[0].batch_mean == 1.0 and looks[1].running_mean == pytest.approx(0.4)


def test_a_look_s_units_are_prompts_or_conversation_means_in_id_order() -> None:
    """ν is +1 where the base sits higher: the unit's shift is −ν; a conversation's is the mean of its turns'
    (NaN turns left out), and the units are bet on sorted by id whatever order the pairs came in."""
    nu = np.array([[1.0], [-1.0], [0.0], [np.nan], [-1.0]])
    prompts = unit_batch("day1", "x", ["p3", "p1", "p2", "p0", "p4"], nu, None, ["v"])
    assert prompts.ids == ["p0", "p1", "p2", "p3", "p4"] and prompts.values["v"] == [None, 1.0, 0.0, -1.0, 1.0]
    talks = unit_batch("day1", "x", ["a1", "a2", "b1", "b2", "b3"], nu, ["a", "a", "b", "b", "b"], ["v"])
    assert talks.unit == "conversations" and talks.ids == ["a", "b"]
    assert talks.values["v"] == [0.0, 0.5]


def _state(shifts: np.ndarray, margin: float = 0.1) -> State:
    """A monitor of shifts[look, unit, vibe] (+1: the look sits higher) over vibes v0, v1, ... all gated."""
    names = [f"v{j}" for j in range(shifts.shape[-1])]
    state = State("b", "m", names, dict.fromkeys(names, margin))
    for k, look in enumerate(shifts):
        state.looks.append(unit_batch(f"d{k}", "s", [f"{k}-{i:03d}" for i in range(len(look))], -look, None, names))
    return state


def test_seeded_streams_on_the_margin_almost_never_cross_and_a_planted_move_is_found() -> None:
    """400 monitors of two gated vibes whose shift sits exactly on the margin (the least favourable null), 30
    looks of 50 prompts: the share that ever claims "moved beyond" is at most α (it is far below: Ville's bound
    is loose). The same vibes moving to twice the margin from look 10 are caught by look 30 in most monitors, and
    never before look 10 beyond what the level allows."""
    rng = np.random.default_rng(7)

    def draw(up: float, down: float, n: int) -> np.ndarray:
        u = rng.random(n)
        return np.where(u < up, 1.0, np.where(u < up + down, -1.0, 0.0))

    alarms, caught, early = 0, 0, 0
    for _ in range(400):
        still = np.stack([draw(0.2, 0.1, 1500), draw(0.1, 0.2, 1500)], axis=-1).reshape(30, 50, 2)
        alarms += any(w.crossed is not None for w in watch(_state(still)))
        moving = still.copy().reshape(1500, 2)
        moving[450:, 0] = draw(0.25, 0.05, 1050)
        crossed = watch(_state(moving.reshape(30, 50, 2)))[0].crossed
        caught += crossed is not None and crossed >= 9
        early += crossed is not None and crossed < 9
    assert alarms / 400 <= 0.05
    assert early / 400 <= 0.05
    assert caught / 400 >= 0.6


def test_the_interval_by_hand_and_never_empty_after_a_move() -> None:
    """The confidence sequence is the running mean ± √((t + ρ)·log((t + ρ)/(ρα²)))/t, within [−1, 1]: by hand at
    α = 0.01 after 100 units. A stream that moves from 0 to +0.5 halfway keeps an interval holding the average of
    the units' means (0.25 over both halves), where the set of constant means neither side rejects was empty."""
    from engine.drift.anytime import _rho

    rho = _rho(0.01)
    bound = (500 + rho) * np.log((500 + rho) / (rho * 1e-4))  # the narrowest at 500 units among nearby ρ
    assert all(bound <= (500 + r) * np.log((500 + r) / (r * 1e-4)) for r in (rho * 0.9, rho * 1.1))
    x = np.r_[np.zeros(50), np.ones(50)]
    low, high = running_interval(x, 0.01)
    half = np.sqrt((100 + rho) * np.log((100 + rho) / (rho * 1e-4))) / 100
    assert (low[-1], high[-1]) == pytest.approx((0.5 - half, min(1.0, 0.5 + half)))
    rng = np.random.default_rng(3)
    moved = np.r_[rng.choice([-1.0, 0.0, 1.0], 500, p=[0.1, 0.8, 0.1]),
                  rng.choice([-1.0, 0.0, 1.0], 500, p=[0.0, 0.5, 0.5])]
    looks = track([moved[k * 50:(k + 1) * 50] for k in range(20)], 0.1, threshold=100)
    assert all(look.low <= look.running_mean <= look.high for look in looks)
    assert looks[-1].low <= 0.25 <= looks[-1].high and looks[-1].e_above >= 100


def _runs(folder: Path, name: str, chatty: dict[int, int], prompts: range) -> Path:
    """A data file of recorded answers: chatty answers of `chatty[i]` words (40 unless named), terse ones 3."""
    rows = [{"id": f"p{i}", "q": f"Question {i}?", "terse": "Short answer here.",
             "chatty": " ".join(["word"] * chatty.get(i, 40)) + ("!" if i % 2 else ".")} for i in prompts]
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _vibe(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def _baseline(tmp: Path) -> Path:
    _runs(tmp, "base", {}, range(60))
    (tmp / "base.yaml").write_text(SPEC.replace("DATA", "base.jsonl"), encoding="utf-8")
    done = _vibe(tmp, "run", "base.yaml", "--out", "runs/base", "--no-report", "--quiet", "--cache", "c.sqlite")
    assert done.returncode == 0, done.stderr
    return tmp / "runs" / "base"


@pytest.mark.slow
def test_daily_log_files_a_planted_move_fails_the_gate_at_the_look_it_crosses(tmp_path: Path) -> None:
    """A folder of four daily files of 40 of the baseline's prompts each (one file a day, in name order): the
    first two the baseline's own answers, the last two with chatty answers of 10 words on every prompt. No claim
    on days 1 and 2 (with --gate: exit 0); on day 3 verbosity moves below −0.1 (every unit −1: the stakes grow
    as the last 150 units' mean passes −0.1), the gate fails (exit 1), and stays
    failed on day 4. The page draws every vibe and links the crossing look's pairs; prompts not in the baseline
    are counted and left out."""
    base = _baseline(tmp_path)
    days = tmp_path / "days"
    days.mkdir()
    for day, words in ((1, 40), (2, 40), (3, 10), (4, 10)):
        _runs(days, f"2026-11-0{day}", dict.fromkeys(range(100), words), range(day * 5, day * 5 + 40))
    first = days.parent / "first"
    first.mkdir()
    for day in (1, 2):
        (days / f"2026-11-0{day}.jsonl").rename(first / f"2026-11-0{day}.jsonl")
    quiet = _vibe(tmp_path, "monitor", str(base), "first", "--model", "chatty", "--out", "mon", "--gate",
                  "--cache", "c.sqlite", "--quiet")
    assert quiet.returncode == 0, quiet.stderr
    assert "look 1 2026-11-01: 40 prompts; no vibe moved beyond its margin" in quiet.stdout
    assert "look 2 2026-11-02: 40 prompts; no vibe moved beyond its margin" in quiet.stdout
    moved = _vibe(tmp_path, "monitor", str(base), "first", "days", "--model", "chatty", "--out", "mon", "--gate",
                  "--cache", "c.sqlite", "--quiet")
    assert moved.returncode == 1, moved.stderr
    assert "look 1 2026-11-01" not in moved.stdout  # already in the state: not judged or printed again
    assert "look 3 2026-11-03: 40 prompts; verbosity moved below −0.1 (look 3, e = " in moved.stdout
    assert "gate: chatty · verbosity: moved below −0.1 at look 3 (2026-11-03)" in moved.stderr
    body = json.loads((tmp_path / "mon" / "monitor.json").read_text())
    verbosity = next(v for v in body["vibes"] if v["vibe"] == "verbosity")
    assert verbosity["below"] == 2 and verbosity["above"] is None
    third = verbosity["looks"][2]
    # the interval is the normal-mixture confidence sequence around the running mean −1/3 (120 units, α = 1/100)
    assert third["batch_mean"] == -1.0 and third["running_mean"] == pytest.approx(-1 / 3)
    low, high = running_interval(np.r_[np.zeros(80), -np.ones(40)], 0.01)
    assert (third["low"], third["high"]) == pytest.approx((low[-1], high[-1]))
    assert verbosity["looks"][1]["e_below"] == 1.0  # ties only: nothing staked
    stream = np.r_[np.zeros(80), -np.ones(40)]  # the units in the order bet on: two quiet looks, then 40 moves
    assert third["e_below"] == pytest.approx(float(np.exp(log_wealth(stream, -0.1, -1))[-1]), rel=1e-9)
    assert third["e_below"] > 1_000  # past the family's threshold of 5 claims / 0.05 = 100
    md = (tmp_path / "mon" / "monitor.md").read_text()
    assert md.splitlines()[2].startswith("**1 of 1 gated vibes moved beyond their margins**: verbosity moved below")
    assert body["looks"][3]["only_look"] == 0 and body["looks"][0]["units"] == 40
    page = (tmp_path / "mon" / "index.html").read_text()
    assert page.count("<svg") == 2
    assert "2026-11-03" in page and "since <code title=" in page and ">../runs/base</code>" in page
    # in a browser, at a desktop's width and a phone's: every asset there, nothing wider than the window
    assert open_pages([tmp_path / "mon" / "index.html"], tmp_path, widths=(1280, 390)) == []
    link = next(r for r in _links(page) if "#vibe=verbosity" in r)
    assert (tmp_path / "mon" / link.split("#")[0]).is_file() and link.endswith("&dir=1")  # the base sat higher
    assert link.startswith("looks/2026-11-03/judged/run/explore/")


def _links(page: str) -> list[str]:
    import html
    import re

    return [html.unescape(link) for link in re.findall(r'href="([^"]+)"', page)]


@pytest.mark.slow
def test_a_monitor_killed_midway_and_started_again_gives_the_uninterrupted_answer(tmp_path: Path) -> None:
    """Four look runs; one monitor reads them all at once, another is killed (SIGKILL) once its state holds two
    looks and is then started again on the same four: the state keeps every finished look, the restarted monitor
    judges only the rest, and every figure of both monitors is the same."""
    base = _baseline(tmp_path)
    looks = []
    for day, words in ((1, 40), (2, 12), (3, 12), (4, 40)):
        _runs(tmp_path, f"day{day}", dict.fromkeys(range(0, 60, 3), words), range(60))
        (tmp_path / f"day{day}.yaml").write_text(SPEC.replace("DATA", f"day{day}.jsonl"), encoding="utf-8")
        done = _vibe(tmp_path, "run", f"day{day}.yaml", "--out", f"runs/day{day}", "--no-report", "--quiet",
                     "--cache", "c.sqlite")
        assert done.returncode == 0, done.stderr
        looks.append(f"runs/day{day}")
    whole = _vibe(tmp_path, "monitor", str(base), *looks, "--model", "chatty", "--out", "whole", "--cache",
                  "c.sqlite", "--quiet")
    assert whole.returncode == 0, whole.stderr
    process = subprocess.Popen([sys.executable, "-m", "engine", "monitor", str(base), *looks, "--model", "chatty",
                                "--out", "killed", "--cache", "c.sqlite", "--quiet"], cwd=tmp_path,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state = tmp_path / "killed" / "monitor-state.json"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        if state.is_file() and len(json.loads(state.read_text())["looks"]) >= 2:
            os.kill(process.pid, signal.SIGKILL)
            break
        time.sleep(0.02)
    process.wait()
    kept = len(json.loads(state.read_text())["looks"])
    assert process.returncode == -signal.SIGKILL and 2 <= kept < 4
    again = _vibe(tmp_path, "monitor", str(base), *looks, "--model", "chatty", "--out", "killed", "--cache",
                  "c.sqlite", "--quiet")
    assert again.returncode == 0, again.stderr
    assert f"look {kept + 1} day{kept + 1}" in again.stdout and "look 1 day1" not in again.stdout
    one, two = (json.loads((tmp_path / d / "monitor.json").read_text()) for d in ("whole", "killed"))
    assert one["vibes"] == two["vibes"] and len(one["looks"]) == 4
    assert [look["units"] for look in one["looks"]] == [look["units"] for look in two["looks"]]
    assert (tmp_path / "whole" / "monitor.md").read_text() == (tmp_path / "killed" / "monitor.md").read_text()


@pytest.mark.slow
def test_a_look_the_monitor_cannot_read_is_a_located_error_and_keeps_the_looks_before(tmp_path: Path) -> None:
    """A look file whose prompts the baseline never asked names the look and says why; the looks before it stay in
    the state. A second baseline into the same output folder is refused: its family would differ."""
    base = _baseline(tmp_path)
    days = tmp_path / "days"
    days.mkdir()
    _runs(days, "a-good", {}, range(40))
    _runs(days, "b-other", {}, range(100, 140))
    done = _vibe(tmp_path, "monitor", str(base), "days", "--model", "chatty", "--out", "mon", "--cache", "c.sqlite",
                 "--quiet")
    assert done.returncode == 2
    assert "error: look b-other (days/b-other.jsonl): model 'chatty': the runs share no prompt" in done.stderr
    assert [look["name"] for look in json.loads((tmp_path / "mon" / "monitor-state.json").read_text())["looks"]] \
        == ["a-good"]
    # the look judged before the error is on the console, the page, the comment and monitor.json, with the error
    assert "a-good" in done.stdout
    page = (tmp_path / "mon" / "index.html").read_text(encoding="utf-8")
    assert "the last, a-good" in page and "Stopped: look b-other (days/b-other.jsonl)" in page
    assert "**Stopped:** look b-other" in (tmp_path / "mon" / "monitor.md").read_text(encoding="utf-8")
    assert json.loads((tmp_path / "mon" / "monitor.json").read_text())["stopped"].startswith("look b-other")
    slot = _vibe(tmp_path, "monitor", str(base), "days/a-good.jsonl", "--out", "mon2", "--cache", "c.sqlite")
    assert slot.returncode == 2 and "name the one to watch with --model" in slot.stderr
    other = tmp_path / "other"
    other.mkdir()
    (other / "base.jsonl").write_text((tmp_path / "base.jsonl").read_text(), encoding="utf-8")
    (other / "base.yaml").write_text(SPEC.replace("DATA", "base.jsonl").replace("max_shift: 0.1", "max_shift: 0.2"),
                                     encoding="utf-8")
    ran = _vibe(other, "run", "base.yaml", "--out", "run", "--no-report", "--quiet", "--cache", "../c.sqlite")
    assert ran.returncode == 0, ran.stderr
    mixed = _vibe(tmp_path, "monitor", "other/run", "days/a-good.jsonl", "--model", "chatty", "--out", "mon",
                  "--cache", "c.sqlite")
    assert mixed.returncode == 2 and "this monitor's state was started with baseline" in mixed.stderr


CONVERSATION_SPEC = """\
name: {name}
models: {{a: {{provider: recorded}}, b: {{provider: recorded}}}}
judges: {{m: {{kind: metric}}}}
datasets:
  t: {{format: inspect-messages, source: {{paths: [a.json, b.json]}}}}
vibes: [{{name: verbosity, low: short, high: long, metric: length_words}}]
gates: {{verbosity: {{max_shift: 0.2}}}}
analyses:
  vibecheck: {{dataset: t, models: [a, b], judges: [m]}}
"""


def test_conversations_are_the_unit_of_a_look(tmp_path: Path) -> None:
    """Runs of Inspect logs of four three-turn conversations; in the look, model a's third answer is longer. Each
    conversation is one unit whose shift is the mean over its turns (1/3: one turn of three sits higher), and the
    look counts 4 conversations, not 12 turns."""
    from test_conversation_units import inspect_log

    from engine.cli import main
    from engine.pipeline import run_spec

    runs = {}
    for name, last in (("base", "Short."), ("look", "A much longer third answer than before, with detail.")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "a.json").write_text(json.dumps(inspect_log("a", last)))
        (folder / "b.json").write_text(json.dumps(inspect_log("b", "Short.")))
        (folder / "spec.yaml").write_text(CONVERSATION_SPEC.format(name=f"conv-{name}"))
        runs[name] = run_spec(folder / "spec.yaml", folder / "run", tmp_path / "c.sqlite", quiet=True, report=False)[2]
    out = tmp_path / "mon"
    assert main(["monitor", str(runs["base"]), str(runs["look"]), "--model", "a", "--out", str(out), "--cache",
                 str(tmp_path / "c.sqlite"), "--quiet"]) == 0
    state = json.loads((out / "monitor-state.json").read_text())
    (look,) = state["looks"]
    assert look["unit"] == "conversations" and len(look["ids"]) == 4
    assert look["values"]["verbosity"] == pytest.approx([1 / 3] * 4)
    assert "4 conversations" in (out / "monitor.md").read_text()


@pytest.mark.slow
def test_a_margin_changed_in_the_spec_is_refused_never_ignored(tmp_path: Path) -> None:
    """Only a gate's max_shift changes and the baseline is run again into its folder: the plan's tasks are the
    same, yet the folder's spec.json now holds the new margin, so the monitor whose state was started on the old
    one refuses the next look rather than judging it on the old margin."""
    base = _baseline(tmp_path)
    days = tmp_path / "days"
    days.mkdir()
    _runs(days, "a-day", {}, range(30))
    first = _vibe(tmp_path, "monitor", str(base), "days/a-day.jsonl", "--model", "chatty", "--out", "mon",
                  "--cache", "c.sqlite", "--quiet")
    assert first.returncode == 0, first.stderr
    (tmp_path / "base.yaml").write_text(SPEC.replace("DATA", "base.jsonl").replace("max_shift: 0.1", "max_shift: 0.3"),
                                        encoding="utf-8")
    again = _vibe(tmp_path, "run", "base.yaml", "--out", "runs/base", "--no-report", "--quiet", "--cache", "c.sqlite")
    assert again.returncode == 0, again.stderr
    written = json.loads((base / "spec.json").read_text(encoding="utf-8"))["document"]
    assert written["gates"]["verbosity"]["max_shift"] == 0.3
    _runs(days, "b-day", {}, range(30, 60))
    second = _vibe(tmp_path, "monitor", str(base), "days/b-day.jsonl", "--model", "chatty", "--out", "mon",
                   "--cache", "c.sqlite", "--quiet")
    assert second.returncode == 2 and "started with margins" in second.stderr, second.stderr
