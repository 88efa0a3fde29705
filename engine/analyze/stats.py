"""Statistics shared by the analyses: agreement, separability, the judge-panel ensemble, held-out
logistic regression with Wald p-values, and seeded splits. Small pure functions, each checked against
hand-computed cases in the tests."""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def round_half_away(x: float) -> int:
    """Round to the nearest integer, halves away from zero (±0.5 → ±1), as the panel ensemble needs."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def ensemble(scores: Sequence[int]) -> int:
    """Panel verdict ν: the rounded mean of the judges' scores. Two judges: +1 when one says +1 and the
    other 0; a +1/−1 conflict gives 0."""
    return round_half_away(sum(scores) / len(scores)) if scores else 0


def separability(nu: Sequence[int]) -> float:
    """Mean panel verdict over pairs, in [−1, 1]; positive means model A leans to the vibe's high end."""
    return float(np.mean(nu)) if len(nu) else 0.0


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float:
    """Cohen's κ between two raters over the same items: (p_o − p_e) / (1 − p_e)."""
    if len(a) != len(b) or not a:
        raise ValueError("kappa needs two equally long, non-empty rating lists")
    n = len(a)
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[c] * cb[c] for c in set(ca) | set(cb)) / n**2
    return 1.0 if p_e == 1 else (p_o - p_e) / (1 - p_e)


def fleiss_kappa(ratings: Sequence[Sequence[int]]) -> float:
    """Fleiss' κ; `ratings[i]` holds every rater's category for item i (same number of raters per item)."""
    categories = sorted({c for row in ratings for c in row})
    n = len(ratings[0])
    if n < 2 or any(len(row) != n for row in ratings):
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of ratings per item")
    counts = np.array([[row.count(c) for c in categories] for row in map(list, ratings)], dtype=float)
    p_i = ((counts * (counts - 1)).sum(axis=1)) / (n * (n - 1))
    p_c = counts.sum(axis=0) / counts.sum()
    p_bar, p_e = p_i.mean(), float((p_c**2).sum())
    return 1.0 if p_e == 1 else float((p_bar - p_e) / (1 - p_e))


def agreement(per_judge: Sequence[Sequence[int]]) -> float | None:
    """κ across a panel: Cohen's for two judges, Fleiss' for more, None for a single judge."""
    if len(per_judge) < 2:
        return None
    if len(per_judge) == 2:
        return cohen_kappa(per_judge[0], per_judge[1])
    return fleiss_kappa([list(col) for col in zip(*per_judge, strict=True)])


def split(ids: Sequence[str], train_fraction: float, seed: int) -> tuple[list[str], list[str]]:
    """Seeded random train/test split of item ids (order of `ids` does not matter)."""
    ordered = sorted(ids)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(ordered))
    cut = round(len(ordered) * train_fraction)
    return [ordered[i] for i in perm[:cut]], [ordered[i] for i in perm[cut:]]


@dataclass(frozen=True)
class RegressionResult:
    """A held-out logistic regression: fitted on train, accuracy on test, one coefficient per feature."""

    target: str  # "model_matching" | "preference"
    features: list[str]
    coefficients: list[float]
    p_values: list[float | None]
    intercept: float
    train_accuracy: float
    test_accuracy: float
    n_train: int
    n_test: int


def fit_logistic(target: str, names: list[str], x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray,
                 y_test: np.ndarray) -> RegressionResult:
    """Accuracy from an L2 logistic regression (C by 5-fold CV on train). Coefficients and Wald p-values from
    an unpenalized statsmodels Logit on the same training data, so each coefficient matches its p-value;
    where that fit is impossible (perfect separation, singular design) the penalized coefficients are
    reported without p-values."""
    from sklearn.linear_model import LogisticRegression, LogisticRegressionCV

    if len(set(y_train.tolist())) < 2:
        raise ValueError(f"{target}: the training labels have a single class")
    folds = min(5, int(np.bincount(y_train.astype(int)).min()))
    model = (LogisticRegressionCV(Cs=10, cv=folds, max_iter=5000, scoring="accuracy", l1_ratios=(0.0,),
                                  use_legacy_attributes=False) if folds >= 2
             else LogisticRegression(max_iter=5000)).fit(x_train, y_train)
    coefficients, p_values, intercept = model.coef_[0].tolist(), [None] * len(names), float(model.intercept_[0])
    try:
        import statsmodels.api as sm

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            logit = sm.Logit(y_train, sm.add_constant(x_train, has_constant="add")).fit(disp=0, maxiter=200)
        if not any("separation" in str(w.message).lower() or "converge" in str(w.message).lower() for w in caught):
            p_values = [None if math.isnan(p) else float(p) for p in logit.pvalues[1:]]
            coefficients, intercept = [float(c) for c in logit.params[1:]], float(logit.params[0])
    except Exception:  # perfectly separated or singular designs have no Wald p-values; say so, keep the fit
        pass
    return RegressionResult(
        target=target, features=names, coefficients=coefficients, p_values=p_values, intercept=intercept,
        train_accuracy=float(model.score(x_train, y_train)), test_accuracy=float(model.score(x_test, y_test))
        if len(y_test) else float("nan"), n_train=len(y_train), n_test=len(y_test))
