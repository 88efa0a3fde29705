"""Measurable text properties: the offline judges' evidence and the statistical proposer's features.

Each metric maps one response to a float. Rates are per 100 words so that long and short answers compare
on density, not on length (length itself is its own metric). The lexicons are short, explicit word lists:
a reader can see exactly what "hedging" counted.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from engine.judges import sentence_meaning

WORD = re.compile(r"[A-Za-z']+")
SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
LIST_LINE = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+", re.M)
HEADING_LINE = re.compile(r"^\s*(?:#{1,6}\s+\S|[^\n]{1,60}:\s*$)", re.M)
BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
CODE_BLOCK = re.compile(r"```")
INLINE_CODE = re.compile(r"`[^`\n]+`")
EMOJI = re.compile("[\U0001f300-\U0001faff\U00002600-\U000027bf\U0001f000-\U0001f2ff]")
VOWEL_GROUPS = re.compile(r"[aeiouy]+")
TOKEN = re.compile(r"\w+|[!?*#]")
SHARED_ANSWERS = 256  # answers whose words are kept while every metric measures them

HEDGES = frozenset("""might may perhaps possibly probably likely unlikely seems appear appears suggest suggests
generally typically usually often arguably somewhat approximately roughly around depends could""".split())
REFUSALS = ("i can't", "i cannot", "i'm sorry", "i am sorry", "i won't", "i'm not able", "i am not able",
            "as an ai", "i'm unable", "i am unable", "not appropriate", "i apologize")
FIRST_SECOND = frozenset("i me my mine we us our ours you your yours i'm i've i'll we're you're let's".split())
WARM = frozenset("""glad happy love great wonderful lovely awesome amazing fantastic hope enjoy excited delighted
thanks thank welcome sure absolutely feel friend friendly dear hey hi hello exciting fun delightful pleasure
wow yay appreciate cheers warm kind""".split())
FORMAL = frozenset("""therefore furthermore moreover however consequently thus hence accordingly regarding
pursuant additionally nevertheless whereas""".split())


def words(text: str) -> list[str]:
    """The lower-cased words of a text, as the metrics count them."""
    return WORD.findall(text.lower())


@functools.lru_cache(maxsize=SHARED_ANSWERS)
def _words(text: str) -> tuple[str, ...]:
    """`words`, kept for the last few texts: the metrics of one answer share its words instead of each finding
    them again (the measure pass measures a few hundred answers on every metric before moving on)."""
    return tuple(WORD.findall(text.lower()))


def _per_100_words(count: int, text: str) -> float:
    return 100.0 * count / max(1, len(_words(text)))


def _lines(text: str) -> int:
    return max(1, sum(1 for line in text.splitlines() if line.strip()))


def _sentences(text: str) -> int:
    return max(1, len(SENTENCE_END.findall(text)))


def _syllables(word: str) -> int:
    return max(1, len(VOWEL_GROUPS.findall(word)) - int(word.endswith("e") and len(word) > 2))


def flesch_reading_ease(text: str) -> float:
    ws = _words(text)
    if not ws:
        return 0.0
    syllables = sum(_syllables(w) for w in ws)
    return 206.835 - 1.015 * len(ws) / _sentences(text) - 84.6 * syllables / len(ws)


def _lexicon_count(lexicon: frozenset[str]) -> Callable[[str], int]:
    return lambda text: sum(w in lexicon for w in _words(text))


# What each rate among the metrics counts in an answer, before it is divided by the answer's lines or words: a
# change that only adds text (an opener, a closer) moves a rate and leaves its count as it was (`occurrences`)
COUNTED: dict[str, Callable[[str], int]] = {
    "list_density": lambda t: len(LIST_LINE.findall(t)),
    "heading_density": lambda t: len(HEADING_LINE.findall(t)),
    "bold_density": lambda t: len(BOLD.findall(t)),
    "emoji": lambda t: len(EMOJI.findall(t)),
    "exclamations": lambda t: t.count("!"),
    "questions_to_user": lambda t: t.count("?"),
    "hedging": _lexicon_count(HEDGES),
    "personal_pronouns": _lexicon_count(FIRST_SECOND),
    "warmth": _lexicon_count(WARM),
    "formal_connectives": _lexicon_count(FORMAL),
}


def _per_line(name: str) -> Callable[[str], float]:
    count = COUNTED[name]
    return lambda text: count(text) / _lines(text)


def _per_100(name: str) -> Callable[[str], float]:
    count = COUNTED[name]
    return lambda text: _per_100_words(count(text), text)


# name: (function, what a low value looks like, what a high value looks like) -- the two texts become the
# low/high definitions of a vibe built on the metric, so they say exactly what is measured.
METRICS: dict[str, tuple[Callable[[str], float], str, str]] = {
    "length_words": (lambda t: float(len(_words(t))), "Short answers with few words.",
                     "Long answers with many words."),
    "words_per_sentence": (lambda t: len(_words(t)) / _sentences(t), "Short sentences.", "Long sentences."),
    "list_density": (_per_line("list_density"), "Little or nothing in bullet or numbered lists.",
                     "Much of the answer in bullet or numbered lists."),
    "heading_density": (_per_line("heading_density"), "No headings or section labels.",
                        "Many headings and section labels."),
    "bold_density": (_per_100("bold_density"), "No bold emphasis.",
                     "Frequent bold emphasis."),
    "code_blocks": (lambda t: len(CODE_BLOCK.findall(t)) / 2 + 0.25 * len(INLINE_CODE.findall(t)),
                    "No code formatting.", "Code blocks and inline code."),
    "emoji": (_per_100("emoji"), "No emoji.", "Uses emoji."),
    "exclamations": (_per_100("exclamations"), "No exclamation marks.",
                     "Frequent exclamation marks."),
    "questions_to_user": (_per_100("questions_to_user"), "Asks the user nothing.",
                          "Asks the user questions."),
    "hedging": (_per_100("hedging"), "Flat, certain statements.",
                "Hedged statements (might, perhaps, usually, ...)."),
    "refusal": (lambda t: float(sum(p in t.lower() for p in REFUSALS)), "Complies without apology or refusal.",
                "Apologizes or refuses (I'm sorry, I cannot, ...)."),
    "personal_pronouns": (_per_100("personal_pronouns"), "Impersonal; few first- and second-person pronouns.",
                          "Personal; many first- and second-person pronouns (I, we, you)."),
    "warmth": (_per_100("warmth"), "Neutral wording.", "Warm, friendly wording (glad, great, hope, thanks, ...)."),
    "formal_connectives": (_per_100("formal_connectives"), "Few formal connectives.",
                           "Formal connectives (therefore, moreover, ...)."),
    "readability": (flesch_reading_ease, "Hard to read (low Flesch reading ease).",
                    "Easy to read (high Flesch reading ease)."),
    "paragraphs": (lambda t: float(len([p for p in re.split(r"\n\s*\n", t) if p.strip()])), "One block of text.",
                   "Many paragraphs."),
}

PHRASES_PREFIX = "phrases:"  # a metric named "phrases:a|b|c" counts those phrases in an answer


def tokens(text: str) -> list[str]:
    """Lower-cased words and the punctuation that carries style (! ? * #): the unit of phrase metrics."""
    return TOKEN.findall(text.lower())


@functools.lru_cache(maxsize=SHARED_ANSWERS)
def _joined_tokens(text: str) -> tuple[str, int, dict[str, int]]:
    """A text's tokens, space-separated with a space at each end, how many there are, and the counts of the
    phrases looked for in it so far: kept for the last few texts, like `_words`, so the phrase lexicons of one
    answer share its tokens, and a lexicon's habits (discovery offers them beside it: lexicons of its own
    phrases) share its counts. The counts go with the text when it leaves the cache."""
    found = tokens(text)
    return " " + " ".join(found) + " ", len(found), {}


def phrase_rate(phrases: str, text: str) -> float:
    """Occurrences of any of the phrases (token n-grams, `|`-separated) per 100 tokens."""
    return 100.0 * phrase_hits(phrases, text) / max(1, _joined_tokens(text)[1])


def phrase_hits(phrases: str, text: str) -> int:
    """Occurrences of any of the phrases in the text."""
    joined, _, counts = _joined_tokens(text)
    hits = 0
    for padded in _padded(phrases):
        if padded not in counts:
            counts[padded] = joined.count(padded)
        hits += counts[padded]
    return hits


@functools.lru_cache(maxsize=1024)
def _padded(phrases: str) -> tuple[str, ...]:
    return tuple(f" {p} " for p in phrases.split("|"))



def is_metric(name: str) -> bool:
    """Whether `name` is a measure a metric judge can take: a built-in metric, a phrases list or a measure of
    sentences' meaning."""
    return (name in METRICS or (name.startswith(PHRASES_PREFIX) and len(name) > len(PHRASES_PREFIX))
            or sentence_meaning.is_measure(name))


def occurrences(metric: str, text: str) -> float | None:
    """What a rate counts in the text before it is divided by the text's length (`COUNTED`; a phrase list's
    hits); None for a metric that is no rate (length, a count already, readability)."""
    if metric.startswith(PHRASES_PREFIX):
        return float(phrase_hits(metric[len(PHRASES_PREFIX):], text))
    count = COUNTED.get(metric)
    return None if count is None else float(count(text))


def measure(metric: str, text: str) -> float:
    """A metric by name; `phrases:a b|c d` counts the listed token n-grams per 100 tokens, and
    `sentences:<threshold>|<example>|...` the sentences that say something like the examples
    (`sentence_meaning`)."""
    if metric.startswith(PHRASES_PREFIX):
        return phrase_rate(metric[len(PHRASES_PREFIX):], text)
    if metric.startswith(sentence_meaning.PREFIX):
        return float(sentence_meaning.counts(metric, [text])[0])
    return METRICS[metric][0](text)
