"""Where chunked encoder work runs: in this process (the default), or on a cluster's actor pool while a run
uses the Ray backend.

The encoders (MiniLM sentence embeddings, BERTScore token embeddings) split their work into chunks that are
each one self-contained call of a module-level function, the same chunks on every backend. A text's vector
depends slightly (in the 7th digit) on which texts share its padded batch, so running the same chunks through
the same function is what makes a cluster's numbers identical to this process's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Mapper(Protocol):
    def __call__(self, fn: Callable[[Any], Any], chunks: Sequence[Any]) -> list[Any]: ...


_mapper: list[Mapper] = []


def use(mapper: Mapper | None) -> None:
    """Send chunked work to `mapper` from now on; None: run it in this process."""
    _mapper[:] = [mapper] if mapper is not None else []


def map_chunks(fn: Callable[[T], R], chunks: Sequence[T]) -> list[R]:
    """[fn(chunk) for chunk in chunks], wherever chunked work runs now; `fn` must be importable by name."""
    if not chunks:
        return []
    if _mapper:
        return _mapper[0](fn, list(chunks))
    return [fn(chunk) for chunk in chunks]
