"""The statistics a method reports with: intervals, tests and corrections (`stats`), judge reliability across
orders and judges, rankings (Bradley-Terry, Elo) and the preference outcomes they are fitted on (battles,
scores, ratings), and people's labels against judges.

Part of the public API (see `engine.api`): plug-ins, built-in or not, import from here."""

from engine import stats
from engine.analyze import arena_style, people, reliability
from engine.analyze.outcomes import (
    STYLE_FEATURES,
    human_outcomes,
    rating_outcomes,
    score_outcomes,
    style_vector,
    subset_of,
)
from engine.analyze.people import (
    Corrected,
    PeopleAgreement,
    agreement_with_people,
    corrected_separability,
)
from engine.analyze.people_labels import SPLITS, HumanLabel, assign_splits, read_columns, read_labels
from engine.analyze.rankings import SCALE, Outcome, Ranking, bradley_terry, rank
from engine.analyze.reliability import JudgeAgreement, JudgeReliability, TwoOrders, combine_orders

__all__ = [
    "SCALE",
    "SPLITS",
    "STYLE_FEATURES",
    "Corrected",
    "HumanLabel",
    "JudgeAgreement",
    "JudgeReliability",
    "Outcome",
    "PeopleAgreement",
    "Ranking",
    "TwoOrders",
    "agreement_with_people",
    "arena_style",
    "assign_splits",
    "bradley_terry",
    "combine_orders",
    "corrected_separability",
    "human_outcomes",
    "people",
    "rank",
    "rating_outcomes",
    "read_columns",
    "read_labels",
    "reliability",
    "score_outcomes",
    "stats",
    "style_vector",
    "subset_of",
]
