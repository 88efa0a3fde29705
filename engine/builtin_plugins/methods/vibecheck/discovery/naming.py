"""A name a person can read for each measure of meaning discovery found, proposed by an LLM judge the spec names
(`discover: {sentences: true, namer: <judge>}`) from the example sentences that define the measure.

The words discovery names a measure by (`meaning_reassured_worry_tricky`) are the content words its examples
share; a reader still has to read the examples to see the behaviour. The namer reads them and answers with one
short line ("Reassures the user before answering"), which becomes the vibe's name (in snake case) and heads its
high end. Only the name and the description change: the measure, and so every number, is the one discovery
found. The vibe's origin says which judge named it. The namer is asked through the LLM proposer's `Caller`: each
request a content-hashed task through the run's scheduler and cache, so a re-run asks nothing again. An answer
that gives no usable line, or a name another vibe already has, leaves the vibe as discovery named it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import replace

from engine.api.execution import Cache
from engine.api.judging import sentence_meaning
from engine.api.spec import Judge, Vibe
from engine.builtin_plugins.methods.vibecheck.discovery.llm import Caller

SYSTEM = "You name recurring behaviours of language models in a few plain words."
USER = ("Each sentence below comes from a different answer by the same model, and each is one way of doing the "
        "same thing:\n{examples}\n\nWhat do these sentences have in common? Reply with one short line of at most "
        "eight words that names the behaviour, written as what the model does (for example: Reassures the user "
        "before answering). Reply with that line only.")
MAX_WORDS = 8
_MARK = re.compile(r"^\s*(?:[-+•>#]+|\d+[.)])\s+")  # a list mark, a heading mark or a quote mark
_LEAD_IN = re.compile(r"^\s*(?:name|behaviou?r)\s*:\s*", re.IGNORECASE)


def named(proposed: Sequence[tuple[Vibe, str]], namer: Judge, cache: Cache,
          declared: Collection[str] = ()) -> list[tuple[Vibe, str]]:
    """`proposed` (vibe, origin) with each measure of meaning renamed from the namer's answer, the others as they
    were, in order; never to a name in `declared` (the spec's own vibes) or another proposed vibe's."""
    measures = [vibe for vibe, _ in proposed if sentence_meaning.is_measure(vibe.metric or "")]
    answers = Caller(namer, cache, axes=False)([_request(vibe) for vibe in measures]) if measures else []
    lines = {vibe.name: name_line(answer) for vibe, answer in zip(measures, answers, strict=True)}
    taken = {vibe.name for vibe, _ in proposed} | set(declared)
    out = []
    for vibe, origin in proposed:
        line = lines.get(vibe.name)
        slug = _slug(line) if line else ""
        if line and slug and slug not in taken:
            taken.add(slug)
            vibe = replace(vibe, name=slug, high=f"{line}: {vibe.high[0].lower()}{vibe.high[1:]}")
            origin = f"{origin}, named by the LLM judge {namer.name}"
        out.append((vibe, origin))
    return out


def _request(vibe: Vibe) -> list[dict[str, str]]:
    """The namer's messages for one measure: its examples, one a line."""
    examples = "\n".join(f"- {e}" for e in sentence_meaning.parse(str(vibe.metric))[1])
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER.format(examples=examples)}]


def name_line(answer: str) -> str | None:
    """The answer's first line with words in it, without list marks, emphasis, quotes or a "Name:" lead-in; None
    when it has none or more than `MAX_WORDS` words (an explanation, not a name)."""
    for raw in answer.splitlines():
        line = re.sub(r"[*_`]", "", _MARK.sub("", raw))
        line = _LEAD_IN.sub("", line).strip().strip("\"'“”").rstrip(".").strip()
        if re.search(r"[A-Za-z]", line):
            return line[0].upper() + line[1:] if len(line.split()) <= MAX_WORDS else None
    return None


def _slug(line: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", line.lower()).strip("_")[:60].strip("_")
