"""The black-box ceiling of model matching: how often a plain text classifier, which names nothing, tells which
model wrote the first-shown answer on the same test pairs. Beside it the named vibes' accuracy reads as a
share: how much of what separates the two models above chance the vibes put into words.

The classifier sees each answer as TF-IDF word uni- and bigrams, hashed into `BUCKETS` columns so that no
vocabulary of every n-gram is ever held (terms in fewer than two training answers are dropped and the weights
come from the training answers only), and a pair as the difference of its two answers' vectors. A logistic
regression without intercept fits the training pairs in both orders (A first labelled 1, B first 0), so the
order of display carries nothing, as in the model-matching regression; the second order of a pair is the
first negated, which carries the same likelihood, so each pair is fitted once, in an order alternating from
pair to pair, with the data term weighted twice (the same objective, half the matrix). At most `CAP` training
pairs are fitted and `CAP` test pairs scored, drawn at random with a fixed seed where there are more, so its
cost stops growing with the data: the yardstick is a proportion, known to about a point at that size (its
Wilson interval is over the pairs scored), and the share the vibes reach compares their accuracy on every
test pair with its accuracy on that random part of them. It is descriptive, no inference.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from concurrent.futures import CancelledError, Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from engine.api.analysis import stats
from engine.api.execution import cached, holds, run_beside, run_store
from engine.builtin_plugins.methods.vibecheck.firth import correct

BUCKETS = 2**20
CAP = 10_000  # training pairs fitted, and test pairs scored, at most
BLOCK = 4_000  # answers turned into vectors at a time
ESTIMATOR = ("TF-IDF word 1–2-grams (hashed, IDF from the training answers) of answer A minus answer B; logistic "
             f"regression without intercept on the training pairs in both orders (scikit-learn; at most {CAP:,} "
             "training and test pairs, drawn with a fixed seed)")
LABEL = "descriptive: a black-box yardstick fitted on the training pairs, no inference"

Pair = tuple[str, str]  # (model A's answer, model B's answer)


@dataclass(frozen=True)
class Ceiling:
    accuracy: float  # test pairs where the classifier names the first-shown answer's model (a tie counts ½)
    ci_low: float  # Wilson 95% over test pairs
    ci_high: float
    n_train: int
    n_test: int
    # (named vibes' accuracy − ½) / (this − ½), a point estimate printed as one (no interval: the two accuracies
    # are each noisy, and on different pairs beyond CAP); None where this is not above ½
    captured: float | None = None
    estimator: str = ESTIMATOR
    label: str = LABEL


@dataclass(frozen=True)
class TextClassifier:
    """The fitted classifier: the hashed terms it keeps (those in at least two training answers), each one's
    weight (its smoothed IDF over the training answers) and coefficient."""

    kept: np.ndarray  # bucket numbers
    idf: np.ndarray
    coefficients: np.ndarray

    def vectors(self, texts: Sequence[str]) -> Any:
        """TF-IDF rows of `texts` over the kept terms, as scikit-learn's `TfidfVectorizer(sublinear_tf=True)`
        weighs them: (1 + log count) × IDF, each row scaled to unit length."""
        return self.weighted(_counts(texts))

    def weighted(self, counts: Any) -> Any:
        """`vectors` from the texts' `_counts`."""
        from scipy.sparse import diags
        from sklearn.preprocessing import normalize

        counts = counts[:, self.kept]
        counts.data = 1.0 + np.log(counts.data)
        return normalize((counts @ diags(self.idf)).tocsr())

    def decision(self, pairs: Sequence[Pair]) -> np.ndarray:
        """> 0: the classifier takes the first answer for model A's (each answer scored alone, so swapping a
        pair's answers negates its decision exactly)."""
        out = [self.vectors([p[0] for p in block]) @ self.coefficients
               - self.vectors([p[1] for p in block]) @ self.coefficients for block in _blocks(pairs)]
        return np.concatenate(out) if out else np.zeros(0)


def unit_pairs(rows: Iterable[tuple[str, str, str, str]]) -> dict[str, list[Pair]]:
    """What the classifier reads of a comparison, by split ("train", "test"): one pair per independent unit, a
    conversation's turns joined (as model matching reads them), from each pair's (split, unit, A's answer,
    B's answer) in the table's order."""
    units: dict[str, dict[str, list[Pair]]] = {"train": {}, "test": {}}
    for split, unit, a, b in rows:
        units[split].setdefault(unit, []).append((a, b))
    return {split: [("\n\n".join(a for a, _ in turns), "\n\n".join(b for _, b in turns)) for turns in by_unit.values()]
            for split, by_unit in units.items()}


def _blocks(pairs: Sequence[Pair]) -> list[Sequence[Pair]]:
    return [pairs[i:i + BLOCK] for i in range(0, len(pairs), BLOCK)]


WORD = re.compile(r"(?u)\b\w\w+\b")  # scikit-learn's default token pattern


def _terms(text: str) -> list[str]:
    """A text's words (scikit-learn's default tokens, lower-cased), then its bigrams: the terms, in the order,
    of `HashingVectorizer(ngram_range=(1, 2))`'s own analyzer, which builds each bigram in a slower loop."""
    words = WORD.findall(text.lower())
    return words + [f"{a} {b}" for a, b in pairwise(words)]


