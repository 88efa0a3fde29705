"""Rankings against hand-computed cases, and bootstrap coverage on simulated data with known strengths."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from engine.analyze.rankings import Outcome, bradley_terry, elo, rank, scale_style, sep_multiplier


def test_bradley_terry_two_models_hand_computed() -> None:
    # A beats B 3 times of 4: the MLE odds are 3, so R_A - R_B = 400 * log10(3)
    outcomes = [Outcome("A", "B", 1.0)] * 3 + [Outcome("A", "B", 0.0)]
    ratings, _ = bradley_terry(outcomes, ["A", "B"])
    assert ratings["A"] - ratings["B"] == pytest.approx(400 * math.log10(3), abs=0.5)
    assert (ratings["A"] + ratings["B"]) / 2 == pytest.approx(1000)


def test_ties_count_half_or_are_dropped() -> None:
    outcomes = [Outcome("A", "B", 1.0), Outcome("A", "B", 0.5), Outcome("A", "B", 0.0), Outcome("A", "B", 1.0)]
    half, _ = bradley_terry(outcomes, ["A", "B"], ties="half")  # 2.5 wins of 4: odds 2.5 / 1.5
    assert half["A"] - half["B"] == pytest.approx(400 * math.log10(2.5 / 1.5), abs=0.5)
    dropped, _ = bradley_terry(outcomes, ["A", "B"], ties="drop")  # 2 of 3: odds 2
    assert dropped["A"] - dropped["B"] == pytest.approx(400 * math.log10(2), abs=0.5)


def test_elo_single_game_hand_computed() -> None:
    ratings = elo([Outcome("A", "B", 1.0)], ["A", "B"], k=4)
    assert ratings == {"A": 1002.0, "B": 998.0}
    tie = elo([Outcome("A", "B", 0.5)], ["A", "B"], k=4)
    assert tie == {"A": 1000.0, "B": 1000.0}


def test_sep_elo_multiplier() -> None:
    assert sep_multiplier(0.4) == pytest.approx(1.0)
    assert sep_multiplier(1.0) == pytest.approx(2 / (1 + math.exp(-6 * 0.6)))
    assert sep_multiplier(None) == 1.0
    weighted = elo([Outcome("A", "B", 1.0, delta=0.4)], ["A", "B"], k=4,
                   weight=lambda o: sep_multiplier(o.delta))
    assert weighted["A"] == pytest.approx(1002.0)


def test_style_control_explains_a_length_preference() -> None:
    # Equal models; people prefer the longer answer, and B's answer is the longer one 80% of the time.
    rng = np.random.default_rng(0)
    outcomes = []
    for _ in range(3000):
        length_diff = -1.0 if rng.random() < 0.8 else 1.0  # A's length minus B's, standardized
        p_a = 1 / (1 + math.exp(-1.5 * length_diff))
        outcomes.append(Outcome("A", "B", float(rng.random() < p_a), style=(length_diff,)))
    plain, _ = bradley_terry(outcomes, ["A", "B"])
    controlled, coef = bradley_terry(outcomes, ["A", "B"], style_names=["length"])
    # without control B looks ~140 points better: P(A wins) = .8*sigmoid(-1.5) + .2*sigmoid(1.5) = .309
    assert 100 < plain["B"] - plain["A"] < 180
    # the coefficient is per standard deviation of the feature: 1.5 × sd(±1 at 80/20) = 1.5 × 0.8
    assert abs(controlled["A"] - controlled["B"]) < 50 and coef["length"] == pytest.approx(1.2, abs=0.2)


def test_bootstrap_reproducible_for_a_seed() -> None:
    outcomes = [Outcome("A", "B", 1.0), Outcome("B", "C", 1.0), Outcome("A", "C", 0.5), Outcome("C", "A", 0.0)] * 10
    first = rank("bradley_terry", outcomes, rounds=50, seed=7)
    second = rank("bradley_terry", outcomes, rounds=50, seed=7)
    assert first.ratings == second.ratings
    assert [r.model for r in first.ratings] == ["A", "B", "C"] and first.n_ties == 10


@pytest.mark.slow
def test_bootstrap_ci_covers_truth() -> None:
    """Bradley–Terry 95% intervals cover the true (mean-anchored) strengths in >= 90% of 200 simulated runs.
    (Online Elo has no such truth to cover: with K=4 it is a shrunk, order-dependent estimate.) Not cut to save
    time: at 100 runs the coverage measured 0.895, so the bound needs all 800 intervals."""
    truth = {"m1": 1150.0, "m2": 1050.0, "m3": 950.0, "m4": 850.0}
    models = list(truth)
    rng = np.random.default_rng(123)
    covered = total = 0
    for run in range(200):
        outcomes = []
        for _ in range(240):
            i, j = rng.choice(4, 2, replace=False)
            a, b = models[i], models[j]
            p = 1 / (1 + 10 ** ((truth[b] - truth[a]) / 400))
            outcomes.append(Outcome(a, b, float(rng.random() < p)))
        for r in rank("bradley_terry", outcomes, models, rounds=60, seed=run).ratings:
            covered += int(r.ci_low <= truth[r.model] <= r.ci_high)
            total += 1
    assert covered / total >= 0.9, covered / total


def test_vibe_eval_ranking_leaves_ties_out_and_reports_the_rule() -> None:
    """Two models on six prompts, ratings 1–5, ties under a gap of 2: A is clearly better on 3 prompts, B on 1,
    and 2 are ties. Vibe-Eval fits only the decided ones: R_A − R_B = 400·log10(3/1). Counting ties as half
    wins instead gives 400·log10(4/2), a smaller gap."""
    from engine.builtin_plugins.methods.reference.scores import subset_rankings

    ratings = {"A": [5, 5, 4, 1, 3, 3], "B": [2, 1, 1, 4, 3, 4]}
    per_model = {m: {f"p{i}": ("normal", float(r)) for i, r in enumerate(rs)} for m, rs in ratings.items()}
    dropped = subset_rankings(per_model, {}, 2.0, ["A", "B"], "drop", seed=0)
    halves = subset_rankings(per_model, {}, 2.0, ["A", "B"], "half", seed=0)
    bt = next(r for r in dropped if r.method == "bradley_terry" and r.subset == "all")
    gap = {r.model: r.rating for r in bt.ratings}
    assert gap["A"] - gap["B"] == pytest.approx(400 * math.log10(3), abs=0.5)
    assert bt.ties == "drop" and bt.n_ties == 2 and bt.resample_unit == "prompt" and bt.n_units == 6
    half = {r.model: r.rating for r in next(r for r in halves if r.method == "bradley_terry").ratings}
    assert half["A"] - half["B"] == pytest.approx(400 * math.log10(2), abs=0.5)
    assert {r.subset for r in dropped} == {"all", "normal"}


def test_bootstrap_resamples_prompts_with_all_their_comparisons() -> None:
    """Three models rated on 12 prompts give three comparisons a prompt. The interval must come from drawing
    prompts, each with its three comparisons, exactly as this direct loop does."""
    rng = np.random.default_rng(4)
    outcomes = [Outcome(a, b, float(rng.random() < 0.6), unit=f"p{p}")
                for p in range(12) for a, b in (("A", "B"), ("A", "C"), ("B", "C"))]
    ranking = rank("bradley_terry", outcomes, ["A", "B", "C"], rounds=40, seed=9, unit="prompt")
    by_prompt = [[o for o in outcomes if o.unit == f"p{p}"] for p in range(12)]
    draw = np.random.default_rng(9)
    boot = {m: [] for m in "ABC"}
    for _ in range(40):
        sample = [o for g in draw.integers(0, 12, 12) for o in by_prompt[g]]
        ratings, _ = bradley_terry(sample, ["A", "B", "C"])
        for m in "ABC":
            boot[m].append(ratings[m])
    for row in ranking.ratings:
        low, high = np.percentile(boot[row.model], [2.5, 97.5])
        assert (row.ci_low, row.ci_high) == pytest.approx((low, high))
    assert ranking.resample_unit == "prompt" and ranking.n_units == 12


def test_style_features_are_normalised_differences_then_standardised() -> None:
    from engine.analyze.outcomes import STYLE_FEATURES, style_vector

    a = "# Title\n\n**Bold** and **more**.\n\n- one\n- two\n- three"
    b = "Plain words only here."
    assert STYLE_FEATURES == ("tokens", "headers", "lists", "bold")  # Arena's, in its order
    # cl100k tokens 19 vs 5 (tiktoken's count); 1 header vs 0; 3 list items vs 0; 2 bold vs 0;
    # each (a − b) / (a + b + 1)
    assert style_vector(a, b) == pytest.approx(((19 - 5) / 25, 1 / 2, 3 / 4, 2 / 3))
    assert style_vector(b, b) == (0.0, 0.0, 0.0, 0.0)
    # three battles: "a b c" is 3 tokens, "a" 1: the token column (0.4, −0.4, 0) has SD √(0.32/3); scaled, it
    # reads (√1.5, −√1.5, 0)
    battles = np.array([style_vector("a b c", "a"), style_vector("a", "a b c"), style_vector("a b", "c d")])
    assert battles[:, 0] == pytest.approx([0.4, -0.4, 0.0])
    assert scale_style(battles)[:, 0] == pytest.approx([math.sqrt(1.5), -math.sqrt(1.5), 0.0])
    assert scale_style(battles)[:, 1] == pytest.approx([0.0, 0.0, 0.0])  # no headers anywhere: left at 0
    # standardised: scaling a feature leaves its coefficient unchanged, so coefficients compare across features
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    battles = [Outcome("A", "B", float(rng.random() < 1 / (1 + math.exp(-v))), style=(v, v * 10)) for v in x]
    _, small = bradley_terry(battles, ["A", "B"], style_names=("x",))
    scaled = [Outcome(o.model_a, o.model_b, o.score, style=(o.style[1],)) for o in battles]
    _, large = bradley_terry(scaled, ["A", "B"], style_names=("x",))
    assert small["x"] == pytest.approx(large["x"], rel=1e-3) and small["x"] > 0.5


def test_agreement_rate_skips_comparisons_either_side_calls_a_tie() -> None:
    from engine.builtin_plugins.methods.reference.scores import pair_agreement

    ours = {"A": {"p0": ("hard", 5.0), "p1": ("hard", 4.0), "p2": ("normal", 1.0)},
            "B": {"p0": ("hard", 1.0), "p1": ("hard", 1.0), "p2": ("normal", 4.0)}}
    recorded = {"A": {"p0": ("hard", 5.0), "p1": ("hard", 2.0), "p2": ("normal", 5.0)},
                "B": {"p0": ("hard", 2.0), "p1": ("hard", 1.0), "p2": ("normal", 1.0)}}
    # p0: both prefer A (agree); p1: recorded gap 1 is a tie (skipped); p2: we prefer B, recorded A (disagree)
    rows = {r.subset: r for r in pair_agreement(ours, recorded, 2.0)}
    assert rows["all"].rate == 0.5 and rows["all"].n_compared == 2 and rows["all"].n_pairs == 3
    assert rows["all"].tie_rate == 0 and rows["all"].tie_rate_recorded == pytest.approx(1 / 3)
    assert rows["hard"].rate == 1.0 and rows["normal"].rate == 0.0


def test_recorded_scores_are_ranked_per_difficulty_as_vibe_eval_reports_them(tmp_path: Path) -> None:
    """Recorded 1–5 ratings of two models on 4 normal and 3 hard prompts: the rankings analysis ranks all
    prompts, then each difficulty alone (A wins every normal prompt, B every hard one), and the page shows a
    column per difficulty."""
    import json

    from engine.pipeline import run_spec

    rows = [{"id": f"n{i}", "q": f"normal {i}", "level": "difficulty-normal", "a": "x", "b": "y", "sa": 5, "sb": 1}
            for i in range(4)]
    rows += [{"id": f"h{i}", "q": f"hard {i}", "level": "difficulty-hard", "a": "x", "b": "y", "sa": 1, "sb": 5}
             for i in range(3)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "spec.yaml").write_text(
        "name: subsets\nmodels: {A: {provider: recorded}, B: {provider: recorded}}\n"
        "datasets:\n  d:\n    source: {path: d.jsonl}\n"
        "    fields: {id: id, prompt: q, difficulty: level, outputs: {A: a, B: b}, scores: {A: sa, B: sb}}\n"
        "analyses:\n  rankings: {dataset: d, models: [A, B], outcomes: scores, methods: [bradley_terry]}\n")
    summary, results, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
    assert summary.done == summary.total
    (result,) = results.of("rankings")
    by_subset = {r.subset: r for r in result.rankings}
    assert set(by_subset) == {"all", "normal", "hard"}
    assert (by_subset["normal"].n_units, by_subset["hard"].n_units, by_subset["all"].n_units) == (4, 3, 7)
    assert by_subset["normal"].ratings[0].model == "A" and by_subset["hard"].ratings[0].model == "B"
    page = (run_dir / "index.html").read_text()
    assert "By difficulty" in page and "hard (3 prompts)" in page and "normal (4 prompts)" in page
    # named for what they cover: percentile intervals cover a little less than their nominal 95%
    assert "percentile intervals from 1000 bootstrap rounds (nominal 95%" in page
    assert "<th>percentile interval</th>" in page


@pytest.mark.parametrize("block_rounds", [16, 1000])
def test_elo_rounds_played_side_by_side_equal_one_round_at_a_time(block_rounds: int,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The bootstrap plays its Elo rounds side by side (one NumPy step per game across rounds); each must equal
    `elo` run alone on that round's draw, also where draws differ in length (units of 1–3 battles, ties left
    out) and a model plays itself, whether the rounds are played in one block or in several."""
    from engine.analyze import rankings

    monkeypatch.setattr(rankings, "BLOCK_BYTES", 12 * 60 * block_rounds)  # 60 outcomes: blocks of ≤ block_rounds
    rng = np.random.default_rng(5)
    models = ["A", "B", "C"]
    outcomes = [Outcome(models[a], models[b], float(rng.choice([0.0, 0.5, 1.0])), unit=f"p{i // 3 if i < 30 else i}")
                for i, (a, b) in enumerate(rng.integers(0, 3, size=(60, 2)))]
    ranking = rank("elo", outcomes, models, rounds=70, seed=2, ties="drop", unit="prompt")
    units = list(dict.fromkeys(o.unit for o in outcomes))
    by_unit = [[o for o in outcomes if o.unit == u] for u in units]
    draw = np.random.default_rng(2)
    boot = {m: [] for m in models}
    for r in range(70):
        sample = [o for g in draw.integers(0, len(units), len(units)) for o in by_unit[g]]
        ratings = elo(sample, models, seed=2 + r + 1, ties="drop")
        for m in models:
            boot[m].append(ratings[m])
    point = elo(outcomes, models, seed=2, ties="drop")
    for row in ranking.ratings:
        assert row.rating == pytest.approx(point[row.model], abs=1e-9)
        low, high = np.percentile(boot[row.model], [2.5, 97.5])
        assert (row.ci_low, row.ci_high) == pytest.approx((low, high), abs=1e-9)


