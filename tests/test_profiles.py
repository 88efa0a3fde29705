"""Many-model VibeCheck: vibe profiles against a reference, win rates, the heatmap in a browser."""

from __future__ import annotations

import csv
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine import stats
from engine.builtin_plugins.methods.vibecheck.profiles import win_rate
from engine.builtin_plugins.methods.vibecheck.records import PairVerdicts, VibeCheckResult
from engine.datasets.load import _comparison_label
from engine.pipeline import run_spec
from engine.spec.data_model import ComparisonLabels

# its runs are built once (session-scoped: a worker runs other files between this one's tests, and a module
# scope would build them again after each): every test of this file on one pytest-xdist worker
pytestmark = pytest.mark.xdist_group("profiles")

ROOT = Path(__file__).resolve().parent.parent
WORDS = ("the answer depends on the details you give and on how the parts fit together in practice "
         "so check each step carefully before moving on to the next one").split()
PROMPTS = 80


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _rows() -> list[dict]:
    """A reference, a model that writes about three times as much, and one that answers in bold lists;
    the labels favour the long answers (AlpacaEval-style numbers) and the list answers (names)."""
    rng = random.Random(7)
    rows = []
    for i in range(PROMPTS):
        reference = " ".join(_sentence(rng, rng.randint(8, 14)) for _ in range(3))
        longer = " ".join(_sentence(rng, rng.randint(8, 14)) for _ in range(9))
        listy = "\n".join(f"- **{rng.choice(WORDS)}**: {_sentence(rng, rng.randint(6, 10))}" for _ in range(3))
        longer_label = rng.choice([2.0, 2.0, 1.93, 1.0, 1.5]) if i % 2 else rng.choice([1.0, 1.07, 2.0])
        rows.append({"id": f"p{i}", "prompt": f"Question {i}: how do I do thing {i}?", "reference": reference,
                     "longer": longer, "listy": listy, "longer_label": longer_label,
                     "listy_label": rng.choice(["listy", "listy", "ref", "same"])})
    return rows


SPEC = """name: planted
models:
  reference: {{provider: recorded}}
  longer: {{provider: recorded}}
  listy: {{provider: recorded}}
judges:
  metrics: {{kind: metric, tolerance: 0.05}}
datasets:
  planted:
    source: {{path: {data}}}
    fields:
      id: id
      prompt: prompt
      outputs: {{reference: reference, longer: longer, listy: listy}}
      preferences:
        longer: {{column: longer_label, values: {{"1": reference, "2": longer}}}}
        listy: {{column: listy_label, values: {{listy: listy, ref: reference, same: tie}}}}
    labels: {{source: llm-judge, description: planted labels}}
vibes:
  - {{name: verbosity, low: short, high: long, metric: length_words}}
  - {{name: formatting, low: prose, high: lists, metric: list_density}}
  - {{name: emphasis, low: plain, high: bold, metric: bold_density}}
analyses:
  {analysis}
"""
MANY = """vibes-vs-ref:
    method: vibecheck
    dataset: planted
    models: [reference, longer, listy]
    reference: reference
    judges: [metrics]"""


def _write(tmp_path: Path, analysis: str) -> Path:
    data = tmp_path / "planted.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows()), encoding="utf-8")
    spec = tmp_path / "planted.yaml"
    spec.write_text(SPEC.format(data=data, analysis=analysis), encoding="utf-8")
    return spec


@pytest.fixture(scope="session")
def planted_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    tmp_path = tmp_path_factory.mktemp("profiles")
    summary, results, run_dir = run_spec(_write(tmp_path, MANY), tmp_path / "run", tmp_path / "cache.sqlite",
                                         quiet=True)
    assert summary.done == summary.total
    return run_dir, results


