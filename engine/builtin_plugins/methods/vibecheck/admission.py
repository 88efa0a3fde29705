"""Which terms enter the preference model, all on the training pairs: features admitted one at a time by a
score test, each p-value calibrated by labels drawn from the model fitted so far; controls (intercept, length)
before vibes, so a vibe that stands in for length enters only over and above length; and the rule left only
for a model that predicts better on training pairs it was not chosen on, by more than one standard error
(`transfers`).

The null of the largest score statistic is drawn by parametric bootstrap (labels drawn from the current model,
which is refitted to each draw) up to `LIMIT_FROM` independent pairs. From there on it is drawn from the
statistics' limit instead: the candidates' efficient scores are jointly normal with covariance their efficient
information given the model (Rao), so the largest of the standardized squares is simulated without refitting
anything. The two agree at that size (`tests/test_selection_calibration.py` compares them), and the bootstrap's
refits of every draw cost most of a 100,000-pair analysis. Turns of conversations keep the bootstrap at every
size: their labels are drawn per conversation, which the limit here does not model."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from engine.api.execution import cores
from engine.builtin_plugins.methods.vibecheck.firth import correct, firth

ADMISSION_ALPHA = 0.05
ADMISSION_DRAWS = 199  # labels drawn from the current model per admission step: p-values in steps of 1/200
LIMIT_FROM = 10_000  # independent training pairs from which the null is drawn from its limit
LIMIT_DRAWS = 9_999  # normal draws of the candidates' scores there: p-values in steps of 1/10,000
FOLDS = 10  # cross-fitting of the whole admission on the training pairs


def _outer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each pair's outer product of its rows of `a` and `b`, flattened (pairs × a-columns·b-columns)."""
    return np.asarray((a[:, :, None] * b[:, None, :]).reshape(len(a), -1))


def _weighted_cross(w: np.ndarray, a: np.ndarray, b: np.ndarray, outer: np.ndarray | None = None) -> np.ndarray:
    """A'WB for every row of the weights `w` (draws × pairs): one matrix product of the weights with each pair's
    outer product of its rows of `a` and `b` (BLAS; a three-operand einsum loops without it, and on tens of
    thousands of pairs took most of an analysis). `outer`: `_outer(a, b)`, where the caller already has it."""
    outer = _outer(a, b) if outer is None else outer
    return np.asarray(w @ outer).reshape(len(w), a.shape[1], b.shape[1])


def _information(w: np.ndarray, z: np.ndarray, outer: np.ndarray | None = None) -> np.ndarray:
    """Z'WZ for every row of the weights `w` (draws × pairs), nudged to stay invertible under separation."""
    return _weighted_cross(w, z, z, outer) + 1e-9 * np.eye(z.shape[1])


def _probabilities(z: np.ndarray, y: np.ndarray, iterations: int = 30,
                   start: np.ndarray | None = None) -> np.ndarray:
    """Maximum-likelihood logistic fits of the rows of `y` (draws × pairs) on the columns of `z` (no intercept
    unless `z` holds one), by Newton steps on every draw at once from `start` (one coefficient vector for all
    rows; zeros by default); returns the fitted probabilities. A draw that separates runs its linear predictor
    to the clip, where its probabilities are 0 or 1."""
    return _predicted(_coefficients(z, y, iterations, start), z)


