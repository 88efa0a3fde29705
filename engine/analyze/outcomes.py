"""Pairwise outcomes from a dataset, for the ranking module: human preference labels between two models,
or per-item comparisons of recorded scores across many models. Each outcome carries the style covariates
Chatbot Arena's style control uses (`engine.analyze.arena_style`: cl100k tokens, headers, list items and bold
spans, each (a − b) / (a + b + 1), counted exactly as lmarena counts them), and the unit it was observed on (its
item, the prompt), which the bootstrap resamples."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from engine.analyze.arena_style import FEATURES as STYLE_FEATURES
from engine.analyze.arena_style import style_vector
from engine.analyze.rankings import Outcome
from engine.datasets import Item

__all__ = ["STYLE_FEATURES", "Features", "human_outcomes", "rating_outcomes", "score_outcomes", "style_vector",
           "subset_of"]

# an outcome's covariates from its two answers' text (A's, then B's; None where a model has no answer)
Features = Callable[[str | None, str | None], tuple[float, ...]]


def human_outcomes(items: list[Item], models: list[str], features: Features | None = style_vector) -> list[Outcome]:
    """Every labelled comparison between two of `models`: each battle a battle log holds on an item, or (two
    models, a wide table) the item's one label. The unit is the item, so battles on one prompt resample
    together; the turns of a conversation share its battle, which counts once, its unit the conversation and
    its style read off each model's answers in every turn. The covariates are `features` of the two answers
    (Arena's style features unless told otherwise); None leaves them empty, for rankings that control for
    nothing (measuring reads every answer)."""
    units: dict[str, list[Item]] = {}
    for item in items:
        units.setdefault(item.cluster, []).append(item)
    out = []
    for unit, group in units.items():
        item = group[0]  # a conversation's battle is on every one of its turns
        pairs = ([(b.model_a, b.model_b) for b in item.battles if b.model_a in models and b.model_b in models]
                 if item.battles else [tuple(models)] if len(models) == 2 else [])
        for model_a, model_b in pairs:
            label = item.label(model_a, model_b)
            if label not in (model_a, model_b, "tie"):
                continue
            share = item.label_share(model_a, model_b)  # a graded annotator's share of the win, where it gives one
            score = share if share is not None else 0.5 if label == "tie" else float(label == model_a)
            style = features(*(_answers(group, model) for model in (model_a, model_b))) if features else ()
            out.append(Outcome(model_a, model_b, score, style=style, unit=unit))
    return out


def _answers(group: list[Item], model: str) -> str | None:
    """`model`'s answers in a unit: a prompt's one answer, or a conversation's turns in order."""
    texts = [item.outputs[model] for item in group if model in item.outputs]
    return "\n\n".join(texts) if len(texts) == len(group) else None


def score_outcomes(items: list[Item], models: list[str], tie_gap: float = 1.0,
                   features: Features | None = style_vector) -> list[Outcome]:
    """Per-item comparisons of the scores a dataset records for each model (`features`: as `human_outcomes`).
    A turn scored on its own is its own comparison, in its conversation's unit."""
    texts = {(item.id, model): text for item in items for model, text in item.outputs.items()} if features else {}
    return rating_outcomes({item.id: item.scores for item in items}, models, texts, tie_gap,
                           {item.id: item.cluster for item in items}, features or style_vector)


def rating_outcomes(ratings: dict[str, dict[str, float]], models: list[str], texts: dict[tuple[str, str], str],
                    tie_gap: float, units: dict[str, str] | None = None,
                    features: Features = style_vector) -> list[Outcome]:
    """`ratings`: item → model → score. Every pair of models on every item both were scored on, the higher
    score winning; a gap below `tie_gap` is a tie. `texts` ((item, model) → answer) gives the covariates
    (`features` of the two answers; none without both texts); `units` (item → the unit the bootstrap
    resamples: its conversation) defaults to the item."""
    units = units or {}
    out = []
    for item_id, scored in ratings.items():
        present = [m for m in models if m in scored]
        for a, b in itertools.combinations(present, 2):
            gap = scored[a] - scored[b]
            score = 0.5 if abs(gap) < tie_gap else float(gap > 0)
            out.append(Outcome(a, b, score, style=features(texts.get((item_id, a)), texts.get((item_id, b))),
                               unit=units.get(item_id, item_id)))
    return out


def subset_of(difficulty: str | None) -> str:
    """The subset an item is scored and ranked in: Vibe-Eval's categories read "difficulty-normal" /
    "difficulty-hard", reported as normal / hard; an item with none is "unlabelled"."""
    if not difficulty:
        return "unlabelled"
    return difficulty.removeprefix("difficulty-")