def test_planted_vibes_land_on_the_right_model(planted_run: tuple[Path, object]) -> None:
    run_dir, results = planted_run
    (profile,) = results.of("profiles")
    assert profile.reference == "reference" and profile.models == ["longer", "listy"]
    verbose, formatted = profile.cell("longer", "verbosity"), profile.cell("listy", "formatting")
    assert verbose.separability > 0.9 and verbose.ci_low > 0  # three times the words on every prompt
    assert formatted.separability > 0.9 and formatted.ci_low > 0
    assert profile.cell("listy", "emphasis").ci_low > 0 and profile.cell("longer", "emphasis").separability == 0
    assert verbose.measure > 2.5 * verbose.measure_reference
    # a cell's detectable size is at the level its corrected test faces: BH's α·(R + 1)/m, R clear of m tested
    # (it was the uncorrected 5% test's, a size the grid's test could not detect with that power)
    tested = [c for c in profile.cells if c.p_value is not None] + [t for t in profile.turns if t.p_value is not None]
    level = 0.05 * (sum(c.clear() for c in tested) + 1) / len(tested)
    for cell in profile.cells:
        if cell.nonzero is not None:
            assert cell.power_alpha == pytest.approx(min(level, 0.05))
            assert cell.mde == stats.sign_test_mde(cell.nonzero, cell.n, alpha=cell.power_alpha,
                                                   one_sided=cell.direction != 0)
    with (run_dir / "vibes-vs-ref" / "profiles.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0])[:6] == ["model", "vibe", "separability", "ci_low", "ci_high", "measure"]
    assert len(rows) == 2 * 3 and all(r["prompts"] == "all" and r["n"] == str(PROMPTS) for r in rows)
    # every comparison's own VibeCheck is written under the analysis, one folder per model
    assert (run_dir / "vibes-vs-ref" / "longer" / "vibes.csv").exists()
    assert (run_dir / "vibes-vs-ref" / "listy" / "pairs.jsonl").exists()


def test_vibe_run_of_a_profiles_only_spec_prints_its_summary(tmp_path: Path) -> None:
    # a run with no two-model vibecheck section once ended in AttributeError after writing every file
    spec = _write(tmp_path, MANY)
    done = subprocess.run([sys.executable, "-m", "engine", "run", str(spec), "--out", str(tmp_path / "run"),
                           "--cache", str(tmp_path / "cache.sqlite"), "--quiet"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "tasks done" in done.stdout and "leaderboard:" in done.stdout


def test_win_rates_read_each_models_own_labels(planted_run: tuple[Path, object]) -> None:
    run_dir, results = planted_run
    (profile,) = results.of("profiles")
    data = _rows()
    # hand count: a numeric label goes to its nearest key (1.93 -> the model, 1.07 -> the reference), 1.5 ties
    longer = [1.0 if r["longer_label"] > 1.5 else 0.5 if r["longer_label"] == 1.5 else 0.0 for r in data]
    listy = [{"listy": 1.0, "ref": 0.0, "same": 0.5}[r["listy_label"]] for r in data]
    rates = {w.model: w for w in profile.winrates}
    assert rates["longer"].win_rate == pytest.approx(np.mean(longer))
    assert rates["longer"].ties == longer.count(0.5) and rates["longer"].n == PROMPTS
    assert rates["listy"].win_rate == pytest.approx(np.mean(listy))
    assert rates["longer"].shorter == 0 and rates["longer"].extrapolates()  # always the longer answer
    with (run_dir / "vibes-vs-ref" / "winrates.csv").open(encoding="utf-8") as fh:
        rows = {r["model"]: r for r in csv.DictReader(fh)}
    assert list(next(iter(rows.values())))[:4] == ["model", "win_rate", "lc_win_rate", "n"]
    assert float(rows["listy"]["win_rate"]) == pytest.approx(np.mean(listy))
    assert profile.pooled and profile.pooled[0].feature.startswith("length") and profile.pooled_n > 0
    index = (run_dir / "index.html").read_text(encoding="utf-8")
    assert "an LLM judge preferred" in index and "extrapolation" in index


def test_lc_win_rate_is_the_raw_rate_when_lengths_are_equal() -> None:
    """With no length difference the GLM is an intercept alone, whose fit is the raw share of wins."""
    labels = ["m"] * 7 + ["r"] * 3 + ["tie"] * 2
    pairs = [PairVerdicts(f"p{i}", "test", label, "a", "b", {}, {}, chars=[100, 100]) for i, label in enumerate(labels)]
    rate = win_rate(VibeCheckResult("x", "m", "r", [], pairs, None, None, 0, []), seed=0, rounds=200)
    assert rate.win_rate == pytest.approx(8 / 12) and rate.lc_win_rate == pytest.approx(8 / 12, abs=1e-6)
    assert rate.ties == 2 and rate.ci_low < 8 / 12 < rate.ci_high


def test_the_penalized_length_controlled_rate_reads_graded_shares() -> None:
    """A bootstrap resample without a finite GLM fit is refitted by Firth's penalized likelihood, which takes labels
    of 0 and 1 only: a graded annotator's share (0.73 of the win) stopped it with an error. A share y counts as a
    win of weight y and a loss of weight 1 − y, as the binomial likelihood does. With no length to fit, the
    estimate is Firth's intercept-only one in closed form, (Σy + ½) / (n + 1); with lengths, the intercept that
    maximizes the penalized log-likelihood Σ y·log p + (1 − y)·log(1 − p) + ½·log det(XᵀWX), written out here."""
    from scipy.optimize import minimize
    from scipy.special import expit

    from engine.builtin_plugins.methods.vibecheck.profiles import _lc_penalized

    y = np.array([0.73, 0.2, 1.0, 0.0, 0.6])
    assert _lc_penalized(y, np.zeros(5)) == pytest.approx((y.sum() + 0.5) / 6)
    length = np.array([1.0, -1.0, 2.0, 0.0, 0.5])
    x = np.c_[np.ones(5), length]

    def penalized(beta: np.ndarray) -> float:
        p = expit(x @ beta)
        information = x.T @ (x * (p * (1 - p))[:, None])
        return -float(np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)) + 0.5 * np.linalg.slogdet(information)[1])

    best = minimize(penalized, np.zeros(2), method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12})
    assert _lc_penalized(y, length) == pytest.approx(float(expit(best.x[0])), abs=1e-4)


