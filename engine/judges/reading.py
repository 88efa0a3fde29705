"""Reading a judge's written answer into what it says, strictly but forgiving of formatting: any judge that
writes its verdicts or ratings (an LLM judge, or a plug-in kind that answers in text) is read here.

A judge answering in its schema (`answers.py`) gives a JSON object, read by field. In free text, the
prompts ask for a final `Verdict: 1 | 2 | N/A | tie` line; models wrap it in markdown, change case, or write
"Answer 2". The last verdict-looking line wins. Anything else is invalid: recorded with its raw text,
counted in the report, scored 0, and never allowed to crash a run.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from engine.judges import answers
from engine.judges.verdicts import RatingScore

if TYPE_CHECKING:
    from engine.records import Result

VERDICT = re.compile(r"verdict\W{0,6}\s*(?:answer|output|response)?\s*(1|2|n\s*/\s*a|none|tie|equal)\b",
                     re.IGNORECASE)
RATING = re.compile(r"rating\W{0,6}\s*([1-5])(?:\s*/\s*5)?\b", re.IGNORECASE)


def answer_field(text: str, name: str) -> object:
    """A field of a JSON answer (a judge answering in its schema); None when the answer is not a JSON object
    holding it."""
    doc = answers.read(text)
    return None if doc is None else doc.get(name)


def parse_verdict(text: str) -> str | None:
    """'1', '2' or '0' (N/A, tie, equal); None when no verdict can be found."""
    structured = answer_field(text, "verdict")
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


def last_score(pattern: re.Pattern[str], text: str, name: str) -> int | None:
    """A JSON answer's 1–5 field `name`, else the last 1–5 value `pattern` (one group, the digit) finds in a
    free-text answer; None when there is none (an out-of-range number never matches)."""
    structured = answer_field(text, name)
    if isinstance(structured, int) and not isinstance(structured, bool):
        return structured if 1 <= structured <= 5 else None
    found = pattern.findall(text or "")
    return int(found[-1]) if found else None


def parse_rating(text: str) -> int | None:
    """The 1–5 rating of a reference-based judgment; None if missing or out of range."""
    return last_score(RATING, text, "rating")


def rating_explanation(text: str) -> str:
    """The judge's reasoning: its `explanation` field, or what precedes its last rating line, without an
    "Explanation:" label."""
    structured = answer_field(text, "explanation")
    if isinstance(structured, str):
        return structured.strip()
    found = list(RATING.finditer(text or ""))
    head = (text[: found[-1].start()] if found else text or "").strip()
    return re.sub(r"^\W*explanation\W*", "", head, flags=re.IGNORECASE).strip()


def rating_of(output: Any) -> float | None:
    """A rating result's 1–5 value: an offline judge records it (`RatingScore`), a judge that writes is read
    from its text; None where there is none."""
    if isinstance(output, dict):
        return RatingScore.from_json(output).value
    rating = parse_rating(str(output))
    return None if rating is None else float(rating)


def item_rating(raw: list[Result], llm: bool) -> tuple[float | None, tuple[float | None, ...], str, int]:
    """One answer's repeated ratings (`raw`, each a judge's result) read together: the mean of the valid ones,
    every one, an explanation (the recorded one offline, else the first valid answer's reasoning) and how many
    could not be read."""
    import numpy as np  # kept out of the commands that only read a spec

    repeats = tuple(rating_of(res.output) for res in raw)
    valid = [r for r in repeats if r is not None]
    if not llm:
        explanation = RatingScore.from_json(raw[0].output).explanation
    else:
        explanation = next((rating_explanation(str(res.output)) for res, r in zip(raw, repeats, strict=True)
                            if r is not None), str(raw[0].output)[:300] if raw else "")
    return (float(np.mean(valid)) if valid else None), repeats, explanation, len(repeats) - len(valid)


def verdict_reason(text: str) -> str:
    """A pairwise judge's reason: its `reasoning` field, or what precedes its last verdict line."""
    structured = answer_field(text, "reasoning")
    if isinstance(structured, str):
        return structured.strip()
    found = list(VERDICT.finditer(text or ""))
    return (text[: found[-1].start()] if found else text or "").strip()