def _predicted(beta: np.ndarray, z: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The probabilities of the fits `beta` (draws × columns) on `z`, the linear predictor clipped at ±30, in
    `out` where given: a fit's Newton steps reuse two draws × pairs arrays (72 MB each at 45,000 pairs) rather
    than allocating new ones at every step."""
    linear = np.matmul(beta, z.T, out=out)
    _by_rows(_clipped_expit, linear)
    return linear


def _by_rows(work: Callable[..., None], *arrays: np.ndarray) -> None:
    """`work` on blocks of rows of `arrays` (draws × pairs, all as tall) on the threads: each block is views
    of the arrays, which `work` fills in place."""
    list(_threads().map(work, *(np.array_split(a, THREADS) for a in arrays)))


THREADS = max(1, min(cores(), 4))


@functools.cache
def _threads() -> ThreadPoolExecutor:
    """Threads for the element-wise work on draws × pairs: NumPy and SciPy let go of the interpreter lock inside
    a ufunc, so blocks of rows run side by side on this machine's cores (each element computed alone: the same
    numbers as one call)."""
    return ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="vibe-admission")


def _clipped_expit(linear: np.ndarray) -> None:
    np.clip(linear, -30, 30, out=linear)
    expit(linear, out=linear)


def _weights_and_residuals(p: np.ndarray, y: np.ndarray, w: np.ndarray, residual: np.ndarray) -> None:
    """The Newton weights p(1 − p) into `w` and the residuals y − p into `residual` (which may be `p`)."""
    np.subtract(1.0, p, out=w)
    w *= p
    np.subtract(y, p, out=residual)


def _coefficients(z: np.ndarray, y: np.ndarray, iterations: int = 30,
                  start: np.ndarray | None = None) -> np.ndarray:
    """The coefficients of `_probabilities`' fits (draws × columns)."""
    beta = np.zeros((len(y), z.shape[1])) if start is None else np.tile(start, (len(y), 1))
    outer = _outer(z, z)  # the same for every step
    p, w = np.empty((len(y), len(z))), np.empty((len(y), len(z)))  # reused by every step
    for _ in range(iterations):
        _predicted(beta, z, out=p)
        _by_rows(_weights_and_residuals, p, y, w, p)  # the residuals overwrite p: it is not read again this step
        step = np.linalg.solve(_information(w, z, outer), (p @ z)[..., None])[..., 0]
        beta += step
        if np.abs(step).max() < 1e-8:
            break
    return beta


