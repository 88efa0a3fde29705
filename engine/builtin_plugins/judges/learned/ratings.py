"""The learned judge in the reference role: ratings (1–5) of answers against their references, learned from
the ratings a dataset records for some of them (Vibe-Eval's Reka Core ratings; any rubric score).

The fixed blend of similarities the offline reference judge uses orders models it was not tuned on worse than
TF-IDF does; this one learns the blend, and more, from the recorded ratings. Each answer is read as:

- its cosine with the reference and with the prompt (MiniLM), and its TF-IDF cosine with the reference
  (scikit-learn, fitted on the call's references and answers, sublinear term frequency);
- every built-in metric of the answer (as sign · log(1 + |value|)) and its length (log words);
- its MiniLM embedding (384 numbers), weighed beside the rest by a setting chosen from a grid (0 leaves it out).

The model is a ridge regression (scikit-learn) on standardized features. Its answer is the whole point of a
learned rating, so it is fitted model by model, leaving the model out: each model's answers are rated by a fit
to the recorded ratings of the other models' answers only, with its penalty and embedding weight chosen by
cross-validation over those other models (folds of whole models). A model with no recorded ratings is rated by
the fit to every model that has some. So its agreement with the recorded ratings, and how it orders the
models, say how it reads models it never saw. Ratings are clipped to 1–5.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from engine.api.judging import METRICS, AnswerToRate, FittedRatings, measure, words

if TYPE_CHECKING:
    import numpy as np

PENALTIES = (1.0, 10.0, 100.0, 1000.0)  # ridge's alpha, the grid it is chosen from
EMBEDDING_WEIGHTS = (0.0, 0.3, 1.0)
EMBEDDING = 384  # the first columns of the features
FOLDS = 4  # at most, of whole models
ONE_MODEL = (100.0, 0.0)  # the settings where one model's ratings are all it has: firm, and no embedding


def answer_features(answers: Sequence[AnswerToRate]) -> np.ndarray:
    """The features of the module docstring, one row per answer."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    from engine.api.embeddings import embed

    corpus = list(dict.fromkeys([a.answer for a in answers] + [a.reference for a in answers]
                                + [a.prompt for a in answers]))
    vectors = dict(zip(corpus, embed(corpus), strict=True))
    mine = np.stack([vectors[a.answer] for a in answers]).astype(float)
    on_reference = (mine * np.stack([vectors[a.reference] for a in answers])).sum(axis=1)
    on_prompt = (mine * np.stack([vectors[a.prompt] for a in answers])).sum(axis=1)
    tfidf = TfidfVectorizer(sublinear_tf=True).fit([a.reference for a in answers] + [a.answer for a in answers])
    said = tfidf.transform([a.answer for a in answers])
    wanted = tfidf.transform([a.reference for a in answers])
    lexical = np.asarray(said.multiply(wanted).sum(axis=1)).ravel()
    metrics = sorted(METRICS)
    values = np.array([[measure(m, a.answer) for m in metrics] for a in answers], dtype=float)
    length = np.log1p([len(words(a.answer)) for a in answers])
    return np.column_stack([mine, on_reference, on_prompt, lexical, np.sign(values) * np.log1p(np.abs(values)),
                            length])


def fit_ratings(answers: Sequence[AnswerToRate], seed: int) -> FittedRatings:
    """Every answer's rating, each model's by a fit that left that model's ratings out (see the docstring)."""
    import numpy as np

    rated = sorted({a.group for a in answers if a.rating is not None})
    if len(rated) < 2:
        return FittedRatings([None] * len(answers), "no ratings: the dataset records ratings of fewer than two "
                                                    "models' answers, so none can be left out")
    x = answer_features(answers)
    y = np.array([np.nan if a.rating is None else float(a.rating) for a in answers])
    group = np.array([a.group for a in answers])
    out = np.full(len(answers), np.nan)
    chosen = []
    for model in sorted(set(group.tolist())):
        teachers = [g for g in rated if g != model]
        rows = np.flatnonzero(np.isin(group, teachers) & ~np.isnan(y))
        setting = _chosen(x, y, group, rows, teachers, seed)
        chosen.append(setting)
        mine = np.flatnonzero(group == model)
        out[mine] = _ridge(x, y, rows, *setting)(x[mine])
    penalties = sorted({f"{alpha:g}" for alpha, _ in chosen}, key=float)
    weights = sorted({f"{weight:g}" for _, weight in chosen}, key=float)
    said = (f"each model's answers rated by a ridge regression fitted to the recorded ratings of the other models' "
            f"answers ({len(rated)} models have them), its penalty (α {', '.join(penalties)}) and embedding weight "
            f"({', '.join(weights)}) chosen by cross-validation over those models")
    return FittedRatings([float(v) for v in np.clip(out, 1.0, 5.0)], said)


def _chosen(x: np.ndarray, y: np.ndarray, group: np.ndarray, rows: np.ndarray, teachers: list[str],
            seed: int) -> tuple[float, float]:
    """The (α, embedding weight) of the grid with the least squared error over folds of whole models; with one
    model to learn from there are no folds, and it takes `ONE_MODEL`."""
    import numpy as np

    if len(teachers) < 2:
        return ONE_MODEL
    order = np.random.default_rng(seed).permutation(len(teachers))
    fold_of = {teachers[j]: k % min(FOLDS, len(teachers)) for k, j in enumerate(order)}
    fold = np.array([fold_of[g] for g in group[rows]])
    best: tuple[float, tuple[float, float]] | None = None
    for setting in ((alpha, weight) for weight in EMBEDDING_WEIGHTS for alpha in PENALTIES):
        errors = []
        for k in np.unique(fold):
            predict = _ridge(x, y, rows[fold != k], *setting)
            errors.append((predict(x[rows[fold == k]]) - y[rows[fold == k]]) ** 2)
        error = float(np.mean(np.concatenate(errors)))
        if best is None or error < best[0] - 1e-12:
            best = (error, setting)
    assert best is not None
    return best[1]


def _ridge(x: np.ndarray, y: np.ndarray, rows: np.ndarray, alpha: float,
           weight: float) -> Callable[[np.ndarray], np.ndarray]:
    """A ridge regression of the ratings of `rows` on features standardized on those rows (the embedding block
    then multiplied by `weight`); returns its predict function."""
    import numpy as np
    from sklearn.linear_model import Ridge

    mean, spread = x[rows].mean(axis=0), x[rows].std(axis=0)
    spread[spread == 0] = 1.0
    factor = np.ones(x.shape[1])
    factor[:EMBEDDING] = weight

    def scaled(z: np.ndarray) -> np.ndarray:
        return np.asarray((z - mean) / spread * factor)

    model = Ridge(alpha=alpha).fit(scaled(x[rows]), y[rows])
    return lambda z: np.asarray(model.predict(scaled(z)), dtype=float)
