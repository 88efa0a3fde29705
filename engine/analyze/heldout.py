"""VibeCheck's two held-out regressions, fitted on pairs and read beside the rules they have to beat.

Model matching asks which model wrote the first-shown answer. A pair shown in the other order carries the
negated features and the flipped label, and since the order of display says nothing about who wrote what
the model has no intercept, so both orders have the same likelihood: they are one observation. The fit
therefore uses every pair once (n = pairs). Doubling the rows, as the paper's code does, leaves the
coefficients where they are and shrinks their standard errors by √2.

Preference prediction asks whether the label went to model A. On chat data "the longer answer wins" is the
rule to beat, so length (log ratio of the two answers' characters) is a covariate from the start, and a vibe
enters only where 5-fold cross-validation on the training pairs says it adds to length's accuracy by more
than its noise (one standard error of the pair-by-pair difference). On held-out pairs the
model is then length alone unless the training pairs gave the vibes a reason to be there.

Both fits use Firth's penalized likelihood (Firth 1993; the `firthmodels` implementation of R's logistf).
Its estimates stay finite under (quasi-)separation, which a handful of sharp vibes hits often, so every
coefficient on every seed comes from the same estimator and means the same thing; p-values come from
penalized likelihood-ratio tests (Heinze & Schemper 2002). Accuracies carry Wilson 95% intervals over test
pairs, and the gain over length alone a paired bootstrap over test pairs.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from engine import derived, stats

ESTIMATOR = "Firth-penalized logistic regression; p-values from penalized likelihood-ratio tests"
LENGTH = "length (log character ratio)"
BOOTSTRAP_ROUNDS = 2000
CV_FOLDS = 5
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Accuracy:
    """A rule's accuracy on the test pairs with its Wilson 95% interval."""

    rule: str
    accuracy: float
    ci_low: float
    ci_high: float
    n: int


@dataclass(frozen=True)
class HeldOutFit:
    """One regression: fitted on the training pairs, scored on the test pairs beside its baselines."""

    target: str  # "model_matching" | "preference"
    features: list[str]
    coefficients: list[float]
    std_errors: list[float | None]
    p_values: list[float | None]
    p_notes: list[str]  # why a p-value is missing ("" where there is one)
    intercept: float | None  # None: fitted without one (model matching, by symmetry)
    train_accuracy: float
    test_accuracy: float
    n_train: int  # pairs
    n_test: int  # pairs
    ci_low: float
    ci_high: float
    baselines: list[Accuracy]
    gain_over_length: float | None = None
    gain_ci_low: float | None = None
    gain_ci_high: float | None = None
    selection: str = ""
    estimator: str = ESTIMATOR
    p_adjusted: list[float | None] = field(default_factory=list)  # Holm over every test of the analysis

    def baseline(self, rule: str) -> Accuracy | None:
        return next((b for b in self.baselines if b.rule == rule), None)


def wilson(successes: float, n: int) -> tuple[float, float]:
    """Wilson score 95% interval of a proportion (half successes allowed: a coin-flip prediction)."""
    if n == 0:
        return float("nan"), float("nan")
    p = successes / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 / (1 + Z95**2 / n) * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n**2))
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class _Firth:
    coefficients: np.ndarray
    intercept: float | None
    std_errors: list[float | None]
    p_values: list[float | None]
    p_notes: list[str]

    def decision(self, x: np.ndarray) -> np.ndarray:
        return x @ self.coefficients + (self.intercept or 0.0)


def estimable(x: np.ndarray, intercept: bool) -> tuple[list[int], dict[int, str]]:
    """The columns a fit can estimate, in order, and why each other one cannot: constant on these pairs, or a
    linear combination of the columns before it (two vibes with the same verdicts on every pair)."""
    usable: list[int] = []
    reasons: dict[int, str] = {}
    base = [np.ones(len(x))] if intercept else []
    for j in range(x.shape[1]):
        column = x[:, j]
        if (column.std() == 0) if intercept else not np.any(column):
            reasons[j] = "constant on the training pairs: not estimable"
            continue
        stacked = np.column_stack([*base, *(x[:, k] for k in usable), column])
        if np.linalg.matrix_rank(stacked) < stacked.shape[1]:
            reasons[j] = "a linear combination of the features before it on the training pairs: not estimable"
            continue
        usable.append(j)
    return usable, reasons


