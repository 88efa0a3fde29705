"""The statistics a method reports with: intervals, tests and corrections (`stats`), judge reliability across
orders and judges, rankings (Bradley-Terry, Elo), reference ratings, people's labels against judges, and the
preference outcomes of battles.

Part of the public API (see `engine.api`): plug-ins, built-in or not, import from here."""

from engine import stats
from engine.analyze import arena_style, people, reliability
from engine.analyze.outcomes import STYLE_FEATURES, human_outcomes, score_outcomes, style_vector
from engine.analyze.people import (
    Corrected,
    HumanHuman,
    PeopleAgreement,
    agreement_with_people,
    corrected_separability,
    human_human,
)
from engine.analyze.people_labels import SPLITS, HumanLabel, assign_splits, read_columns, read_labels
from engine.analyze.rankings import SCALE, Outcome, Ranking, bradley_terry, rank
from engine.analyze.reference import (
    RECORDED_TIE_GAP,
    ItemRating,
    ModelScore,
    ReferenceResult,
    item_rating,
    judge_label,
    pair_agreement,
    rating_of,
    recorded_agreement,
    subset_of,
    subset_rankings,
    subset_scores,
)
from engine.analyze.reliability import JudgeAgreement, JudgeReliability, TwoOrders, combine_orders

__all__ = [
    "RECORDED_TIE_GAP",
    "SCALE",
    "SPLITS",
    "STYLE_FEATURES",
    "Corrected",
    "HumanHuman",
    "HumanLabel",
    "ItemRating",
    "JudgeAgreement",
    "JudgeReliability",
    "ModelScore",
    "Outcome",
    "PeopleAgreement",
    "Ranking",
    "ReferenceResult",
    "TwoOrders",
    "agreement_with_people",
    "arena_style",
    "assign_splits",
    "bradley_terry",
    "combine_orders",
    "corrected_separability",
    "human_human",
    "human_outcomes",
    "item_rating",
    "judge_label",
    "pair_agreement",
    "people",
    "rank",
    "rating_of",
    "read_columns",
    "read_labels",
    "recorded_agreement",
    "reliability",
    "score_outcomes",
    "stats",
    "style_vector",
    "subset_of",
    "subset_rankings",
    "subset_scores",
]
