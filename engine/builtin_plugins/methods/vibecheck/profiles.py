"""Vibe profiles: many models, each compared with one reference on one shared set of vibes.

A profile cell is one model's separability against the reference on one vibe (the mean panel verdict ν over
prompts, > 0: the model sits higher than the reference), with Tango's 95% score interval for a paired
difference of proportions (the betting interval of `engine.betting` where a unit is a conversation's mean
verdict), and, where a metric measures the vibe, the model's mean measure beside the reference's. A grid of
models × vibes makes that many claims at once, so a cell is called clear only when its exact sign test over
prompts survives Benjamini–Hochberg over every cell of the profile (5% false discovery rate). Vibes that
discovery found on the training prompts are described on the held-out prompts only, where their selection
cannot flatter them, and tested one-sided in the direction the model's training prompts showed (a cell can
confirm that direction, never name the other); declared vibes use every prompt and a two-sided test. Beside a
cell that is not clear stands the smallest separability its prompts could detect with 80% power, so "not
significant" reads as what it is: no difference that large, or too few prompts to tell.

Where the dataset labels a model's answers against the reference's, the model's win rate is reported raw
and length-controlled as AlpacaEval 2 does it: a logistic GLM of the label on a per-model intercept and
tanh(length difference / its standard deviation), read at a length difference of 0 (Dubois et al. 2024; the
instruction-difficulty term, fitted across AlpacaEval's hundreds of models, is left out). A resample whose
GLM has no finite fit (separation) is refitted with Firth's penalty rather than dropped, since dropping
exactly the lopsided resamples would pull the interval towards 50%. A pooled regression over every labelled
comparison says which vibes go with winning, with length as a covariate and an intercept per model (fixed
effects), so a coefficient compares answers of the same model: with one intercept for all, a model that both
wins often and sits high on a vibe would make the vibe look like a cause of winning when within every model it
is not. Comparisons that share a prompt share the reference's answer, so standard errors are clustered by
prompt.
"""

from __future__ import annotations

import csv
import gc
import json
import warnings
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
from scipy.special import expit

from engine.api.analysis import stats
from engine.api.execution import cached
from engine.api.spec import Labels, Vibe
from engine.builtin_plugins.methods.vibecheck import heldout
from engine.builtin_plugins.methods.vibecheck.firth import estimable
from engine.builtin_plugins.methods.vibecheck.records import (
    PairVerdicts,
    TurnCell,
    VibeCheckResult,
    WinRate,
    one_label_each,
)
from engine.builtin_plugins.methods.vibecheck.turns import TURN_TEST, turn_cells

BOOTSTRAP_ROUNDS = 1000
FLAT_LENGTH = 0.01  # below this SD of tanh(length difference / SD) the LC intercept is not identified
LC_ESTIMATOR = ("logistic GLM (statsmodels) of the label (a graded annotator's share of the win where it gives one, "
                "as AlpacaEval 2 fits it) on an intercept and tanh(length difference / its SD), read at equal "
                "length, as AlpacaEval 2's length-controlled win rate")
POOLED_ESTIMATOR = ("logistic GLM (statsmodels) on standardized vibe strengths and the length covariate with an "
                    "intercept per model (fixed effects: within-model effects), standard errors clustered by prompt; "
                    "Wald p-values, Holm-adjusted over the vibes")
CELL_TEST = ("an exact sign test of each cell's verdicts over prompts (one-sided in the training direction for a "
             "discovered vibe, two-sided for a declared one), Benjamini–Hochberg over every cell of the profile (false "
             "discovery rate 5%)")
CLUSTERED = ("; the pairs are turns of conversations, so each conversation's mean verdict is one unit of the test "
             "and of the interval (n counts conversations), and the turn-by-turn cells join the grid's "
             "Benjamini–Hochberg family. No detectable separability is printed there: a conversation's mean "
             "verdict is not a −1/0/+1 verdict, which that formula assumes")
TURNS_WITH_GRID = "; in one Benjamini–Hochberg family with the overall grid's cells"
ALPHA = 0.05


