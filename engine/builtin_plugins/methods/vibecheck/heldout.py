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
rule to beat, so the model starts as that rule, oriented on the training pairs (where shorter answers win
there, the rule is "the shorter answer wins", and the test pairs score the model against that: a rule pointed
the wrong way would flatter any model). One term: +1 where the rule picks A's answer, −1 where B's, the
training majority where the lengths are equal; its fitted weight makes the model's predictions the rule's.
Candidates are admitted one at a time, the best first, only while the largest score statistic among the
candidates left exceeds what it reaches when the labels are drawn from the current model (a
parametric-bootstrap null of that maximum, at 5%): first the intercept and the log length ratio, then the
vibes, so a vibe that stands in for length enters only over and above length. The maximum over candidates is
what is tested, so the chance of admitting any noise candidate at a step is held at 5%, where a threshold
applied to the best of k candidates (a one-SE rule, say) admits noise far more often. A term with a real
effect on the training pairs can still cost accuracy on new ones, so the rule is left only when the whole
procedure, re-run within 10-fold cross-fitting on the training pairs, predicts their held-out folds better than
the rule does. Where nothing stays, the model is the rule, and the page says so.

Both fits use Firth's penalized likelihood (Firth 1993; the `firthmodels` implementation of R's logistf).
Its estimates stay finite under (quasi-)separation, which a handful of sharp vibes hits often, so every
coefficient on every seed comes from the same estimator and means the same thing; p-values come from
penalized likelihood-ratio tests (Heinze & Schemper 2002). Accuracies carry Wilson 95% intervals over test
pairs, and the gain over the rule a paired bootstrap over test pairs.