def test_a_graded_label_enters_a_ranking_as_its_share_of_the_win() -> None:
    """AlpacaEval's weighted annotator gives each battle a share of the win (0.73 to A, say). Four battles of A
    against B with shares 0.73, 0.2, 1 and 0.6: with two models Bradley–Terry's maximum-likelihood win probability
    is the mean score, 0.6325, so A sits 400·log10(0.6325/0.3675) above B. Read at their nearest ends (1, 0, 1, 1)
    the labels put it at 400·log10(3)."""
    from engine.analyze.outcomes import human_outcomes
    from engine.datasets.items import Battle, Item

    shares = [0.73, 0.2, 1.0, 0.6]
    items = [Item(f"p{i}", "q", outputs={"A": "x", "B": "y"},
                  battles=(Battle("A", "B", "A" if s > 0.5 else "B", share=s),)) for i, s in enumerate(shares)]
    outcomes = human_outcomes(items, ["A", "B"], features=None)
    assert [o.score for o in outcomes] == shares
    ratings, _ = bradley_terry(outcomes, ["A", "B"])
    assert ratings["A"] - ratings["B"] == pytest.approx(400 * math.log10(0.6325 / 0.3675), abs=0.5)


def test_an_empty_answer_costs_only_its_own_battles(tmp_path: Path) -> None:
    """Three models scored on six prompts; C's answer to p0 is empty. The whole prompt used to be dropped (three
    battles); now only C's two battles on it are, so A vs B is still fought on p0: 3 × 6 − 2 = 16 battles."""
    from engine.pipeline import run_spec

    rows = [{"id": f"p{i}", "q": f"q{i}", "a": "x", "b": "y y", "c": "z z z", "sa": 5, "sb": 3, "sc": 1}
            for i in range(6)]
    rows[0]["c"] = ""
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "spec.yaml").write_text(
        "name: gaps\nmodels: {A: {provider: recorded}, B: {provider: recorded}, C: {provider: recorded}}\n"
        "datasets:\n  d:\n    source: {path: d.jsonl}\n"
        "    fields: {id: id, prompt: q, outputs: {A: a, B: b, C: c}, scores: {A: sa, B: sb, C: sc}}\n"
        "analyses:\n  rankings: {dataset: d, models: [A, B, C], outcomes: scores, methods: [bradley_terry]}\n")
    _, results, _ = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True,
                             report=False)
    (result,) = results.of("rankings")
    (overall,) = [r for r in result.rankings if r.subset == "all"]
    assert overall.n_units == 6 and overall.n_outcomes == 16
