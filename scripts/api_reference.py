"""The public API's reference page (site/docs/reference/api.md), written by `build_docs.py`: every name of every
`engine.api` module with what it is, grouped first by the kind of plug-in an author writes.

A module the API hands over whole lists the names its `__all__` offers. A name's line is the first paragraph of
its docstring; a constant or a type alias has none, so its line is the
comment at its definition (`NAME = value  # what it holds`, or the comment lines just above it). A name with
neither stops the build: `tests/test_docs.py` runs it, so an undocumented name cannot join the API.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import types
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import engine.api

# Which API modules each kind of plug-in imports from, beside `spec` and `records`, which every kind may read.
BY_KIND = {
    "A judge kind": ("judging", "embeddings"),
    "A dataset format": ("data",),
    "A provider": ("providers",),
    "An analysis method": ("methods", "execution", "calls", "analysis", "report", "judging", "embeddings"),
    "An exporter": ("exporters",),
}


class Undocumented(Exception):
    pass


def _first_paragraph(text: str) -> str:
    return " ".join(inspect.cleandoc(text).split("\n\n")[0].split())


@cache
def _source(module: str) -> tuple[list[str], ast.Module]:
    path = Path(importlib.import_module(module).__file__ or "")
    text = path.read_text(encoding="utf-8")
    return text.splitlines(), ast.parse(text)


def _comment(module: str, name: str) -> str:
    """The comment that documents an assignment of `name` at the top level of `module` (followed through the
    imports that bring it there): on its first or last line, else on the lines just above it."""
    lines, tree = _source(module)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return _comment(node.module, alias.name)
        targets = (node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign)
                   else [])
        names = [n for t in targets for n in ([t] if isinstance(t, ast.Name) else getattr(t, "elts", []))]
        if any(isinstance(n, ast.Name) and n.id == name for n in names):
            for line in (lines[node.lineno - 1], lines[(node.end_lineno or node.lineno) - 1]):
                if "  # " in line:
                    return line.split("  # ", 1)[1].strip()
            above: list[str] = []  # the comment over a block of assignments (no blank line between) covers each
            for line in reversed(lines[:node.lineno - 1]):
                if not line.strip() or (above and not line.startswith("#")):
                    break
                if line.startswith("#"):
                    above.insert(0, line.lstrip("# ").strip())
            return " ".join(above)
    return ""


def describe(api_module: str, name: str, obj: Any) -> str:
    """What the name is, in one line; `Undocumented` where the code says nothing about it."""
    if isinstance(obj, types.ModuleType | type) or inspect.isroutine(obj) or hasattr(obj, "__wrapped__"):
        own = obj.__dict__.get("__doc__") if isinstance(obj, type) else obj.__doc__
        if own and not (isinstance(obj, type) and own.startswith(f"{obj.__name__}(")):  # a dataclass's default
            return _first_paragraph(own)
    found = _comment(api_module, name) if not isinstance(obj, types.ModuleType) else ""
    if not found:
        raise Undocumented(f"{api_module}.{name}: no docstring and no comment at its definition")
    return found


def entries(module: types.ModuleType) -> Iterator[tuple[str, str, str, Any]]:
    """Each name an API module exports, as (the module that holds it, the name shown, its own name, the object);
    after a module the API hands over whole, each name its `__all__` offers (`stats.wilson`)."""
    for exported in sorted(module.__all__):
        obj = getattr(module, exported)
        yield module.__name__, exported, exported, obj
        if isinstance(obj, types.ModuleType):
            for member in sorted(obj.__all__):
                yield obj.__name__, f"{exported}.{member}", member, getattr(obj, member)


def _what(obj: Any) -> str:
    if isinstance(obj, types.ModuleType):
        return "module"
    if isinstance(obj, type):
        return "class"
    if inspect.isroutine(obj) or hasattr(obj, "__wrapped__"):
        return "function"
    return "type" if hasattr(obj, "__origin__") or isinstance(obj, types.UnionType) else "constant"


def api_reference() -> str:
    modules = sorted(m.name for m in pkgutil.iter_modules(engine.api.__path__))
    lines = ["# Public API", "",
             "Generated from `engine.api` (`python scripts/build_docs.py`). A plug-in imports these names and "
             "nothing else of vibe; the built-in plug-ins are held to the same rule by an import contract. Every "
             "name here is the supported surface: its signature is held to `tests/api_surface.txt`, so a change "
             "to one is a reviewed change, and everything else under `engine` may change without notice.", "",
             "## By the kind of plug-in you write", "",
             "Every kind reads [`spec`](#engineapispec) (the spec's records) and [`records`](#engineapirecords) "
             "(items, requests, tasks, results) beside its own modules:", "",
             "| you write | import from |", "|---|---|"]
    for kind, names in BY_KIND.items():
        lines.append(f"| {kind} | {', '.join(f'[`{n}`](#engineapi{n})' for n in names)} |")
    lines.append("")
    for name in modules:
        module = importlib.import_module(f"engine.api.{name}")
        lines += [f"## engine.api.{name}", "", _first_paragraph(module.__doc__ or ""), "", "| name | what | |",
                  "|---|---|---|"]
        for where, shown, name, obj in entries(module):
            text = describe(where, name, obj).replace("|", "\\|")
            lines.append(f"| `{shown}` | {_what(obj)} | {text} |")
        lines.append("")
    return "\n".join(lines)