@dataclass(frozen=True)
class ProfileCell:
    model: str
    vibe: str
    separability: float | None  # mean ν over `n` prompts; > 0: the model sits higher than the reference
    ci_low: float | None
    ci_high: float | None
    n: int
    prompts: str  # "all" or "test" (a discovered vibe: held-out prompts only)
    measure: float | None = None  # the model's mean of the vibe's metric, where it has one
    measure_reference: float | None = None
    share: float | None = None  # answers where the metric is above 0
    share_reference: float | None = None
    p_value: float | None = None  # exact sign test of the verdicts over prompts (see `direction`)
    p_adjusted: float | None = None  # Benjamini–Hochberg over every cell of the profile
    direction: int = 0  # a discovered vibe: the sign its training prompts showed, tested one-sided; 0: two-sided
    # the |separability| this cell's test detects with 80% power at `power_alpha`: once the grid is corrected, the
    # level a cell that is not clear would have to reach to join the clear ones (BH's α·(R + 1)/m with R clear
    # of m), 5% before; from `nonzero` of the `n` verdicts (None over conversation means)
    mde: float | None = None
    unit: str = "prompts"  # what n counts: prompts, or conversations (each its turns' mean verdict)
    nonzero: int | None = None
    power_alpha: float | None = None

    def clear(self) -> bool:
        """The model differs from the reference on this vibe beyond what the grid's many cells explain."""
        return self.p_adjusted is not None and self.p_adjusted < ALPHA


@dataclass(frozen=True)
class PooledTerm:
    feature: str
    coefficient: float | None  # per standard deviation of the feature
    std_error: float | None
    p_value: float | None
    p_adjusted: float | None
    note: str = ""


@dataclass
class ProfileResult:
    analysis: str
    reference: str
    models: list[str]  # the models compared with the reference, in the spec's order
    vibes: list[Vibe]
    origins: dict[str, str]
    cells: list[ProfileCell]
    comparisons: list[VibeCheckResult]
    labels: Labels = field(default_factory=Labels)
    winrates: list[WinRate] = field(default_factory=list)
    pooled: list[PooledTerm] = field(default_factory=list)
    pooled_n: int = 0  # labelled comparisons (model, prompt) in the pooled regression
    pooled_prompts: int = 0
    pooled_note: str = ""
    lc_estimator: str = LC_ESTIMATOR
    pooled_estimator: str = POOLED_ESTIMATOR
    cell_test: str = CELL_TEST
    turns: list[TurnCell] = field(default_factory=list)  # conversations: every cell again, turn by turn
    turn_test: str = TURN_TEST

    def cell(self, model: str, vibe: str) -> ProfileCell | None:
        return next((c for c in self.cells if c.model == model and c.vibe == vibe), None)

    def winrate(self, model: str) -> WinRate | None:
        return next((w for w in self.winrates if w.model == model), None)


def profile(comparisons: list[VibeCheckResult], reference: str, vibes: list[Vibe], origins: dict[str, str],
            labels: Labels, seed: int = 0, rounds: int = BOOTSTRAP_ROUNDS) -> ProfileResult:
    """The profile of every compared model from its comparison with the reference (model A: the model)."""
    cells = [_cell(vc, vibe, _held_out_only(vibe, origins)) for vc in comparisons for vibe in vibes]
    turns = turn_cells(comparisons, vibes, {v.name: _held_out_only(v, origins) for v in vibes})
    # the grid and its turn-by-turn breakdown are claims on one page: one Benjamini–Hochberg family
    adjusted = stats.benjamini_hochberg([c.p_value for c in cells] + [t.p_value for t in turns])
    cells = [replace(c, p_adjusted=q) for c, q in zip(cells, adjusted, strict=False)]
    turns = [replace(c, p_adjusted=q) for c, q in zip(turns, adjusted[len(cells):], strict=True)]
    tested = sum(q is not None for q in adjusted)
    alpha = ALPHA * (sum(c.clear() for c in cells) + sum(t.clear() for t in turns) + 1) / max(tested, 1)
    cells = [_powered(c, min(alpha, ALPHA)) for c in cells]
    winrates = [w for vc in comparisons if (w := win_rate(vc, seed, rounds)) is not None]
    result = ProfileResult(comparisons[0].analysis if comparisons else "", reference,
                           [vc.model_a for vc in comparisons], vibes, origins, cells, comparisons, labels, winrates,
                           turns=turns)
    if any(p.conversation for vc in comparisons for p in vc.pairs):
        result.cell_test += CLUSTERED
        result.turn_test += TURNS_WITH_GRID
    if winrates:
        _pooled(result, any(_held_out_only(v, origins) for v in vibes))
    return result


