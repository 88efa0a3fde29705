"""Learned judge (`kind: learned`): a small model fitted to people's labels of a vibe, offline.

Every other offline judge reads one fixed property (a metric, a place between two descriptions), so a vibe
that needs judgment ("a faithful summary") is read by style. This one learns, from the development labels an
analysis is given (`validation:` files or columns), which features of a pair go with people's verdicts:

- the difference of the two answers' MiniLM embeddings (what each is about and how it is said, 384 numbers);
- the difference of their cosines with the prompt's embedding, and with the reference's where the dataset
  has one (which answer stays on the request, which says what the reference says);
- the signed strength (a − b) / (|a| + |b|) of every built-in metric (length, lists, hedging, readability…).

Every feature changes sign when A and B swap, and each labelled pair is learned in both orders, so the
verdict on (B, A) is the opposite of the verdict on (A, B) by construction. The model is an L2-regularized
logistic regression (scikit-learn) of which answer people put higher where they put one higher, features
scaled by their root mean square. Its penalty (lasso or ridge), strength C and the weight of the embedding
block beside the rest are chosen from a grid of 18 by cross-validation on the development labels (the
cross-fitted ternary agreement, then log loss), folds made of whole units (conversations, else prompts) by
the analysis' seed. It gives a pair's log-odds; the verdict is neither at or under a threshold (the one whose
cross-fitted verdicts agree with the most development labels, ties included), else the side it leans to, and
its probability is that side's, where people pick one.

Honest by construction: it learns from development labels only, so its agreement and κ with people on the
test split are on labels it never saw. A development-labelled pair gets the verdict of the fold's fit that
left its unit out (its cross-fitted agreement on the development labels is said beside, as such); the three
settings and the tie threshold were chosen on every development label (four numbers), so that agreement
leans a little high. It learns only what these features carry: MiniLM reads at most 256 word pieces of each
text, and nothing here checks a fact.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from engine.api.execution import derived
from engine.api.judging import METRICS, FittedVerdicts, JudgeKind, KindSettings, PairToFit, judge_kind_class, measure

if TYPE_CHECKING:
    import numpy as np

    from engine.api.spec import Judge, Vibe

# The grid its settings are chosen from: the penalty (1: lasso, which keeps few features, where one metric carries
# the vibe; 0: ridge, which spreads weight over many, as an embedding direction needs), its strength C, and how
# much the embedding difference weighs beside the other features once all are scaled (its 384 numbers would
# otherwise outvote a metric under a common penalty; 0 reads the metrics and similarities alone)
PENALTIES = (1.0, 0.0)
STRENGTHS = (0.03, 0.3, 3.0)
EMBEDDING_WEIGHTS = (0.0, 0.3, 1.0)
EMBEDDING = 384  # its first columns
MIN_LABELS = 30  # development-labelled units under which it fits nothing, where the judge sets no other
FOLDS = 5


@dataclass(frozen=True)
class LearnedSettings(KindSettings):
    min_labels: int = MIN_LABELS
    folds: int = FOLDS


def pair_features(pairs: Sequence[PairToFit]) -> np.ndarray:
    """The features of the module docstring, one row per pair (each antisymmetric in A and B)."""
    import numpy as np

    from engine.api.embeddings import embed

    texts = [p.a for p in pairs] + [p.b for p in pairs]
    contexts = [p.prompt for p in pairs] + [p.reference or "" for p in pairs]
    corpus = list(dict.fromkeys(texts + contexts))
    vectors = dict(zip(corpus, embed(corpus), strict=True))
    a = np.stack([vectors[p.a] for p in pairs]).astype(float)
    b = np.stack([vectors[p.b] for p in pairs]).astype(float)
    prompt = np.stack([vectors[p.prompt] for p in pairs]).astype(float)
    has_reference = np.array([bool(p.reference) for p in pairs], dtype=float)
    reference = np.stack([vectors[p.reference or ""] for p in pairs]).astype(float)
    on_prompt = (a * prompt).sum(axis=1) - (b * prompt).sum(axis=1)
    on_reference = ((a * reference).sum(axis=1) - (b * reference).sum(axis=1)) * has_reference
    metrics = sorted(METRICS)
    values = {t: [measure(m, t) for m in metrics] for t in dict.fromkeys(texts)}
    va = np.array([values[p.a] for p in pairs], dtype=float).reshape(len(pairs), len(metrics))
    vb = np.array([values[p.b] for p in pairs], dtype=float).reshape(len(pairs), len(metrics))
    scale = np.abs(va) + np.abs(vb)
    strengths = np.divide(va - vb, scale, out=np.zeros_like(va), where=scale > 0)
    return np.column_stack([a - b, on_prompt, on_reference, strengths])


@dataclass(frozen=True)
class _Fit:
    """What a fit gives back (as the derived store keeps it)."""

    scores: list[int | None]
    probability: list[float | None]
    crossfitted: list[bool]
    lasso: float | None  # the penalty chosen: 1 lasso, 0 ridge
    strength: float | None  # the C chosen
    embedding_weight: float | None  # the embedding block's weight chosen
    tie_below: float | None  # |score| at or under which it calls neither
    labels: int
    units: int
    crossfit_agreement: float | None
    why_none: str = ""


def fit(pairs: Sequence[PairToFit], seed: int, settings: LearnedSettings) -> _Fit:
    """The judge's verdicts on `pairs` (see the module docstring), not read from or kept in any store."""
    import numpy as np

    labelled = [i for i, p in enumerate(pairs) if p.labels]
    units = sorted({pairs[i].unit for i in labelled})
    n_labels = sum(len(pairs[i].labels) for i in labelled)
    if len(units) < max(settings.min_labels, settings.folds):
        return _none(pairs, n_labels, len(units), f"{len(units)} development-labelled prompts, fewer than the "
                                                  f"{settings.min_labels} it learns from")
    if not any(y for i in labelled for y in pairs[i].labels):
        return _none(pairs, n_labels, len(units), "every development label says neither: nothing tells it which "
                                                  "way a pair leans")
    x = pair_features(pairs)
    order = np.random.default_rng(seed).permutation(len(units))
    fold_of_unit = {units[j]: k % settings.folds for k, j in enumerate(order)}
    folds = [[i for i in labelled if fold_of_unit[pairs[i].unit] == k] for k in range(settings.folds)]
    best: tuple[tuple[float, float], tuple[float, float, float], np.ndarray, float] | None = None
    decisive = [(i, y) for i in labelled for y in pairs[i].labels if y]
    every = [(i, y) for i in labelled for y in pairs[i].labels]
    for setting in ((p, c, w) for p in PENALTIES for w in EMBEDDING_WEIGHTS for c in STRENGTHS):
        held = np.zeros(len(pairs))
        for k, test in enumerate(folds):
            train = [i for j, fold in enumerate(folds) if j != k for i in fold]
            held[test] = _score(_trained(x, pairs, train, *setting), x[test])
        tie = _tie_threshold([(held[i], y) for i, y in every])
        agreement = float(np.mean([int(held[i] > tie) - int(held[i] < -tie) == y for i, y in every]))
        loss = float(np.mean([np.logaddexp(0.0, -y * held[i]) for i, y in decisive]))
        if best is None or (-agreement, loss) < best[0]:
            best = ((-agreement, loss), setting, held, tie)
    assert best is not None
    _, setting, held, tie_below = best
    score = _score(_trained(x, pairs, labelled, *setting), x)
    score[labelled] = held[labelled]
    verdicts = np.where(np.abs(score) > tie_below, np.sign(score), 0).astype(int)
    agreement = float(np.mean([verdicts[i] == y for i in labelled for y in pairs[i].labels]))
    crossfitted = np.zeros(len(pairs), dtype=bool)
    crossfitted[labelled] = True
    return _Fit([int(v) for v in verdicts], (1 / (1 + np.exp(-np.abs(score)))).tolist(), crossfitted.tolist(),
                *setting, tie_below, n_labels, len(units), agreement)


