"""Which token n-grams (1 to 3) each text contains, among those in at least `min_docs` texts: the binary
document-term matrix and vocabulary that scikit-learn's `CountVectorizer(tokenizer=tokens, lowercase=False,
ngram_range=(1, 3), binary=True, min_df=min_docs)` gives, entry for entry and in its (sorted) column order, in
memory bounded by the frequent n-grams rather than by every n-gram the texts hold.

CountVectorizer counts every n-gram of every text before it drops the rare ones; on Arena answers that
vocabulary grows with the data (about 270 MB for 4,000 answers) while the n-grams kept number a few thousand.
An n-gram is in at least `min_docs` texts only if both of its (n−1)-grams are, so each length is counted only
among n-grams whose two shorter parts passed (the Apriori property). Texts are tokenized once into one int32
array of token ids. Each length is then counted a block of texts at a time (a few million tokens), in NumPy:
an n-gram starting at a position is named by the ranks of the frequent (n−1)-grams starting there and one
position later, each block keeps only its distinct codes and in how many of its texts each occurs, and a
second pass over the blocks ranks every position among the frequent codes. What stays whole is an int32 per
token (its id, and its rank at the current length) and the distinct codes seen, never an int64 per position.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_N = 3
BLOCK_TOKENS = 1 << 21  # positions one block counts at once: a few arrays of this many int64 each


@dataclass(frozen=True)
class Tokenized:
    """Texts as token ids, end to end: `starts[i]:starts[i + 1]` are text i's, `words[id]` the token."""

    ids: np.ndarray  # int32
    starts: np.ndarray  # int64, one more than there are texts
    words: list[str]

    @property
    def texts(self) -> int:
        return len(self.starts) - 1

    def subset(self, rows: Sequence[int]) -> Tokenized:
        """The texts at `rows`, in that order (ids keep their meaning: `words` is shared)."""
        picked = np.asarray(rows, dtype=np.int64)
        lengths = self.starts[picked + 1] - self.starts[picked]
        starts = np.r_[0, np.cumsum(lengths)].astype(np.int64)
        ids = np.empty(int(starts[-1]), dtype=np.int32)
        for row, start, end in zip(picked.tolist(), starts[:-1].tolist(), starts[1:].tolist(), strict=True):
            ids[start:end] = self.ids[self.starts[row]:self.starts[row + 1]]
        return Tokenized(ids, starts, self.words)


def tokenize(texts: Sequence[str], split: Callable[[str], list[str]]) -> Tokenized:
    """Every text's tokens (`split`) as ids (int32 arrays built text by text: a Python list of every token's id
    would cost ten times the array)."""
    index: dict[str, int] = {}
    parts = [np.fromiter((index.setdefault(t, len(index)) for t in split(text)), dtype=np.int32)
             for text in texts]
    starts = np.r_[0, np.cumsum([len(part) for part in parts], dtype=np.int64)].astype(np.int64)
    ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
    return Tokenized(ids, starts, list(index))


def doc_terms(texts: Sequence[str] | Tokenized, min_docs: int, tokenize_text: Callable[[str], list[str]],
              block_tokens: int = BLOCK_TOKENS) -> tuple[Any, np.ndarray]:
    """The binary (texts × n-grams) CSR matrix of int8 and the n-grams in sorted order; no n-gram in `min_docs`
    texts gives an empty vocabulary. `texts` may come tokenized already (`tokenize`)."""
    from scipy.sparse import csr_matrix

    corpus = texts if isinstance(texts, Tokenized) else tokenize(texts, tokenize_text)
    blocks = list(_blocks(corpus.starts, block_tokens))
    rows: list[np.ndarray] = []  # per length: the (text, n-gram rank) of every text holding a frequent n-gram
    cols: list[np.ndarray] = []
    names: list[list[str]] = []
    ranks, size = corpus.ids, len(corpus.words)  # each position's rank at the last length (−1: none), and how many
    for n in range(1, MAX_N + 1):
        frequent = _frequent(corpus.starts, blocks, ranks, size, n, min_docs)
        ranks, (text, rank) = _ranked(corpus.starts, blocks, ranks, size, n, frequent)
        if n == 1:
            names.append([corpus.words[c] for c in frequent.tolist()])
        else:  # the first (n−1)-gram and the last word of the second
            below = names[-1]
            names.append([f"{below[c // len(below)]} {below[c % len(below)].rsplit(' ', 1)[-1]}"
                          for c in frequent.tolist()])
        rows.append(text)
        cols.append(rank)
        size = len(frequent)
        if not size:
            break
    vocabulary = [name for level in names for name in level]
    if not vocabulary:
        return csr_matrix((corpus.texts, 0), dtype=np.int8), np.array([], dtype=object)
    order = np.argsort(np.array(vocabulary, dtype=object), kind="stable")
    column = np.empty(len(vocabulary), dtype=np.int32)
    column[order] = np.arange(len(vocabulary), dtype=np.int32)
    offsets = np.cumsum([0] + [len(level) for level in names])
    row = np.concatenate(rows)
    col = column[np.concatenate([c + offsets[n] for n, c in enumerate(cols)])]
    matrix = csr_matrix((np.ones(len(row), dtype=np.int8), (row, col)), shape=(corpus.texts, len(vocabulary)))
    return matrix, np.array(vocabulary, dtype=object)[order]


