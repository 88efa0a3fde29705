"""What an analysis method is built from (`AnalysisMethod`, `@analysis_method`, its options, the plan `Builder`
and the planning helpers the built-in methods use).

Part of the public API (see `engine.api`): plug-ins, built-in or not, import from here."""

from engine.plan import (
    Builder,
    PlanError,
    estimate_tokens,
    offset_seed,
    prompted,
    reference_corpus,
    vibe_fields,
)
from engine.registry import AnalysisMethod, Options, Page, PairOptions, analysis_method, get_method
from engine.settings import UNIQUE_LIST, Setting

__all__ = [
    "UNIQUE_LIST",
    "AnalysisMethod",
    "Builder",
    "Options",
    "Page",
    "PairOptions",
    "PlanError",
    "Setting",
    "analysis_method",
    "estimate_tokens",
    "get_method",
    "offset_seed",
    "prompted",
    "reference_corpus",
    "vibe_fields",
]