def _counts(texts: Sequence[str]) -> Any:
    """Hashed uni- and bigram counts of `texts`."""
    from sklearn.feature_extraction.text import HashingVectorizer

    hasher = HashingVectorizer(analyzer=_terms, n_features=BUCKETS, alternate_sign=False, norm=None)
    return hasher.transform(texts)


def _sample(pairs: Sequence[Pair]) -> list[Pair]:
    """All the pairs, or `CAP` of them drawn without replacement (fixed seed), in their order."""
    if len(pairs) <= CAP:
        return list(pairs)
    rows = np.sort(np.random.default_rng(0).choice(len(pairs), CAP, replace=False))
    return [pairs[i] for i in rows.tolist()]


def fit(train: Sequence[Pair]) -> TextClassifier | None:
    """The classifier fitted on the training pairs alone (None when their answers hold no term in two of them)."""
    from scipy.sparse import vstack
    from sklearn.linear_model import LogisticRegression

    texts = [text for pair in train for text in pair]
    # each training answer is tokenized once: its counts give the document frequencies, then its vectors
    blocks = [_counts(texts[i:i + BLOCK]) for i in range(0, len(texts), BLOCK)]  # A, B, A, B...: whole pairs
    df = np.zeros(BUCKETS)  # training answers holding each term
    for block in blocks:
        df += np.bincount(block.indices, minlength=BUCKETS)
    kept = np.flatnonzero(df >= 2)
    if not len(kept):
        return None
    # the model's columns are the kept terms alone: L-BFGS keeps 20-odd vectors as long as the coefficients
    # (at 2^20 hashed columns, 200 MB), and a term in no two answers has all-zero values anyway
    classifier = TextClassifier(kept, np.log((1 + len(texts)) / (1 + df[kept])) + 1, np.zeros(len(kept)))
    parts = []
    while blocks:  # a block's counts are let go once its rows are made: the counts and the matrix are not both whole
        block = blocks.pop(0)
        parts.append(classifier.weighted(block[0::2]) - classifier.weighted(block[1::2]))
    x = vstack(parts, format="csr")
    del parts
    if len(train) < 2:  # both orders written out: one pair alone is one class
        x, y, weight = vstack([x, -x]), np.r_[np.ones(len(train)), np.zeros(len(train))], 1.0
    else:
        sign = np.where(np.arange(len(train)) % 2 == 0, 1.0, -1.0)
        x.data *= np.repeat(sign, np.diff(x.indptr))  # each row's sign, in place: no second matrix
        y, weight = (sign > 0).astype(float), 2.0
    model = LogisticRegression(fit_intercept=False, max_iter=1000, C=weight)
    model.fit(x, y)
    return TextClassifier(kept, classifier.idf, model.coef_.ravel())


def measured(train: list[Pair], test: list[Pair]) -> Ceiling | None:
    """The classifier fitted on `train` and scored on `test` (the pairs `ceiling` samples)."""
    classifier = fit(train)
    if classifier is None:
        return None
    right = correct(classifier.decision(test), np.ones(len(test)))
    accuracy = float(right.mean())
    low, high = stats.wilson(float(right.sum()), len(test))
    return Ceiling(accuracy, low, high, len(train), len(test))


# fits started beside a run (`start`) that `ceiling` has not read yet: (the run's cache, training pairs, test
# pairs, the fit); a run stopped before its analysis leaves its own, which the next run's `start` lets go
_started: list[tuple[Any, list[Pair], list[Pair], Future[Ceiling | None]]] = []


def start(train: Sequence[Pair], test: Sequence[Pair]) -> None:
    """Fit and score the classifier for `ceiling(train, test, …)` on a process of its own, where this machine has
    a core to spare and the run cache does not hold the result yet; `ceiling` then reads it."""
    if not train or not test:
        return
    train, test = _sample(train), _sample(test)
    run = run_store()
    _started[:] = [started for started in _started if started[0] is run]
    if holds("ceiling", _inputs(train, test), __name__):
        return
    future = run_beside(measured, train, test)
    if future is not None:
        _started.append((run, train, test, future))


def _inputs(train: list[Pair], test: list[Pair]) -> dict[str, list[Pair]]:
    return {"train": train, "test": test}


def ceiling(train: Sequence[Pair], test: Sequence[Pair], vibes_accuracy: float | None) -> Ceiling | None:
    """The classifier's held-out accuracy and the share of it the named vibes reach (see the module
    docstring); read back from the run cache for the same pairs and code, or from the fit `start` began."""
    if not train or not test:
        return None
    train, test = _sample(train), _sample(test)

    def compute() -> Ceiling | None:
        for n, (run, started_train, started_test, future) in enumerate(_started):
            if run is run_store() and started_train == train and started_test == test:
                del _started[n]
                try:
                    return future.result()
                except (BrokenProcessPool, CancelledError, OSError):  # its process was stopped or died
                    break
        return measured(train, test)

    found = cached("ceiling", _inputs(train, test), compute,
                           lambda c: json.dumps(asdict(c) if c else None).encode(),
                           lambda data: Ceiling(**fields) if (fields := json.loads(data)) else None)
    if found is None or vibes_accuracy is None or found.accuracy <= 0.5:
        return found
    return Ceiling(**{**asdict(found), "captured": (vibes_accuracy - 0.5) / (found.accuracy - 0.5)})
