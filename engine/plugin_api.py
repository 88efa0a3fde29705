"""Everything a plug-in needs, in one module: import from here, not from vibe's internal modules.

vibe has four kinds of plug-in, each one module (a package for a method) registered by one line in its
registry's table or, from a package of its own, by an entry point:

- analysis method: `AnalysisMethod` with `@analysis_method(name)`; entry-point group `vibe.analysis_methods`;
- judge kind: `JudgeKind` with `@judge_kind_class(name)`; `vibe.judge_kinds`;
- dataset format: `DatasetFormat` (or one of its shapes `WideRows`, `AnswerRows`, `BattleRows`) with
  `@dataset_format_class(name)`; `vibe.dataset_formats`;
- provider: a client class with `@register(name)`, described by a `ProviderInfo`; `vibe.providers`.

An entry point names the module that registers the plug-in (for a provider: its `ProviderInfo`), e.g. in
pyproject.toml `[project.entry-points."vibe.judge_kinds"] exact = "vibe_exact.judge"`. Offline judges return
the two result records: `PairVerdict` for a pair of answers, `RatingScore` for one answer. `engine.contract`
checks that a plug-in keeps what its kind promises.
"""

from engine.datasets.items import DatasetError, Item
from engine.datasets.shapes import AnswerRows, BattleRows, TableRecords, WideRows
from engine.execute.providers.base import Completion, ProviderError, ResponseSchema, error_from_status, register
from engine.formats import DatasetFormat, Located, Sniffed, dataset_format_class
from engine.judges.kinds import ROLES, JudgeKind, RatingInput, judge_kind_class
from engine.judges.verdicts import PairVerdict, RatingScore, compare
from engine.plan import Builder
from engine.provider_table import ProviderInfo
from engine.records import Prepared, Result
from engine.registry import AnalysisMethod, Options, Page, PairOptions, analysis_method
from engine.requests import PairJudgment, Rating
from engine.spec.checker import SpecChecker
from engine.spec.data_model import Dataset
from engine.spec.model import Analysis, Endpoint, Judge, Vibe
from engine.spec.yaml_source import PathKey

__all__ = [
    "ROLES",
    "Analysis",
    "AnalysisMethod",
    "AnswerRows",
    "BattleRows",
    "Builder",
    "Completion",
    "Dataset",
    "DatasetError",
    "DatasetFormat",
    "Endpoint",
    "Item",
    "Judge",
    "JudgeKind",
    "Located",
    "Options",
    "Page",
    "PairJudgment",
    "PairOptions",
    "PairVerdict",
    "PathKey",
    "Prepared",
    "ProviderError",
    "ProviderInfo",
    "Rating",
    "RatingInput",
    "RatingScore",
    "ResponseSchema",
    "Result",
    "Sniffed",
    "SpecChecker",
    "TableRecords",
    "Vibe",
    "WideRows",
    "analysis_method",
    "compare",
    "dataset_format_class",
    "error_from_status",
    "judge_kind_class",
    "register",
]
