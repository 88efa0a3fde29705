"""Firth's penalized logistic regression (Firth 1993; `firthmodels`, a port of R's logistf), the estimator of
every held-out fit: finite under (quasi-)separation, which a few sharp vibes hit often, with penalized
likelihood-ratio p-values (Heinze & Schemper 2002). Columns a fit cannot estimate are reported, never dropped
silently."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FirthFit:
    coefficients: np.ndarray
    intercept: float | None
    std_errors: list[float | None]
    p_values: list[float | None]
    p_notes: list[str]

    def decision(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x @ self.coefficients + (self.intercept or 0.0))


def estimable(x: np.ndarray, intercept: bool, pairs: str = "training") -> tuple[list[int], dict[int, str]]:
    """The columns a fit can estimate, in order, and why each other one cannot: constant on these pairs, or a
    linear combination of the columns before it (two vibes with the same verdicts on every pair). `pairs` says
    which pairs the reasons name (training, test, labelled)."""
    usable: list[int] = []
    reasons: dict[int, str] = {}
    base = [np.ones(len(x))] if intercept else []
    for j in range(x.shape[1]):
        column = x[:, j]
        if (column.std() == 0) if intercept else not np.any(column):
            reasons[j] = f"constant on the {pairs} pairs: not estimable"
            continue
        stacked = np.column_stack([*base, *(x[:, k] for k in usable), column])
        if np.linalg.matrix_rank(stacked) < stacked.shape[1]:
            reasons[j] = f"a linear combination of the features before it on the {pairs} pairs: not estimable"
            continue
        usable.append(j)
    return usable, reasons


def firth(x: np.ndarray, y: np.ndarray, intercept: bool, *, tests: bool = True, pairs: str = "training") -> FirthFit:
    """Firth fit on the estimable columns; any other column is reported with coefficient 0 and no p-value.
    `tests`: penalized likelihood-ratio p-values (the held-out refit); without, a predicting fit. `pairs`: which
    pairs `x` holds, as the notes name them."""
    from firthmodels import FirthLogisticRegression

    usable, reasons = estimable(x, intercept, pairs)
    coefficients = np.zeros(x.shape[1])
    std_errors: list[float | None] = [None] * x.shape[1]
    p_values: list[float | None] = [None] * x.shape[1]
    p_notes = [reasons.get(j, "") for j in range(x.shape[1])]
    if not usable and not intercept:
        return FirthFit(coefficients, None, std_errors, p_values, p_notes)
    if len(set(y.tolist())) < 2:  # one label throughout: no logistic fit exists
        notes = ["every pair has the same label here: nothing to fit"] * x.shape[1]
        return FirthFit(coefficients, 0.0 if intercept else None, std_errors, p_values, notes)
    columns = x[:, usable] if usable else np.zeros((len(y), 1))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = FirthLogisticRegression(fit_intercept=intercept, max_iter=100).fit(columns, y)
            if tests and usable:
                model.lrt(list(range(len(usable))))
    except np.linalg.LinAlgError as exc:  # numerically singular despite the rank check: say so, fit nothing
        notes = [f"the penalized fit failed ({exc})"] * x.shape[1]
        return FirthFit(coefficients, 0.0 if intercept else None, std_errors, p_values, notes)
    for j, column in enumerate(usable):
        coefficients[column] = float(model.coef_[j])
        se = float(model.bse_[j])
        std_errors[column] = se if math.isfinite(se) else None
        p = float(model.lrt_pvalues_[j]) if tests else float("nan")
        p_values[column] = p if math.isfinite(p) else None
        p_notes[column] = "" if p_values[column] is not None else (
            "not tested" if not tests else "the penalized fit did not converge" if not model.converged_
            else "the constrained fit for its likelihood-ratio test did not converge")
    return FirthFit(coefficients, float(model.intercept_) if intercept else None, std_errors, p_values, p_notes)


def correct(decision: np.ndarray, y: np.ndarray) -> np.ndarray:
    """1 for a right prediction, 0 for a wrong one, ½ where the model cannot tell (decision exactly 0)."""
    return np.where(decision == 0, 0.5, ((decision > 0) == (y > 0.5)).astype(float))
