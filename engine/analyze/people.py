"""People's labels against a judge's verdicts on the same pairs: agreement and Cohen's κ with intervals that
resample prompts (conversations), and a separability
(or a shift) corrected by the labels through prediction-powered inference. Pure functions of labels and
verdicts (pair id → −1/0/+1), for any method whose verdicts are on that scale."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from engine import betting, stats
from engine.analyze.people_labels import HumanLabel

# what a plug-in may use of this module, through the public API (held by tests/test_api_surface.py)
__all__ = ["FILE", "MIN_KAPPA_UNITS"]

ROUNDS = 1000
MIN_KAPPA_UNITS = 50  # prompts (conversations) below which κ's interval is not given: the bootstrap's under-covers
FILE = "validation.json"  # where an analysis writes what people's labels say of its judges, in its folder


@dataclass
class PeopleAgreement:
    """One judge (or the panel) against people on one vibe and split."""

    vibe: str
    judge: str
    split: str  # dev | test
    labels: int  # labels compared (pairs × labellers)
    agreement: float | None
    agreement_low: float | None
    agreement_high: float | None
    kappa: float | None
    kappa_low: float | None
    kappa_high: float | None


@dataclass
class Corrected:
    """The people's separability on one vibe by prediction-powered inference, beside the labels alone."""

    vibe: str
    estimate: float
    low: float
    high: float
    labels_only: float
    labels_low: float
    labels_high: float
    panel: float  # the panel's separability over the same pairs, uncorrected
    pairs: int  # pairs the panel judged
    labelled: int  # of them, labelled
    weight: float  # PPI++'s λ: how much of the panel's information the estimate takes (0: none, 1: all)

    @property
    def width_ratio(self) -> float:
        width = self.labels_high - self.labels_low
        return (self.high - self.low) / width if width > 0 else math.nan


def agreement_with_people(labels: Sequence[HumanLabel], verdicts: dict[str, int], clusters: dict[str, str], vibe: str,
              judge: str, split: str, seed: int) -> PeopleAgreement:
    """`judge`'s verdicts against the labels of one split: the share of labels its verdict equals and Cohen's
    κ (scikit-learn's, through `stats.cohen_kappa`), each with a 95% interval over prompts, a conversation's
    turns together (`clusters`). The share's is Wilson's where every prompt holds one label and the betting
    interval over the prompts' shares where some hold several (a percentile bootstrap covered 86–90% at 10 to
    30 labels of a mostly tied vibe). κ's is a percentile interval from `ROUNDS` bootstrap rounds that resample
    prompts, given from `MIN_KAPPA_UNITS` prompts on (below, it covered 63% at 10, 86% at 20 and 89% at 30 on a
    mostly tied vibe; 94–95% at 50, `benchmarks/coverage.py`). Each round's κ comes from the resampled units'
    confusion counts, summed: the same κ as scikit-learn's on the resampled labels, without calling it a thousand
    times (2.4 s of CPU per vibe, judge and split)."""
    rows = [(label.pair, label.verdict, verdicts[label.pair]) for label in labels if label.pair in verdicts]
    if not rows:
        return PeopleAgreement(vibe, judge, split, 0, None, None, None, None, None, None)
    human = [r[1] for r in rows]
    machine = [r[2] for r in rows]
    point = _both(np.array(human), np.array(machine))
    units = stats.cluster_index([clusters.get(r[0], r[0]) for r in rows])
    codes = {c: k for k, c in enumerate(sorted(set(human) | set(machine)))}
    size = len(codes)
    counts = np.zeros((int(units.max()) + 1, size * size))  # each unit's confusion counts, flattened
    cells = np.array([codes[h] * size + codes[m] for h, m in zip(human, machine, strict=True)], dtype=np.intp)
    np.add.at(counts, (units, cells), 1)
    rng = np.random.default_rng(seed)
    kappas = np.concatenate([confusion_scores(_resampled(counts, rng, rounds).reshape(rounds, size, size))[1]
                             for rounds in _blocks(ROUNDS, len(counts))])
    agreed = counts[:, [k * size + k for k in range(size)]].sum(axis=1)  # each unit's labels its verdict equals
    labelled = counts.sum(axis=1)
    a_low, a_high = (stats.wilson(float(agreed.sum()), len(rows)) if (labelled == 1).all()
                     else betting.interval(agreed / labelled, 0.0, 1.0))
    defined = kappas[np.isfinite(kappas)]
    k_low, k_high = (np.percentile(defined, [2.5, 97.5]) if len(defined) and point[1] is not None
                     and len(counts) >= MIN_KAPPA_UNITS else (None, None))
    return PeopleAgreement(vibe, judge, split, len(rows), point[0], float(a_low), float(a_high), point[1],
                           None if k_low is None else float(k_low), None if k_high is None else float(k_high))


