"""Derived work kept across runs: results computed from results (embeddings, discovery, cross-fitted lexicons,
bootstrap rankings, chart images), stored in the run cache by the content hash of everything they depend on.

Calls are cached by task hash; this is the same idea one level up. A re-run whose inputs did not change reads
each piece back instead of recomputing it, and a changed input (one answer edited) changes the key of exactly
the pieces that read it. Every key holds the digest of the code that computes the piece (`code_digest`: its
module and every engine module that one imports, docstrings aside, with the versions of the libraries they
import), so a change of method or of a library is a change of key, with no version string to bump by hand.
Outside a run (tests, benchmarks, `vibe discover` without a cache) nothing is stored and every
piece is computed, which gives the same numbers.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import importlib.util
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Store(Protocol):
    def get_derived(self, keys: Iterable[str]) -> dict[str, bytes]: ...

    def put_derived(self, items: dict[str, bytes]) -> None: ...


@dataclass
class _Run:
    store: Store
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # kind -> {"computed": n, "read": n}


_run: list[_Run] = []  # the run in progress in this process, if any: derived work is kept only while there is one


@contextlib.contextmanager
def kept_in(store: Store) -> Iterator[dict[str, dict[str, int]]]:
    """Keep derived work in `store` (the run cache) for the length of the block, and count per kind the pieces
    computed and read back: the counts are yielded, for the run's manifest. Leaving the block restores what was
    there before (nothing, outside a run), so no run's store or counts outlive it in a process that goes on."""
    previous = list(_run)
    _run[:] = [_Run(store)]
    try:
        yield _run[0].counts
    finally:
        _run[:] = previous


def active() -> Store | None:
    """The store of the run in progress; None outside a run."""
    return _run[0].store if _run else None


def tally(kind: str, computed: int = 0, read: int = 0) -> None:
    """Count pieces of `kind` computed and read back in the run in progress (outside a run, nothing)."""
    if _run:
        counted = _run[0].counts.setdefault(kind, {"computed": 0, "read": 0})
        counted["computed"] += computed
        counted["read"] += read


@functools.cache
def code_digest(module: str) -> str:
    """What `module` computes with, hashed: the syntax of its source and of every module of its own package and
    of the engine that it imports, directly or through another (docstrings dropped, so rewording one keeps the
    key; comments are not in the syntax), and the installed version of each library those modules import. A
    module is read where Python imports it from: a plug-in outside `engine/` (a judge kind in its own package)
    is hashed from its own file and its package's imports, never from an engine file with the same tail name.
    A name imported from the public API (`engine.api`) is followed to the module that defines it: the API
    re-exports most of the engine, and a key should change with the code a piece uses, not with all of it."""
    from engine import user_cache

    name = user_cache.digest([module, str(_source(module))])  # a copy of the engine elsewhere keeps its own
    kept = user_cache.read("code-digest", name)
    if kept is not None and _unchanged(kept):
        return str(kept["digest"])
    parts, libraries, files = _read(module)
    distributions = sorted({dist for library in libraries for dist in _distributions().get(library.split(".")[0], [])})
    versions = [f"{dist}=={_version(dist)}" for dist in distributions]
    digest = hashlib.sha256("\n".join(sorted(parts) + versions).encode("utf-8")).hexdigest()[:16]
    user_cache.write("code-digest", name, {"digest": digest, "files": [user_cache.stamp(f) for f in files],
                                             "versions": versions})
    return digest


def _unchanged(kept: dict[str, Any]) -> bool:
    """Whether the files and library versions a kept digest was read from are as they were: reading and parsing
    every module a piece imports, and asking which distribution holds each library, took 0.5–1 s a run (the
    distributions alone 0.3 s). A file's size and time stand for its bytes, as for `make`."""
    from engine import user_cache

    try:
        return (user_cache.stamps_hold(kept["files"])
                and all(_version(v.partition("==")[0]) == v.partition("==")[2] for v in kept["versions"]))
    except (OSError, KeyError, TypeError, ValueError):
        return False


def code_modules(module: str) -> list[str]:
    """The modules `code_digest(module)` hashes, sorted."""
    return sorted(part.partition("\0")[0] for part in _read(module)[0])


def _read(module: str) -> tuple[list[str], set[str], list[Path]]:
    """Each module `module` computes with, as `name\\0syntax`, the libraries they import, and their files."""
    own = {"engine", module.split(".")[0]}
    seen: set[str] = set()
    libraries: set[str] = set()
    parts: list[str] = []
    files: list[Path] = []
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parent, _, attr = name.rpartition(".")
        if name.startswith(f"{PUBLIC_API}."):  # an API module, or a name it re-exports: its defining module
            todo.extend(_through_api(parent, attr))
            continue
        path = _source(name)
        if path is None:  # a name imported from a module, not a module
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        files.append(path)
        parts.append(f"{name}\0{_without_docstrings(tree)}")
        for imported in _imported(tree):
            (todo.append if imported.split(".")[0] in own else libraries.add)(imported)
    return parts, libraries, files


PUBLIC_API = "engine.api"


def _through_api(parent: str, attr: str) -> list[str]:
    """Where the name `attr` of the API module `parent` comes from: its defining module, and the name in it
    (which may itself be a module: `from engine import stats`). Nothing for an API module itself."""
    if not parent.startswith(PUBLIC_API):
        return []
    source = _reexported(parent).get(attr)
    return [source.rpartition(".")[0], source] if source else []


