"""What an exporter reads: a finished run's files (`RunFiles`, its comparisons) and the error it raises.

Part of the public API (see `engine.api`): plug-ins, built-in or not, import from here."""

from engine.export.run_files import Comparison, ExportError, RunFiles

__all__ = [
    "Comparison",
    "ExportError",
    "RunFiles",
]
