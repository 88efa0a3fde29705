"""Rankings controlled for vibes: Bradley–Terry with each battle's vibe differences as covariates, the vibes chosen
on training prompts and every number the page reports fitted on the held-out test prompts.

Chatbot Arena's style control adds four fixed covariates (answer length, headers, bold, list items) to
Bradley–Terry and reads what remains of each model's strength as its score with style accounted for. Here the
covariates are vibes: the ones a spec names, or ones chosen from every text metric the project measures by how
much they explain who won beyond the models' strengths. A battle's covariate for a vibe is the normalized
difference of the two answers' measured values, (a − b) / (|a| + |b|) (0 when both are 0), divided by its
standard deviation over the battles fitted: Arena's treatment of its counts, so one coefficient reads as the
log-odds a one-standard-deviation difference adds.

Choosing vibes looks at the outcomes, so it uses only the training prompts (a seeded split of the prompts, or
of the conversations; every battle on one prompt on the same side): forward selection, at each step the vibe
that most raises the training log-likelihood among those whose cluster-robust Wald test passes Bonferroni over
the vibes still in the running, skipping near-duplicates of a chosen vibe and vibes that differ on fewer than
`MIN_UNITS` training prompts, up to `max_vibes`. Vibes a spec names are fixed in advance and skip that
step. On the test prompts, never seen by the choice:
- plain and controlled Bradley–Terry scores with percentile intervals from bootstrap rounds that resample
  prompts, and each model's rank shift;
- each vibe's coefficient from a binomial GLM (statsmodels) with the models' strengths, its interval and
  two-sided p-value from standard errors clustered by prompt, and Holm's correction over the vibes;
- the share of the plain scores' variance that control removes;
- leave one model out: refit without its battles and compare the other models' controlled scores (on the same
  anchor: their own mean) with their interval half-widths.
The held-out fit compares four models trained on the training prompts and scored on the test battles:
plain Bradley–Terry; Arena's four style features (`engine.analyze.arena_style`, counted exactly as lmarena
counts them) in this module's own Bradley–Terry fit (covariates scaled, not centred, unpenalized) and in Arena's
own fit (centred, L2-penalized: `arena_style.fit`); and the vibe-controlled model (log-likelihood per battle, and
accuracy on the decisive battles).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

import numpy as np

from engine.api.analysis import (
    SCALE,
    STYLE_FEATURES,
    Outcome,
    Ranking,
    arena_style,
    bradley_terry,
    rank,
    stats,
    style_vector,
)
from engine.api.judging import METRICS, measure
from engine.builtin_plugins.methods.rankings.options import ControlOptions

DUPLICATE_CORRELATION = 0.8  # a vibe whose training covariate correlates this much with a chosen one adds nothing
# a vibe must differ between the answers on this many training units to be in the running: a clustered standard
# error from a handful of clusters understates the uncertainty, and a rare vibe (emoji on three prompts) passed
MIN_UNITS = 20
SELECTION_ALPHA = 0.05


@dataclass(frozen=True)
class Covariate:
    """A vibe the control can use, and how one answer's value is measured: a metric by name (a built-in metric,
    or the metric a declared vibe names)."""

    name: str
    metric: str


@dataclass
class VibeCoefficient:
    vibe: str
    coefficient: float  # log-odds per standard deviation of the battle's normalized difference
    ci_low: float
    ci_high: float
    p: float | None  # two-sided cluster-robust Wald; None when the fit failed (see `VibeControl.notes`)
    p_holm: float | None
    win_probability: float  # P(win) between otherwise equal models at a one-SD difference in this vibe's favour


@dataclass
class ControlledScore:
    model: str
    plain: float
    plain_low: float
    plain_high: float
    plain_rank: int
    controlled: float
    low: float
    high: float
    rank: int
    rank_shift: int  # plain rank − controlled rank: positive when control moves the model up
    loo_shift_over_halfwidth: float | None  # largest move when another model is left out, in half-widths


@dataclass
class HeldOutFit:
    model: str  # plain | style4 | arena_style4 | vibes
    log_likelihood: float  # per test battle
    accuracy: float | None  # on the decisive test battles
    battles: int
    decisive: int


@dataclass
class VibeControl:
    chosen: list[str]
    chosen_how: str  # "declared" | "selected on the training prompts"
    candidates: list[str]
    scores: list[ControlledScore]
    coefficients: list[VibeCoefficient]
    variance_removed: float | None  # 1 − var(controlled) / var(plain) over the models, test prompts
    heldout: list[HeldOutFit]
    train_units: int
    test_units: int
    test_battles: int
    unit: str
    max_shift_over_halfwidth: float | None
    plain: Ranking | None = None
    controlled: Ranking | None = None
    notes: list[str] = field(default_factory=list)


def covariates(vibes: list[str] | str, declared: dict[str, str]) -> list[Covariate]:
    """The vibes a control may use: every built-in metric and every declared vibe with a metric when
    discovering, else the named ones (a declared vibe's metric, or a built-in metric by its name)."""
    if vibes == "discover":
        named = {**{name: name for name in METRICS}, **declared}
        return [Covariate(name, metric) for name, metric in named.items()]
    return [Covariate(name, declared.get(name, name)) for name in vibes]


def feature_function(chosen: Sequence[Covariate]) -> Callable[[str | None, str | None], tuple[float, ...]]:
    """Arena's four style features followed by each covariate's normalized difference, for an outcome's two
    answers; each answer is measured once however many battles it is in."""

    @cache
    def values(text: str) -> tuple[float, ...]:
        return tuple(measure(c.metric, text) for c in chosen)

    def features(text_a: str | None, text_b: str | None) -> tuple[float, ...]:
        if text_a is None or text_b is None:
            return ()
        pairs = zip(values(text_a), values(text_b), strict=True)
        return (*style_vector(text_a, text_b), *(stats.strength(a, b) for a, b in pairs))

    return features


MIN_TEST_UNITS = 20  # test prompts (conversations) below which no controlled ranking is fitted


def _split(outcomes: Sequence[Outcome], opts: ControlOptions, ties: str,
           seed: int) -> tuple[list[Outcome], list[Outcome], int, int]:
    """The training and test comparisons of the seeded split of the units, as the fits read them (`_kept`), and
    the numbers of training and test units."""
    units = sorted({o.unit for o in outcomes})
    training = set(stats.split(units, opts.train, seed)[0])
    return (_kept([o for o in outcomes if o.unit in training], ties),
            _kept([o for o in outcomes if o.unit not in training], ties), len(training), len(units) - len(training))


def _shortfall(train: Sequence[Outcome], test: Sequence[Outcome], unit: str) -> str | None:
    """Why a split leaves too little to fit a controlled ranking, or None. Everything the control reports is
    fitted on the test units and its intervals resample them: on one test prompt the bootstrap prints
    intervals of zero width, which read as precise."""
    tested = {o.unit for o in test}
    if train and len(tested) >= MIN_TEST_UNITS:
        return None
    return (f"vibe control chooses its vibes on the training {unit}s and fits everything it reports on the test "
            f"{unit}s, resampling them for its intervals: the split leaves {len(tested)} test {unit}(s) with a "
            f"decisive or tied comparison{'' if train else ' and no training comparison'}, and a controlled "
            f"ranking needs at least {MIN_TEST_UNITS}. No controlled ranking is given.")


def too_few(outcomes: Sequence[Outcome], opts: ControlOptions, *, ties: str, seed: int, unit: str) -> str | None:
    """Why the seeded split of `outcomes` leaves too little for `control` to fit, or None."""
    train, test, _, _ = _split(outcomes, opts, ties, seed)
    return _shortfall(train, test, unit)


def control(outcomes: Sequence[Outcome], models: list[str], candidates: Sequence[Covariate], opts: ControlOptions,
            *, ties: str, rounds: int, seed: int, unit: str) -> VibeControl | None:
    """The whole control (see the module docstring); each outcome's style holds `feature_function`'s values.
    None when the split leaves too few test units (`too_few` says why)."""
    train, test, train_units, test_units = _split(outcomes, opts, ties, seed)
    if _shortfall(train, test, unit):
        return None
    names = [c.name for c in candidates]
    columns = {name: len(STYLE_FEATURES) + i for i, name in enumerate(names)}
    notes: list[str] = []
    if opts.vibes == "discover":
        chosen = _forward_selection(train, models, names, columns, opts.max_vibes)
        how = "selected on the training prompts"
    else:
        chosen, how = list(names), "declared"
    heldout = [_heldout("plain", train, test, models, [], ties),
               _heldout("style4", train, test, models, list(range(len(STYLE_FEATURES))), ties),
               _heldout_arena(train, test, models),
               _heldout("vibes", train, test, models, [columns[n] for n in chosen], ties)]
    test_chosen = [_with_columns(o, [columns[n] for n in chosen]) for o in test]
    plain = rank("bradley_terry", [replace(o, style=()) for o in test], models, rounds=rounds, seed=seed, ties=ties,
                 unit=unit)
    controlled = replace(rank("style_controlled", test_chosen, models, rounds=rounds, seed=seed, ties=ties,
                              style_names=chosen, unit=unit), method="vibe_controlled")
    coefficients = _coefficients(test_chosen, models, chosen, notes)
    loo = _leave_one_out(test_chosen, models, chosen, controlled, ties)
    by_model = {r.model: r for r in plain.ratings}
    scores = [ControlledScore(r.model, by_model[r.model].rating, by_model[r.model].ci_low, by_model[r.model].ci_high,
                              by_model[r.model].rank, r.rating, r.ci_low, r.ci_high, r.rank,
                              by_model[r.model].rank - r.rank, loo.get(r.model)) for r in controlled.ratings]
    spread = np.var([s.plain for s in scores])
    removed = float(1 - np.var([s.controlled for s in scores]) / spread) if spread > 0 else None
    shifts = [s.loo_shift_over_halfwidth for s in scores if s.loo_shift_over_halfwidth is not None]
    return VibeControl(chosen, how, names, scores, coefficients, removed, heldout, train_units, test_units, len(test),
                       unit, max(shifts) if shifts else None, plain, controlled, notes)


def _kept(outcomes: list[Outcome], ties: str) -> list[Outcome]:
    return [o for o in outcomes if not (ties == "drop" and o.score == 0.5)]


def _with_columns(outcome: Outcome, columns: Sequence[int]) -> Outcome:
    return replace(outcome, style=tuple(outcome.style[i] for i in columns))


def _design(outcomes: Sequence[Outcome], models: list[str], columns: Sequence[int]) -> np.ndarray:
    """Rows of the GLM: +1 for model A's strength, −1 for B's (the first model is the reference, its strength 0),
    then the chosen covariates divided by their standard deviation over these battles, as the last columns."""
    index = {m: i for i, m in enumerate(models)}
    x = np.zeros((len(outcomes), len(models) - 1 + len(columns)))
    for row, o in enumerate(outcomes):
        if index[o.model_a]:
            x[row, index[o.model_a] - 1] = 1.0
        if index[o.model_b]:
            x[row, index[o.model_b] - 1] = -1.0
    if columns:
        style = np.array([[o.style[c] for c in columns] for o in outcomes], dtype=float)
        spread = style.std(axis=0)
        x[:, len(models) - 1:] = style / np.where(spread > 0, spread, 1.0)
    absent = np.zeros(x.shape[1], dtype=bool)
    absent[:len(models) - 1] = ~np.any(x[:, :len(models) - 1], axis=0)
    return x[:, ~absent]  # a model in none of these battles has no strength to fit


def _glm(outcomes: Sequence[Outcome], models: list[str], columns: Sequence[int]) -> Any:
    """The binomial GLM (no intercept: a battle shown A-first says nothing of itself) with standard errors
    clustered by unit; None when it cannot be fitted (separation, a singular design)."""
    x = _design(outcomes, models, columns)
    y = np.array([o.score for o in outcomes])
    groups = stats.cluster_index([o.unit for o in outcomes])
    try:
        fitted = stats.binomial_glm(y, x, intercept=False, cov_type="cluster", cov_kwds={"groups": groups})
    except stats.GLM_FAILURES:
        return None
    if not np.all(np.isfinite(fitted.bse)):
        return None
    return fitted


def _forward_selection(train: Sequence[Outcome], models: list[str], names: list[str], columns: dict[str, int],
                       most: int) -> list[str]:
    """Vibes chosen one at a time on the training battles (see the module docstring)."""
    chosen: list[str] = []
    base = _glm(train, models, [])
    if base is None or not train:
        return chosen
    base_ll = float(base.llf)
    values = {n: np.array([o.style[columns[n]] for o in train], dtype=float) for n in names}
    units = np.array([o.unit for o in train])
    common = {n for n in names if len(set(units[values[n] != 0])) >= MIN_UNITS}
    while len(chosen) < most:
        running = [n for n in names if n not in chosen and n in common
                   and not any(abs(_correlation(values[n], values[c])) > DUPLICATE_CORRELATION for c in chosen)]
        best, best_ll = None, base_ll
        for name in running:
            fitted = _glm(train, models, [columns[c] for c in (*chosen, name)])
            if fitted is None:
                continue
            p = float(fitted.pvalues[-1])
            if p < SELECTION_ALPHA / len(running) and float(fitted.llf) > best_ll:
                best, best_ll = name, float(fitted.llf)
        if best is None:
            break
        chosen.append(best)
        base_ll = best_ll
    return chosen


def _correlation(a: np.ndarray, b: np.ndarray) -> float:
    if a.std() == 0 or b.std() == 0:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


def _heldout(name: str, train: Sequence[Outcome], test: Sequence[Outcome], models: list[str], columns: list[int],
             ties: str) -> HeldOutFit:
    """`name`'s model fitted on the training battles and scored on the test battles: covariates scaled by their
    training standard deviation, as the fit saw them."""
    fit_train = [_with_columns(o, columns) for o in train]
    labels = [f"x{i}" for i in range(len(columns))]
    ratings, coefficients = bradley_terry(fit_train, models, ties, labels)
    spread = np.array([[o.style[i] for i in range(len(columns))] for o in fit_train]).reshape(len(train),
                                                                                             len(columns)).std(axis=0)
    beta = np.array([coefficients[label] for label in labels]) / np.where(spread > 0, spread, 1.0)
    z = np.array([(ratings[o.model_a] - ratings[o.model_b]) / SCALE
                  + float(np.dot([o.style[c] for c in columns], beta)) for o in test])
    return _scored(name, 1 / (1 + np.exp(-z)), np.array([o.score for o in test]))


def _heldout_arena(train: Sequence[Outcome], test: Sequence[Outcome], models: list[str]) -> HeldOutFit:
    """Arena's style control fitted its own way on the training battles (`arena_style.fit`: the features centred
    and scaled by their training mean and spread, every parameter L2-penalized) and scored on the test battles."""
    def columns(battles: Sequence[Outcome]) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
        k = len(STYLE_FEATURES)
        return ([o.model_a for o in battles], [o.model_b for o in battles],
                np.array([o.style[:k] for o in battles], dtype=float).reshape(len(battles), k),
                np.array([o.score for o in battles], dtype=float))

    fitted = arena_style.fit(*columns(train), models)
    model_a, model_b, style, score = columns(test)
    return _scored("arena_style4", fitted.win_probability(model_a, model_b, style), score)


def _scored(name: str, p: np.ndarray, y: np.ndarray) -> HeldOutFit:
    """A held-out fit's log-likelihood per test battle and accuracy on the decisive ones (a graded label is
    decisive for the side it gives more than half the win), from its P(A wins)."""
    p = np.clip(p, 1e-12, 1 - 1e-12)
    ll = y * np.log(p) + (1 - y) * np.log(1 - p)
    decisive = y != 0.5
    accuracy = float(np.mean((p[decisive] > 0.5) == (y[decisive] > 0.5))) if decisive.any() else None
    return HeldOutFit(name, float(ll.mean()) if len(ll) else math.nan, accuracy, len(y), int(decisive.sum()))


def _coefficients(test: Sequence[Outcome], models: list[str], chosen: list[str],
                  notes: list[str]) -> list[VibeCoefficient]:
    """Each chosen vibe's coefficient on the test battles, with its cluster-robust interval and Holm-adjusted p."""
    if not chosen:
        return []
    fitted = _glm(test, models, range(len(chosen)))
    if fitted is None:
        notes.append("The GLM of the test battles could not be fitted (a model wins or loses every battle, or "
                     "the covariates are collinear): no coefficient is tested.")
        return []
    k = -len(chosen)  # the covariates are the design's last columns
    beta = np.asarray(fitted.params)[k:]
    se = np.asarray(fitted.bse)[k:]
    p = [float(v) for v in np.asarray(fitted.pvalues)[k:]]
    adjusted = stats.holm(list(p))
    return [VibeCoefficient(name, float(b), float(b - 1.96 * s), float(b + 1.96 * s), pv, adj,
                            float(1 / (1 + math.exp(-b))))
            for name, b, s, pv, adj in zip(chosen, beta, se, p, adjusted, strict=True)]


def _leave_one_out(test: Sequence[Outcome], models: list[str], chosen: list[str], full: Ranking,
                   ties: str) -> dict[str, float]:
    """For each model, the largest move of its controlled score when another model's battles are left out and
    the rest refitted, over its interval's half-width; both fits anchored on the remaining models' mean."""
    rows = {r.model: r for r in full.ratings}
    worst: dict[str, float] = {}
    for left_out in models:
        others = [m for m in models if m != left_out]
        rest = [o for o in test if left_out not in (o.model_a, o.model_b)]
        if len(others) < 2 or not rest:
            continue
        refitted, _ = bradley_terry(rest, others, ties, chosen)
        shift_full = np.mean([rows[m].rating for m in others])
        shift_rest = np.mean([refitted[m] for m in others])
        for m in others:
            half = (rows[m].ci_high - rows[m].ci_low) / 2
            if half > 0:
                moved = abs((refitted[m] - shift_rest) - (rows[m].rating - shift_full)) / half
                worst[m] = max(worst.get(m, 0.0), float(moved))
    return worst
