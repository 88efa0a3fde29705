"""VibeCheck statistics against hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest

from engine.analyze import stats
from engine.judges.llm import parse_rating, parse_verdict, verdict_to_score
from engine.judges.verdicts import combine_orders, compare


def test_cohen_kappa_hand_computed() -> None:
    # 10 items, 3 classes. Agreement on 7 -> p_o = 0.7.
    a = [1, 1, 1, 0, 0, -1, -1, 1, 0, -1]
    b = [1, 1, 0, 0, 0, -1, 1, 1, -1, -1]
    # marginals: a: {1:4, 0:3, -1:3}; b: {1:4, 0:3, -1:3} -> p_e = (16 + 9 + 9) / 100 = 0.34
    assert stats.cohen_kappa(a, b) == pytest.approx((0.7 - 0.34) / (1 - 0.34))


def test_cohen_kappa_perfect_and_constant() -> None:
    assert stats.cohen_kappa([1, 0, -1], [1, 0, -1]) == 1.0
    assert stats.cohen_kappa([1, 1], [1, 1]) == 1.0


def test_fleiss_kappa_hand_computed() -> None:
    # 4 items, 3 raters, categories {0, 1}
    ratings = [[1, 1, 1], [1, 1, 0], [0, 0, 0], [0, 1, 0]]
    # P_i: 1, 1/3, 1, 1/3 -> mean 2/3; p_1 = 6/12 = 0.5 -> P_e = 0.5
    assert stats.fleiss_kappa(ratings) == pytest.approx((2 / 3 - 0.5) / 0.5)


def test_agreement_dispatch() -> None:
    assert stats.agreement([[1, 0]]) is None
    assert stats.agreement([[1, 0, 1], [1, 0, 1]]) == 1.0
    assert stats.agreement([[1, 0], [1, 0], [1, 0]]) == 1.0


def test_ensemble_rounds_half_away_from_zero() -> None:
    assert stats.ensemble([1, 0]) == 1 and stats.ensemble([-1, 0]) == -1
    assert stats.ensemble([1, -1]) == 0 and stats.ensemble([1, 1, -1]) == 0  # 1/3 rounds to 0
    assert stats.ensemble([1, 1, 0]) == 1 and stats.ensemble([]) == 0


def test_separability() -> None:
    assert stats.separability([1, 1, 0, -1]) == 0.25


def test_swap_logic() -> None:
    # judge says "answer 1" in both orders: position bias -> 0
    first = verdict_to_score("1", "ab")
    second = verdict_to_score("1", "ba")
    assert (first, second) == (1, -1) and combine_orders(first, second) == 0
    # consistent: A higher in both orders
    assert combine_orders(verdict_to_score("1", "ab"), verdict_to_score("2", "ba")) == 1
    assert combine_orders(verdict_to_score("2", "ab"), verdict_to_score("1", "ba")) == -1
    # N/A or invalid in either run -> 0
    assert combine_orders(verdict_to_score("0", "ab"), verdict_to_score("2", "ba")) == 0
    assert combine_orders(None, 1) == 0


@pytest.mark.parametrize(("text", "expected"), [
    ("A is longer.\nVerdict: 1", "1"),
    ("**Verdict:** 2", "2"),
    ("verdict - Answer 2", "2"),
    ("Verdict: N/A", "0"),
    ("VERDICT: tie", "0"),
    ("Verdict: 1 ... on reflection, Verdict: 2", "2"),
    ("I think the first one.", None),
    ("", None),
])
def test_parse_verdict(text: str, expected: str | None) -> None:
    assert parse_verdict(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Explanation: close.\nRating: 4", 4), ("rating: 5/5", 5), ("Rating: 7", None), ("Rating: 10", None),
    ("no score here", None), ("**Rating**: 2", 2),
])
def test_parse_rating(text: str, expected: int | None) -> None:
    assert parse_rating(text) == expected


def test_metric_comparison_with_tolerance() -> None:
    assert compare(100, 96, 0.05, relative=True) == 0  # 4% apart: a tie
    assert compare(100, 90, 0.05, relative=True) == 1
    assert compare(0.10, 0.13, 0.02, relative=False) == -1


def test_regression_accuracy_on_tiny_fixed_dataset() -> None:
    # feature 0 decides the label except for one training flip; feature 1 is noise
    x_train = np.array([[1, 0], [1, 1], [1, -1], [-1, 0], [-1, 1], [-1, -1], [1, 1], [-1, 0]], dtype=float)
    y_train = np.array([1, 1, 1, 0, 0, 0, 0, 1], dtype=float)
    x_test = np.array([[1, 0], [-1, 1], [1, -1], [-1, -1]], dtype=float)
    y_test = np.array([1, 0, 0, 0], dtype=float)
    result = stats.fit_logistic("model_matching", ["a", "b"], x_train, y_train, x_test, y_test)
    assert result.test_accuracy == 0.75  # predicts sign of feature 0: right on 3 of 4
    assert result.train_accuracy == 0.75
    assert result.coefficients[0] > 0 and result.p_values[0] is not None and 0 < result.p_values[0] < 1


def test_split_is_seeded_and_order_free() -> None:
    ids = [f"i{n}" for n in range(10)]
    assert stats.split(ids, 0.5, 3) == stats.split(list(reversed(ids)), 0.5, 3)
    train, test = stats.split(ids, 0.5, 3)
    assert len(train) == 5 and not set(train) & set(test)
