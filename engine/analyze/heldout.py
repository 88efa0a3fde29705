"""VibeCheck's two held-out regressions, fitted on pairs and read beside the rules they have to beat.

Selection and inference use different pairs. Everything that chooses what a regression holds (discovery,
keep/drop, the least-angle top-k, the admission of vibes into the preference model) sees the training pairs
only. The coefficients, standard errors and p-values a page shows come from refitting the chosen model on the
held-out test pairs, where nothing was chosen ("held-out refit"); the training fit is what predicts the test
pairs, and its coefficients are kept as descriptive only. A p-value computed on the pairs that chose the
vibe would be biased towards significance: a vibe kept because it separated the training pairs will look
significant on them whatever it is.

Model matching asks which model wrote the first-shown answer. A pair shown in the other order carries the
negated features and the flipped label, and since the order of display says nothing about who wrote what
the model has no intercept, so both orders have the same likelihood: they are one observation. The fit
therefore uses every pair once (n = pairs). Doubling the rows, as the paper's code does, leaves the
coefficients where they are and shrinks their standard errors by √2.

Preference prediction asks whether the label went to model A. On chat data "the longer answer wins" is the
rule to beat, so the model starts as that rule (one term: +1 where A's answer has more characters, −1 where
B's, the training majority where they are equal; its fitted weight makes the model's predictions the
rule's). The intercept, the log length ratio and each vibe are candidates admitted one at a time, the best
first, only while the largest score statistic among the candidates left exceeds what it reaches when the
labels are drawn from the current model (a parametric-bootstrap null of that maximum, at 5%). The maximum
over candidates is what is tested, so the chance of admitting any noise candidate at a step is held at 5%,
where a threshold applied to the best of k candidates (a one-SE rule, say) admits noise far more often. Where
nothing is admitted, the model is the rule, and the page says so.

Both fits use Firth's penalized likelihood (Firth 1993; the `firthmodels` implementation of R's logistf).
Its estimates stay finite under (quasi-)separation, which a handful of sharp vibes hits often, so every
coefficient on every seed comes from the same estimator and means the same thing; p-values come from
penalized likelihood-ratio tests (Heinze & Schemper 2002). Accuracies carry Wilson 95% intervals over test
pairs, and the gain over the rule a paired bootstrap over test pairs.
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
from engine.analyze.admission import ADMISSION_ALPHA, ADMISSION_DRAWS, admit

ESTIMATOR = "Firth-penalized logistic regression; p-values from penalized likelihood-ratio tests"
INFERENCE = "held-out refit"
# Baseline rules, named for what they compute.
RULE = "longer answer wins"  # preference: the literal rule; model matching: "the longer answer is <model>'s"
LENGTH_FIT = "length logistic fit"  # a logistic curve on the log length ratio, fitted on the training pairs
VIBES_ALONE = "vibes alone"
MAJORITY = "majority class"
# Terms of the preference model.
RULE_TERM = "longer-answer rule (±1)"
LENGTH = "length (log character ratio)"
INTERCEPT = "intercept"
BOOTSTRAP_ROUNDS = 2000
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
    """One regression: chosen and fitted on the training pairs, scored on the test pairs beside its baselines,
    and refitted on the test pairs for its coefficients, standard errors and p-values."""

    target: str  # "model_matching" | "preference"
    features: list[str]
    coefficients: list[float]  # held-out refit: what the page reads
    std_errors: list[float | None]
    p_values: list[float | None]
    p_notes: list[str]  # why a p-value is missing ("" where there is one)
    intercept: float | None  # held-out refit; None: fitted without one
    train_accuracy: float
    test_accuracy: float
    n_train: int  # pairs
    n_test: int  # pairs
    ci_low: float
    ci_high: float
    baselines: list[Accuracy]
    gain_over_rule: float | None = None  # test accuracy minus the longer-answer rule's, on the same pairs
    gain_ci_low: float | None = None
    gain_ci_high: float | None = None
    selection: str = ""
    estimator: str = ESTIMATOR
    p_adjusted: list[float | None] = field(default_factory=list)  # see `correction`
    inference: str = INFERENCE  # which pairs the coefficients, standard errors and p-values come from
    correction: str = ""
    tested: list[bool] = field(default_factory=list)  # which coefficients are in the corrected family (vibes)
    train_coefficients: list[float] = field(default_factory=list)  # the predicting fit: descriptive, no p-values
    train_intercept: float | None = None

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
    if len(set(y.tolist())) < 2:  # one label throughout: no logistic fit exists
        notes = ["every pair has the same label here: nothing to fit"] * x.shape[1]
        return _Firth(coefficients, 0.0 if intercept else None, std_errors, p_values, notes)
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


def _gain(model: np.ndarray, rule: np.ndarray, seed: int) -> tuple[float, float, float]:
    """Accuracy of the model minus the rule's, with a 95% bootstrap interval that resamples test pairs."""
    diff = model - rule
    if not len(diff):
        return float("nan"), float("nan"), float("nan")
    return float(diff.mean()), *stats.bootstrap_interval(diff, seed, BOOTSTRAP_ROUNDS)