def _score_statistics(z: np.ndarray, x: np.ndarray, y: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Rao's score statistic (χ² with 1 df) of adding each column of `x` to the logistic model on `z` with
    fitted probabilities `p`, for every row of `y` (draws × pairs) at once. A column the model already spans
    scores 0."""
    w, r = np.empty_like(p), np.empty_like(p)
    _by_rows(_weights_and_residuals, p, y, w, r)
    u = r @ x
    del r
    cross = _weighted_cross(w, z, x)
    square = w @ (x**2)
    residual = square - np.einsum("bkm,bkm->bm", cross, np.linalg.solve(_information(w, z), cross))
    scale = np.maximum(square, 1e-12)
    return np.where(residual > 1e-9 * scale, u**2 / np.maximum(residual, 1e-300), 0.0)


def admit(base: np.ndarray, candidates: dict[str, np.ndarray], y: np.ndarray,
          seed: int, groups: np.ndarray | None = None) -> tuple[list[str], list[str]]:
    """Forward selection from the model on `base` (pairs × terms) with a calibrated admission test: at each
    step the largest score statistic among the candidates left is compared with its parametric-bootstrap null
    (labels drawn from the current model, which is refitted to each draw), and the best candidate enters only
    when p <= ADMISSION_ALPHA. Returns the admitted names in order and one line per step.

    `groups` (each row's conversation, as 0..k−1) draws the null per conversation: one uniform per
    conversation and draw, shared by its turns, so turns whose labels go together in the data go together in
    the null too (labels drawn independently per turn would make the null too narrow, and noise would enter)."""
    rng = np.random.default_rng(seed)
    chosen: list[str] = []
    steps: list[str] = []
    while left := [n for n in candidates if n not in chosen]:
        z = np.column_stack([base, *(candidates[n] for n in chosen)])
        x = np.column_stack([candidates[n] for n in left])
        fitted = _coefficients(z, y[None, :])
        p = _predicted(fitted, z)
        observed = _score_statistics(z, x, y[None, :], p)[0]
        best = int(np.argmax(observed))
        if observed[best] <= 0:
            steps.append("no candidate left adds to the model")
            break
        null = (_limit_null(z, x, p[0], rng) if reads_limit(len(y), groups is not None)
                else _bootstrap_null(z, x, p, fitted[0], rng, groups))
        p_value = (1 + int((null >= observed[best]).sum())) / (len(null) + 1)
        shown = f"{p_value:.3f}" if p_value >= 0.001 else f"{p_value:.4f}"  # the limit's 9,999 draws reach 0.0001
        steps.append(f"{left[best]}: score χ² {observed[best]:.2f}, p = {shown} for the largest of {len(left)} ("
                     + ("admitted" if p_value <= ADMISSION_ALPHA else "not admitted; selection stops") + ")")
        if p_value > ADMISSION_ALPHA:
            break
        chosen.append(left[best])
    return chosen, steps


def reads_limit(rows: int, by_conversation: bool) -> bool:
    """Whether `admit` reads an admission over `rows` training rows against its null's limit rather than the
    bootstrap (see the module docstring)."""
    return not by_conversation and rows >= LIMIT_FROM


def null_used(rows: int, by_conversation: bool) -> str:
    """Which null `admit` reads an admission over `rows` training rows against, in words for the page."""
    if not reads_limit(rows, by_conversation):
        return f"parametric-bootstrap null at p ≤ {ADMISSION_ALPHA} ({ADMISSION_DRAWS} draws)"
    return (f"null's normal limit at p ≤ {ADMISSION_ALPHA} ({LIMIT_DRAWS:,} draws of the candidates' efficient "
            f"scores, as from {LIMIT_FROM:,} independent pairs on; a fold below that size drew a parametric "
            "bootstrap)")


def _bootstrap_null(z: np.ndarray, x: np.ndarray, p: np.ndarray, fitted: np.ndarray, rng: np.random.Generator,
                    groups: np.ndarray | None) -> np.ndarray:
    """The largest score statistic on each of `ADMISSION_DRAWS` label sets drawn from the model's probabilities
    `p` (1 × pairs; one uniform per conversation and draw with `groups`), the model refitted to each draw."""
    draws = (rng.random((ADMISSION_DRAWS, p.shape[1])) if groups is None
             else rng.random((ADMISSION_DRAWS, int(groups.max()) + 1))[:, groups])
    np.less(draws, p, out=draws)  # 1.0 where the label drawn is 1: the uniform draws' own array
    # each draw's fit starts from the model the draws come from: its maximum lies near, a few Newton steps away
    return np.asarray(_score_statistics(z, x, draws, _probabilities(z, draws, start=fitted)).max(axis=1))


def _limit_null(z: np.ndarray, x: np.ndarray, p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The largest score statistic on each of `LIMIT_DRAWS` draws from its limit under the model fitted with
    probabilities `p`: efficient scores G ~ N(0, V), V = X'WX − X'WZ(Z'WZ)⁻¹Z'WX with W = p(1 − p), each
    candidate's statistic G_j² / V_jj (0 for a candidate the model already spans, as `_score_statistics`)."""
    w = (p * (1 - p))[:, None]
    square = (x * w).T @ x
    cross = (z * w).T @ x
    v = square - cross.T @ np.linalg.solve((z * w).T @ z + 1e-9 * np.eye(z.shape[1]), cross)
    v = (v + v.T) / 2
    values, vectors = np.linalg.eigh(v)
    root = vectors * np.sqrt(np.clip(values, 0, None))  # V = root · rootᵀ, also where V is singular
    scores = rng.standard_normal((LIMIT_DRAWS, len(v))) @ root.T
    diagonal = np.diag(v)
    spanned = diagonal <= 1e-9 * np.maximum(np.diag(square), 1e-12)
    return np.asarray(np.where(spanned, 0.0, scores**2 / np.where(spanned, 1.0, diagonal)).max(axis=1))


def admit_staged(base: np.ndarray, stages: Sequence[dict[str, np.ndarray]], y: np.ndarray,
                 seed: int, groups: np.ndarray | None = None) -> tuple[list[str], list[str]]:
    """`admit`, stage after stage: a later stage's candidates compete only once the earlier stages' admissions
    are in the model (each stage tested at ADMISSION_ALPHA for the largest of its own candidates)."""
    chosen: list[str] = []
    steps: list[str] = []
    columns = {name: column for stage in stages for name, column in stage.items()}
    for stage in stages:
        more, lines = admit(np.column_stack([base, *(columns[n] for n in chosen)]), stage, y, seed, groups)
        chosen += more
        steps += lines
    return chosen, steps


def folds(n: int, seed: int, groups: np.ndarray | None = None) -> list[np.ndarray]:
    """The rows of each of `FOLDS` folds (fewer where there are fewer units), units dealt out in a seeded order:
    a row is a unit, or with `groups` (each row's conversation, 0..k−1) a conversation's rows stay together."""
    unit = np.arange(n) if groups is None else groups
    units = int(unit.max()) + 1 if n else 0
    return [np.flatnonzero(np.isin(unit, g))
            for g in np.array_split(np.random.default_rng(seed).permutation(units), min(FOLDS, units)) if len(g)]


def transfers(rule: np.ndarray, stages: Sequence[dict[str, np.ndarray]], y: np.ndarray, seed: int,
              intercept: str, groups: np.ndarray | None = None) -> Transfer:
    """Cross-fitted accuracy on the training pairs of the whole procedure (admission re-run on each fold's other
    pairs, the admitted model fitted there, the fold predicted), and of the rule on the same pairs, with the
    standard error of their difference. A model that fits its own pairs better but predicts new ones no better
    than the rule would cost accuracy held out. `groups` (as in `admit`): folds are cut by conversation, so no
    fold is predicted by its own conversations' other turns, and the standard error counts conversations."""
    n = len(y)
    columns = {name: column for stage in stages for name, column in stage.items()}
    right = np.empty(n)
    for held in folds(n, seed, groups):
        fit_on = np.setdiff1d(np.arange(n), held)
        if len(set(y[fit_on].tolist())) < 2:  # one label throughout: the model is the rule there
            right[held] = correct(rule[held], y[held])
            continue
        part = [{name: column[fit_on] for name, column in stage.items()} for stage in stages]
        sub = None if groups is None else np.unique(groups[fit_on], return_inverse=True)[1]
        chosen, _ = admit_staged(rule[fit_on, None], part, y[fit_on], seed, sub)
        design = np.column_stack([rule, *(columns[c] for c in chosen if c != intercept)])
        model = firth(design[fit_on], y[fit_on], intercept=intercept in chosen, tests=False)
        right[held] = correct(model.decision(design[held]), y[held])
    rule_right = correct(rule, y)
    return Transfer(float(right.mean()), float(rule_right.mean()), _mean_error(right - rule_right, groups))


@dataclass(frozen=True)
class Transfer:
    """`transfers`' verdict: the procedure leaves the rule only when its cross-fitted gain over the rule is more
    than one standard error (the one-standard-error rule): a gain inside its own noise is not expected to hold
    on new pairs, and a model that leaves the rule must be expected to beat it."""

    model: float  # cross-fitted accuracy of the whole procedure on the training pairs
    rule: float  # the rule's accuracy on the same pairs
    error: float  # standard error of the difference (pairs, or conversations, as the unit)

    @property
    def kept(self) -> bool:
        return self.model - self.rule > self.error


def _mean_error(values: np.ndarray, groups: np.ndarray | None) -> float:
    """Standard error of the mean of `values`; with `groups`, of the ratio estimator over whole groups."""
    n = len(values)
    if groups is None:
        return float(values.std(ddof=1) / np.sqrt(n)) if n > 1 else float("inf")
    sums, sizes = np.bincount(groups, values), np.bincount(groups).astype(float)
    k = len(sums)
    if k < 2:
        return float("inf")
    deviations = sums - values.mean() * sizes
    return float(np.sqrt(k / (k - 1) * np.sum(deviations**2)) / n)