def _firth(x: np.ndarray, y: np.ndarray, intercept: bool, *, tests: bool = True) -> _Firth:
    """Firth fit on the estimable columns; any other column is reported with coefficient 0 and no p-value."""
    from firthmodels import FirthLogisticRegression

    usable, reasons = estimable(x, intercept)
    coefficients = np.zeros(x.shape[1])
    std_errors: list[float | None] = [None] * x.shape[1]
    p_values: list[float | None] = [None] * x.shape[1]
    p_notes = [reasons.get(j, "") for j in range(x.shape[1])]
    if not usable and not intercept:
        return _Firth(coefficients, None, std_errors, p_values, p_notes)
    columns = x[:, usable] if usable else np.zeros((len(y), 1))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = FirthLogisticRegression(fit_intercept=intercept, max_iter=100).fit(columns, y)
            if tests and usable:
                model.lrt(list(range(len(usable))))
    except np.linalg.LinAlgError as exc:  # numerically singular despite the rank check: say so, fit nothing
        notes = [f"the penalized fit failed ({exc})"] * x.shape[1]
        return _Firth(coefficients, 0.0 if intercept else None, std_errors, p_values, notes)
    for j, column in enumerate(usable):
        coefficients[column] = float(model.coef_[j])
        se = float(model.bse_[j])
        std_errors[column] = se if math.isfinite(se) else None
        p = float(model.lrt_pvalues_[j]) if tests else float("nan")
        p_values[column] = p if math.isfinite(p) else None
        p_notes[column] = "" if p_values[column] is not None else (
            "not tested" if not tests else "the penalized fit did not converge" if not model.converged_
            else "the constrained fit for its likelihood-ratio test did not converge")
    return _Firth(coefficients, float(model.intercept_) if intercept else None, std_errors, p_values, p_notes)


def _correct(decision: np.ndarray, y: np.ndarray) -> np.ndarray:
    """1 for a right prediction, 0 for a wrong one, ½ where the model cannot tell (decision exactly 0)."""
    return np.where(decision == 0, 0.5, ((decision > 0) == (y > 0.5)).astype(float))


def _accuracy(rule: str, correct: np.ndarray) -> Accuracy:
    low, high = wilson(float(correct.sum()), len(correct))
    return Accuracy(rule, float(correct.mean()) if len(correct) else float("nan"), low, high, len(correct))


def _gain(model: np.ndarray, length: np.ndarray, seed: int) -> tuple[float, float, float]:
    """Accuracy of the model minus length alone, with a 95% bootstrap interval that resamples test pairs."""
    diff = model - length
    if not len(diff):
        return float("nan"), float("nan"), float("nan")
    return float(diff.mean()), *stats.bootstrap_interval(diff, seed, BOOTSTRAP_ROUNDS)


def lars_order(x: np.ndarray, names: list[str]) -> list[str]:
    """The order in which features enter the least-angle regression path predicting model identity on the
    training pairs (VibeCheck's top-k step). Both display orders make the least-squares target centred, so
    this is the paper's LARS on standardized features; it selects, it does not test."""
    return derived.cached("lars/v1", {"x": x.tolist(), "names": names}, lambda: _lars_order(x, names),
                          lambda order: json.dumps(order).encode(), json.loads)


def _lars_order(x: np.ndarray, names: list[str]) -> list[str]:
    from sklearn.linear_model import lars_path

    scale = np.sqrt((x**2).mean(axis=0))
    usable = np.flatnonzero(scale > 0)
    if not len(usable):
        return []
    z = x[:, usable] / scale[usable]
    _, _, coefs = lars_path(np.vstack([z, -z]), np.r_[np.ones(len(z)), -np.ones(len(z))], method="lar")
    entered: list[str] = []
    for step in range(coefs.shape[1]):
        for j in np.flatnonzero(coefs[:, step]):
            if names[usable[j]] not in entered:
                entered.append(names[usable[j]])
    return entered + [names[j] for j in usable if names[j] not in entered]


def model_matching(names: list[str], x_train: np.ndarray, x_test: np.ndarray, length_train: np.ndarray,
                   length_test: np.ndarray, seed: int = 0) -> HeldOutFit:
    """Which model wrote the first-shown answer, each pair once with model A first (see module docstring).
    A Firth fit needs both labels, so each training pair is shown in a seeded random order; with no
    intercept the fit is the same whatever the orders drawn."""
    flip = np.where(np.random.default_rng(seed).random(len(x_train)) < 0.5, -1.0, 1.0)
    y = (flip > 0).astype(float)
    fit = _firth(x_train * flip[:, None], y, intercept=False)
    ones_train, ones_test = np.ones(len(x_train)), np.ones(len(x_test))
    correct = _correct(fit.decision(x_test), ones_test)
    length = _firth(length_train[:, None] * flip[:, None], y, intercept=False, tests=False)
    length_correct = _correct(length.decision(length_test[:, None]), ones_test)
    gain, gain_low, gain_high = _gain(correct, length_correct, seed)
    accuracy = _accuracy("vibes", correct)
    return HeldOutFit(
        "model_matching", names, fit.coefficients.tolist(), fit.std_errors, fit.p_values, fit.p_notes, None,
        float(_correct(fit.decision(x_train), ones_train).mean()), accuracy.accuracy, len(x_train), len(x_test),
        accuracy.ci_low, accuracy.ci_high,
        [_accuracy("length alone", length_correct),
         Accuracy("majority class", 0.5, 0.5, 0.5, len(x_test))],  # either order is equally likely
        gain, gain_low, gain_high)