def _held_out_only(vibe: Vibe, origins: dict[str, str]) -> bool:
    return origins.get(vibe.name, "declared").startswith("discovered")


def _cell(vc: VibeCheckResult, vibe: Vibe, held_out: bool) -> ProfileCell:
    pairs = [p for p in vc.pairs if (not held_out or p.split == "test") and p.nu[vibe.name] is not None]
    # the turns of one conversation are one unit: a conversation's mean verdict enters the interval and test
    nu = np.array(stats.cluster_means([float(p.nu[vibe.name] or 0) for p in pairs], [p.cluster for p in pairs]))
    ternary = len(nu) == len(pairs)  # each verdict its own unit; a conversation's mean is not −1, 0 or +1
    where = "test" if held_out else "all"
    if not len(nu):
        return ProfileCell(vc.model_a, vibe.name, None, None, None, 0, where)
    low, high = stats.verdict_interval(nu)  # Tango's for verdicts, the betting interval for means
    measured = [p.measures[vibe.name] for p in pairs if vibe.name in p.measures]
    values = np.array(measured, dtype=float).reshape(len(measured), 2)
    has = len(values) > 0
    score = next((v for v in vc.vibes if v.name == vibe.name), None)
    direction = int(np.sign(score.separability_train)) if held_out and score is not None else 0
    return ProfileCell(vc.model_a, vibe.name, float(nu.mean()), low, high, len(nu), where,
                       float(values[:, 0].mean()) if has else None, float(values[:, 1].mean()) if has else None,
                       float((values[:, 0] > 0).mean()) if has else None,
                       float((values[:, 1] > 0).mean()) if has else None, stats.sign_test(nu, direction),
                       direction=direction, unit="prompts" if ternary else "conversations",
                       nonzero=int((nu != 0).sum()) if ternary else None)  # its detectable size: `_powered`


def _powered(cell: ProfileCell, alpha: float) -> ProfileCell:
    """`cell` with its detectable separability at `alpha`, the level its corrected test faces."""
    if cell.nonzero is None or cell.p_value is None:
        return cell
    return replace(cell, mde=stats.sign_test_mde(cell.nonzero, cell.n, alpha=alpha, one_sided=cell.direction != 0),
                   power_alpha=alpha)


def _outcome(pair: PairVerdicts, model_a: str) -> float | None:
    """1 when the label went to model A (`model_a`), 0 when to B, ½ for a tie, and a graded label's share of
    the win for A (AlpacaEval's weighted annotator), as AlpacaEval 2 counts its win rate and fits its
    length-controlled GLM; None when unlabelled."""
    if pair.preference is None:
        return None
    if pair.share is not None:
        return pair.share
    return 0.5 if pair.preference == "tie" else float(pair.preference == model_a)


def _length_term(difference: np.ndarray) -> np.ndarray:
    sd = difference.std()
    return np.tanh(difference / sd) if sd > 0 else np.zeros(len(difference))


def _lc_fit(y: np.ndarray, length: np.ndarray) -> float:
    """The length-controlled win rate: the GLM's win probability at equal length."""
    fit = stats.binomial_glm(y, length[:, None] if length.std() > 0 else np.empty((len(y), 0)), intercept=True)
    if not fit.converged or not np.all(np.isfinite(fit.params)):
        raise ValueError("the GLM did not converge")
    return float(expit(fit.params[0]))


