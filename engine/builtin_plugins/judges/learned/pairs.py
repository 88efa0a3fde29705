"""The learned judge on pairs (`kind: learned`, a vibe's judge): a small model fitted to people's labels.

Every other offline judge reads one fixed property (a metric, a place between two descriptions), so a vibe
that needs judgment ("a faithful summary") is read by style. This one learns, from the development labels an
analysis is given (`validation:` files or columns), which features of a pair go with people's verdicts:

- the difference of the two answers' MiniLM embeddings (what each is about and how it is said, 384 numbers);
- the difference of their cosines with the prompt's embedding, and with the reference's where the dataset
  has one (which answer stays on the request, which says what the reference says);
- the signed strength (a − b) / (|a| + |b|) of every built-in metric (length, lists, hedging, readability…);
- the difference of their grounding in the prompt, and in the reference where there is one: the share of each
  answer's content words the source holds (what it adds that the source does not say), and the idf-weighted
  share of the source's content words it uses (how much of the source it covers).

Every feature changes sign when A and B swap, and each labelled pair is learned in both orders, so the
verdict on (B, A) is the opposite of the verdict on (A, B) by construction. The model is a regularized
logistic regression (scikit-learn) of which answer people put higher where they put one higher, features
scaled by their root mean square. Its penalty (lasso or ridge), strength C and the weight of the embedding
block beside the rest are chosen from a grid of 18 by cross-validation on the development labels (the
cross-fitted ternary agreement, then log loss), folds made of whole units (conversations, else prompts) by
the analysis' seed. It gives a pair's log-odds; the verdict is neither at or under a threshold (the one whose
cross-fitted verdicts agree with the most development labels, ties included), else the side it leans to; its
probability is that of A, where people put one answer higher.

Honest by construction: it learns from development labels only, so its agreement and κ with people on the
test split are on labels it never saw. A development-labelled pair gets the verdict of the fold's fit that
left its unit out (its cross-fitted agreement on the development labels is said beside, as such); the three
settings and the tie threshold were chosen on every development label (four numbers), so that agreement
leans a little high. It learns only what these features carry: MiniLM reads at most 256 word pieces of each
text, and nothing here checks a fact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.api.judging import METRICS, KindSettings, PairToFit, measure, words

if TYPE_CHECKING:
    import numpy as np


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

    from engine.api.analysis import stats
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
    strengths = stats.strengths(va, vb)
    grounding = [_grounding([p.a for p in pairs], sources) - _grounding([p.b for p in pairs], sources)
                 for sources in ([p.prompt for p in pairs], [p.reference or "" for p in pairs])]
    return np.column_stack([a - b, on_prompt, on_reference, strengths, *grounding])


def _content(text: str) -> set[str]:
    """A text's distinct content words: lower-cased words of four letters or more (most function words are
    shorter), digits kept."""
    return {w for w in words(text) if len(w) >= 4 or w.isdigit()}


def _grounding(answers: list[str], sources: list[str]) -> np.ndarray:
    """Per answer, two columns against its source (the prompt, or the reference; an empty source gives 0): the
    share of the answer's content words the source holds (what it says that the source does not: invented or
    off the point), and the idf-weighted share of the source's content words the answer uses (what of the
    source it covers), idf over the call's distinct sources."""
    import math

    import numpy as np

    held = {s: _content(s) for s in dict.fromkeys(sources)}
    frequency: dict[str, int] = {}
    for terms in held.values():
        for t in terms:
            frequency[t] = frequency.get(t, 0) + 1
    idf = {t: math.log((len(held) + 1) / (c + 1)) + 1 for t, c in frequency.items()}
    out = np.zeros((len(answers), 2))
    for row, (answer, source) in enumerate(zip(answers, sources, strict=True)):
        mine, theirs = _content(answer), held[source]
        if mine and theirs:
            out[row, 0] = len(mine & theirs) / len(mine)
            out[row, 1] = sum(idf[t] for t in mine & theirs) / sum(idf[t] for t in theirs)
    return out


@dataclass(frozen=True)
class PairFit:
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


def fit(pairs: Sequence[PairToFit], seed: int, settings: LearnedSettings) -> PairFit:
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
    return PairFit([int(v) for v in verdicts], (1 / (1 + np.exp(-score))).tolist(), crossfitted.tolist(),
                *setting, tie_below, n_labels, len(units), agreement)


def _none(pairs: Sequence[PairToFit], labels: int, units: int, why: str) -> PairFit:
    nothing: list[int | None] = [None] * len(pairs)
    return PairFit(nothing, [None] * len(pairs), [False] * len(pairs), None, None, None, None, labels, units, None, why)


def _trained(x: np.ndarray, pairs: Sequence[PairToFit], rows: Sequence[int], lasso: float, strength: float,
             embedding_weight: float) -> Any:
    """A logistic regression of which answer people put higher, fitted to the decisive labels of `rows`, each
    pair learned in both orders (so it needs no intercept), features scaled by their root mean square on those
    rows and the embedding block then by `embedding_weight`."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    decisive = [(i, y) for i in rows for y in pairs[i].labels if y]
    if not decisive:  # a fold whose training labels all say neither: it leans nowhere
        return None
    features = np.concatenate([[x[i], -x[i]] for i, _ in decisive])
    labels = np.array([s * y for _, y in decisive for s in (1, -1)])
    scale = np.sqrt(np.mean(features ** 2, axis=0))
    scale[scale == 0] = 1.0
    scale[:EMBEDDING] = scale[:EMBEDDING] / embedding_weight if embedding_weight else np.inf
    model = LogisticRegression(C=strength, solver="liblinear", fit_intercept=False, max_iter=5000, random_state=0,
                               **penalty(lasso)).fit(features / scale, labels)
    return model, scale


def penalty(lasso: float) -> dict[str, Any]:
    """LogisticRegression's arguments for the lasso (1) or the ridge (0) on the installed scikit-learn. From 1.8
    on `l1_ratio` alone chooses it (`penalty` is deprecated); before, `l1_ratio` is read only beside
    `penalty="elasticnet"`, which liblinear lacks, so a lasso asked for by `l1_ratio` alone was fitted as a
    ridge on 1.4–1.7, which the project's pins allow: there the penalty is named."""
    import sklearn

    major, minor = (int(part) for part in sklearn.__version__.split(".")[:2])
    if (major, minor) >= (1, 8):
        return {"l1_ratio": lasso}
    return {"penalty": "l1" if lasso else "l2"}


def _score(trained: Any, x: np.ndarray) -> np.ndarray:
    """The log-odds that people put A higher, given they put one higher (antisymmetric: no intercept); 0 for a
    fit that had nothing to learn from."""
    import numpy as np

    if trained is None:
        return np.zeros(len(x))
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
