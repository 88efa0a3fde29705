"""A measure of meaning rather than wording: how many of an answer's sentences say something like a set of
example sentences, whatever words they use.

The measure is written out in full in its name, `sentences:<threshold>|<example>|<example>|...`, so a vibe that
names it measures the same in any run (pasted into another spec, or gated in a pull request): the examples'
MiniLM embeddings are averaged into one direction, and an answer's value is the number of its sentences whose
cosine with that direction reaches the threshold. Statistical discovery writes these from the sentences it finds
over-used on one side (`engine.builtin_plugins.methods.vibecheck.discovery.meaning`); a person can write one too.

Sentences are cut where a line ends, where `.`, `!` or `?` is followed by a space, and where a colon is followed by
a capital (a lead-in such as "Here's why:" is no part of what follows it); list marks, heading marks
and quote marks are taken off; pieces under `MIN_WORDS` words (a heading, "Sure!") are not sentences here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where a measure is computed: checking a spec's metric names needs none of it
    import numpy as np

# what a plug-in may use of this module, through the public API (held by tests/test_api_surface.py)
__all__ = ["PREFIX", "counted", "counts", "definition", "is_measure", "parse", "split"]

PREFIX = "sentences:"  # a measure of meaning is named "sentences:<threshold>|<example>|<example>…"
MIN_WORDS = 4
MAX_CHARS = 400  # a "sentence" longer than this is a run-on block; MiniLM reads only its first 256 word pieces
_CUT = re.compile(r"(?<=[.!?])\s+|(?<=:)\s+(?=[A-Z])|\n+")
_MARKS = re.compile(r"^\s*(?:[-*+•>#|]+|\d+[.)])\s*")


def is_measure(metric: str) -> bool:
    """A well-formed measure: a cosine threshold in [−1, 1] and at least one example."""
    if not metric.startswith(PREFIX):
        return False
    threshold, examples = parse(metric)
    return -1.0 <= threshold <= 1.0 and len(examples) > 0  # a NaN threshold fails both comparisons


def split(text: str) -> list[str]:
    """The answer's sentences, as the module docstring says."""
    out = []
    for piece in _CUT.split(text):
        sentence = _MARKS.sub("", piece).strip().strip("*_`")
        if len(sentence.split()) >= MIN_WORDS:
            out.append(sentence[:MAX_CHARS])
    return out


def definition(threshold: float, examples: Sequence[str]) -> str:
    """The measure's name: its threshold and examples (a `|` in an example is written `/`)."""
    return PREFIX + f"{threshold:.2f}|" + "|".join(" ".join(e.replace("|", "/").split()) for e in examples)


def parse(metric: str) -> tuple[float, tuple[str, ...]]:
    """The threshold and the examples of a measure's name; (nan, ()) for one that is not well formed."""
    head, _, rest = metric[len(PREFIX):].partition("|")
    try:
        threshold = float(head)
    except ValueError:
        return float("nan"), ()
    return threshold, tuple(e for e in rest.split("|") if e.strip())


@functools.lru_cache(maxsize=256)
def direction(examples: tuple[str, ...]) -> np.ndarray:
    """The unit mean of the examples' embeddings."""
    import numpy as np

    from engine.embeddings import embed

    mean = embed(list(examples)).mean(axis=0)
    return np.asarray(mean / max(float(np.linalg.norm(mean)), 1e-12), dtype=np.float32)


def counts(metric: str, texts: Sequence[str]) -> np.ndarray:
    """Each text's number of sentences that say something like the measure's examples, every sentence of every
    text embedded in one batch (each distinct sentence once)."""
    import numpy as np

    threshold, pieces, cosines = _cosines(metric, texts)
    out = np.zeros(len(texts))
    if len(cosines):
        owner = np.repeat(np.arange(len(texts)), [len(p) for p in pieces])
        np.add.at(out, owner, (cosines >= threshold).astype(float))
    return out


def counted(metric: str, texts: Sequence[str]) -> list[list[tuple[str, float]]]:
    """Per text, the sentences the measure counts (as `counts` counts them), each with its cosine with the
    examples' mean direction, in the text's order: what a reader is shown to see what a measure found."""
    threshold, pieces, cosines = _cosines(metric, texts)
    out: list[list[tuple[str, float]]] = []
    start = 0
    for sentences in pieces:
        near = cosines[start:start + len(sentences)]
        out.append([(s, float(c)) for s, c in zip(sentences, near, strict=True) if c >= threshold])
        start += len(sentences)
    return out


def _cosines(metric: str, texts: Sequence[str]) -> tuple[float, list[list[str]], np.ndarray]:
    """The measure's threshold, each text's sentences, and every sentence's cosine with the examples' mean
    direction (all texts' sentences in one array, in order)."""
    import numpy as np

    from engine.embeddings import embed

    threshold, examples = parse(metric)
    pieces = [split(text) for text in texts]
    flat = [s for sentences in pieces for s in sentences]
    cosines = embed(flat) @ direction(examples) if flat else np.zeros(0, dtype=np.float32)
    return threshold, pieces, cosines
