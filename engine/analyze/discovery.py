"""Statistical vibe discovery: propose vibes from measured differences, with no LLM.

Candidates are interpretable properties of a single response:
- every text metric (length, list density, exclamations, hedging, ...);
- phrase lexicons mined from the training pairs: the token n-grams most over-used by each model relative to
  the other (log-odds with add-one smoothing), and those most over-used in the responses people preferred,
  each grouped into a small lexicon.
Each candidate is scored per pair exactly as the metric judge will score it (the sign of A − B beyond a
relative tolerance). Only the training split is used. Lexicons are cross-fitted for selection: the
training pairs are halved, each half is scored with the lexicon mined on the other half, so a lexicon is
never credited for fitting the pairs it was mined from; the vibe finally proposed uses the lexicon mined
on all training pairs. Choice is greedy forward selection: at each step the candidate that most improves
the log-likelihood of the model-matching and preference logistic regressions together, skipping
near-duplicates of chosen ones. Each chosen candidate becomes a
vibe whose low/high text states the measured property, and whose metric lets the metric judge score it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.judges.metrics import METRICS, PHRASES_PREFIX, measure, tokens
from engine.judges.verdicts import compare
from engine.spec.model import Vibe

TOLERANCE = 0.05
LEXICON_SIZE = 25
MAX_CORRELATION = 0.8


@dataclass(frozen=True)
class Candidate:
    vibe: Vibe
    origin: str  # "metric" | "phrases:<model>" | "phrases:preferred"


@dataclass(frozen=True)
class TrainingPair:
    output_a: str
    output_b: str
    a_preferred: bool | None  # None when the pair has no (non-tie) human label


def pair_scores(metric: str, pairs: Sequence[TrainingPair]) -> np.ndarray:
    return np.array([compare(measure(metric, p.output_a), measure(metric, p.output_b), TOLERANCE, relative=True)
                     for p in pairs])


def _log_odds(pos: list[str], neg: list[str], min_docs: int) -> list[tuple[str, float]]:
    from sklearn.feature_extraction.text import CountVectorizer

    vectorizer = CountVectorizer(tokenizer=tokens, token_pattern=None, lowercase=False, ngram_range=(1, 3),
                                 binary=True, min_df=min_docs)
    matrix = vectorizer.fit_transform(pos + neg)
    vocabulary = vectorizer.get_feature_names_out()
    in_pos = np.asarray(matrix[: len(pos)].sum(axis=0)).ravel() + 1.0
    in_neg = np.asarray(matrix[len(pos):].sum(axis=0)).ravel() + 1.0
    score = np.log(in_pos / (len(pos) + 1)) - np.log(in_neg / (len(neg) + 1))
    order = np.argsort(-score)
    return [(vocabulary[i], float(score[i])) for i in order]


def _lexicon(ranked: list[tuple[str, float]]) -> list[str]:
    """The strongest phrases, skipping ones contained in a phrase already taken (so 'what a' does not
    double-count 'what a fascinating')."""
    chosen: list[str] = []
    for phrase, score in ranked:
        if score <= 0 or len(chosen) == LEXICON_SIZE:
            break
        if not any(f" {phrase} " in f" {c} " or f" {c} " in f" {phrase} " for c in chosen):
            chosen.append(phrase)
    return chosen


def _phrase_vibe(name: str, phrases: list[str], who: str) -> Vibe:
    shown = ", ".join(f"'{p}'" for p in phrases[:6])
    return Vibe(name=name, low=f"Rarely uses phrasing typical of {who} (such as {shown}).",
                high=f"Often uses phrasing typical of {who} (such as {shown}).",
                metric=PHRASES_PREFIX + "|".join(phrases))


def candidates(pairs: Sequence[TrainingPair], model_a: str, model_b: str) -> list[Candidate]:
    out = [Candidate(Vibe(name, low, high, metric=name), "metric") for name, (_, low, high) in METRICS.items()]
    min_docs = max(3, len(pairs) // 100)
    a_texts, b_texts = [p.output_a for p in pairs], [p.output_b for p in pairs]
    for model, pos, neg in ((model_a, a_texts, b_texts), (model_b, b_texts, a_texts)):
        phrases = _lexicon(_log_odds(pos, neg, min_docs))
        if phrases:
            out.append(Candidate(_phrase_vibe(f"phrasing_{_slug(model)}", phrases, model), f"phrases:{model}"))
    labelled = [p for p in pairs if p.a_preferred is not None]
    if labelled:
        won = [p.output_a if p.a_preferred else p.output_b for p in labelled]
        lost = [p.output_b if p.a_preferred else p.output_a for p in labelled]
        for name, pos, neg, who in (("phrasing_preferred", won, lost, "preferred answers"),
                                    ("phrasing_dispreferred", lost, won, "rejected answers")):
            phrases = _lexicon(_log_odds(pos, neg, min_docs))
            if phrases:
                out.append(Candidate(_phrase_vibe(name, phrases, who), "phrases:preference"))
    return out


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text.lower()).strip("_")


def _fit_loglik(x: np.ndarray, y: np.ndarray) -> float:
    """Mean log-likelihood of a (lightly regularized) logistic fit: a smoother selection signal than accuracy."""
    from sklearn.linear_model import LogisticRegression

    if len(set(y.tolist())) < 2:
        return 0.0
    model = LogisticRegression(max_iter=2000).fit(x, y)
    p = np.clip(model.predict_proba(x)[:, 1], 1e-9, 1 - 1e-9)
    return float(np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def select(candidate_scores: dict[str, np.ndarray], a_preferred: np.ndarray | None, max_vibes: int) -> list[str]:
    """Greedy forward selection of candidate names on training pairs (see the module docstring)."""
    names = [n for n, s in candidate_scores.items() if np.any(s)]
    chosen: list[str] = []
    n = len(next(iter(candidate_scores.values()))) if candidate_scores else 0
    mm_y = np.r_[np.ones(n), np.zeros(n)]
    while len(chosen) < max_vibes:
        best, best_gain = None, -np.inf
        for name in names:
            if name in chosen or any(_too_similar(candidate_scores[name], candidate_scores[c]) for c in chosen):
                continue
            x = np.column_stack([candidate_scores[c] for c in [*chosen, name]])
            gain = _fit_loglik(np.vstack([x, -x]), mm_y)
            if a_preferred is not None:
                gain += _fit_loglik(x, a_preferred)
            if gain > best_gain:
                best, best_gain = name, gain
        if best is None:
            break
        chosen.append(best)
    return chosen


def _too_similar(a: np.ndarray, b: np.ndarray) -> bool:
    if a.std() == 0 or b.std() == 0:
        return False
    return abs(float(np.corrcoef(a, b)[0, 1])) > MAX_CORRELATION


def discover(pairs: Sequence[TrainingPair], model_a: str, model_b: str, max_vibes: int, *,
             exclude_metrics: frozenset[str] = frozenset(), seed: int = 0) -> list[Candidate]:
    """Propose and choose at most `max_vibes` vibes from training pairs (none measuring an excluded metric,
    e.g. one a declared vibe already measures)."""
    pairs = list(pairs)
    order = np.random.default_rng(seed).permutation(len(pairs))
    halves = [sorted(order[: len(pairs) // 2]), sorted(order[len(pairs) // 2:])]
    final = [c for c in candidates(pairs, model_a, model_b) if c.vibe.metric not in exclude_metrics]
    scores: dict[str, np.ndarray] = {}
    for candidate in final:
        if candidate.origin == "metric":
            scores[candidate.vibe.name] = pair_scores(candidate.vibe.metric or "", pairs)
    for mine, score in ((halves[0], halves[1]), (halves[1], halves[0])):
        mined = {c.vibe.name: c for c in candidates([pairs[i] for i in mine], model_a, model_b)
                 if c.origin != "metric"}
        for name, candidate in mined.items():
            column = scores.setdefault(name, np.zeros(len(pairs)))
            column[score] = pair_scores(candidate.vibe.metric or "", [pairs[i] for i in score])
    scores = {name: column for name, column in scores.items() if any(c.vibe.name == name for c in final)}
    labels = [p.a_preferred for p in pairs]
    labelled = [i for i, v in enumerate(labels) if v is not None]
    if labelled and len(labelled) < len(pairs):
        scores = {k: v[labelled] for k, v in scores.items()}
    a_preferred = np.array([labels[i] for i in labelled], dtype=float) if labelled else None
    chosen = select(scores, a_preferred, max_vibes)
    by_name = {c.vibe.name: c for c in final}
    return [by_name[name] for name in chosen]
