"""The black-box ceiling of model matching: how often a plain text classifier, which names nothing, tells which
model wrote the first-shown answer on the same test pairs. Beside it the named vibes' accuracy reads as a
share: how much of what separates the two models above chance the vibes put into words.

The classifier sees each answer as TF-IDF word uni- and bigrams (vocabulary and weights from the training
pairs' answers only) and a pair as the difference of its two answers' vectors; a logistic regression without
intercept fits the training pairs in both orders (A first labelled 1, B first 0), so the order of display
carries nothing, as in the model-matching regression. It is fitted on the training pairs alone and scored on
the test pairs: descriptive, a yardstick, no inference.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from engine import derived
from engine.methods.vibecheck.firth import correct
from engine.methods.vibecheck.heldout import wilson

ESTIMATOR = ("TF-IDF word 1–2-grams (vocabulary from the training answers) of answer A minus answer B; logistic "
             "regression without intercept on the training pairs in both orders (scikit-learn)")
LABEL = "descriptive: a black-box yardstick fitted on the training pairs, no inference"

Pair = tuple[str, str]  # (model A's answer, model B's answer)


@dataclass(frozen=True)
class Ceiling:
    accuracy: float  # test pairs where the classifier names the first-shown answer's model (a tie counts ½)
    ci_low: float  # Wilson 95% over test pairs
    ci_high: float
    n_train: int
    n_test: int
    captured: float | None = None  # (named vibes' accuracy − ½) / (this − ½); None where this is not above ½
    estimator: str = ESTIMATOR
    label: str = LABEL


@dataclass(frozen=True)
class TextClassifier:
    """The fitted classifier: the vectorizer's vocabulary and weights, and one coefficient per term."""

    vectorizer: Any
    coefficients: np.ndarray

    def decision(self, pairs: Sequence[Pair]) -> np.ndarray:
        """> 0: the classifier takes the first answer for model A's."""
        if not pairs:
            return np.zeros(0)
        a = self.vectorizer.transform([p[0] for p in pairs])
        b = self.vectorizer.transform([p[1] for p in pairs])
        return np.asarray((a - b) @ self.coefficients).ravel()


def fit(train: Sequence[Pair]) -> TextClassifier | None:
    """The classifier fitted on the training pairs alone (None when their answers hold no usable term)."""
    from scipy.sparse import vstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, max_features=50_000)
    try:
        vectorizer.fit([text for pair in train for text in pair])
    except ValueError:  # an empty vocabulary: too few or too short answers
        return None
    x = vectorizer.transform([p[0] for p in train]) - vectorizer.transform([p[1] for p in train])
    model = LogisticRegression(fit_intercept=False, max_iter=1000)
    model.fit(vstack([x, -x]), np.r_[np.ones(len(train)), np.zeros(len(train))])
    return TextClassifier(vectorizer, model.coef_.ravel())


def ceiling(train: Sequence[Pair], test: Sequence[Pair], vibes_accuracy: float | None) -> Ceiling | None:
    """The classifier's held-out accuracy and the share of it the named vibes reach (see the module
    docstring); read back from the run cache for the same pairs and code."""
    if not train or not test:
        return None

    def compute() -> Ceiling | None:
        classifier = fit(train)
        if classifier is None:
            return None
        right = correct(classifier.decision(test), np.ones(len(test)))
        accuracy = float(right.mean())
        low, high = wilson(float(right.sum()), len(test))
        return Ceiling(accuracy, low, high, len(train), len(test))

    found = derived.cached("ceiling", {"train": list(train), "test": list(test)}, compute,
                           lambda c: json.dumps(asdict(c) if c else None).encode(),
                           lambda data: Ceiling(**fields) if (fields := json.loads(data)) else None)
    if found is None or vibes_accuracy is None or found.accuracy <= 0.5:
        return found
    return Ceiling(**{**asdict(found), "captured": (vibes_accuracy - 0.5) / (found.accuracy - 0.5)})
