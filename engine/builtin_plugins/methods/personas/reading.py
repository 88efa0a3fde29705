"""What the personas method reads from its judges' written answers beyond a verdict: the confidence a persona
judge attaches to it, whether a rewrite kept the task (the LLM preservation check) and a profile's weights.
Each is read from the judge's JSON answer where it answered in its schema, else from the last matching line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from engine.api.judging import answer_field, last_score

SAME_TASK = re.compile(r"same\s+task\W{0,6}\s*(yes|no)\b", re.IGNORECASE)
CONFIDENCE = re.compile(r"confidence\W{0,6}\s*([1-5])(?:\s*/\s*5)?\b", re.IGNORECASE)


def parse_confidence(text: str) -> int | None:
    """The 1–5 confidence a persona judge attaches to its verdict; None if missing."""
    return last_score(CONFIDENCE, text, "confidence")


def parse_same_task(text: str) -> bool | None:
    """An LLM preservation check's answer: True (same task), False, or None when it gave none."""
    structured = answer_field(text, "same_task")
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
