"""Reference-similarity judge (`kind: reference_similarity`): rates an answer 1–5 by how much of the gold
reference it reproduces.

This is a similarity measurement, not a reading of the answer, and every result says so
(`method: reference-similarity`). Three signals, each in [0, 1]:

- `bertscore_recall`: BERTScore recall of the reference's tokens in the answer (all-MiniLM-L6-v2, 6 layers),
  with idf weights from the dataset's references, and zero weight for tokens the question already contains:
  restating the question is not answering it.
- `key_term_recall`: the idf-weighted share of the reference's content words (lower-cased, light suffix
  stemming, question words excluded) that the answer uses. Names, numbers and rare words weigh most.
- `cosine`: cosine of the two texts' sentence embeddings (clipped at 0).

`match` is the plain mean of the three, and the rating is `1 + 4·match`, a continuous value on the LLM judge's
1–5 scale. Equal weights are a choice that saw no data: weights set from the signals' spreads on Vibe-Eval's
recorded answers (3, 2, 3) were chosen on the answers they were then scored on, and weights fitted to Reka
Core's ratings on one difficulty ordered the models of the other worse than equal ones
(`benchmarks/vibe_eval_agreement.py` prints both, per difficulty, beside TF-IDF).

idf depends on the whole reference set, so a batch is judged against its corpus (every reference of the
analysis' dataset, named in each request by a hash), never against whichever subset happens to be pending.
numpy and the encoders are imported when answers are rated: reading the kind's declaration (every
`vibe validate` does) stays light.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from engine.api.execution import map_threads
from engine.api.judging import JudgeKind, RatingInput, RatingScore, judge_kind_class
from engine.api.records import Rating

if TYPE_CHECKING:
    import numpy as np

    from engine.api.embeddings import Encoded, TokenEncoder
    from engine.api.records import Item
    from engine.api.spec import Judge

METHOD = "reference-similarity"
WEIGHTS = {"bertscore_recall": 1.0, "key_term_recall": 1.0, "cosine": 1.0}
TERM = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
STOPWORDS = frozenset("""a an the of to in on and or is are was were be been being it its this that these those
there their they them he she his her i you we our your for with as at by from but not no so if then than which
who what when where how why do does did can could would should may might will just also very more most some any
all each both such into about over under up down out only own same other too s t image picture photo shown
appears show shows based""".split())


def content_terms(text: str) -> list[str]:
    """Content words, lower-cased and lightly stemmed; thousands separators dropped so 1,000 = 1000."""
    return [_stem(w) for w in TERM.findall(text.lower().replace(",", "")) if w not in STOPWORDS]


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if len(word) > 4 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def smoothed_idf(document_frequency: int, documents: int) -> float:
    return math.log((documents + 1) / (document_frequency + 1))


def key_term_recall(answer: str, reference: str, question: str, idf: dict[str, float], default_idf: float) -> float:
    """idf-weighted share of the reference's content words, not in the question, that the answer uses."""
    used, asked = set(content_terms(answer)), set(content_terms(question))
    weights = {t: idf.get(t, default_idf) + 1.0 for t in content_terms(reference) if t not in asked}
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if t in used) / total if total else 0.0


@cache
def _corpus_statistics(references: tuple[str, ...]) -> tuple[dict[str, float], dict[int, float], int]:
    """Word idf and wordpiece idf over a reference corpus (each reference one document)."""
    from engine.api.embeddings import default_encoder

    words = Counter(t for r in references for t in set(content_terms(r)))
    tokenizer = default_encoder().tokenizer
    pieces = Counter(p for r in references for p in set(tokenizer.encode(r.strip(), add_special_tokens=False)))
    n = len(references)
    return ({t: smoothed_idf(c, n) for t, c in words.items()},
            {p: smoothed_idf(c, n) for p, c in pieces.items()}, n)


def bertscore_recall(answer_vectors: Any, reference_vectors: Any, weights: np.ndarray) -> float:
    """Weighted mean over reference tokens of their best cosine match among the answer's tokens."""
    if weights.sum() <= 0:
        return 0.0
    best = (reference_vectors @ answer_vectors.T).max(dim=1).values.numpy()
    return float((best * weights).sum() / weights.sum())


RATE_CHUNK = 64  # ratings per chunk of token-embedding work (see `chunk_map`)