def _lc_interval(y: np.ndarray, length: np.ndarray, group: np.ndarray, seed: int,
                 rounds: int) -> tuple[float, float, int]:
    """The length-controlled rate's 95% percentile interval over `rounds` resamples of the clusters, and how
    many resamples Firth's fit had to take: a thousand GLM fits, which a re-run reads back from the run cache."""
    rng = np.random.default_rng(seed)
    members = np.split(np.argsort(group, kind="stable"), np.cumsum(np.bincount(group))[:-1])
    draws, penalized = [], 0
    for drawn in (row for block in stats.resampled_rows(rng, len(members), rounds) for row in block):
        rows = drawn if len(members) == len(y) else np.concatenate([members[k] for k in drawn])
        try:
            draws.append(_lc_fit(y[rows], length[rows]))
        except stats.GLM_FAILURES:  # separation: no finite GLM fit; Firth's is finite, and dropping would bias it
            draws.append(_lc_penalized(y[rows], length[rows]))
            penalized += 1
        # a statsmodels fit leaves reference cycles that hold its n-row arrays (about 20 MB at 100,000 rows), and
        # the cyclic collector counts objects, not bytes: left to it, a thousand fits held 2 GB at 100,000 pairs
        gc.collect(1)
    return float(np.quantile(draws, 0.025)), float(np.quantile(draws, 0.975)), penalized


def _lc_penalized(y: np.ndarray, length: np.ndarray) -> float:
    """The same quantity from Firth's penalized fit, finite under separation: for the bootstrap resamples whose
    GLM has none. An outcome y between 0 and 1 (a tie's ½, a graded annotator's share) enters as a win of weight
    y and a loss of weight 1 − y, as the GLM's binomial likelihood counts it (Firth's fit takes only 0 and 1:
    a graded share stopped the resample with an error)."""
    labels = np.r_[np.ones(len(y)), np.zeros(len(y))]
    weights = np.r_[y, 1 - y]
    lengths = np.r_[length, length][weights > 0]
    labels, weights = labels[weights > 0], weights[weights > 0]
    if len(set(labels.tolist())) < 2 or not lengths.std() > 0:
        # one outcome throughout, or no length to fit: Firth's intercept-only estimate, in closed form (the score
        # Σw(y − p) plus Jeffreys' ½(1 − 2p) is 0 there)
        return float((weights @ labels + 0.5) / (weights.sum() + 1.0))
    from firthmodels import FirthLogisticRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = FirthLogisticRegression(fit_intercept=True, max_iter=100).fit(lengths[:, None], labels,
                                                                               sample_weight=weights)
    return float(expit(model.intercept_))


def _labelled_rows(vc: VibeCheckResult) -> tuple[np.ndarray, np.ndarray, list[str], str]:
    """The labelled outcomes (1, 0, ½ for a tie), the character differences A − B, each row's unit and what a
    row is. A conversation whose turns share one label (a battle's winner) is one row, its characters summed
    over the turns; turns labelled apart stay rows, resampled by conversation."""
    pairs = [p for p in vc.pairs if _outcome(p, vc.model_a) is not None]
    y = np.array([_outcome(p, vc.model_a) for p in pairs], dtype=float)
    difference = np.array([p.chars[0] - p.chars[1] for p in pairs], dtype=float)
    clusters = [p.cluster for p in pairs]
    if not any(p.conversation for p in pairs):
        return y, difference, clusters, "prompts"
    if not one_label_each(zip(clusters, y.tolist(), strict=True)):
        return y, difference, clusters, "turns"
    labels = dict(zip(clusters, y.tolist(), strict=True))  # each conversation's one label, in order of first appearance
    return (np.array(list(labels.values())), np.bincount(stats.cluster_index(clusters), weights=difference),
            list(labels), "conversations")


