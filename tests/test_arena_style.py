"""Chatbot Arena's style control as lmarena publishes it (FastChat's `add_markdown_info.py` and `rating_systems.py`,
Arena-Hard-Auto's token counts): the counts by hand on an answer where vibe's own counts differ, the token counts
against Arena-Hard's published average, and the penalized fit at its optimum."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from engine.analyze import arena_style
from engine.judges.metrics import BOLD, HEADING_LINE, LIST_LINE

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"

ANSWER = """Here is the plan:
# Title
## Sub
###NoSpace
1. one
2) two
- dash
• bullet
  * nested star
**bold** and __also__ and **not
closed**
```python
# a comment, not a header
- not a list
**not bold**
```
Summary:
"""


def test_markdown_is_counted_as_lmarena_counts_it() -> None:
    """Headers: "# Title" and "## Sub" (a "#" run must be followed by whitespace; "Here is the plan:" and
    "Summary:" are not headers). Lists: "1. one", "- dash" and "  * nested star" ("2) two" and "• bullet" are not
    Arena's list items). Bold: "**bold**" and "__also__" (a span may not cross a line). The code block's insides are
    cut first, so its "#", "-" and "**" count for nothing. vibe's own metrics count 5, 6 and 3."""
    assert arena_style.markdown_counts(ANSWER) == (2, 3, 2)
    assert (len(HEADING_LINE.findall(ANSWER)), len(LIST_LINE.findall(ANSWER)), len(BOLD.findall(ANSWER))) == (5, 6, 3)


def test_tokens_are_cl100k_base_as_arena_hard_counts_them() -> None:
    """tiktoken's own example ("hello world" is tokens 15339, 1917), and the 500 gpt-4-0314 answers of
    Arena-Hard v0.1: their mean length in these tokens is the leaderboard's published avg_tokens, 423."""
    assert arena_style._encoding().encode("hello world") == [15339, 1917]
    rows = [json.loads(line) for line in (SHARED / "arena" / "arena_hard_v0.1" / "model_answer"
                                          / "gpt-4-0314.jsonl").open(encoding="utf-8")]
    mean = np.mean([arena_style.tokens(r["messages"][1]["content"]["answer"]) for r in rows])
    with (SHARED / "arena" / "arena_hard_v0.1" / "arena_hard_leaderboard_20240731.csv").open(newline="") as fh:
        published = next(float(r["avg_tokens"]) for r in csv.DictReader(fh) if r["model"] == "gpt-4-0314")
    assert len(rows) == 500 and round(mean) == published == 423.0


def test_a_battle_s_features_are_the_ratio_with_one_added() -> None:
    """A: 2 headers, 3 list items, 2 bold spans; B: plain text with none. (a − b) / (a + b + 1) per count."""
    a, b = arena_style.counts(ANSWER), arena_style.counts("Just words.")
    assert b[1:] == (0, 0, 0)
    assert arena_style.style_vector(ANSWER, "Just words.") == pytest.approx(
        [(a[0] - b[0]) / (a[0] + b[0] + 1), 2 / 3, 3 / 4, 2 / 3])
    assert arena_style.style_vector(None, "x") == ()


def test_the_penalized_fit_sits_at_its_optimum_and_finds_a_planted_style_effect() -> None:
    """Three models of known strength, battles whose winner also leans toward the longer answer: the fitted
    parameters zero the gradient of Arena's objective (logistic loss + 0.25 ‖θ‖², checked by finite differences
    of the objective written out here), and the length coefficient comes out positive and the others near 0."""
    rng = np.random.default_rng(3)
    models = ["a", "b", "c"]
    truth = {"a": 0.2, "b": 0.0, "c": -0.2}
    n = 3000
    pick = np.array([rng.choice(3, 2, replace=False) for _ in range(n)])
    style = rng.normal(size=(n, 4))
    logit = np.array([np.log(10) * (truth[models[i]] - truth[models[j]]) for i, j in pick]) + 0.8 * style[:, 0]
    score = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(float)
    model_a, model_b = [models[i] for i in pick[:, 0]], [models[j] for j in pick[:, 1]]
    fitted = arena_style.fit(model_a, model_b, style, score, models)
    x = (style - style.mean(axis=0)) / style.std(axis=0)

    def objective(theta: np.ndarray) -> float:
        z = np.log(10) * (theta[pick[:, 0]] - theta[pick[:, 1]]) + x @ theta[3:]
        p = 1 / (1 + np.exp(-z))
        return float(-np.sum(score * np.log(p) + (1 - score) * np.log(1 - p)) + 0.25 * theta @ theta)

    theta = np.r_[[fitted.strengths[m] for m in models], fitted.coefficients]
    step = 1e-5
    gradient = [(objective(theta + step * e) - objective(theta - step * e)) / (2 * step) for e in np.eye(7)]
    assert np.abs(gradient).max() < 1e-2
    assert fitted.coefficients[0] == pytest.approx(0.8, abs=0.15) and np.abs(fitted.coefficients[1:]).max() < 0.1
    assert fitted.strengths["a"] > fitted.strengths["b"] > fitted.strengths["c"]
