"""A spec's records as a plug-in reads them (models' endpoints, judges, vibes, personas, analyses,
datasets), the checker a method's `check` reports located errors with, and helpers for names and paths.

Part of the public API (see `engine.api`): plug-ins, built-in or not, import from here."""

from engine.names import did_you_mean
from engine.spec.checker import SpecChecker
from engine.spec.data_model import Dataset, Labels
from engine.spec.model import Analysis, Discovery, Endpoint, Judge, Persona, Vibe, VibeExamples
from engine.spec.paths import resolve_path
from engine.spec.profiles import JUDGED_DIMENSIONS
from engine.spec.semantics import check_vibes_have_judges
from engine.spec.yaml_source import PathKey

__all__ = [
    "JUDGED_DIMENSIONS",
    "Analysis",
    "Dataset",
    "Discovery",
    "Endpoint",
    "Judge",
    "Labels",
    "PathKey",
    "Persona",
    "SpecChecker",
    "Vibe",
    "VibeExamples",
    "check_vibes_have_judges",
    "did_you_mean",
    "resolve_path",
]
