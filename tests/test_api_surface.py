"""The public API (`engine.api`) as a plug-in author meets it, held to a golden file: every module's names and
each one's signature (a class's constructor and its public methods and properties). A change to the surface
fails here until `tests/api_surface.txt` is changed with it, so widening, narrowing or re-signing the API is a
decision a reviewer sees in the diff, never a side effect of an internal change.

To accept a deliberate change: `VIBE_UPDATE_API_SURFACE=1 python -m pytest tests/test_api_surface.py`, then read
the file's diff."""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import pkgutil
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import engine
import engine.api

GOLDEN = Path(__file__).parent / "api_surface.txt"


def _signature(obj: Any) -> str:
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):  # a builtin or an extension type that states none
        text = "(...)"
    return re.sub(r" at 0x[0-9a-f]+", "", text)  # a default that is a function: its name, not its address


def _describe(name: str, obj: Any) -> list[str]:
    if isinstance(obj, types.ModuleType):  # a module the API hands over whole: its `__all__` is its surface
        return [f"{name}: module {obj.__name__}",
                *(f"    .{line}" for member in sorted(getattr(obj, "__all__", ["<no __all__>"]))
                  for line in _describe(member, getattr(obj, member, None)))]
    if inspect.isclass(obj):
        lines = [f"{name}: class{_signature(obj)}"]
        for member, value in sorted(vars(obj).items()):
            if member.startswith("_"):
                continue
            if isinstance(value, property | types.FunctionType | classmethod | staticmethod):
                shown = value.fget if isinstance(value, property) else getattr(obj, member)
                kind = "property" if isinstance(value, property) else "method"
                lines.append(f"    .{member}: {kind}{'' if kind == 'property' else _signature(shown)}")
        return lines
    if hasattr(obj, "__origin__"):  # a type alias: `Located = list[tuple[str, dict[str, Any]]]`
        return [f"{name} = {obj!r}"]
    if callable(obj):
        return [f"{name}{_signature(obj)}"]
    return [f"{name}: {type(obj).__name__}"]


def surface() -> str:
    """Every public API module's `__all__`, described line by line."""
    lines = []
    for found in sorted(pkgutil.iter_modules(engine.api.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"engine.api.{found.name}")
        lines.append(f"engine.api.{found.name}")
        for name in sorted(module.__all__):
            lines += [f"  {line}" for line in _describe(name, getattr(module, name))]
    return "\n".join(lines) + "\n"


def test_every_api_module_says_what_it_exports() -> None:
    """`__all__` is the surface: a module without one would export whatever it happens to import."""
    missing = [m.name for m in pkgutil.iter_modules(engine.api.__path__)
               if not hasattr(importlib.import_module(f"engine.api.{m.name}"), "__all__")]
    assert missing == []


def test_the_public_api_is_the_golden_surface() -> None:
    now = surface()
    if os.environ.get("VIBE_UPDATE_API_SURFACE"):
        GOLDEN.write_text(now, encoding="utf-8")
    assert now == GOLDEN.read_text(encoding="utf-8"), (
        "the public API changed: if that is meant, VIBE_UPDATE_API_SURFACE=1 python -m pytest "
        "tests/test_api_surface.py and commit tests/api_surface.txt")


def test_every_api_name_says_what_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference page (`scripts/api_reference.py`) gives each name its docstring's first paragraph, or for a
    constant or type alias the comment at its definition; a name with neither would stop the docs build."""
    sys.path.insert(0, str(Path(__file__).parent.parent / "scripts"))
    import api_reference

    missing = []
    for found in pkgutil.iter_modules(engine.api.__path__):
        for where, _, name, obj in api_reference.entries(importlib.import_module(f"engine.api.{found.name}")):
            try:
                api_reference.describe(where, name, obj)
            except api_reference.Undocumented as exc:
                missing.append(str(exc))
    assert missing == []
    (tmp_path / "planted_api.py").write_text("# both ends\nLOW = 0\nHIGH = 1\n\nBARE = 2\nSAID = 3  # three\n"
                                             "def bare():\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import planted_api

    assert [api_reference.describe("planted_api", n, getattr(planted_api, n)) for n in ("LOW", "HIGH", "SAID")] == [
        "both ends", "both ends", "three"]
    for name in ("BARE", "bare"):
        with pytest.raises(api_reference.Undocumented, match=f"planted_api.{name}:"):
            api_reference.describe("planted_api", name, getattr(planted_api, name))


def test_a_plug_in_uses_of_a_module_the_api_hands_over_only_what_its_all_offers() -> None:
    """`stats.wilson` through `from engine.api.analysis import stats` is part of the surface; `stats._helper`, or
    a public name the module does not list in `__all__`, is not, and a built-in reaching for it fails here."""
    root = Path(engine.__file__).parent
    offered: dict[str, set[str]] = {}
    for found in pkgutil.iter_modules(engine.api.__path__):
        module = importlib.import_module(f"engine.api.{found.name}")
        for name in module.__all__:
            if isinstance(handed := getattr(module, name), types.ModuleType):
                offered[name] = set(getattr(handed, "__all__", ()))
    reached = []
    for path in (root / "builtin_plugins").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = {alias.asname or alias.name for node in ast.walk(tree)
                   if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("engine.api.")
                   for alias in node.names if alias.name in offered}
        reached += [f"{path.relative_to(root)}:{node.lineno}: {node.value.id}.{node.attr}" for node in ast.walk(tree)
                    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in modules and node.attr not in offered[node.value.id]]
    assert reached == []
