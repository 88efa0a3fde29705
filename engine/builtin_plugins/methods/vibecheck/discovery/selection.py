"""Choosing among the candidates that passed the screen: greedy forward selection of the ones that best explain
which model wrote an answer and which one people preferred, skipping near-duplicates of those chosen.

A candidate measured on a sample of the pairs only (NaN on the others) is compared on the pairs every column of
the fit was measured on: the mean log-likelihood per pair of a random sample estimates the same quantity as that
of all the pairs, so candidates measured on different numbers of pairs compete on one scale."""

from __future__ import annotations

import numpy as np

MAX_CORRELATION = 0.8


def _fit_loglik(x: np.ndarray, y: np.ndarray) -> float:
    """Mean log-likelihood of a (lightly regularized) logistic fit: a smoother selection signal than accuracy."""
    from sklearn.linear_model import LogisticRegression

    if len(set(y.tolist())) < 2:
        return 0.0
    model = LogisticRegression(max_iter=2000).fit(x, y)
    p = np.clip(model.predict_proba(x)[:, 1], 1e-9, 1 - 1e-9)
    return float(np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def _matching_loglik(x: np.ndarray) -> float:
    """`_fit_loglik` of model matching: every pair once as (x, A wrote the first) and once mirrored as (−x, B
    did). That fit's intercept is 0 at its optimum (the mirrored rows make the loss even in it), so it is
    L2-penalised logistic regression without one, solved here by Newton's method on the pairs alone: the
    optimum scikit-learn approaches on both copies (within 1e-6 in mean log-likelihood, where scikit-learn stops
    at its tolerance), ten times as fast, which selection needs: it fits every candidate at every step."""
    rows, k = x.shape
    weights = np.zeros(k)
    for _ in range(100):
        behind = 1 / (1 + np.exp(x @ weights))  # each pair's probability of the wrong side
        gradient = weights - 2 * (x.T @ behind)  # 0.5|w|² + C Σ loss over both copies, C = 1
        hessian = np.eye(k) + 2 * (x.T * (behind * (1 - behind))) @ x
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if not np.all(np.isfinite(weights)):
            return _fit_loglik(np.vstack([x, -x]), np.r_[np.ones(rows), np.zeros(rows)])
        if np.max(np.abs(step)) < 1e-12:
            break
    right = np.clip(1 / (1 + np.exp(-(x @ weights))), 1e-9, 1 - 1e-9)
    return float(np.mean(np.log(right)))  # a pair and its mirror add the same term


def select(features: dict[str, np.ndarray], a_preferred: np.ndarray | None, max_vibes: int,
           length: np.ndarray | None = None) -> list[str]:
    """Greedy forward selection of candidate names on training pairs (see the module docstring).
    `a_preferred` holds 1/0 per pair and NaN where a pair has no label; the preference part of the signal
    starts from the length covariate, as the preference regression does, so a candidate earns its place
    by what it adds to length."""
    names = [n for n, s in features.items() if np.nansum(np.abs(s)) > 0]
    chosen: list[str] = []
    n = len(next(iter(features.values()))) if features else 0
    labelled = np.flatnonzero(~np.isnan(a_preferred)) if a_preferred is not None else np.array([], dtype=int)
    base = (length if length is not None else np.zeros(n))[:, None]
    while len(chosen) < max_vibes:
        best, best_gain = None, -np.inf
        for name in names:
            if name in chosen or any(too_similar(features[name], features[c]) for c in chosen):
                continue
            x = np.column_stack([features[c] for c in [*chosen, name]])
            measured = np.isfinite(x).all(axis=1)
            gain = _matching_loglik(x[measured])
            rows = labelled[measured[labelled]]
            if len(rows) and a_preferred is not None:
                gain += _fit_loglik(np.column_stack([base, x])[rows], a_preferred[rows])
            if gain > best_gain:
                best, best_gain = name, gain
        if best is None:
            break
        chosen.append(best)
    return chosen


def too_similar(a: np.ndarray, b: np.ndarray) -> bool:
    """Correlated beyond `MAX_CORRELATION` on the pairs both were measured on."""
    both = np.isfinite(a) & np.isfinite(b)
    a, b = a[both], b[both]
    if len(a) < 2 or a.std() == 0 or b.std() == 0:
        return False
    return abs(float(np.corrcoef(a, b)[0, 1])) > MAX_CORRELATION
