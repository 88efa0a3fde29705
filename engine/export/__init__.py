"""A finished run in the formats other tools read, behind a small lazy registry: one module per format, each
with `write(run: RunFiles, out: Path) -> list[Path]`. Adding a format: its module, and its line in
`engine.plugin_tables.EXPORTERS` (or, from a package of your own, the module under the `vibe.exporters`
entry-point group)."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from engine.export.run_files import ExportError, RunFiles
from engine.plugin_tables import EXPORTERS
from engine.plugins import entry_point, names_with_published

ENTRY_POINTS = "vibe.exporters"


def exporter_names() -> list[str]:
    """The formats `vibe export --to` writes: the table's, then those installed packages publish."""
    return names_with_published(EXPORTERS, ENTRY_POINTS)


def exporter(name: str) -> ModuleType:
    """The module that writes format `name`."""
    if name in EXPORTERS:
        return importlib.import_module(EXPORTERS[name])
    module: ModuleType = entry_point(ENTRY_POINTS, name).load()
    return module


def export(run_dir: Path, to: str, out: Path | None = None, spec: Path | None = None) -> list[Path]:
    """Write the run's results as `to` into `out` (default: <run_dir>/export/<to>); the files written."""
    if to not in exporter_names():
        raise ExportError(f"unknown export format {to!r} (known: {', '.join(exporter_names())})")
    run = RunFiles.open(run_dir, spec)
    target = out or run_dir / "export" / to
    target.mkdir(parents=True, exist_ok=True)
    written: list[Path] = exporter(to).write(run, target)
    return written


__all__ = ["ExportError", "RunFiles", "export", "exporter", "exporter_names"]
