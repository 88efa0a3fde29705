"""What the spec's JSON schema is built from, read without importing a plug-in: the key under which a built
schema is kept (`engine.spec.load.schema`), so that it is built again exactly when one of these changes."""

from __future__ import annotations

import os
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from engine.formats import format_names, format_source
from engine.judges.kinds import kind_names, kind_source
from engine.provider_table import PROVIDERS
from engine.registry import method_names, method_source


def schema_inputs(schema_file: str) -> list[Any]:
    """Everything the schema is built from, none of it imported: `schema.json` (its text, `schema_file`); every
    registered name of each plug-in kind with the module that registers it (a table line or an entry point; a
    provider's settings record) and, for a module outside vibe's own package, its file's size and time; the
    providers' table; and the size and time of every file of vibe's package (a built-in plug-in's fields live in
    its module)."""

    def stamp(module: str | None) -> list[Any]:
        if module is None or module.startswith("engine."):
            return [module]
        try:
            found = find_spec(module.partition(":")[0])
        except (ImportError, ValueError):
            found = None
        origin = found.origin if found is not None else None
        if origin is None or not os.path.exists(origin):
            return [module, None]
        stat = os.stat(origin)
        return [module, stat.st_size, stat.st_mtime_ns]

    package = Path(__file__).resolve().parent.parent  # engine/
    files = sorted((str(f.relative_to(package)), f.stat().st_size, f.stat().st_mtime_ns)
                   for f in package.rglob("*") if f.suffix in (".py", ".json"))
    return [schema_file, files, repr(sorted(PROVIDERS.items())),
            [(n, stamp(info.settings)) for n, info in PROVIDERS.items() if info.settings],
            [(n, stamp(kind_source(n))) for n in kind_names()],
            [(n, stamp(method_source(n))) for n in method_names()],
            [(n, stamp(format_source(n))) for n in format_names()]]
