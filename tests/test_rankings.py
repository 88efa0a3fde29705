"""Rankings against hand-computed cases, and bootstrap coverage on simulated data with known strengths."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.analyze.rankings import Outcome, bradley_terry, elo, rank, sep_multiplier


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
    assert abs(controlled["A"] - controlled["B"]) < 50 and coef["length"] == pytest.approx(1.5, abs=0.2)


def test_bootstrap_reproducible_for_a_seed() -> None:
    outcomes = [Outcome("A", "B", 1.0), Outcome("B", "C", 1.0), Outcome("A", "C", 0.5), Outcome("C", "A", 0.0)] * 10
    first = rank("bradley_terry", outcomes, rounds=50, seed=7)
    second = rank("bradley_terry", outcomes, rounds=50, seed=7)
    assert first.ratings == second.ratings
    assert [r.model for r in first.ratings] == ["A", "B", "C"] and first.n_ties == 10


def test_bootstrap_ci_covers_truth() -> None:
    """Bradley–Terry 95% intervals cover the true (mean-anchored) strengths in >= 90% of 200 simulated runs.
    (Online Elo has no such truth to cover: with K=4 it is a shrunk, order-dependent estimate.)"""
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