def win_interval(y: np.ndarray, clusters: list[str], unit: str, seed: int, rounds: int) -> tuple[float, float, str]:
    """The win rate's 95% interval and its name. A row won, tied or lost is a verdict of +1, 0 or −1 on the
    win rate's scale (2y − 1), so over prompts or conversations it is the separability's own interval, mapped
    back: Tango's score interval where every row is a win, a tie or a loss, the betting interval where a
    graded annotator gives shares. Both hold 95% at 10–20 rows, where the percentile bootstrap they replace
    covered 64% (20 prompts, A winning 95%). Turns labelled apart within conversations keep the percentile
    bootstrap over conversations: the rate counts turns, which neither interval over conversation means does."""
    if unit == "turns":
        low, high = stats.cluster_bootstrap_interval(y, clusters, seed, rounds)
        return low, high, "a percentile bootstrap over conversations"
    verdicts = 2 * y - 1
    low, high = stats.verdict_interval(verdicts)
    name = ("Tango's score interval" if np.isin(verdicts, (-1.0, 0.0, 1.0)).all() else
            "the betting interval (Waudby-Smith & Ramdas 2024)")
    return (low + 1) / 2, (high + 1) / 2, name


def win_rate(vc: VibeCheckResult, seed: int, rounds: int) -> WinRate | None:
    """Model A's share of the labelled prompts it won (a tie half) and its length-controlled twin, each with a
    95% interval over prompts (conversations); None without labels."""
    y, difference, clusters, unit = _labelled_rows(vc)
    if not len(y):
        return None
    low, high, interval = win_interval(y, clusters, unit, seed, rounds)
    length = _length_term(difference)
    ties = int((y == 0.5).sum())
    shorter = float(np.mean(difference < 0))
    if 0 < length.std() < FLAT_LENGTH:
        return WinRate(vc.model_a, float(y.mean()), low, high, None, None, None, len(y), ties, shorter,
                       "no length-controlled rate: the length term is nearly the same on every prompt, so the "
                       "GLM cannot tell its intercept from its length slope", unit, interval)
    try:
        lc = _lc_fit(y, length)
    except stats.GLM_FAILURES as exc:  # degenerate labels: the page says which
        return WinRate(vc.model_a, float(y.mean()), low, high, None, None, None, len(y), ties, shorter,
                       f"no length-controlled rate: the GLM could not be fitted ({stats.fit_failure(exc)})", unit,
                       interval)
    group = stats.cluster_index(clusters)
    inputs = {"y": y.tolist(), "length": length.tolist(), "group": group.tolist(), "seed": seed, "rounds": rounds}
    lc_low, lc_high, penalized = cached(
        "lc-interval", inputs, lambda: _lc_interval(y, length, group, seed, rounds),
        lambda found: json.dumps(found).encode(), lambda data: tuple(json.loads(data)))
    note = (f"{penalized} of {rounds} resamples had no finite GLM fit and were refitted with Firth's penalty"
            if penalized else "")
    return WinRate(vc.model_a, float(y.mean()), low, high, lc, lc_low, lc_high, len(y), ties, shorter, note, unit,
                   interval)


