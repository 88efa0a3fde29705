"""What LLM judges say when they rule on a vibe, grouped into a few themes (as LLM Comparator's rationale
clusters): the reasons for one vibe become TF-IDF vectors reduced by LSA (scikit-learn's TruncatedSVD), k-means
splits them, and each group is named by its most distinctive words and shown by the reasons nearest its centre.

Word vectors rather than MiniLM sentence embeddings: a judge stage gives two reasons per pair and vibe, tens of
thousands in a large run, and embedding them took longer on a 2-core machine than the rest of the analysis
(35 s added to a 20 s run of 6,000 calls, benchmarks/executor.py). One-sentence reasons that share a theme
share its words ("longer", "bullet", "formal"), which is what TF-IDF sees, in milliseconds.

Descriptive only: the themes summarize the judges' text, they test nothing. Counts are of reasons (a pair
judged in both orders gives up to two per LLM judge), with how many of them went each way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.api.judging import verdict_reason
from engine.builtin_plugins.methods.vibecheck.records import PairVerdicts, ReasonTheme

MIN_REASONS = 8  # fewer reasons than this are listed, not grouped
MAX_THEMES = 5
EXAMPLES = 3
REASON_CHARS = 300
WORD = r"(?u)\b[a-zA-Z][a-zA-Z]+\b"  # words of two letters or more; numbers (answer 1, answer 2) name no theme


@dataclass(frozen=True)
class Reason:
    text: str
    verdict: int | None  # in A/B terms: +1 A higher on the vibe, −1 B, 0 tie


def by_vibe(pairs: Sequence[PairVerdicts], vibes: Sequence[str]) -> dict[str, list[ReasonTheme]]:
    """Themes of the reasons about each vibe an LLM judge ruled on."""
    found = {vibe: reasons for vibe in vibes if (reasons := reasons_for(pairs, vibe))}
    return {vibe: grouped for vibe, reasons in found.items() if (grouped := themes(reasons))}


def reasons_for(pairs: Sequence[PairVerdicts], vibe: str) -> list[Reason]:
    """Every LLM judge's reason about `vibe` over `pairs`, one per answer, in both orders."""
    out = []
    for pair in pairs:
        raw = pair.rationales.get(vibe, {})
        orders = pair.orders.get(vibe, {})
        for judge, texts in raw.items():
            for text, verdict in zip(texts, orders.get(judge, [None, None]), strict=False):
                reason = verdict_reason(text)[:REASON_CHARS].strip()
                if reason:
                    out.append(Reason(reason, verdict))
    return out


def themes(reasons: list[Reason], seed: int = 0) -> list[ReasonTheme]:
    """k-means over the reasons' LSA vectors, k = √(n/4) clamped to 2..5, largest theme first; [] when there
    are too few reasons, too few distinct ones, or no words but stop words."""
    texts = [r.text for r in reasons]
    distinct = list(dict.fromkeys(texts))
    k = min(MAX_THEMES, max(2, round(math.sqrt(len(reasons) / 4))), len(distinct))
    if len(reasons) < MIN_REASONS or k < 2:
        return []
    from sklearn.cluster import KMeans
    from sklearn.feature_extraction.text import CountVectorizer

    words_of = CountVectorizer(stop_words="english", token_pattern=WORD)
    try:
        counts = words_of.fit_transform(texts)
    except ValueError:  # nothing but stop words
        return []
    vectors = _vectors(counts, seed)
    # reasons that differ only in numbers or stop words are one point: never ask for more clusters than points
    k = min(k, len(np.unique(vectors.round(6), axis=0)))
    if k < 2:
        return []
    labels = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(vectors)
    words = _keywords(counts, words_of.get_feature_names_out(), labels, k)
    out = []
    for cluster in range(k):
        rows = np.flatnonzero(labels == cluster)
        centre = vectors[rows].mean(axis=0)
        nearest = [texts[i] for i in rows[np.argsort(-(vectors[rows] @ centre), kind="stable")]]
        verdicts = [reasons[i].verdict for i in rows]
        out.append(ReasonTheme(len(rows), sum(v == 1 for v in verdicts), sum(v == -1 for v in verdicts),
                               sum(v not in (1, -1) for v in verdicts), words[cluster],
                               list(dict.fromkeys(nearest))[:EXAMPLES]))
    return sorted(out, key=lambda t: -t.size)


def _vectors(counts: Any, seed: int, dims: int = 50) -> np.ndarray:
    """Unit-length LSA vectors from the texts' word counts (English stop words out): sublinear TF-IDF, then up
    to `dims` SVD components."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfTransformer
    from sklearn.preprocessing import normalize

    tfidf = TfidfTransformer(sublinear_tf=True).fit_transform(counts)
    keep = min(dims, tfidf.shape[1] - 1, tfidf.shape[0] - 1)
    reduced = TruncatedSVD(keep, random_state=seed).fit_transform(tfidf) if keep >= 2 else tfidf.toarray()
    return np.asarray(normalize(reduced), dtype=float)


def _keywords(matrix: Any, vocabulary: np.ndarray, labels: np.ndarray, k: int, top: int = 4) -> list[list[str]]:
    """Each cluster's words by class-based TF-IDF: frequent inside the cluster, rare across the others."""
    per_class = np.vstack([np.asarray(matrix[labels == c].sum(axis=0)).ravel() for c in range(k)]).astype(float)
    tf = per_class / np.maximum(per_class.sum(axis=1, keepdims=True), 1)
    idf = np.log(1 + per_class.sum(axis=1).mean() / np.maximum(per_class.sum(axis=0), 1))
    return [[str(vocabulary[i]) for i in np.argsort(-(tf[c] * idf), kind="stable")[:top] if per_class[c, i] > 0]
            for c in range(k)]
