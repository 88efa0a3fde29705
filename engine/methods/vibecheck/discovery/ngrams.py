"""Which token n-grams (1 to 3) each text contains, among those in at least `min_docs` texts: the binary
document-term matrix and vocabulary that scikit-learn's `CountVectorizer(tokenizer=tokens, lowercase=False,
ngram_range=(1, 3), binary=True, min_df=min_docs)` gives, entry for entry and in its (sorted) column order, in
memory bounded by the frequent n-grams rather than by every n-gram the texts hold.

CountVectorizer counts every n-gram of every text before it drops the rare ones; on Arena answers that
vocabulary grows with the data (about 270 MB for 4,000 answers) while the n-grams kept number a few thousand.
An n-gram is in at least `min_docs` texts only if both of its (n−1)-grams are, so each length is counted only
among n-grams whose two shorter parts passed (the Apriori property). Texts are tokenized once into one array
of token ids, and counting is NumPy over that array: an n-gram starting at a position is named by the ranks of
the frequent (n−1)-grams starting there and one position later.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

MAX_N = 3


def doc_terms(texts: Sequence[str], min_docs: int, tokenize: Callable[[str], list[str]]) -> tuple[Any, np.ndarray]:
    """The binary (texts × n-grams) CSR matrix of int64 and the n-grams in sorted order; no n-gram in `min_docs`
    texts gives an empty vocabulary."""
    from scipy.sparse import csr_matrix

    ids, doc, words = _token_ids(texts, tokenize)
    rows: list[np.ndarray] = []  # per length: the (text, n-gram rank) of every text holding a frequent n-gram
    cols: list[np.ndarray] = []
    names: list[list[str]] = []
    ranks, size = ids, len(words)  # each position's code at this length (−1: none), and how many codes there are
    for n in range(1, MAX_N + 1):
        if n > 1:  # (frequent (n−1)-gram here, frequent (n−1)-gram one token on), within one text
            ok = (ranks[:-1] >= 0) & (ranks[1:] >= 0) & (doc[:-1] == doc[1:])
            codes = np.where(ok, ranks[:-1] * size + ranks[1:], -1)
            codes = np.append(codes, -1)
            size *= size
        else:
            codes = ranks
        frequent, in_doc, ranked = _frequent(doc, codes, min_docs, len(texts), size)
        if n == 1:
            names.append([words[c] for c in frequent.tolist()])
        else:  # the first (n−1)-gram and the last word of the second
            below = names[-1]
            names.append([f"{below[c // len(below)]} {below[c % len(below)].rsplit(' ', 1)[-1]}"
                          for c in frequent.tolist()])
        rows.append(in_doc[0])
        cols.append(in_doc[1])
        ranks, size = ranked, len(frequent)
        if not size:
            break
    vocabulary = [name for level in names for name in level]
    if not vocabulary:
        return csr_matrix((len(texts), 0), dtype=np.int64), np.array([], dtype=object)
    order = np.argsort(np.array(vocabulary, dtype=object), kind="stable")
    column = np.empty(len(vocabulary), dtype=np.int64)
    column[order] = np.arange(len(vocabulary))
    offsets = np.cumsum([0] + [len(level) for level in names])
    row = np.concatenate(rows)
    col = column[np.concatenate([c + offsets[n] for n, c in enumerate(cols)])]
    matrix = csr_matrix((np.ones(len(row), dtype=np.int64), (row, col)), shape=(len(texts), len(vocabulary)))
    return matrix, np.array(vocabulary, dtype=object)[order]


def _token_ids(texts: Sequence[str], tokenize: Callable[[str], list[str]]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Every text's tokens as ids, end to end, the text each belongs to, and the tokens by id (as int32 arrays
    built text by text: a Python list of every token's id would cost ten times the array)."""
    index: dict[str, int] = {}
    parts = [np.fromiter((index.setdefault(t, len(index)) for t in tokenize(text)), dtype=np.int32)
             for text in texts]
    lengths = np.array([len(part) for part in parts], dtype=np.int64)
    ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
    return ids.astype(np.int64), np.repeat(np.arange(len(texts), dtype=np.int64), lengths), list(index)


def _frequent(doc: np.ndarray, codes: np.ndarray, min_docs: int, n_docs: int,
              size: int) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray], np.ndarray]:
    """Among positions with a code (≥ 0, < `size`): the codes in at least `min_docs` texts, sorted; the (text,
    rank) pairs of texts holding one; and each position's rank among them (−1 for a rare code or none)."""
    held = np.flatnonzero(codes >= 0)
    code, where = codes[held], doc[held]
    if size * n_docs < 2**62:  # one sort of (code, text) packed into an int64
        packed = np.unique(code * n_docs + where)
        pair_code, pair_doc = packed // n_docs, packed % n_docs
        del packed
    else:
        order = np.lexsort((where, code))
        code_s, doc_s = code[order], where[order]
        first = np.r_[True, (code_s[1:] != code_s[:-1]) | (doc_s[1:] != doc_s[:-1])]
        pair_code, pair_doc = code_s[first], doc_s[first]
    ranked = np.full(len(codes), -1, dtype=np.int64)
    if not len(pair_code):
        return pair_code, (pair_doc, pair_code), ranked
    # the pairs are sorted by code: each code's run of texts is its document frequency
    starts = np.flatnonzero(np.r_[True, pair_code[1:] != pair_code[:-1]])
    df = np.diff(np.r_[starts, len(pair_code)])
    frequent = pair_code[starts][df >= min_docs]
    if not len(frequent):
        return frequent, (pair_doc[:0], pair_code[:0]), ranked
    rank = np.searchsorted(frequent, pair_code)
    keep = frequent[np.minimum(rank, len(frequent) - 1)] == pair_code
    found = np.searchsorted(frequent, code)
    hit = frequent[np.minimum(found, len(frequent) - 1)] == code
    ranked[held[hit]] = found[hit]
    return frequent, (pair_doc[keep], rank[keep]), ranked
