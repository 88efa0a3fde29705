"""Reading a judge's written answer into what it says, strictly but forgiving of formatting: any judge that
writes its verdicts, ratings or profiles (an LLM judge, or a plug-in kind that answers in text) is read here.

A judge answering in its schema (`answers.py`) gives a JSON object, read by field. In free text, the
prompts ask for a final `Verdict: 1 | 2 | N/A | tie` line; models wrap it in markdown, change case, or write
"Answer 2". The last verdict-looking line wins. Anything else is invalid: recorded with its raw text,
counted in the report, scored 0, and never allowed to crash a run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from engine.judges import answers

VERDICT = re.compile(r"verdict\W{0,6}\s*(?:answer|output|response)?\s*(1|2|n\s*/\s*a|none|tie|equal)\b",
                     re.IGNORECASE)
RATING = re.compile(r"rating\W{0,6}\s*([1-5])(?:\s*/\s*5)?\b", re.IGNORECASE)
SAME_TASK = re.compile(r"same\s+task\W{0,6}\s*(yes|no)\b", re.IGNORECASE)
CONFIDENCE = re.compile(r"confidence\W{0,6}\s*([1-5])(?:\s*/\s*5)?\b", re.IGNORECASE)


def _field(text: str, name: str) -> object:
    """A field of a JSON answer; None when the answer is not a JSON object holding it."""
    doc = answers.read(text)
    return None if doc is None else doc.get(name)


def parse_verdict(text: str) -> str | None:
    """'1', '2' or '0' (N/A, tie, equal); None when no verdict can be found."""
    structured = _field(text, "verdict")
    found = [structured] if isinstance(structured, str) else VERDICT.findall(text or "")
    if not found:
        return None
    last = found[-1].lower().replace(" ", "")
    if last in ("1", "2"):
        return last
    return "0" if last in ("n/a", "none", "tie", "equal") else None


def verdict_to_score(verdict: str | None, order: str) -> int | None:
    """Map a parsed verdict to A/B terms: +1 favours output A, −1 output B, 0 neither, None invalid.
    `order` is "ab" when A was shown as answer 1, "ba" when B was."""
    if verdict is None:
        return None
    if verdict == "0":
        return 0
    first_shown_wins = verdict == "1"
    return (1 if first_shown_wins else -1) * (1 if order == "ab" else -1)


def order_verdicts(first: str, second: str) -> tuple[int | None, int | None]:
    """A judge asked in both orders (`first` shows A's answer as answer 1, `second` B's): each answer's
    verdict in A/B terms (None: no verdict found)."""
    return verdict_to_score(parse_verdict(first), "ab"), verdict_to_score(parse_verdict(second), "ba")


def _last_score(pattern: re.Pattern[str], text: str, name: str) -> int | None:
    """A JSON answer's 1–5 field `name`, else the last 1–5 value the pattern finds; None when there is none
    (an out-of-range number never matches)."""
    structured = _field(text, name)
    if isinstance(structured, int) and not isinstance(structured, bool):
        return structured if 1 <= structured <= 5 else None
    found = pattern.findall(text or "")
    return int(found[-1]) if found else None


def parse_rating(text: str) -> int | None:
    """The 1–5 rating of a reference-based judgment; None if missing or out of range."""
    return _last_score(RATING, text, "rating")


def rating_explanation(text: str) -> str:
    """The judge's reasoning: its `explanation` field, or what precedes its last rating line, without an
    "Explanation:" label."""
    structured = _field(text, "explanation")
    if isinstance(structured, str):
        return structured.strip()
    found = list(RATING.finditer(text or ""))
    head = (text[: found[-1].start()] if found else text or "").strip()
    return re.sub(r"^\W*explanation\W*", "", head, flags=re.IGNORECASE).strip()


def verdict_reason(text: str) -> str:
    """A pairwise judge's reason: its `reasoning` field, or what precedes its last verdict line."""
    structured = _field(text, "reasoning")
    if isinstance(structured, str):
        return structured.strip()
    found = list(VERDICT.finditer(text or ""))
    return (text[: found[-1].start()] if found else text or "").strip()


def parse_confidence(text: str) -> int | None:
    """The 1–5 confidence a persona judge attaches to its verdict; None if missing."""
    return _last_score(CONFIDENCE, text, "confidence")


def parse_same_task(text: str) -> bool | None:
    """An LLM preservation check's answer: True (same task), False, or None when it gave none."""
    structured = _field(text, "same_task")
    found = [structured] if isinstance(structured, str) else SAME_TASK.findall(text or "")
    return found[-1].lower() == "yes" if found else None


def parse_profile(text: str, dimensions: Iterable[str]) -> tuple[dict[str, int], str | None] | None:
    """(weights, style) from an LLM-written profile: the JSON object in the answer, weights kept for the
    known dimensions when they are integers 1–5. None when there is no such object or no usable weight."""
    start, end = (text or "").find("{"), (text or "").rfind("}")
    try:
        doc = json.loads(text[start:end + 1]) if 0 <= start < end else None
    except json.JSONDecodeError:
        return None
    if not isinstance(doc, dict) or not isinstance(raw := doc.get("weights"), dict):
        return None
    weights = {d: raw[d] for d in dimensions
               if isinstance(raw.get(d), int) and not isinstance(raw.get(d), bool) and 1 <= raw[d] <= 5}
    style = doc.get("style") if isinstance(doc.get("style"), str) else None
    return (weights, style) if weights else None