def test_numeric_labels_go_to_the_nearest_key() -> None:
    labels = ComparisonLabels("c", {"1": "ref", "2": "model"})
    assert [_comparison_label(labels, v) for v in ("1.0", "1.49", "1.5", "1.93", "2", "")] == [
        "ref", "ref", "tie", "model", "model", None]
    assert _comparison_label(ComparisonLabels("c", {"a": "ref"}), "b") == "b"  # unread: check_labels names it


def test_two_models_compared_with_a_reference_match_the_pairwise_analysis(tmp_path: Path) -> None:
    """A two-model VibeCheck and the same comparison inside a profile analysis write the same files."""
    pairwise = ("pairwise:\n    method: vibecheck\n    dataset: planted\n    models: [longer, reference]\n"
                "    judges: [metrics]")
    profiled = ("profiled:\n    method: vibecheck\n    dataset: planted\n    models: [longer, reference]\n"
                "    reference: reference\n    judges: [metrics]")
    spec = _write(tmp_path, pairwise + "\n  " + profiled)
    run_spec(spec, tmp_path / "run", tmp_path / "cache.sqlite", quiet=True)
    for name in ("vibes.csv", "pairs.jsonl", "regressions.json"):
        assert (tmp_path / "run" / "pairwise" / name).read_bytes() == \
            (tmp_path / "run" / "profiled" / "longer" / name).read_bytes().replace(b'"profiled"', b'"pairwise"')