def longer_rule(length: np.ndarray, tie: float) -> np.ndarray:
    """+1 where A's answer has more characters (the log ratio is positive), −1 where B's, `tie` where equal."""
    return np.where(length > 0, 1.0, np.where(length < 0, -1.0, tie))


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


def _random_orders(n: int, rng: np.random.Generator) -> np.ndarray:
    """±1 per pair: which answer a no-intercept fit sees first. The fit is the same whatever the orders drawn,
    but it needs both labels, so half the pairs (in a seeded random choice) are shown each way."""
    return rng.permutation(np.where(np.arange(n) % 2 == 0, 1.0, -1.0))


def model_matching(names: list[str], x_train: np.ndarray, x_test: np.ndarray, length_train: np.ndarray,
                   length_test: np.ndarray, seed: int = 0) -> HeldOutFit:
    """Which model wrote the first-shown answer, each pair once with model A first (see module docstring):
    fitted on the training pairs to predict the test pairs, refitted on the test pairs for inference."""
    rng = np.random.default_rng(seed)
    flip = _random_orders(len(x_train), rng)
    fit = _firth(x_train * flip[:, None], (flip > 0).astype(float), intercept=False, tests=False)
    flip_test = _random_orders(len(x_test), rng)
    refit = _firth(x_test * flip_test[:, None], (flip_test > 0).astype(float), intercept=False)
    ones_train, ones_test = np.ones(len(x_train)), np.ones(len(x_test))
    correct = _correct(fit.decision(x_test), ones_test)
    # the rule: the longer answer is the model's that wrote the longer answer on more training pairs
    direction = float(np.sign(np.sign(length_train).sum()))
    rule_correct = _correct(direction * np.sign(length_test), ones_test)
    length = _firth(length_train[:, None] * flip[:, None], (flip > 0).astype(float), intercept=False, tests=False)
    gain, gain_low, gain_high = _gain(correct, rule_correct, seed)
    accuracy = _accuracy("vibes", correct)
    return HeldOutFit(
        "model_matching", names, refit.coefficients.tolist(), refit.std_errors, refit.p_values, refit.p_notes, None,
        float(_correct(fit.decision(x_train), ones_train).mean()), accuracy.accuracy, len(x_train), len(x_test),
        accuracy.ci_low, accuracy.ci_high,
        [_accuracy(RULE, rule_correct),
         _accuracy(LENGTH_FIT, _correct(length.decision(length_test[:, None]), ones_test)),
         Accuracy(MAJORITY, 0.5, 0.5, 0.5, len(x_test))],  # either order is equally likely
        gain, gain_low, gain_high, tested=[True] * len(names), train_coefficients=fit.coefficients.tolist())


