"""The public API (`engine.api`) as a plug-in author meets it, held to a golden file: every module's names and
each one's signature (a class's constructor and its public methods and properties). A change to the surface
fails here until `tests/api_surface.txt` is changed with it, so widening, narrowing or re-signing the API is a
decision a reviewer sees in the diff, never a side effect of an internal change.

To accept a deliberate change: `VIBE_UPDATE_API_SURFACE=1 python -m pytest tests/test_api_surface.py`, then read
the file's diff."""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re
import types
from pathlib import Path
from typing import Any

import engine.api

GOLDEN = Path(__file__).parent / "api_surface.txt"


def _signature(obj: Any) -> str:
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):  # a builtin or an extension type that states none
        text = "(...)"
    return re.sub(r" at 0x[0-9a-f]+", "", text)  # a default that is a function: its name, not its address


def _describe(name: str, obj: Any) -> list[str]:
    if isinstance(obj, types.ModuleType):
        return [f"{name}: module {obj.__name__}"]
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
