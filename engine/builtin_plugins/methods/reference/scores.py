"""Vibe-Eval reference scoring: each model's answers rated 1–5 against gold references, reported as a
percentage overall and per difficulty, with bootstrap intervals, plus the pairwise preferences those
ratings imply and the Bradley–Terry / Elo rankings fitted on them.

Score % = mean over items of 25·(r̄ − 1), where r̄ is the mean of an item's valid repeat ratings (Vibe-Eval
averages three). "all" pools every item, so it is the item-weighted mean of the subsets, as the paper
reports. An LLM rating that cannot be parsed is left out of its item's mean and counted; an item with no
valid rating is left out of the model's score and its n.

When the dataset also carries recorded ratings of the same answers (Vibe-Eval ships Reka Core's), the
result reports them on the same scale and how well this judge agrees with them: Spearman's ρ over every
(item, model) rating and Kendall's τ over the models' scores.

The reference method's analysis (`analysis.py` beside this module) runs these over an analysis' ratings.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import kendalltau, spearmanr

from engine.api.analysis import Outcome, Ranking, rank, rating_outcomes, stats
from engine.api.judging import kind_of

if TYPE_CHECKING:
    from engine.api.spec import Judge

ALL = "all"
RANKING_ROUNDS = 200  # bootstrap rounds of the rankings fitted on the derived preferences
RECORDED_TIE_GAP = 2.0  # recorded ratings are whole points: Vibe-Eval's tie, a gap no stronger than the weakest


@dataclass(frozen=True)
class SubsetScore:
    subset: str  # "all" or a difficulty (normal, hard, …)
    n: int
    score: float  # percent, 0–100
    ci_low: float
    ci_high: float


@dataclass
class ModelScore:
    model: str
    subsets: list[SubsetScore]  # "all" first
    invalid: int = 0  # unparseable ratings
    recorded: list[SubsetScore] = field(default_factory=list)  # the dataset's own ratings, same items


@dataclass(frozen=True)
class ItemRating:
    item_id: str
    subset: str
    model: str
    rating: float | None  # mean of the valid repeats
    repeats: tuple[float | None, ...]
    explanation: str
    recorded: float | None = None


@dataclass
class Agreement:
    """This judge against the dataset's recorded ratings."""

    item_spearman: float
    model_kendall: float
    n_ratings: int
    n_models: int


@dataclass(frozen=True)
class PairAgreement:
    """Vibe-Eval's agreement rate between this judge and the recorded ratings on one subset: the share of
    (prompt, model A, model B) comparisons where both prefer the same model, skipping those where either calls
    a tie; and how often each calls a tie."""

    subset: str
    rate: float | None
    n_compared: int
    n_pairs: int
    tie_rate: float  # this judge
    tie_rate_recorded: float


@dataclass
class ReferenceResult:
    analysis: str
    dataset: str
    judge: str
    judge_label: str
    repeats: int
    tie_gap: float
    scores: list[ModelScore]  # best overall score first
    ratings: list[ItemRating]
    rankings: list[Ranking] = field(default_factory=list)  # per subset (all, then each difficulty), per method
    agreement: Agreement | None = None
    ties: str = "drop"  # how ties enter the rankings
    pair_agreement: list[PairAgreement] = field(default_factory=list)
    recorded_rankings: list[Ranking] = field(default_factory=list)  # the same, from the recorded ratings
    recorded_tie_gap: float = RECORDED_TIE_GAP  # the gap under which the recorded ratings call a tie


def score_percent(ratings: list[float]) -> float:
    """Vibe-Eval's score: the mean of 25·(r − 1) over items, so 1 → 0% and 5 → 100%."""
    return float(np.mean([25.0 * (r - 1.0) for r in ratings])) if ratings else float("nan")


def subset_scores(per_item: dict[str, tuple[str, float]], rounds: int, seed: int,
                  units: dict[str, str] | None = None) -> list[SubsetScore]:
    """`per_item`: item id → (subset, mean rating). Percentile bootstrap over items, seeded, per subset; over
    whole conversations where `units` (item → its conversation) puts several items in one."""
    groups: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for item_id, (subset, rating) in per_item.items():
        unit = (units or {}).get(item_id, item_id)
        groups[ALL].append((rating, unit))
        groups[subset].append((rating, unit))
    out = []
    rng = np.random.default_rng(seed)
    for subset in [ALL, *sorted(g for g in groups if g != ALL)]:
        values = np.array([rating for rating, _ in groups[subset]])
        if not len(values):
            out.append(SubsetScore(subset, 0, float("nan"), float("nan"), float("nan")))
            continue
        boot = 25.0 * (stats.cluster_bootstrap_means(values, [unit for _, unit in groups[subset]], rng, rounds)
                       - 1.0) if rounds else None
        low, high = np.percentile(boot, [2.5, 97.5]) if boot is not None else (np.nan, np.nan)
        out.append(SubsetScore(subset, len(values), score_percent(list(values)), float(low), float(high)))
    return out