def _blocks(starts: np.ndarray, block_tokens: int) -> Iterator[tuple[int, int]]:
    """(first text, end text) of consecutive blocks of whole texts holding about `block_tokens` tokens each."""
    first, n_texts = 0, len(starts) - 1
    while first < n_texts:
        end = int(np.searchsorted(starts, starts[first] + block_tokens, side="right")) - 1
        end = min(max(end, first + 1), n_texts)
        yield first, end
        first = end


def _codes(starts: np.ndarray, block: tuple[int, int], ranks: np.ndarray, size: int,
           n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The block's positions holding an n-gram code (offsets into the block), those codes and their texts. A
    code at length n > 1 pairs the frequent (n−1)-gram at a position with the one a token on, in one text."""
    first, end = block
    lo, hi = int(starts[first]), int(starts[end])
    doc = np.repeat(np.arange(first, end, dtype=np.int64), np.diff(starts[first:end + 1]))
    here = ranks[lo:hi].astype(np.int64)
    if n == 1:
        codes = here
    else:
        ok = (here[:-1] >= 0) & (here[1:] >= 0) & (doc[:-1] == doc[1:])
        codes = np.append(np.where(ok, here[:-1] * size + here[1:], -1), -1)
    held = np.flatnonzero(codes >= 0)
    return held, codes[held], doc[held]


def _run_starts(ordered: np.ndarray) -> np.ndarray:
    """Where each run of equal values of a sorted array starts."""
    return np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(ordered) else np.zeros(0, dtype=np.int64)


def _unique(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted: by sorting, which NumPy 2's hashing `np.unique` is a hundred times slower
    than on millions of distinct int64."""
    ordered = np.sort(values)
    return np.asarray(ordered[_run_starts(ordered)])


def _distinct(code: np.ndarray, doc: np.ndarray, n_docs: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (code, text) pairs, sorted by code then text."""
    if size * n_docs < 2**62:  # one sort of (code, text) packed into an int64
        packed = _unique(code * n_docs + doc)
        return packed // n_docs, packed % n_docs
    order = np.lexsort((doc, code))
    code_s, doc_s = code[order], doc[order]
    first = np.r_[True, (code_s[1:] != code_s[:-1]) | (doc_s[1:] != doc_s[:-1])]
    return code_s[first], doc_s[first]


def _frequent(starts: np.ndarray, blocks: list[tuple[int, int]], ranks: np.ndarray, size: int, n: int,
              min_docs: int) -> np.ndarray:
    """The codes at length n in at least `min_docs` texts, sorted. Each block gives its distinct codes and the
    number of its texts holding each (a text sits in one block, so the counts add up)."""
    n_docs, space = len(starts) - 1, size if n == 1 else size * size
    seen: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    for block in blocks:
        _, code, doc = _codes(starts, block, ranks, size, n)
        pair_code, _ = _distinct(code, doc, n_docs, space)
        runs = _run_starts(pair_code)
        seen.append(pair_code[runs])
        counts.append(np.diff(np.r_[runs, len(pair_code)]))
    merged = np.concatenate(seen) if seen else np.zeros(0, dtype=np.int64)
    if not len(merged):
        return merged
    order = np.argsort(merged)
    codes, df = merged[order], np.concatenate(counts)[order]
    runs = _run_starts(codes)
    return np.asarray(codes[runs][np.add.reduceat(df, runs) >= min_docs])


def _ranked(starts: np.ndarray, blocks: list[tuple[int, int]], ranks: np.ndarray, size: int, n: int,
            frequent: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Each position's rank among the `frequent` codes at length n (int32, −1 for a rare code or none), and the
    distinct (text, rank) pairs of texts holding a frequent code (int32 each)."""
    n_docs = len(starts) - 1
    out = np.full(len(ranks), -1, dtype=np.int32)
    texts: list[np.ndarray] = []
    found_ranks: list[np.ndarray] = []
    for block in blocks:
        if not len(frequent):
            break
        held, code, doc = _codes(starts, block, ranks, size, n)
        found = np.searchsorted(frequent, code)
        hit = frequent[np.minimum(found, len(frequent) - 1)] == code
        out[int(starts[block[0]]) + held[hit]] = found[hit]
        pair_rank, pair_doc = _distinct(found[hit], doc[hit], n_docs, len(frequent))
        texts.append(pair_doc.astype(np.int32))
        found_ranks.append(pair_rank.astype(np.int32))
    if not texts:
        return out, (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32))
    return out, (np.concatenate(texts), np.concatenate(found_ranks))