def preference(names: list[str], x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray,
               y_test: np.ndarray, length_train: np.ndarray, length_test: np.ndarray,
               seed: int = 0) -> HeldOutFit:
    """Did the label go to model A? The longer-answer rule, then the intercept, length and vibes admitted by
    the calibrated test on the training pairs; scored on the test pairs beside the rule and refitted there for
    inference (see module docstring)."""
    if len(set(y_train.tolist())) < 2:
        raise ValueError("preference: every training label names the same model, so there is nothing to "
                         "predict (check the dataset's preference values)")
    majority = 1.0 if y_train.mean() >= 0.5 else -1.0
    rule_train, rule_test = longer_rule(length_train, majority), longer_rule(length_test, majority)
    candidates = {INTERCEPT: np.ones(len(y_train)), LENGTH: length_train,
                  **{name: x_train[:, j] for j, name in enumerate(names)}}
    chosen, steps = admit(rule_train[:, None], candidates, y_train, seed)
    terms = [n for n in chosen if n != INTERCEPT]
    with_intercept = INTERCEPT in chosen
    test_columns = {LENGTH: length_test, **{name: x_test[:, j] for j, name in enumerate(names)}}
    design_train = np.column_stack([rule_train, *(candidates[n] for n in terms)])
    design_test = np.column_stack([rule_test, *(test_columns[n] for n in terms)])
    fit = _firth(design_train, y_train, intercept=with_intercept, tests=False)
    refit = _firth(design_test, y_test, intercept=with_intercept)
    correct = _correct(fit.decision(design_test), y_test)
    rule_correct = _correct(rule_test, y_test)
    length_fit = _firth(length_train[:, None], y_train, intercept=True, tests=False)
    vibes_only = _firth(x_train, y_train, intercept=True, tests=False)
    gain, gain_low, gain_high = _gain(correct, rule_correct, seed)
    accuracy = _accuracy("vibes", correct)
    admitted = [n for n in chosen if n in names]
    selection = (f"starts as the rule “{RULE}” (ties to the training majority); the intercept, length and "
                 f"{len(names)} vibe(s) were candidates, each step admitting the best only where the largest score "
                 f"statistic beat its parametric-bootstrap null at p ≤ {ADMISSION_ALPHA} ({ADMISSION_DRAWS} draws) "
                 "on the training pairs: "
                 + ("; ".join(steps) if steps else "no candidates") + ". "
                 + (f"Vibes admitted: {', '.join(admitted)}." if admitted
                    else f"No vibe was admitted: on these pairs the answer is the rule “{RULE}”"
                         + (" with " + ", ".join(chosen) if chosen else "") + "."))
    return HeldOutFit(
        "preference", [RULE_TERM, *terms], refit.coefficients.tolist(), refit.std_errors, refit.p_values,
        refit.p_notes, refit.intercept, float(_correct(fit.decision(design_train), y_train).mean()),
        accuracy.accuracy, len(y_train), len(y_test), accuracy.ci_low, accuracy.ci_high,
        [_accuracy(RULE, rule_correct),
         _accuracy(LENGTH_FIT, _correct(length_fit.decision(length_test[:, None]), y_test)),
         _accuracy(VIBES_ALONE, _correct(vibes_only.decision(x_test), y_test)),
         _accuracy(MAJORITY, (y_test == (majority > 0)).astype(float))],
        gain, gain_low, gain_high, selection, tested=[False] + [n in names for n in terms],
        train_coefficients=fit.coefficients.tolist(), train_intercept=fit.intercept)


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
    """Holm-adjusted p-values over the vibe coefficients of the analysis' regressions together (all from the
    held-out refits); the rule, length and intercept terms are controls, outside the family."""
    flat = [p if tested else None for f in fits for p, tested in zip(f.p_values, f.tested, strict=True)]
    family = sum(p is not None for p in flat)
    adjusted = stats.holm(flat)
    out, start = [], 0
    for f in fits:
        correction = (f"Holm over the {family} vibe coefficient test(s) of this analysis' regressions "
                      f"(held-out refits on the {f.n_test} test pairs)")
        out.append(replace(f, p_adjusted=adjusted[start:start + len(f.p_values)], correction=correction))
        start += len(f.p_values)
    return out
