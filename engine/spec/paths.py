"""Data paths in a spec: `${NAME}` and `${NAME:-default}` expanded from the environment, relative paths resolved
against the spec's folder."""

from __future__ import annotations

import os
import re
from pathlib import Path

_VAR = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)(?::-([^}]*))?\}")


def expand_path(raw: str) -> str:
    """Expand `${NAME}` and `${NAME:-default}` in a data path, so one spec finds its data on every machine
    (`VIBE_DATA=/mnt/data vibe run ...`) while the spec text, and so its hash, stays the same."""
    return _VAR.sub(lambda m: os.environ.get(m.group(1)) or (m.group(2) or ""), raw)


def unset_variables(raw: str) -> list[str]:
    """The `${NAME}` references in a path whose variable is unset and that give no default."""
    return [m.group(1) for m in _VAR.finditer(raw) if not os.environ.get(m.group(1)) and m.group(2) is None]


def resolve_path(base: Path, raw: str) -> Path:
    """A path as the spec gives it (`~` and variables expanded), relative to `base`, the spec's folder."""
    path = Path(expand_path(raw))
    return path if path.is_absolute() else (base / path)