def _cv_correct(x: np.ndarray, y: np.ndarray, seed: int) -> np.ndarray:
    """Whether each training pair is predicted right by the model fitted on the other folds (stratified and
    seeded: the same folds for every feature set, so two sets compare pair by pair)."""
    from sklearn.model_selection import StratifiedKFold

    folds = min(CV_FOLDS, int(np.bincount(y.astype(int), minlength=2).min()))
    out = np.full(len(y), np.nan)
    if folds < 2:
        return out
    for fit_rows, held_rows in StratifiedKFold(folds, shuffle=True, random_state=seed).split(x, y):
        fit = _firth(x[fit_rows], y[fit_rows], intercept=True, tests=False)
        out[held_rows] = _correct(fit.decision(x[held_rows]), y[held_rows])
    return out


def _clearly_better(new: np.ndarray, old: np.ndarray) -> bool:
    """Whether a feature set's cross-validated accuracy beats another's by more than one standard error of
    the pairwise difference. The score is the accuracy the page reports: a better likelihood alone admitted
    vibes that moved the intercept and length slope enough to lose held-out pairs to length alone."""
    diff = new - old
    if len(diff) < 2 or not np.all(np.isfinite(diff)):
        return False
    return float(diff.mean()) > float(diff.std(ddof=1)) / math.sqrt(len(diff))


def preference(names: list[str], x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray,
               y_test: np.ndarray, length_train: np.ndarray, length_test: np.ndarray,
               seed: int = 0) -> HeldOutFit:
    """Did the label go to model A? Length first, then forward selection of vibes by cross-validated
    accuracy on the training pairs (see module docstring)."""
    if len(set(y_train.tolist())) < 2:
        raise ValueError("preference: every training label names the same model, so there is nothing to "
                         "predict (check the dataset's preference values)")
    chosen: list[int] = []
    best = _cv_correct(length_train[:, None], y_train, seed)
    while True:
        trials = {j: _cv_correct(np.column_stack([length_train, x_train[:, [*chosen, j]]]), y_train, seed)
                  for j in range(len(names)) if j not in chosen}
        if not trials:
            break
        j = max(trials, key=lambda k: float(trials[k].mean()))
        if not _clearly_better(trials[j], best):
            break
        chosen.append(j)
        best = trials[j]
    features = [LENGTH, *(names[j] for j in chosen)]
    design_train = np.column_stack([length_train, x_train[:, chosen]])
    design_test = np.column_stack([length_test, x_test[:, chosen]])
    fit = _firth(design_train, y_train, intercept=True)
    correct = _correct(fit.decision(design_test), y_test)
    length = _firth(length_train[:, None], y_train, intercept=True, tests=False)
    length_correct = _correct(length.decision(length_test[:, None]), y_test)
    vibes_only = _firth(x_train, y_train, intercept=True, tests=False)
    majority = float(y_train.mean() >= 0.5)
    gain, gain_low, gain_high = _gain(correct, length_correct, seed)
    accuracy = _accuracy("vibes", correct)
    left_out = [n for j, n in enumerate(names) if j not in chosen]
    selection = ("length, then vibes added one at a time while each raised the 5-fold cross-validated "
                 "accuracy on the training pairs by more than one standard error: "
                 f"{len(chosen)} of {len(names)} entered"
                 + (f" (left out: {', '.join(left_out)})" if left_out else ""))
    return HeldOutFit(
        "preference", features, fit.coefficients.tolist(), fit.std_errors, fit.p_values, fit.p_notes,
        fit.intercept, float(_correct(fit.decision(design_train), y_train).mean()), accuracy.accuracy,
        len(y_train), len(y_test), accuracy.ci_low, accuracy.ci_high,
        [_accuracy("length alone", length_correct),
         _accuracy("vibes alone", _correct(vibes_only.decision(x_test), y_test)),
         _accuracy("majority class", (y_test == majority).astype(float))],
        gain, gain_low, gain_high, selection)


def cached_fit(fit: Callable[..., HeldOutFit], *args: Any) -> HeldOutFit:
    """`fit(*args)` (model_matching or preference), or its result from the last run with the same inputs.
    The key holds this module's and stats' source, so any change to how a fit is made is a new key."""
    inputs = {"fit": fit.__name__, "code": _CODE_DIGEST,
              "args": [a.tolist() if isinstance(a, np.ndarray) else a for a in args]}
    return derived.cached("heldout/v1", inputs, lambda: fit(*args),
                          lambda result: json.dumps(asdict(result)).encode(), _decode_fit)


def _decode_fit(data: bytes) -> HeldOutFit:
    fields = json.loads(data)
    return HeldOutFit(**{**fields, "baselines": [Accuracy(**b) for b in fields["baselines"]]})


_CODE_DIGEST = hashlib.sha256(Path(__file__).read_bytes() + Path(stats.__file__).read_bytes()).hexdigest()[:16]


def adjust(fits: list[HeldOutFit]) -> list[HeldOutFit]:
    """Holm-adjusted p-values over every coefficient test of the analysis' regressions together."""
    flat = [p for f in fits for p in f.p_values]
    adjusted = stats.holm(flat)
    out, start = [], 0
    for f in fits:
        out.append(replace(f, p_adjusted=adjusted[start:start + len(f.p_values)]))
        start += len(f.p_values)
    return out
