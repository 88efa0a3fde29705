"""Derived work kept across runs: results computed from results (embeddings, discovery, cross-fitted lexicons,
bootstrap rankings, chart images), stored in the run cache by the content hash of everything they depend on.

Calls are cached by task hash; this is the same idea one level up. A re-run whose inputs did not change reads
each piece back instead of recomputing it, and a changed input (one answer edited) changes the key of exactly
the pieces that read it. Every key starts with the kind of work and a version, so a change of method is a
change of key. Outside a run (tests, benchmarks, `vibe discover` without a cache) nothing is stored and every
piece is computed, which gives the same numbers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Store(Protocol):
    def get_derived(self, keys: Iterable[str]) -> dict[str, bytes]: ...

    def put_derived(self, items: dict[str, bytes]) -> None: ...


_store: list[Store] = []
counts: dict[str, dict[str, int]] = {}  # kind -> {"computed": n, "read": n}, this process


def use(store: Store | None) -> None:
    """Keep derived work in `store` (the run cache) from now on, counting afresh; None: compute everything,
    keep nothing."""
    _store[:] = [store] if store is not None else []
    if store is not None:
        counts.clear()


def active() -> Store | None:
    return _store[0] if _store else None


def key(kind: str, inputs: Any) -> str:
    """`kind/` + the SHA-256 of the inputs' canonical JSON."""
    canonical = json.dumps(inputs, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return f"{kind}/" + hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def cached(kind: str, inputs: Any, compute: Callable[[], T], encode: Callable[[T], bytes],
           decode: Callable[[bytes], T]) -> T:
    """`compute()`, or what it returned last time for the same inputs."""
    store = active()
    if store is None:
        return compute()
    name = key(kind, inputs)
    found = store.get_derived([name]).get(name)
    tally = counts.setdefault(kind.split("/")[0], {"computed": 0, "read": 0})
    if found is not None:
        tally["read"] += 1
        return decode(found)
    tally["computed"] += 1
    value = compute()
    store.put_derived({name: encode(value)})
    return value