Turns of a conversation are not independent pairs. Model matching, and preference where a conversation carries
one label, are fitted on one row per conversation (`regressions`), so every n, interval and p-value counts
conversations. Preference labelled turn by turn keeps its turn rows, with admission's null and folds drawn by
conversation, intervals resampling conversations and no refit p-values (`preference`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from engine.api.analysis import stats
from engine.api.execution import cached
from engine.builtin_plugins.methods.vibecheck.admission import (
    FOLDS,
    admit_staged,
    null_used,
    transfers,
)
from engine.builtin_plugins.methods.vibecheck.firth import correct, firth

ESTIMATOR = "Firth-penalized logistic regression; p-values from penalized likelihood-ratio tests"
INFERENCE = "held-out refit"
# Baseline rules, named for what they compute.
RULE = "longer answer wins"  # preference: the literal rule; model matching: "the longer answer is <model>'s"
SHORTER_RULE = "shorter answer wins"  # preference, where the training pairs favour the shorter answer
LENGTH_FIT = "length logistic fit"  # a logistic curve on the log length ratio, fitted on the training pairs
VIBES_ALONE = "vibes alone"
MAJORITY = "majority class"
# Terms of the preference model.
RULE_TERM = "length rule (±1)"
LENGTH = "length (log character ratio)"
INTERCEPT = "intercept"
DESCRIPTIVE = ("descriptive: the fit on the training pairs that chose these terms, what predicts the test pairs; "
               "no standard errors or p-values, since those pairs did the choosing")
BOOTSTRAP_ROUNDS = 2000
TURN_LABELS = ("no p-value: the labels are per turn, and a likelihood-ratio test on the refit would count a "
               "conversation's turns as independent")
Z80 = 0.8416212335729143  # z of 80%: the power a "detectable" size is stated at
CLAIMS_ALPHA = 0.05  # the level of the Holm family of one comparison's claims


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
    train_coefficients_are: str = DESCRIPTIVE
    rule: str = RULE  # the length rule the fit is scored against (preference: oriented on the training pairs)
    detectable: list[float | None] = field(default_factory=list)  # see `adjust`
    # the two-sided level each `detectable` is stated at, per feature: weighted Holm's first step 5%·w/W (`adjust`)
    power_alphas: list[float | None] = field(default_factory=list)
    unit: str = "pairs"  # what n_train, n_test and every interval count: pairs, conversations, or turns

    def baseline(self, rule: str) -> Accuracy | None:
        return next((b for b in self.baselines if b.rule == rule), None)


def _accuracy(rule: str, correct: np.ndarray, clusters: list[str] | None = None) -> Accuracy:
    """Wilson's interval over independent rows; over turns of conversations, a bootstrap of whole
    conversations (n: turns)."""
    if clusters is not None:
        low, high = stats.cluster_bootstrap_interval(correct, clusters, 0, BOOTSTRAP_ROUNDS)
    else:
        low, high = stats.wilson(float(correct.sum()), len(correct))
    return Accuracy(rule, float(correct.mean()) if len(correct) else float("nan"), low, high, len(correct))


def _gain(model: np.ndarray, rule: np.ndarray, seed: int,
          clusters: list[str] | None = None) -> tuple[float, float, float]:
    """Accuracy of the model minus the rule's, with a 95% bootstrap interval that resamples test pairs (whole
    conversations, when `clusters` names each pair's)."""
    diff = model - rule
    if not len(diff):
        return float("nan"), float("nan"), float("nan")
    if clusters is not None:
        return float(diff.mean()), *stats.cluster_bootstrap_interval(diff, clusters, seed, BOOTSTRAP_ROUNDS)
    return float(diff.mean()), *stats.bootstrap_interval(diff, seed, BOOTSTRAP_ROUNDS)


def longer_rule(length: np.ndarray, tie: float) -> np.ndarray:
    """+1 where A's answer has more characters (the log ratio is positive), −1 where B's, `tie` where equal."""
    return np.where(length > 0, 1.0, np.where(length < 0, -1.0, tie))


def lars_order(x: np.ndarray, names: list[str]) -> list[str]:
    """The order in which features enter the least-angle regression path predicting model identity on the
    training pairs (VibeCheck's top-k step). Both display orders make the least-squares target centred, so
    this is the paper's LARS on standardized features; it selects, it does not test."""
    return cached("lars", {"x": x.tolist(), "names": names}, lambda: _lars_order(x, names),
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
                   length_test: np.ndarray, seed: int = 0, clusters: list[str] | None = None) -> HeldOutFit:
    """Which model wrote the first-shown answer, each pair once with model A first (see module docstring):
    fitted on the training pairs to predict the test pairs, refitted on the test pairs for inference."""
    rng = np.random.default_rng(seed)
    flip = _random_orders(len(x_train), rng)
    fit = firth(x_train * flip[:, None], (flip > 0).astype(float), intercept=False, tests=False)
    flip_test = _random_orders(len(x_test), rng)
    refit = firth(x_test * flip_test[:, None], (flip_test > 0).astype(float), intercept=False, pairs="test")
    ones_train, ones_test = np.ones(len(x_train)), np.ones(len(x_test))
    right = correct(fit.decision(x_test), ones_test)
    # the rule: the longer answer is the model's that wrote the longer answer on more training pairs
    direction = float(np.sign(np.sign(length_train).sum()))
    rule_right = correct(direction * np.sign(length_test), ones_test)
    length = firth(length_train[:, None] * flip[:, None], (flip > 0).astype(float), intercept=False, tests=False)
    gain, gain_low, gain_high = _gain(right, rule_right, seed, clusters)
    accuracy = _accuracy("vibes", right)
    return HeldOutFit(
        "model_matching", names, refit.coefficients.tolist(), refit.std_errors, refit.p_values, refit.p_notes, None,
        float(correct(fit.decision(x_train), ones_train).mean()), accuracy.accuracy, len(x_train), len(x_test),
        accuracy.ci_low, accuracy.ci_high,
        [_accuracy(RULE, rule_right),
         _accuracy(LENGTH_FIT, correct(length.decision(length_test[:, None]), ones_test)),
         Accuracy(MAJORITY, 0.5, 0.5, 0.5, len(x_test))],  # either order is equally likely
        gain, gain_low, gain_high, tested=[True] * len(names), train_coefficients=fit.coefficients.tolist())


def preference(names: list[str], x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray,
               y_test: np.ndarray, length_train: np.ndarray, length_test: np.ndarray,
               seed: int = 0, clusters: list[str] | None = None,
               train_clusters: list[str] | None = None) -> HeldOutFit:
    """Did the label go to model A? The length rule oriented on the training pairs (longer or shorter wins),
    then the intercept and length, then vibes, admitted by the calibrated test on the training pairs, the rule
    left only where that whole procedure predicts better cross-fitted (by more than one standard error); scored
    on the test pairs beside the rule and refitted there for inference (see module docstring).

    Rows that are turns of conversations, each turn with its own label (`train_clusters` and `clusters` name
    each row's conversation): admission draws its null and cuts its folds by conversation, the intervals
    resample conversations, and the refit prints no p-values, since its likelihood-ratio tests would count
    turns as independent. Labels given per conversation are fitted one row per conversation instead
    (`regressions`), where every test holds."""
    if len(set(y_train.tolist())) < 2:
        raise ValueError("preference: every training label names the same model, so there is nothing to "
                         "predict (check the dataset's preference values)")
    majority = 1.0 if y_train.mean() >= 0.5 else -1.0
    lean = 1.0 if correct(np.sign(length_train), y_train).mean() >= 0.5 else -1.0  # ties count ½ either way
    rule_name = RULE if lean > 0 else SHORTER_RULE
    rule_train, rule_test = longer_rule(lean * length_train, majority), longer_rule(lean * length_test, majority)
    stages = [{INTERCEPT: np.ones(len(y_train)), LENGTH: length_train},
              {name: x_train[:, j] for j, name in enumerate(names)}]
    groups = None if train_clusters is None else np.unique(train_clusters, return_inverse=True)[1]
    chosen, steps = admit_staged(rule_train[:, None], stages, y_train, seed, groups)
    transfer = ""
    if chosen:
        cv = transfers(rule_train, stages, y_train, seed, INTERCEPT, groups)
        transfer = (f" Cross-fitted on the training pairs ({FOLDS} folds, admission re-run on each), the procedure "
                    f"was right on {cv.model:.1%} against the rule's {cv.rule:.1%} (a gain of "
                    f"{100 * (cv.model - cv.rule):+.1f} points, standard error {100 * cv.error:.1f}): "
                    + ("the admitted terms stay." if cv.kept else "it does not beat the rule by more than one "
                       "standard error, so the model is the rule."))
        chosen = chosen if cv.kept else []
    terms = [n for n in chosen if n != INTERCEPT]
    with_intercept = INTERCEPT in chosen
    columns = {LENGTH: (length_train, length_test),
               **{name: (x_train[:, j], x_test[:, j]) for j, name in enumerate(names)}}
    design_train = np.column_stack([rule_train, *(columns[n][0] for n in terms)])
    design_test = np.column_stack([rule_test, *(columns[n][1] for n in terms)])
    fit = firth(design_train, y_train, intercept=with_intercept, tests=False)
    refit = firth(design_test, y_test, intercept=with_intercept, tests=clusters is None, pairs="test")
    if clusters is not None:
        refit = replace(refit, p_notes=[TURN_LABELS if note in ("", "not tested") else note for note in refit.p_notes])
    right = correct(fit.decision(design_test), y_test)
    rule_right = correct(rule_test, y_test)
    length_fit = firth(length_train[:, None], y_train, intercept=True, tests=False)
    vibes_only = firth(x_train, y_train, intercept=True, tests=False)
    gain, gain_low, gain_high = _gain(right, rule_right, seed, clusters)
    accuracy = _accuracy("vibes", right, clusters)
    admitted = [n for n in chosen if n in names]
    selection = (f"starts as the rule “{rule_name}” (the direction the training pairs favour; equal lengths to "
                 f"the training majority); the intercept and length were candidates first, then {len(names)} "
                 "vibe(s), each step admitting the best only where the largest score statistic beat its "
                 f"{null_used(len(y_train), groups is not None)} on the training pairs: "
                 + ("; ".join(steps) if steps else "no candidates") + "." + transfer + " "
                 + (f"Vibes admitted: {', '.join(admitted)}." if admitted
                    else f"No vibe was admitted: on these pairs the answer is the rule “{rule_name}”"
                         + (" with " + ", ".join(chosen) if chosen else "") + "."))
    return HeldOutFit(
        "preference", [RULE_TERM, *terms], refit.coefficients.tolist(), refit.std_errors, refit.p_values,
        refit.p_notes, refit.intercept, float(correct(fit.decision(design_train), y_train).mean()),
        accuracy.accuracy, len(y_train), len(y_test), accuracy.ci_low, accuracy.ci_high,
        [_accuracy(rule_name, rule_right, clusters),
         _accuracy(LENGTH_FIT, correct(length_fit.decision(length_test[:, None]), y_test), clusters),
         _accuracy(VIBES_ALONE, correct(vibes_only.decision(x_test), y_test), clusters),
         _accuracy(MAJORITY, (y_test == (majority > 0)).astype(float), clusters)],
        gain, gain_low, gain_high, selection, tested=[False] + [n in names and clusters is None for n in terms],
        train_coefficients=fit.coefficients.tolist(), train_intercept=fit.intercept, rule=rule_name,
        unit="pairs" if clusters is None else "turns")


def cached_fit(fit: Callable[..., HeldOutFit], *args: Any) -> HeldOutFit:
    """`fit(*args)` (model_matching or preference), or its result from the last run with the same inputs and
    code (this module's and what it imports, admission and stats among them)."""
    inputs = {"fit": fit.__name__, "args": [a.tolist() if isinstance(a, np.ndarray) else a for a in args]}
    return cached("heldout", inputs, lambda: fit(*args),
                          lambda result: json.dumps(asdict(result)).encode(), _decode_fit)


def _decode_fit(data: bytes) -> HeldOutFit:
    fields = json.loads(data)
    return HeldOutFit(**{**fields, "baselines": [Accuracy(**b) for b in fields["baselines"]]})


def adjust(fits: list[HeldOutFit], also: Sequence[float | None] = (), weights: Mapping[str, float] | None = None,
           names: Sequence[str] = ()) -> tuple[list[HeldOutFit], list[float | None], list[float | None], int]:
    """Weighted Holm (`stats.weighted_holm`) over the vibe coefficients of one comparison's regressions (all
    from the held-out refits) and the other p-values `also` gives (the same comparison's claims about its vibes,
    adjusted in the same family; returned adjusted, in order). Every claim about a vibe weighs that vibe's
    `weights` entry (its training evidence, fixed before any test pair was read), the claims in `also` being
    about the vibes `names`; a vibe with no weight, or no `weights` at all, weighs the mean of those given (all
    equal: Holm's). The rule, length and intercept terms are controls, outside the family. Beside each vibe
    coefficient, the smallest |coefficient| its refit detects with 80% power at the level the corrected test
    faces, weighted Holm's first step 5%·w/W ((z at 1 − 5%·w/2W + z₀.₈₀)·SE from its standard error; with equal
    weights Holm's bound 5%/m; at 5% before correction it would promise power the corrected test does not
    have): where a test is not significant, what it could have found. Returned with the fits and the adjusted
    `also`: the level each claim of `also` faces (None where it has no p-value), to state its power at, and
    how many claims the family holds."""
    from scipy.stats import norm

    weights = weights or {}
    shared = float(np.mean(list(weights.values()))) if weights else 1.0

    def weight(vibe: str) -> float:
        return weights.get(vibe, shared)

    flat = [p if tested else None for f in fits for p, tested in zip(f.p_values, f.tested, strict=True)]
    flat_weights = [weight(name) for f in fits for name in f.features]
    also_weights = [weight(name) for name in names] if names else [shared] * len(also)
    every = flat + list(also)
    every_weights = flat_weights + also_weights
    total = sum(w for p, w in zip(every, every_weights, strict=True) if p is not None)
    levels = [CLAIMS_ALPHA * w / total if p is not None else None
              for p, w in zip(every, every_weights, strict=True)]
    adjusted = stats.weighted_holm(every, every_weights)
    coefficients = sum(p is not None for p in flat)
    others = sum(p is not None for p in also)
    weighted = len({w for p, w in zip(every, every_weights, strict=True) if p is not None}) > 1
    out, start = [], 0
    for f in fits:
        end = start + len(f.p_values)
        correction = (f"{'weighted ' if weighted else ''}Holm over the {coefficients + others} claims this "
                      f"comparison makes about its vibes: {coefficients} vibe coefficient test(s) of its "
                      f"regressions (held-out refits on the {f.n_test} test pairs) and {others} test-pair "
                      "separability test(s)" + (", each weighted by its vibe's training evidence" if weighted
                                                else ""))
        detectable = [(float(norm.ppf(1 - level / 2)) + Z80) * se if level is not None and se is not None else None
                      for se, level in zip(f.std_errors, levels[start:end], strict=True)]
        out.append(replace(f, p_adjusted=adjusted[start:end], correction=correction, detectable=detectable,
                           power_alphas=levels[start:end]))
        start = end
    return out, adjusted[len(flat):], levels[len(flat):], coefficients + others