def rate(requests: Sequence[Rating], texts: dict[str, str],
         corpora: dict[str, tuple[str, ...]]) -> list[RatingScore]:
    """One rating per request. `texts` maps generation task ids to answers; `corpora` maps a corpus hash to
    its references."""
    if not requests:
        return []
    from engine.api.embeddings import embed, one_thread

    answers = [texts[r.output] for r in requests]
    references = [r.fields["reference"] or "" for r in requests]
    sentence = dict(zip(answers + references, embed(answers + references), strict=True))
    cosines = [max(0.0, float(sentence[a] @ sentence[r])) if a.strip() else 0.0 for a, r in zip(answers, references,
                                                                                                 strict=True)]
    work = []
    for request, answer, reference, cosine in zip(requests, answers, references, cosines, strict=True):
        assert request.config is not None
        work.append((request, answer, reference, corpora[request.config["corpus"]], cosine))
    with one_thread():  # held at one for the whole map: the chunks' digits are those of one chunk at a time
        chunks = map_threads(_rate_chunk, [work[i:i + RATE_CHUNK] for i in range(0, len(work), RATE_CHUNK)])
    return [rating for chunk in chunks for rating in chunk]


def _rate_chunk(work: Sequence[tuple[Rating, str, str, tuple[str, ...], float]]) -> list[RatingScore]:
    from engine.api.embeddings import default_encoder, one_thread

    encoder = default_encoder()
    tokens = encoder.encode([a or " " for _, a, _, _, _ in work] + [r for _, _, r, _, _ in work])
    with one_thread():
        return [_rating(encoder, tokens, *item) for item in work]


def _rating(encoder: TokenEncoder, tokens: dict[str, Encoded], request: Rating, answer: str, reference: str,
            corpus: tuple[str, ...], cosine: float) -> RatingScore:
    """One rating from the chunk's token embeddings and the pair's sentence cosine."""
    import numpy as np

    word_idf, piece_idf, n = _corpus_statistics(corpus)
    default_idf = smoothed_idf(0, n)
    question = request.fields.get("prompt") or ""
    asked = set(encoder.tokenizer.encode(question, add_special_tokens=False))
    ids = encoder.tokenizer.encode(reference.strip(), add_special_tokens=True, truncation=True,
                                   max_length=encoder.tokenizer.model_max_length)
    weights = np.array([0.0 if p in encoder.special or p in asked else piece_idf.get(p, default_idf)
                        for p in ids])
    signals = {
        "bertscore_recall": bertscore_recall(tokens[answer or " "].vectors, tokens[reference].vectors, weights),
        "key_term_recall": key_term_recall(answer, reference, question, word_idf, default_idf),
        "cosine": cosine,
    }
    signals = {k: min(1.0, v) for k, v in signals.items()}  # float error puts identical texts at 1.0000001
    match = sum(WEIGHTS[k] * v for k, v in signals.items()) / sum(WEIGHTS.values())
    signals = {"match": match, **signals}  # the rating is 1 + 4 × match, the mean of the three
    return RatingScore("embedding", 1.0 + 4.0 * match, similarity_explanation(signals), signals, METHOD)


def similarity_explanation(signals: dict[str, float]) -> str:
    """How the rating came about, in one line."""
    return (f"match {signals['match']:.2f}: BERTScore recall {signals['bertscore_recall']:.2f}, key-term recall "
            f"{signals['key_term_recall']:.2f}, cosine {signals['cosine']:.2f}")


@judge_kind_class("reference_similarity")
class ReferenceSimilarityJudge(JudgeKind):
    """Rates one answer against the dataset's reference by the measured similarity above; not a reading."""

    label = "an offline reference-similarity judge"
    badge_colour = "#9a6700"
    roles = frozenset({"reference"})
    wire = "embedding"  # its name before the two embedding judges were told apart: task hashes keep it
    extra = "embeddings"

    def rating_input(self, judge: Judge, item: Item, corpus: str, repeat: int) -> RatingInput | None:
        """Deterministic, so one repeat says all."""
        if repeat:
            return None
        # v2: equal weights (v1 weighed 3, 2, 3): a rating cached under v1 is not this judge's any more
        return {"prompt": item.prompt, "reference": item.reference}, {"method": f"{METHOD}/v2", "corpus": corpus}

    def describe(self, judge: Judge, role: str) -> str:
        return (f"offline reference-similarity judge ‘{judge.name}’, not an LLM: rating = 1 + 4 × match, where "
                "match is the mean of BERTScore recall, key-term recall and MiniLM cosine against the reference")

    def rate(self, requests: Sequence[Rating], texts: dict[str, str],
             corpora: dict[str, tuple[str, ...]]) -> Sequence[RatingScore]:
        return rate(requests, texts, corpora)