def subset_rankings(per_model: dict[str, dict[str, tuple[str, float]]], texts: dict[tuple[str, str], str],
                    tie_gap: float, models: list[str], ties: str, seed: int,
                    units: dict[str, str] | None = None) -> list[Ranking]:
    """Bradley–Terry and Elo on the derived preferences, over all prompts and then each difficulty, with
    bootstrap intervals that resample prompts. Every model is ranked on the same prompts, those each of them has
    a rating for: a model missing the hard prompts would otherwise be ranked on easier ones than the rest.
    Vibe-Eval fits only preferences stronger than a tie, hence the default `ties: drop`; with ties counted as
    half wins the ratings shrink toward each other."""
    rated = [m for m in models if per_model.get(m)]
    common = set.intersection(*(set(per_model[m]) for m in rated)) if rated else set()
    subsets = ["all", *sorted({sub for rows in per_model.values() for sub, _ in rows.values()})]
    out = []
    for subset in subsets:
        chosen = {m: {i: v for i, v in per_model[m].items() if i in common and (subset == "all" or v[0] == subset)}
                  for m in rated}
        outcomes = preference_outcomes(chosen, texts, tie_gap, units)
        if len(rated) < 2 or not any(o.score != 0.5 for o in outcomes):
            continue
        unit = "conversation" if units and len(set(units.values())) < len(units) else "prompt"
        for method in ("bradley_terry", "elo"):
            out.append(replace(rank(method, outcomes, rated, rounds=RANKING_ROUNDS, seed=seed, ties=ties,
                                    unit=unit), subset=subset))
    return out


def pair_agreement(ours: dict[str, dict[str, tuple[str, float]]], recorded: dict[str, dict[str, tuple[str, float]]],
                   tie_gap: float, recorded_gap: float = RECORDED_TIE_GAP) -> list[PairAgreement]:
    """See `PairAgreement`; one row for all prompts and one per difficulty. A gap under `tie_gap` is a tie in
    this judge's ratings, under `recorded_gap` in the recorded ones."""
    rows: dict[str, list[tuple[int, int]]] = defaultdict(list)  # subset -> (our sign, recorded sign)
    models = sorted(set(ours) & set(recorded))
    for i, a in enumerate(models):
        for b in models[i + 1:]:
            for item_id in sorted(set(ours[a]) & set(ours[b]) & set(recorded[a]) & set(recorded[b])):
                signs = []
                for source, least in ((ours, tie_gap), (recorded, recorded_gap)):
                    gap = source[a][item_id][1] - source[b][item_id][1]
                    signs.append(0 if abs(gap) < least else int(np.sign(gap)))
                rows["all"].append((signs[0], signs[1]))
                rows[ours[a][item_id][0]].append((signs[0], signs[1]))
    out = []
    for subset, pairs in rows.items():
        decided = [(x, y) for x, y in pairs if x and y]
        out.append(PairAgreement(subset, sum(x == y for x, y in decided) / len(decided) if decided else None,
                                 len(decided), len(pairs), sum(x == 0 for x, _ in pairs) / len(pairs),
                                 sum(y == 0 for _, y in pairs) / len(pairs)))
    return sorted(out, key=lambda r: (r.subset != "all", r.subset))


def judge_label(judge: Judge, repeats: int) -> str:
    """The judge as its kind describes it in the reference role, with the repeats a called judge's mean
    rating is taken over."""
    kind = kind_of(judge)
    return kind.describe(judge, "reference") + ("" if kind.offline else f", mean of {repeats} repeat(s)")


def preference_outcomes(per_model: dict[str, dict[str, tuple[str, float]]], texts: dict[tuple[str, str], str],
                        tie_gap: float, units: dict[str, str] | None = None) -> list[Outcome]:
    """The pairwise preferences the mean ratings imply (`per_model`: model → item → (subset, rating)). A
    gap below `tie_gap` rating points is a tie; the default, 2, is Vibe-Eval's: a one-point difference on the
    1–5 scale is no preference."""
    ratings: dict[str, dict[str, float]] = defaultdict(dict)
    for model, rated in per_model.items():
        for item_id, (_, rating) in rated.items():
            ratings[item_id][model] = rating
    return rating_outcomes(dict(sorted(ratings.items())), sorted(per_model), texts, tie_gap, units)


def recorded_agreement(rows: list[ItemRating], scores: list[ModelScore]) -> Agreement | None:
    paired = [(r.rating, r.recorded) for r in rows if r.rating is not None and r.recorded is not None]
    with_recorded = [s for s in scores if s.recorded]
    if len(paired) < 3 or len(with_recorded) < 2:
        return None
    ours, theirs = zip(*paired, strict=True)
    tau = kendalltau([s.subsets[0].score for s in with_recorded], [s.recorded[0].score for s in with_recorded])
    return Agreement(float(spearmanr(ours, theirs).statistic), float(tau.statistic), len(paired), len(with_recorded))