@pytest.mark.parametrize(("analysis", "message"), [
    ("bad:\n    method: vibecheck\n    dataset: planted\n    models: [reference, longer, listy]\n    judges: [metrics]",
     "analyses.bad.models: vibecheck of 3 models needs a 'reference'"),
    ("bad:\n    method: vibecheck\n    dataset: planted\n    models: [longer, listy]\n    reference: reference\n"
     "    judges: [metrics]", "analyses.bad.reference: reference 'reference' is not one of the analysis' models"),
])
def test_many_models_need_a_reference_among_them(tmp_path: Path, analysis: str, message: str) -> None:
    spec = _write(tmp_path, analysis)
    done = subprocess.run([sys.executable, "-m", "engine", "validate", str(spec)], capture_output=True, text=True)
    assert done.returncode == 2 and message in done.stderr and f"{spec}:" in done.stderr


def test_heatmap_has_a_row_per_model_and_a_column_per_vibe(planted_run: tuple[Path, object]) -> None:
    """Read from the page as Chromium renders it: the chart's data and its drawn cells."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Debian chromium is not installed (make install-test installs it)")
    from playwright.sync_api import sync_playwright

    run_dir, _ = planted_run
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((run_dir / "index.html").resolve().as_uri())
        page.wait_for_selector("#heatmap-1 svg")
        data = page.evaluate("""() => {
            const spec = JSON.parse(document.querySelector("script[data-chart='heatmap-1']").textContent);
            const rows = Object.values(spec.datasets)[0];
            return {models: [...new Set(rows.map(r => r.model))], vibes: [...new Set(rows.map(r => r.vibe))],
                    cells: document.querySelectorAll("#heatmap-1 svg g.mark-rect.role-mark path").length};
        }""")
        page.select_option("#heatmap-1 select", "formatting")  # reorder by a vibe: the listy model first
        page.wait_for_timeout(300)
        first = page.evaluate("""() => [...document.querySelectorAll('#heatmap-1 svg .role-axis-label text')]
            .map(t => t.textContent)""")
        profile_page = run_dir / "profiles" / "vibes-vs-ref-listy.html"
        page.goto(profile_page.resolve().as_uri())
        text = page.inner_text("main")
        browser.close()
    assert not errors
    assert sorted(data["models"]) == ["listy", "longer", "reference"]
    assert sorted(data["vibes"]) == ["emphasis", "formatting", "verbosity"] and data["cells"] == 9
    assert first.index("listy") < first.index("reference") < first.index("longer") or \
        first.index("listy") < first.index("longer")
    assert "more formatting than reference" in text and "puts lines in lists in 100% of its answers" in text


def test_publish_merges_runs_that_share_a_reference(planted_run: tuple[Path, object], tmp_path: Path) -> None:
    """A model's newest measurement wins on the site leaderboard, and each row names its run."""
    run_dir, _ = planted_run
    site = tmp_path / "site"
    shutil.copytree(ROOT / "site", site, ignore=shutil.ignore_patterns("site", "leaderboards"))

    def publish(run: Path, finished: str, *flags: str) -> subprocess.CompletedProcess:
        manifest = json.loads((run / "manifest.json").read_text())
        (run / "manifest.json").write_text(json.dumps({**manifest, "finished_at": finished}))
        return subprocess.run([sys.executable, "-m", "engine", "publish", str(run), "--site", str(site), *flags],
                              capture_output=True, text=True)

    older = tmp_path / "older"
    shutil.copytree(run_dir, older)
    profiles = json.loads((older / "vibes-vs-ref" / "profiles.json").read_text())
    profiles["models"] = ["longer"]  # an older run that measured one model, with other figures
    profiles["cells"] = [{**c, "separability": 0.123} for c in profiles["cells"] if c["model"] == "longer"]
    (older / "vibes-vs-ref" / "profiles.json").write_text(json.dumps(profiles))
    assert publish(run_dir, "2026-11-02T00:00:00+00:00").returncode == 0
    assert publish(older, "2026-10-01T00:00:00+00:00", "--leaderboard-only").returncode == 0
    (board,) = (site / "docs" / "leaderboards").glob("reference-*.md")
    text = board.read_text()
    assert "[planted](../runs/planted/index.html) (2026-11-02)" in text and "+0.12" not in text
    assert publish(older, "2026-12-01T00:00:00+00:00", "--leaderboard-only").returncode == 0
    rows = {line.split(" | ")[0]: line for line in board.read_text().splitlines() if line.startswith("| l")}
    assert "+0.12" in rows["| longer"] and "(2026-12-01)" in rows["| longer"] and "(2026-11-02)" in rows["| listy"]
    assert "reference: 2 models, 3 vibes" in (site / "docs" / "leaderboards" / "index.md").read_text()
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(site / "mkdocs.yml")],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    missing = subprocess.run([sys.executable, "-m", "engine", "publish", str(tmp_path), "--site", str(site)],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


def test_a_profile_cell_of_two_prompts_is_p_one_half_not_clear(tmp_path: Path) -> None:
    """Two prompts, the longer model longer on both: a cell of two +1 verdicts. The exact sign test gives
    p = 0.5 (a t-test on [+1, +1] gave p = 0, which survived any correction), so the profile page shows 0.500
    and calls nothing clear; beside it, that no test on two prompts could reach the level BH leaves the cell."""
    data = tmp_path / "planted.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows()[:2]), encoding="utf-8")
    spec = tmp_path / "planted.yaml"
    spec.write_text(SPEC.format(data=data, analysis=MANY), encoding="utf-8")
    summary, results, run_dir = run_spec(spec, tmp_path / "run", tmp_path / "cache.sqlite", quiet=True)
    assert summary.done == summary.total
    (profile,) = results.of("profiles")
    cell = profile.cell("longer", "verbosity")
    assert cell is not None and (cell.n, cell.separability, cell.direction) == (2, 1.0, 0)
    assert cell.p_value == 0.5 and not cell.clear() and cell.mde is None
    page = next((run_dir / "profiles").glob("*-longer.html")).read_text()
    row = page[page.index(">verbosity<"):]
    row = row[:row.index("</tr>")]
    assert cell.power_alpha is not None  # the level BH leaves the cell, which no test of two prompts reaches
    assert "p 0.500" in row and 'class="kept"' not in page
    assert f"too few prompts for p &lt; {cell.power_alpha:.3g}, the level BH leaves it" in row


def test_every_discovered_habit_is_kept_or_dropped_on_discovery_s_own_cross_fit(tmp_path: Path) -> None:
    """A many-model analysis discovers its phrase lexicons, and each lexicon's habits, once on every comparison's
    training pairs pooled, judging each by the lexicon mined from the other half of them. The comparisons' keep/drop
    cross-fitted their own pairs alone: other halves, other habits, and a habit not found there was read on the
    panel's verdicts, i.e. by the lexicon mined from those very pairs. Each discovered lexicon's and habit's
    training separability in every comparison is the mean of discovery's own cross-fitted verdicts over that
    comparison's training pairs."""
    from types import SimpleNamespace

    from engine.builtin_plugins.methods.vibecheck.discovery import statistical as discovery
    from engine.builtin_plugins.methods.vibecheck.discovery.propose import training_pairs
    from engine.builtin_plugins.methods.vibecheck.discovery.splits import POOLED, split_seed
    from engine.pipeline import prepare

    rng = random.Random(3)
    rows = []
    for i in range(120):
        def body() -> str:
            return " ".join(_sentence(rng, rng.randint(8, 12)) for _ in range(3))
        longer = "Broadly speaking, as a rule of thumb, " + body() if i % 2 else body() + " Hope this helps, good luck!"
        listy = body() + (" To sum it all up, in a nutshell." if i % 3 else " Feel free to reach out anytime.")
        rows.append({"id": f"p{i}", "prompt": f"Question {i}?", "reference": body(), "longer": longer,
                     "listy": listy})
    for row in rows:  # labels as the shared spec maps them; the discovery reads the answers alone
        row.update(longer_label=2.0, listy_label="same")
    data = tmp_path / "habits.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    spec = tmp_path / "habits.yaml"
    spec.write_text(SPEC.format(data=data, analysis=MANY).replace(
        "vibes:\n", "vibes:\n  - discover: {method: statistical, max_vibes: 8}\n"), encoding="utf-8")
    summary, _, run_dir = run_spec(spec, tmp_path / "run", tmp_path / "cache.sqlite", quiet=True)
    assert summary.done == summary.total
    lexicons = [v["name"] for v in json.loads((run_dir / "discovered_vibes.json").read_text())
                if "(phrases:" in v["origin"]]
    assert sum(name.startswith("phrasing_other_models_") for name in lexicons) >= 2  # a lexicon and its habits
    prepared = prepare(spec)
    analysis = prepared.spec.analyses["vibes-vs-ref"]
    texts = {r["id"]: r for r in rows}
    answers: dict[str, SimpleNamespace] = {}  # every answer's text, by its generation task id
    for model in ("longer", "listy"):
        for line in (run_dir / "vibes-vs-ref" / model / "pairs.jsonl").read_text().splitlines():
            pair = json.loads(line)
            answers[pair["output_a"]] = SimpleNamespace(output=texts[pair["item_id"]][model])
            answers[pair["output_b"]] = SimpleNamespace(output=texts[pair["item_id"]]["reference"])
    pooled = training_pairs(prepared, analysis, lambda ids: {i: answers[i] for i in ids if i in answers})
    columns = discovery.crossfit_lexicon_scores(pooled, POOLED, "reference", seed=split_seed(analysis))
    at = {pair.answers: k for k, pair in enumerate(pooled)}
    for model in ("longer", "listy"):
        pairs = [json.loads(line) for line in (run_dir / "vibes-vs-ref" / model / "pairs.jsonl").read_text()
                 .splitlines()]
        train = [at[(p["output_a"], p["output_b"])] for p in pairs if p["split"] == "train"]
        scores = {s["name"]: s for s in map(json.loads, (run_dir / "vibes-vs-ref" / model / "vibes.jsonl")
                                            .read_text().splitlines())}
        for name in lexicons:
            assert scores[name]["separability_train"] == pytest.approx(float(np.mean(columns[name][1][train])))


def test_the_win_rate_interval_is_tangos_on_the_verdict_scale_and_never_collapses() -> None:
    """7 wins, 3 losses and 2 ties of 12 prompts are verdicts +1 ×7, −1 ×3, 0 ×2 on the 2y − 1 scale: the
    interval is Tango's for P(win) − P(loss), halved and shifted back. 20 wins of 20 leave room below 100%
    (the percentile bootstrap printed [100%, 100%]); a graded annotator's shares take the betting interval."""
    from engine import betting, ternary
    from engine.builtin_plugins.methods.vibecheck.profiles import win_interval

    y = np.r_[np.ones(7), np.zeros(3), np.full(2, 0.5)]
    low, high, name = win_interval(y, [], "prompts", 0, 0)
    tango = ternary.interval(7, 3, 12)
    assert (low, high) == pytest.approx(((tango[0] + 1) / 2, (tango[1] + 1) / 2)) and name == "Tango's score interval"
    low, high, _ = win_interval(np.ones(20), [], "prompts", 0, 0)
    assert high == pytest.approx(1.0) and 0.8 < low < 0.97
    shares = np.array([0.73, 0.2, 1.0, 0.6, 0.9, 0.4])
    low, high, name = win_interval(shares, [], "prompts", 0, 0)
    expected = betting.interval(2 * shares - 1)
    assert (low, high) == pytest.approx(((expected[0] + 1) / 2, (expected[1] + 1) / 2)) and "betting" in name


def test_the_change_from_turn_one_takes_the_betting_interval_on_its_range() -> None:
    """Twenty conversations whose verdict did not move from turn 1: the change is 0 with an interval around it
    (a percentile bootstrap printed [0, 0]), the betting interval over [−2, 2] the change can take."""
    from engine import betting
    from engine.api.analysis import stats

    changes = np.zeros(20)
    low, high = stats.change_interval(changes)
    assert (low, high) == betting.interval(changes, low=-2.0, high=2.0) and low < 0 < high
