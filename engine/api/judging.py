"""What a judge kind is built from (`JudgeKind`, `@judge_kind_class`, the verdict records), the lookups a method
asks the registered kinds with, the offline metrics, LLM judges' prompt and answer formats, and how their
answers are read.

Part of the public API (see `engine.api`): plug-ins, built-in or not, import from here."""

from engine.judges import answers, prompts, sentence_meaning
from engine.judges.fitting import AnswerToRate, FittedRatings, FittedVerdicts, PairToFit
from engine.judges.kinds import (
    ROLES,
    JudgeKind,
    KindSettings,
    RatingInput,
    judge_kind,
    judge_kind_class,
    kind_of,
    scores,
)
from engine.judges.metrics import METRICS, PHRASES_PREFIX, is_metric, measure, tokens, words
from engine.judges.reading import (
    answer_field,
    item_rating,
    last_score,
    order_verdicts,
    rating_of,
    verdict_reason,
)
from engine.judges.verdicts import (
    AnswerMeasure,
    PairVerdict,
    PreservationCheck,
    RatingScore,
    compare,
)
from engine.provider_table import is_recorded
from engine.settings import Setting

__all__ = [
    "METRICS",
    "PHRASES_PREFIX",
    "ROLES",
    "AnswerMeasure",
    "AnswerToRate",
    "FittedRatings",
    "FittedVerdicts",
    "JudgeKind",
    "KindSettings",
    "PairToFit",
    "PairVerdict",
    "PreservationCheck",
    "RatingInput",
    "RatingScore",
    "Setting",
    "answer_field",
    "answers",
    "compare",
    "is_metric",
    "is_recorded",
    "item_rating",
    "judge_kind",
    "judge_kind_class",
    "kind_of",
    "last_score",
    "measure",
    "order_verdicts",
    "prompts",
    "rating_of",
    "scores",
    "sentence_meaning",
    "tokens",
    "verdict_reason",
    "words",
]