def _none(pairs: Sequence[PairToFit], labels: int, units: int, why: str) -> _Fit:
    nothing: list[int | None] = [None] * len(pairs)
    return _Fit(nothing, [None] * len(pairs), [False] * len(pairs), None, None, None, None, labels, units, None, why)


def _trained(x: np.ndarray, pairs: Sequence[PairToFit], rows: Sequence[int], lasso: float, strength: float,
             embedding_weight: float) -> Any:
    """A logistic regression of which answer people put higher, fitted to the decisive labels of `rows`, each
    pair learned in both orders (so it needs no intercept), features scaled by their root mean square on those
    rows and the embedding block then by `embedding_weight`."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    decisive = [(i, y) for i in rows for y in pairs[i].labels if y]
    features = np.concatenate([[x[i], -x[i]] for i, _ in decisive])
    labels = np.array([s * y for _, y in decisive for s in (1, -1)])
    scale = np.sqrt(np.mean(features ** 2, axis=0))
    scale[scale == 0] = 1.0
    scale[:EMBEDDING] = scale[:EMBEDDING] / embedding_weight if embedding_weight else np.inf
    model = LogisticRegression(C=strength, l1_ratio=lasso, solver="liblinear", fit_intercept=False,
                               max_iter=5000).fit(features / scale, labels)
    return model, scale


def _score(trained: Any, x: np.ndarray) -> np.ndarray:
    """The log-odds that people put A higher, given they put one higher (antisymmetric: no intercept)."""
    import numpy as np

    model, scale = trained
    return np.asarray(model.decision_function(x / scale), dtype=float)


def _tie_threshold(scored: list[tuple[float, int]]) -> float:
    """The |log-odds| at or under which a verdict is neither: the one that agrees with the most development
    labels on their cross-fitted scores (the smallest such), so a vibe people seldom call a tie gets few."""
    import numpy as np

    magnitude = np.abs([s for s, _ in scored])
    sign = np.sign([s for s, _ in scored])
    labels = np.array([y for _, y in scored])
    candidates = np.concatenate([[0.0], np.unique(magnitude)])
    agreements = [np.mean(np.where(magnitude > t, sign, 0) == labels) for t in candidates]
    return float(candidates[int(np.argmax(agreements))])


@judge_kind_class("learned")
class LearnedJudge(JudgeKind):
    """Learns a vibe from people's development labels of the analysis' pairs (see the module docstring)."""

    label = "a learned judge"
    badge_colour = "#8250df"
    scores_which = "vibes the analysis has people's labels of"
    roles = frozenset({"vibe"})
    fields = ("min_labels", "folds")
    settings_record = LearnedSettings
    field_schemas: ClassVar[dict[str, dict[str, Any]]] = {
        "min_labels": {"type": "integer", "minimum": 2,
                       "description": "development-labelled prompts under which it gives no verdicts."},
        "folds": {"type": "integer", "minimum": 2, "maximum": 20,
                  "description": "cross-validation folds (of whole prompts) that choose its settings and give its "
                                 "cross-fitted verdicts."}}
    learns = True
    extra = "embeddings"

    def describe(self, judge: Judge, role: str) -> str:
        return (f"learned judge ‘{judge.name}’, not an LLM: a regularized logistic regression fitted to people's "
                "development labels on MiniLM embedding differences, similarity to the prompt and reference, and "
                "metric differences")

    def fit_verdicts(self, judge: Judge, vibe: Vibe, pairs: Sequence[PairToFit], seed: int) -> FittedVerdicts:
        settings = LearnedSettings.of(judge)
        inputs = {"settings": asdict(settings), "seed": seed, "pairs": [asdict(p) for p in pairs]}
        found = derived.cached("learned", inputs, lambda: fit(pairs, seed, settings),
                               lambda f: json.dumps(asdict(f)).encode(), lambda raw: _Fit(**json.loads(raw)),
                               module=__name__)
        if found.strength is None:
            said = f"no verdicts: {found.why_none}"
        else:
            penalty = "lasso" if found.lasso else "ridge"
            said = (f"fitted to {found.labels} development labels of {found.units} prompts ({penalty}, "
                    f"C = {found.strength:g}, embedding weight {found.embedding_weight:g}, a tie at |log-odds| ≤ "
                    f"{found.tie_below:.2f}, chosen by {settings.folds}-fold cross-validation by prompt); its "
                    f"cross-fitted agreement with those labels is {found.crossfit_agreement:.1%}")
        return FittedVerdicts(found.scores, found.probability, found.crossfitted, said)