def _pooled(result: ProfileResult, held_out: bool) -> None:
    """Which vibes go with winning, over every labelled comparison at once (ties left out)."""
    rows = [(vc, p) for vc in result.comparisons for p in vc.pairs
            if p.preference not in (None, "tie") and (not held_out or p.split == "test")]
    result.pooled_n = len(rows)
    result.pooled_prompts = len({p.item_id for _, p in rows})
    names = [v.name for v in result.vibes]
    where = "held-out prompts (discovery saw the training ones)" if held_out else "every labelled prompt"
    if len(rows) < 10:
        result.pooled_note = f"Only {len(rows)} labelled comparisons on {where}: no pooled regression."
        return
    x = np.array([[p.feature(v) for v in names] for _, p in rows], dtype=float).reshape(len(rows), len(names))
    complete = np.all(np.isfinite(x), axis=1)  # a pair no judge could score on a vibe is missing, not a 0
    rows, x = [r for r, ok in zip(rows, complete, strict=True) if ok], x[complete]
    y = np.array([float(p.preference == vc.model_a) for vc, p in rows])
    length = stats.length_covariate(np.array([p.chars[0] for _, p in rows]), np.array([p.chars[1] for _, p in rows]))
    models = [vc.model_a for vc in result.comparisons]
    fixed = np.array([[float(vc.model_a == m) for m in models[1:]] for vc, _ in rows]).reshape(len(rows), -1)
    design = np.column_stack([fixed, length, x])
    features = [heldout.LENGTH, *names]
    usable, reasons = estimable(design, intercept=True, pairs="labelled")
    controls = [j for j in usable if j < fixed.shape[1]]  # the model intercepts: not reported
    shown = {j - fixed.shape[1]: k + len(controls) for k, j in enumerate(j for j in usable if j >= fixed.shape[1])}
    reasons = {j - fixed.shape[1]: why for j, why in reasons.items() if j >= fixed.shape[1]}
    z = design[:, usable]
    z[:, len(controls):] = (z[:, len(controls):] - z[:, len(controls):].mean(axis=0)) / z[:, len(controls):].std(axis=0)
    groups = np.unique([p.cluster for _, p in rows], return_inverse=True)[1]  # a prompt, or a conversation
    try:
        fit = stats.binomial_glm(y, z, intercept=True, cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    except stats.GLM_FAILURES as exc:  # separation or a singular design: say so instead of printing a fit
        result.pooled_note = f"The pooled regression could not be fitted on {where} ({stats.fit_failure(exc)})."
        return
    p_values: list[float | None] = [None] * len(features)
    terms: dict[int, tuple[float, float]] = {}
    for j, k in shown.items():  # column k of z is feature j; the GLM puts its constant first
        terms[j] = (float(fit.params[k + 1]), float(fit.bse[k + 1]))
        p_values[j] = float(fit.pvalues[k + 1])
    adjusted = [None, *stats.holm(p_values[1:])]  # the vibes are the family; length is the control
    result.pooled = [PooledTerm(name, terms[j][0] if j in terms else None, terms[j][1] if j in terms else None,
                                p_values[j], adjusted[j], reasons.get(j, "")) for j, name in enumerate(features)]
    result.pooled_n = len(rows)
    result.pooled_note = (f"{len(rows)} labelled comparisons on {result.pooled_prompts} {where}; "
                          f"{len(result.comparisons)} models against {result.reference}, each with its own intercept.")


def write_profiles(result: ProfileResult, run_dir: Path) -> Path:
    """profiles.csv, winrates.csv (when labels exist) and profiles.json beside the run."""
    out = run_dir / result.analysis
    out.mkdir(parents=True, exist_ok=True)
    _write_csv(out / "profiles.csv", ["model", "vibe", "separability", "ci_low", "ci_high", "measure",
                                      "measure_reference", "n", "prompts", "share", "share_reference", "p_value",
                                      "p_adjusted"], result.cells)
    if result.winrates:
        _write_csv(out / "winrates.csv", ["model", "win_rate", "lc_win_rate", "n", "ci_low", "ci_high", "lc_ci_low",
                                          "lc_ci_high", "ties", "shorter", "note", "unit"], result.winrates)
    summary = {"analysis": result.analysis, "reference": result.reference, "models": result.models,
               "vibes": [{**asdict(v), "origin": result.origins.get(v.name, "declared")} for v in result.vibes],
               "labels": asdict(result.labels), "cells": [asdict(c) for c in result.cells],
               "winrates": [asdict(w) for w in result.winrates], "pooled": [asdict(t) for t in result.pooled],
               "pooled_n": result.pooled_n, "pooled_note": result.pooled_note,
               "lc_estimator": result.lc_estimator, "pooled_estimator": result.pooled_estimator,
               "cell_test": result.cell_test,
               **({"turns": [asdict(t) for t in result.turns], "turn_test": result.turn_test} if result.turns else {})}
    (out / "profiles.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return out


def _write_csv(path: Path, columns: list[str], records: list[ProfileCell] | list[WinRate]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows({k: asdict(r)[k] for k in columns} for r in records)