def _blocks(rounds: int, units: int, cells: int = 4_000_000) -> list[int]:
    """Rounds in blocks whose round × unit table stays under `cells` entries (32 MB)."""
    most = max(1, cells // max(units, 1))
    return [min(most, rounds - start) for start in range(0, rounds, most)]


def _resampled(counts: np.ndarray, rng: np.random.Generator, rounds: int) -> np.ndarray:
    """The summed rows of `counts` (one per unit) in each of `rounds` resamples of the units with replacement."""
    drawn = rng.integers(0, len(counts), size=(rounds, len(counts)))
    times = np.zeros((rounds, len(counts)))
    np.add.at(times, (np.arange(rounds)[:, None], drawn), 1)  # how often each round drew each unit
    summed: np.ndarray = times @ counts
    return summed


def confusion_scores(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The share on the diagonal and Cohen's κ of each confusion table (rows: people, columns: the judge; the
    last two axes), κ = (pₒ − pₑ)/(1 − pₑ), NaN where it is 0/0 (one category throughout on both sides)."""
    total = tables.sum(axis=(-2, -1))
    observed = np.trace(tables, axis1=-2, axis2=-1) / total
    expected = np.sum(tables.sum(axis=-1) * tables.sum(axis=-2), axis=-1) / total**2
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(expected < 1, (observed - expected) / (1 - expected), np.nan)
    return observed, kappa


def _both(human: np.ndarray, machine: np.ndarray) -> tuple[float, float | None]:
    """Agreement and Cohen's κ (None where it is undefined: one category throughout on both sides, where
    `stats.cohen_kappa` says 1)."""
    share = float(np.mean(human == machine))
    if len(set(human.tolist()) | set(machine.tolist())) < 2:
        return share, None
    return share, stats.cohen_kappa(human.tolist(), machine.tolist())


def corrected_separability(labels: Sequence[HumanLabel], panel: dict[str, int], clusters: dict[str, str],
                           vibe: str) -> Corrected | None:
    """The people's separability over every pair the panel judged, by PPI++ (Angelopoulos, Duchi and Zrnic,
    2023): the labelled pairs' mean verdict plus λ times the gap between the panel's mean on the pairs nobody
    labelled and its mean on the labelled ones, with λ = Cov(people, panel) / ((1 + n/N) Var(panel)) clipped
    to [0, 1] (0: the labels alone; 1: classical prediction-powered inference), and its 95% interval (t
    quantiles, n − 1 degrees of freedom: normal ones covered 92% at 20 and 50 labels; the labelled part's
    variance steadied by `_steady_variance`, so that labels that all agree give no zero-width interval; ends
    kept within [−1, 1]); beside the labels-only mean and interval, steadied alike. Valid for a random sample
    of labelled pairs (or one stratified in proportion to the panel's verdicts). A pair's several labels count
    as their mean; a conversation counts once (its turns' means)."""
    by_pair: dict[str, list[int]] = {}
    for label in labels:
        if label.pair in panel:
            by_pair.setdefault(label.pair, []).append(label.verdict)
    unlabelled = {p: float(v) for p, v in panel.items() if p not in by_pair}
    if len(by_pair) < 2 or len(unlabelled) < 2:
        return None
    units = _units(list(by_pair), clusters)
    people = np.array([np.mean([np.mean(by_pair[p]) for p in members]) for members in units])
    judged = np.array([np.mean([panel[p] for p in members]) for members in units])
    rest = np.array([np.mean([unlabelled[p] for p in members]) for members in _units(list(unlabelled), clusters)])
    n, big_n = len(people), len(rest)
    spread = float(np.var(np.concatenate([judged, rest]), ddof=1))
    lam = 0.0 if spread == 0 else float(np.clip(np.cov(people, judged)[0, 1] / ((1 + n / big_n) * spread), 0, 1))
    estimate = float(people.mean() + lam * (rest.mean() - judged.mean()))
    quantile = float(scipy_stats.t.ppf(0.975, n - 1))  # not 1.96: that covered 92% from 20 and 50 labels
    half = quantile * math.sqrt(_steady_variance(people - lam * judged) / n + lam**2 * _variance(rest) / big_n)
    only_half = quantile * math.sqrt(_steady_variance(people) / n)
    every = list(panel.values())
    only = float(people.mean())
    return Corrected(vibe, estimate, max(-1.0, estimate - half), min(1.0, estimate + half), only,
                     max(-1.0, only - only_half), min(1.0, only + only_half), float(np.mean(every)),
                     len(every), len(by_pair), lam)


def _units(pairs: list[str], clusters: dict[str, str]) -> list[list[str]]:
    """The pairs grouped by conversation (a prompt is its own unit), in order of first appearance."""
    grouped: dict[str, list[str]] = {}
    for pair in pairs:
        grouped.setdefault(clusters.get(pair, pair), []).append(pair)
    return list(grouped.values())


def _variance(values: np.ndarray) -> float:
    return float(values.var(ddof=1)) if len(values) > 1 else 0.0


def _steady_variance(values: np.ndarray) -> float:
    """The variance of labelled values (or of what is left of them after the panel's part), counted with two
    pseudo-values one verdict step below and above their mean, as Agresti and Coull add two pseudo-outcomes to a
    proportion. Twenty labels that all agree are a common sample of a mostly tied vibe (0.92²⁰ = 19%), and
    their plain variance of 0 gave a zero-width interval: PPI++ covered 79% at 20 labels there. With the
    pseudo-values it covers at least 95% from 20 labels, and the interval widens by a few percent at 100."""
    centre = float(values.mean())
    return _variance(np.concatenate([values, [centre - 1.0, centre + 1.0]]))
