"""Measurable text properties: the offline judges' evidence and the statistical proposer's features.

Each metric maps one response to a float. Rates are per 100 words so that long and short answers compare
on density, not on length (length itself is its own metric). The lexicons are short, explicit word lists:
a reader can see exactly what "hedging" counted.
"""

from __future__ import annotations

import re
from collections.abc import Callable

WORD = re.compile(r"[A-Za-z']+")
SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
LIST_LINE = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+", re.M)
HEADING_LINE = re.compile(r"^\s*(?:#{1,6}\s+\S|[^\n]{1,60}:\s*$)", re.M)
BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
CODE_BLOCK = re.compile(r"```")
INLINE_CODE = re.compile(r"`[^`\n]+`")
EMOJI = re.compile("[\U0001f300-\U0001faff\U00002600-\U000027bf\U0001f000-\U0001f2ff]")
VOWEL_GROUPS = re.compile(r"[aeiouy]+")

HEDGES = frozenset("""might may perhaps possibly probably likely unlikely seems appear appears suggest suggests
generally typically usually often arguably somewhat approximately roughly around depends could""".split())
REFUSALS = ("i can't", "i cannot", "i'm sorry", "i am sorry", "i won't", "i'm not able", "i am not able",
            "as an ai", "i'm unable", "i am unable", "not appropriate", "i apologize")
FIRST_SECOND = frozenset("i me my mine we us our ours you your yours i'm i've i'll we're you're let's".split())
WARM = frozenset("""glad happy love great wonderful lovely awesome amazing fantastic hope enjoy excited delighted
thanks thank welcome sure absolutely feel friend dear hey hi hello""".split())
FORMAL = frozenset("""therefore furthermore moreover however consequently thus hence accordingly regarding
pursuant additionally nevertheless whereas""".split())


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def _per_100_words(count: int, text: str) -> float:
    return 100.0 * count / max(1, len(words(text)))


def _lines(text: str) -> int:
    return max(1, sum(1 for line in text.splitlines() if line.strip()))


def _sentences(text: str) -> int:
    return max(1, len(SENTENCE_END.findall(text)))


def _syllables(word: str) -> int:
    return max(1, len(VOWEL_GROUPS.findall(word)) - int(word.endswith("e") and len(word) > 2))


def flesch_reading_ease(text: str) -> float:
    ws = words(text)
    if not ws:
        return 0.0
    syllables = sum(_syllables(w) for w in ws)
    return 206.835 - 1.015 * len(ws) / _sentences(text) - 84.6 * syllables / len(ws)


def _lexicon_rate(lexicon: frozenset[str]) -> Callable[[str], float]:
    return lambda text: _per_100_words(sum(w in lexicon for w in words(text)), text)


METRICS: dict[str, tuple[Callable[[str], float], str]] = {
    # name: (function, what a high value means, in words a vibe definition can reuse)
    "length_words": (lambda t: float(len(words(t))), "longer answers (more words)"),
    "words_per_sentence": (lambda t: len(words(t)) / _sentences(t), "longer sentences"),
    "list_density": (lambda t: len(LIST_LINE.findall(t)) / _lines(t), "more of the answer in bullet or numbered lists"),
    "heading_density": (lambda t: len(HEADING_LINE.findall(t)) / _lines(t), "more headings and section labels"),
    "bold_density": (lambda t: _per_100_words(len(BOLD.findall(t)), t), "more bold emphasis"),
    "code_blocks": (
        lambda t: CODE_BLOCK.findall(t).__len__() / 2 + 0.25 * len(INLINE_CODE.findall(t)),
        "more code blocks and inline code",
    ),
    "emoji": (lambda t: _per_100_words(len(EMOJI.findall(t)), t), "more emoji"),
    "exclamations": (lambda t: _per_100_words(t.count("!"), t), "more exclamation marks"),
    "questions_to_user": (lambda t: _per_100_words(t.count("?"), t), "more questions put back to the user"),
    "hedging": (_lexicon_rate(HEDGES), "more hedging words (might, perhaps, usually, ...)"),
    "refusal": (lambda t: float(sum(p in t.lower() for p in REFUSALS)), "more refusal or apology phrases"),
    "personal_pronouns": (_lexicon_rate(FIRST_SECOND), "more first- and second-person pronouns (I, we, you)"),
    "warmth": (_lexicon_rate(WARM), "more warm, friendly wording (glad, great, hope, thanks, ...)"),
    "formal_connectives": (_lexicon_rate(FORMAL), "more formal connectives (therefore, moreover, ...)"),
    "readability": (flesch_reading_ease, "easier to read (higher Flesch reading ease)"),
    "paragraphs": (lambda t: float(len([p for p in re.split(r"\n\s*\n", t) if p.strip()])), "more paragraphs"),
}


def measure(metric: str, text: str) -> float:
    return METRICS[metric][0](text)
