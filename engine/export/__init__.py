"""A finished run in the formats other tools read, behind a small lazy registry: one module per format, each
with `write(run: RunFiles, out: Path) -> list[Path]`. Adding a format: its module, and its line here."""

from __future__ import annotations

import importlib
from pathlib import Path

from engine.export.run_files import ExportError, RunFiles

EXPORTERS: dict[str, str] = {
    "llm-comparator": "engine.export.llm_comparator",
    "alpaca-eval": "engine.export.alpaca_eval",
    "parquet": "engine.export.parquet",
}


def export(run_dir: Path, to: str, out: Path | None = None, spec: Path | None = None) -> list[Path]:
    """Write the run's results as `to` into `out` (default: <run_dir>/export/<to>); the files written."""
    if to not in EXPORTERS:
        raise ExportError(f"unknown export format {to!r} (known: {', '.join(EXPORTERS)})")
    run = RunFiles.open(run_dir, spec)
    target = out or run_dir / "export" / to
    target.mkdir(parents=True, exist_ok=True)
    written: list[Path] = importlib.import_module(EXPORTERS[to]).write(run, target)
    return written


__all__ = ["EXPORTERS", "ExportError", "RunFiles", "export"]
