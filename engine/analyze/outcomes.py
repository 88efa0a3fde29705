"""Pairwise outcomes from a dataset, for the ranking module: human preference labels between two models,
or per-item comparisons of recorded scores across many models. Each outcome carries the style covariates
Chatbot Arena's style control uses: the normalized differences in answer length and markdown elements."""

from __future__ import annotations

import itertools

from engine.analyze.rankings import Outcome
from engine.datasets import Item
from engine.judges.metrics import BOLD, HEADING_LINE, LIST_LINE, words

STYLE_FEATURES = ("length", "markdown")


def style_vector(text_a: str | None, text_b: str | None) -> tuple[float, ...]:
    """(len_a − len_b)/(len_a + len_b) in words, and the same for headings + list items + bold spans."""
    if text_a is None or text_b is None:
        return ()

    def markdown(text: str) -> int:
        return len(HEADING_LINE.findall(text)) + len(LIST_LINE.findall(text)) + len(BOLD.findall(text))

    la, lb = len(words(text_a)), len(words(text_b))
    ma, mb = markdown(text_a), markdown(text_b)
    return ((la - lb) / max(1, la + lb), (ma - mb) / max(1, ma + mb))


def human_outcomes(items: list[Item], model_a: str, model_b: str) -> list[Outcome]:
    out = []
    for item in items:
        if item.preference not in (model_a, model_b, "tie"):
            continue
        score = 0.5 if item.preference == "tie" else float(item.preference == model_a)
        out.append(Outcome(model_a, model_b, score, style=style_vector(item.outputs.get(model_a),
                                                                        item.outputs.get(model_b))))
    return out


def score_outcomes(items: list[Item], models: list[str], tie_gap: float = 1.0) -> list[Outcome]:
    """Per-item comparisons of the scores a dataset records for each model."""
    texts = {(item.id, model): text for item in items for model, text in item.outputs.items()}
    return rating_outcomes({item.id: item.scores for item in items}, models, texts, tie_gap)


def rating_outcomes(ratings: dict[str, dict[str, float]], models: list[str], texts: dict[tuple[str, str], str],
                    tie_gap: float) -> list[Outcome]:
    """`ratings`: item → model → score. Every pair of models on every item both were scored on, the higher
    score winning; a gap below `tie_gap` is a tie. `texts` ((item, model) → answer) gives the style vector."""
    out = []
    for item_id, scored in ratings.items():
        present = [m for m in models if m in scored]
        for a, b in itertools.combinations(present, 2):
            gap = scored[a] - scored[b]
            score = 0.5 if abs(gap) < tie_gap else float(gap > 0)
            out.append(Outcome(a, b, score, style=style_vector(texts.get((item_id, a)), texts.get((item_id, b)))))
    return out