@functools.cache
def _reexported(api_module: str) -> dict[str, str]:
    """Each name a public API module imports, with its full dotted origin."""
    path = _source(api_module)
    if path is None:
        return {}
    return {alias.asname or alias.name: f"{node.module}.{alias.name}"
            for node in ast.parse(path.read_text(encoding="utf-8")).body
            if isinstance(node, ast.ImportFrom) and node.module for alias in node.names}


def _source(name: str) -> Path | None:
    """The source file module `name` is imported from; None for a name that is not a module (`engine.stats.mean`)
    or one with no Python source."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):  # its parent is a module, not a package; or it cannot be found
        return None
    origin = spec.origin if spec is not None else None
    return Path(origin) if origin and origin.endswith(".py") else None


def _imported(tree: ast.AST) -> set[str]:
    """Every module (or module.name) an absolute import in `tree` names, at any depth."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _without_docstrings(tree: ast.Module) -> str:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(
                    first.value.value, str):
                node.body = node.body[1:] or [ast.Pass()]
    return ast.dump(tree)


@functools.cache
def _distributions() -> dict[str, list[str]]:
    from importlib.metadata import packages_distributions  # on first use, as `_version`: 20 ms to import

    return dict(packages_distributions())


def _version(distribution: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "?"


def key(kind: str, inputs: Any, code: str = "") -> str:
    """`kind/` + the SHA-256 of the inputs' canonical JSON and the digest of the code that computes them. The JSON
    is hashed piece by piece as it is encoded: inputs that hold every answer of a large run (the ceiling's, the
    discovery's) never become one string and its bytes."""
    encoder = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    digest = hashlib.sha256()
    _feed([code, inputs], encoder, digest)
    return f"{kind}/" + digest.hexdigest()


PIECE = 256  # list elements encoded by one call of the (C) encoder


def _feed(value: Any, encoder: json.JSONEncoder, digest: Any) -> None:
    """Hash `value`'s canonical JSON: the bytes `encoder.encode(value)` gives, fed in pieces. Dicts and short
    lists are walked (their parts may be large); a long list is encoded `PIECE` elements at a time, each piece
    by one call of the C encoder, which `iterencode` never uses (piece by piece it was a Python call per
    element, most of a large run's hashing)."""
    def put(text: str) -> None:
        digest.update(text.encode("utf-8", "surrogatepass"))

    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        put("{")
        for n, name in enumerate(sorted(value)):
            put(("," if n else "") + encoder.encode(name) + ":")
            _feed(value[name], encoder, digest)
        put("}")
    elif isinstance(value, (list, tuple)) and len(value) <= 8:
        put("[")
        for n, element in enumerate(value):
            if n:
                put(",")
            _feed(element, encoder, digest)
        put("]")
    elif isinstance(value, (list, tuple)):
        put("[")
        for start in range(0, len(value), PIECE):
            put(("," if start else "") + encoder.encode(list(value[start:start + PIECE]))[1:-1])
        put("]")
    else:
        put(encoder.encode(value))


def holds(kind: str, inputs: Any, module: str) -> bool:
    """Whether the run cache holds what `cached(kind, inputs, …, module=module)` would read back (False
    without a cache)."""
    store = active()
    if store is None:
        return False
    name = key(kind, inputs, code_digest(module))
    return name in store.get_derived([name])


def cached(kind: str, inputs: Any, compute: Callable[[], T], encode: Callable[[T], bytes],
           decode: Callable[[bytes], T], module: str | None = None) -> T:
    """`compute()`, or what it returned last time for the same inputs and the same code: that of `module`,
    by default the module that defines `compute` (see `code_digest`)."""
    store = active()
    if store is None:
        return compute()
    name = key(kind, inputs, code_digest(module or compute.__module__))
    found = store.get_derived([name]).get(name)
    if found is not None:
        tally(kind.split("/")[0], read=1)
        return decode(found)
    tally(kind.split("/")[0], computed=1)
    value = compute()
    store.put_derived({name: encode(value)})
    return value


def cached_each(kind: str, inputs: list[str], compute: Callable[[str], T], encode: Callable[[T], bytes],
                decode: Callable[[bytes], T], module: str | None = None) -> dict[str, T]:
    """`compute(x)` for each distinct x of `inputs` (texts: an answer's rendering, its counts), the pieces the
    run cache holds read back in one query and the others computed and stored in one write: a re-run reads
    2,830 answers' pieces in a fraction of the time rendering them took."""
    distinct = list(dict.fromkeys(inputs))
    store = active()
    if store is None:
        return {x: compute(x) for x in distinct}
    code = code_digest(module or compute.__module__)
    names = {x: key(kind, x, code) for x in distinct}
    found = store.get_derived(names.values())
    out: dict[str, T] = {}
    new: dict[str, bytes] = {}
    for x, name in names.items():
        if name in found:
            out[x] = decode(found[name])
        else:
            out[x] = compute(x)
            new[name] = encode(out[x])
    tally(kind.split("/")[0], computed=len(new), read=len(distinct) - len(new))
    if new:
        store.put_derived(new)
    return out
