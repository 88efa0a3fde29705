"""Does discovery find what is there, and only that? Planted behaviours with known ground truth.

Exact arms: real answers (Arena's Llama-3-70B and opponent answers, AlpacaEval's gpt4_1106_preview and
Mixtral-8x7B answers), each prompt's two given to "x" and "y" by a coin flip, so the two sides differ in
nothing, then deterministic edits applied to y's answer on a stated share of pairs: one to four behaviours at
once, each at a rate of 30 to 100%.
- Unlisted arm: behaviours no metric and no built-in lexicon names, in wording that varies from answer to
  answer: an analogy after the first paragraph, a closing offer of more detail, an assumption stated first,
  citations in a fixed style with a sources line, a summary table at the end (no edit adds a paragraph, so the
  paragraph count does not give them away). What discovery finds here it finds from the data (mined phrases).
- Listed arm: behaviours that coincide with discovery's own metrics under other names (a closing follow-up
  question = questions_to_user, an apology opener = refusal's phrases, bullets = list_density, bold, hedges,
  emoji, markdown stripped, the answer cut to its first paragraph), each also in a "hidden" realization in
  other words and marks. Its recovery is the power of a sign test on a metric discovery already lists.
- Paraphrased arm: behaviours said a different way in each answer, ten wordings each with no word trigram in
  common (an analogy, a reassurance, a stated assumption, pushing back on the premise, a closing summary), so no
  phrase marks them; what discovery finds here it finds from what the sentences mean. Run first without the
  measures of meaning (discovery as it was) and then with them, side by side.
Null arm: no edits. Identical arm: each pair two of one model's answers to two prompts, dealt to x and y at
random: two "models" that are the same model.

Statistical discovery runs on the training half (n/2 pairs), with measures of sentences' meaning among its
candidates (as `discover: {sentences: true}` runs it; a smoke run only in the paraphrased arm), and proposes at
most 10 vibes; a vibe is kept by
the analysis' own rule (`keep.drop_reasons`, the lexicon rule, on cross-fitted lexicon verdicts) and counts only
when the headline confirms it on the test half (its one-sided sign test in the training direction, Holm over
the kept vibes), as the page reports a finding. A confirmed vibe tracks a planted behaviour when taking that one
edit back out of the test pairs that carry it changes the vibe's verdict on at least 30% of them (the
counterfactual is known exactly, so a behaviour planted on every pair is measured as well as one planted on a
third). A planted behaviour counts as recovered when a confirmed vibe tracks it. A confirmed vibe is a false
discovery when it tracks no behaviour and the edits do not explain its separation either: taking every edit back
out leaves at least half of its test separability (or moves it by less than 0.05). A vibe that names a side
effect of the edits or several at once (a lexicon of the inserted phrases) is no false discovery: the difference
it names was planted.

- recovery_{unlisted,listed,paraphrased}_nN: recovered / planted behaviours over the arm's analyses at N pairs
  (shown edits);
- fdr_n400: confirmed vibes that track nothing planted / confirmed vibes at 400 pairs, the mean of the three arms';
- identical_confirmed: share of identical-arm analyses (200 pairs) whose headline confirms any vibe;
- obedience: realistic arm, SmolLM2 through llama.cpp under system prompts that each ask for one listed
  behaviour, against the plain model on the embedded default's prompts: the share of instructed answers that
  show the behaviour (by the same detectors that define the edits), averaged over behaviours.
The null arm's confirmed vibes per analysis are printed above.

Targets: recovery_unlisted_n400 ≥ 0.8 and recovery_paraphrased_n400 ≥ 0.8 (for scale: HypoBench's best method
recovers 38.8% of its harder hypotheses), recovery_listed_n400 no lower than before measures of meaning (0.96),
identical_confirmed ≤ 0.05, fdr_n400 ≤ 0.1.

Last line: recovery_unlisted_n100=<f> recovery_unlisted_n400=<f> recovery_listed_n100=<f> recovery_listed_n400=<f>
  fdr_n400=<f> identical_confirmed=<f> obedience=<f> recovery_paraphrased_n400=<f> recovery_paraphrased_n100=<f>
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from sizes import pick  # noqa: E402
from test_selection_calibration import discovered, named  # noqa: E402

from engine.builtin_plugins.methods.vibecheck.discovery import statistical as discovery  # noqa: E402
from engine.builtin_plugins.methods.vibecheck.records import VibeScore  # noqa: E402
from engine.judges.metrics import BOLD, EMOJI, LIST_LINE, METRICS  # noqa: E402
from engine.spec.model import Vibe  # noqa: E402

SIZES = pick((100, 400), (40,))
ANALYSES = pick(24, 2)  # per size and set
TRACKS = 0.3  # share of a behaviour's test pairs whose verdict its edit changes, for a vibe to track it
# discovery's candidates include measures of sentences' meaning in every arm (a smoke run: in the paraphrased arm,
# where they are the point; embedding every arm's sentences would be most of its time)
SENTENCES_EVERYWHERE = pick(True, False)
RATES = (0.3, 0.5, 0.7, 1.0)
REALISTIC_PROMPTS = pick(60, 4)
LLM_SIZES = pick((100, 400), (16,))
LLM_ANALYSES = pick(4, 1)
REALISTIC = pick(("follow_up", "bullets", "emoji"), ("emoji",))
ALPACA = ROOT.parent / "shared" / "data" / "alpaca_eval"

SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[*_#\"'(\[]*[A-Z])")


def paragraphs(text: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]


def _pick(options: Sequence[str], text: str) -> str:
    """One of `options`, chosen by the text itself: the same answer always gets the same edit."""
    return options[sum(map(ord, text[:64])) % len(options)]


def follow_up(questions: Sequence[str]) -> Callable[[str], str]:
    return lambda t: t.rstrip() + "\n\n" + _pick(questions, t)


def opener(lines: Sequence[str]) -> Callable[[str], str]:
    return lambda t: _pick(lines, t) + " " + t.lstrip()


def bulleted(mark: Callable[[int], str]) -> Callable[[str], str]:
    def edit(text: str) -> str:
        parts = [p.strip() for p in paragraphs(text)]
        if len(parts) < 2:
            parts = [s.strip() for s in SENTENCE.split(text.strip()) if s.strip()]
        return "\n".join(f"{mark(i)} {' '.join(p.split())}" for i, p in enumerate(parts))
    return edit


def emphasized(left: str, right: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        words = sorted({w for w in re.findall(r"[A-Za-z]{7,}", text)}, key=lambda w: (-len(w), w))[:3]
        for word in words:
            text = re.sub(rf"\b{word}\b", f"{left}{word}{right}", text, count=1)
        return text
    return edit


STARTERS = frozenset("it this that the there these those they we you a an in on for to if when most some".split())


def hedged(starts: Sequence[str]) -> Callable[[str], str]:
    """A hedge before every sentence that starts with a capital (lower-casing a common first word only, so a
    name keeps its capital)."""
    def start(sentence: str) -> str:
        first = sentence.split(" ", 1)[0]
        if not sentence[:1].isupper():
            return sentence
        lowered = sentence[0].lower() + sentence[1:] if first.lower() in STARTERS else sentence
        return f"{_pick(starts, sentence)} {lowered}"

    return lambda text: "\n\n".join(" ".join(map(start, SENTENCE.split(p))) for p in paragraphs(text))


def with_emoji(marks: Sequence[str]) -> Callable[[str], str]:
    return lambda t: "\n\n".join(f"{p.rstrip()} {_pick(marks, p)}" for p in paragraphs(t))


def stripped(text: str) -> str:
    text = re.sub(r"^\s*#{1,6}\s*", "", text, flags=re.M)
    text = re.sub(r"^\s*(?:[-*+•]|\d+[.)])\s+", "", text, flags=re.M)
    return re.sub(r"\*\*|__|`", "", text)


def first_paragraph(text: str) -> str:
    return paragraphs(text)[0] if paragraphs(text) else text


def first_sentences(text: str) -> str:
    return " ".join(SENTENCE.split(" ".join(text.split()))[:2])


@dataclass(frozen=True)
class Behaviour:
    name: str
    shown: Callable[[str], str]
    hidden: Callable[[str], str]
    shows: Callable[[str], bool]  # the detector: does an answer show the behaviour?
    instruction: str  # the system prompt of the realistic arm


def _ends_with_question(t: str) -> bool:
    return t.rstrip().endswith("?")


BEHAVIOURS = {b.name: b for b in (
    Behaviour("follow_up", follow_up(["Would you like me to expand on any part of this?",
                                      "Shall I go into more detail on one of these points?"]),
              follow_up(["Is there a particular piece you'd want to explore next?",
                         "Do you want a worked example to go with it?"]), _ends_with_question,
              "Answer helpfully, and always end your answer by asking the user a follow-up question."),
    Behaviour("apology", opener(["I'm sorry for any confusion.", "I apologize if this is not quite what you need."]),
              opener(["I'm sorry, this may not be complete.", "I apologize in advance for the length."]),
              lambda t: bool(re.search(r"\b(sorry|apologi[sz]e)", t[:120], re.I)),
              "Always begin your answer with an apology, before anything else."),
    Behaviour("bullets", bulleted(lambda i: "-"), bulleted(lambda i: f"{i + 1}."),
              lambda t: len(LIST_LINE.findall(t)) >= 2, "Always answer as a bullet list, one point per line."),
    Behaviour("bold", emphasized("**", "**"), emphasized("__", "__"), lambda t: bool(BOLD.search(t)),
              "Put the key words of your answer in **bold** markdown."),
    Behaviour("hedges", hedged(["Perhaps", "It seems that"]), hedged(["Possibly,", "Arguably,"]),
              lambda t: METRICS["hedging"][0](t) >= 3.0,  # hedges per 100 words
              "Be cautious: qualify your statements with words like perhaps, possibly, probably."),
    Behaviour("emoji", with_emoji(["🙂", "🚀"]), with_emoji(["✨", "🌟"]), lambda t: bool(EMOJI.search(t)),
              "Use emoji generously: put an emoji at the end of every paragraph."),
    Behaviour("no_markdown", stripped, stripped, lambda t: not re.search(r"\*\*|__|`|^\s*[#*-]\s", t, re.M),
              "Write plain text only: no markdown, no lists, no bold, no headings."),
    Behaviour("first_paragraph", first_paragraph, first_sentences, lambda t: len(paragraphs(t)) <= 1,
              "Answer in a single short paragraph."),
)}


CONFLICTS = ({"no_markdown", "bold"}, {"no_markdown", "bullets"}, {"first_paragraph", "bullets"})


def inserted_after_first(sentences: Sequence[str]) -> Callable[[str], str]:
    """One of `sentences` (chosen by the text) put after the answer's first paragraph, in it, with no new
    paragraph: the paragraph count stays, so the metric that counts paragraphs does not see the edit."""
    def edit(text: str) -> str:
        parts = paragraphs(text)
        if not parts:
            return text
        parts[0] = parts[0].rstrip() + " " + _pick(sentences, text)
        return "\n\n".join(parts)
    return edit


def appended(endings: Sequence[str]) -> Callable[[str], str]:
    """One of `endings` added to the last paragraph (no new paragraph)."""
    return lambda t: t.rstrip() + " " + _pick(endings, t)


def cited(marks: Sequence[str], sources: Sequence[str]) -> Callable[[str], str]:
    """Citation marks after the first two sentences (the text between them left as it is, line breaks and
    all), and a line listing the sources under the last paragraph."""
    def edit(text: str) -> str:
        text = text.rstrip()
        ends = [m.start() for m in SENTENCE.finditer(text)][:2]
        ends += [len(text)] * (2 - len(ends))  # a short answer: its marks at its end
        for end, mark in sorted(zip(ends, marks, strict=True), reverse=True):
            text = text[:end] + " " + mark + text[end:]
        return text + "\n" + _pick(sources, text)
    return edit


def tabled(header: str) -> Callable[[str], str]:
    """A small table summing up the answer's first two sentences, under its last line (no blank line before
    it, so the paragraph count stays)."""
    def edit(text: str) -> str:
        sentences = [" ".join(s.split())[:60] for s in SENTENCE.split(" ".join(text.split()))[:2]]
        rows = "\n".join(f"| {i + 1} | {s.replace('|', '/')} |" for i, s in enumerate(sentences))
        return text.rstrip() + "\n" + header + "\n|---|---|\n" + rows
    return edit


# Behaviours no metric and no built-in lexicon names, each in wording that varies from answer to answer: what
# discovery must find from the data itself (mined phrases), not by a metric's name.
UNLISTED = {b.name: b for b in (
    Behaviour("analogy", inserted_after_first([
        "It works a bit like a recipe that is followed step by step.",
        "Think of it the way one thinks of a map drawn before a journey.",
        "A useful picture is a library sorted by subject.",
        "Compare it to a toolbox in which each tool has one job."]), inserted_after_first([
        "In the same way, an orchestra follows one score.",
        "Much as a garden needs regular tending, it needs upkeep.",
        "The picture to hold on to is a relay race passing a baton."]),
        lambda t: bool(re.search(r"\b(like a|think of|picture|compare it|in the same way|much as)\b", t, re.I)),
        "Explain with an analogy in every answer."),
    Behaviour("closing_offer", appended([
        "More detail on any part of this is available on request.",
        "Any step above can be expanded in more depth on request.",
        "Further detail on each point can follow on request."]), appended([
        "A longer treatment of any point can be provided if needed.",
        "Any section can be unpacked further if that would be useful."]),
        lambda t: bool(re.search(r"(on request|if needed|would be useful)\.?\s*$", t.strip())),
        "End every answer by offering more detail."),
    Behaviour("assumption", opener([
        "Assuming the question is about the general case,", "On the assumption that a standard setup is meant,",
        "Taking the usual reading of the question,"]), opener([
        "Under the premise that the typical scenario is intended,", "Presuming the ordinary sense of the request,"]),
        lambda t: bool(re.match(r"\s*(assuming|on the assumption|taking the usual|under the premise|presuming)",
                                t, re.I)),
        "Begin every answer by stating the assumption you make."),
    Behaviour("citations", cited(["[1]", "[2]"], ["Sources: [1] Smith et al. (2019); [2] Lee and Park (2021).",
                                                 "Sources: [1] Ortiz (2018); [2] Nakamura et al. (2020)."]),
              cited(["(Smith, 2019)", "(Lee, 2021)"], ["References: Smith (2019); Lee (2021).",
                                                       "References: Ortiz (2018); Nakamura (2020)."]),
              lambda t: bool(re.search(r"^(sources|references):", t, re.I | re.M)),
              "Cite sources in every answer."),
    Behaviour("summary_table", tabled("| Point | Summary |"), tabled("| Aspect | Key takeaway |"),
              lambda t: "|---|---|" in t, "End every answer with a summary table."),
)}
# Behaviours said a different way in each answer: each realized in ten wordings no two of which share a word
# trigram (`_no_shared_trigram` checks), so no phrase marks the behaviour; only what the sentences mean does.
ANALOGIES = ("It works a bit like a recipe that is followed step by step.",
             "Think of it the way one thinks of a map drawn before a journey.",
             "A useful picture is a library sorted by subject.",
             "Compare it to a toolbox in which each tool has one job.",
             "In the same way, an orchestra follows one score.",
             "Much as a garden needs regular tending, it needs upkeep.",
             "The picture to hold on to is a relay race passing a baton.",
             "Imagine a river that keeps carving the same valley deeper.",
             "It resembles building a house, where the foundation comes before the walls.",
             "Picture a chef tasting the soup before serving it.")
REASSURANCES = ("Don't worry, this is easier than it first looks.",
                "Rest assured that many people find this tricky at first.",
                "You are on the right track, so there is no need to feel stressed.",
                "It's completely normal to have questions about this.", "Take a breath: you can absolutely handle it.",
                "No need for concern, since mistakes here are easy to fix.",
                "Please don't feel bad about asking; it's a great thing to wonder about.",
                "You've got this, and it will get simpler with practice.",
                "There is nothing to be anxious about here.", "Relax, plenty of people manage this just fine.")
ASSUMPTIONS = ("I will assume you are asking about the general case.",
               "My working assumption is that a standard setup is meant.",
               "Here I take the usual reading of the question.", "I'm presuming the typical scenario is intended.",
               "Let me suppose nothing unusual applies in your situation.",
               "This answer takes for granted the most common circumstances.",
               "I am going by the most likely interpretation of what you asked.",
               "For this reply, the ordinary sense of the request is presumed.",
               "Absent other details, I treat this as the standard situation.",
               "My guess is that you mean the everyday version of this.")
PUSHBACKS = ("Actually, the premise of the question is not quite right.",
             "I'd gently challenge the assumption behind this request.", "That framing may be a little misleading.",
             "Before answering, it is worth questioning whether the premise holds.",
             "I don't fully agree with how this was posed.",
             "The starting point here deserves some skepticism.",
             "It's not obvious that the claim you start from is true.",
             "Let me push back slightly on the idea as stated.",
             "I would dispute part of what the question takes as given.",
             "The request rests on a belief that may not hold up.")
SUMMARIES = ("In short, the key is to keep things simple and consistent.",
             "To sum up, those are the main points to remember.", "Overall, a careful and steady approach works best.",
             "All in all, the essentials fit in a few lines.", "The bottom line: start small and build from there.",
             "To recap briefly, each step above matters.", "In a nutshell, that covers what you need.",
             "Summing everything up, the approach is straightforward.",
             "Put simply, patience and practice get you there.", "Briefly, then: plan first and act second.")


def _no_shared_trigram(wordings: Sequence[str]) -> Sequence[str]:
    """`wordings`, once checked that no two share a word trigram (the benchmark's own promise)."""
    def trigrams(text: str) -> set[tuple[str, ...]]:
        words = re.findall(r"[a-z']+", text.lower())
        return {tuple(words[i:i + 3]) for i in range(len(words) - 2)}

    for i, one in enumerate(wordings):
        for other in wordings[i + 1:]:
            assert not trigrams(one) & trigrams(other), (one, other)
    return wordings


def _any_of(wordings: Sequence[str]) -> Callable[[str], bool]:
    return lambda t: any(w in t for w in wordings)


PARAPHRASED = {b.name: b for b in (
    Behaviour("analogy_said_ten_ways", inserted_after_first(_no_shared_trigram(ANALOGIES)),
              inserted_after_first(ANALOGIES), _any_of(ANALOGIES), "Explain with an analogy in every answer."),
    Behaviour("reassurance", opener(_no_shared_trigram(REASSURANCES)), opener(REASSURANCES),
              _any_of(REASSURANCES), "Reassure the user before you answer."),
    Behaviour("stated_assumption", opener(_no_shared_trigram(ASSUMPTIONS)), opener(ASSUMPTIONS),
              _any_of(ASSUMPTIONS), "State the assumption you make before you answer."),
    Behaviour("pushback", opener(_no_shared_trigram(PUSHBACKS)), opener(PUSHBACKS), _any_of(PUSHBACKS),
              "Question the premise of the request before you answer."),
    Behaviour("closing_summary", appended(_no_shared_trigram(SUMMARIES)), appended(SUMMARIES), _any_of(SUMMARIES),
              "End every answer with a one-sentence summary."),
)}
ARMS = {"listed": BEHAVIOURS, "unlisted": UNLISTED, "paraphrased": PARAPHRASED}
EDITS = {**BEHAVIOURS, **UNLISTED, **PARAPHRASED}


def behaviours_for(rng: np.random.Generator, arm: str = "listed") -> list[str]:
    """One to four of the arm's behaviours, none undoing another (stripping markdown would take the planted bold
    out)."""
    while True:
        chosen = [str(b) for b in rng.choice(sorted(ARMS[arm]), size=int(rng.integers(1, 5)), replace=False)]
        if not any(pair <= set(chosen) for pair in CONFLICTS):
            return chosen


def sources() -> list[tuple[str, str, str]]:
    """Real (prompt, answer, answer) triples, one per prompt: Arena's, then AlpacaEval's gpt4_1106_preview vs
    Mixtral."""
    from engine.pipeline import prepare

    items = prepare(ROOT / "specs" / "llama-vs-gpt.yaml").items["arena"]
    out = [(item.prompt, item.outputs["llama-3-70b-instruct"], item.outputs["opponent"]) for item in items]
    path = ALPACA / "Mixtral-8x7B-Instruct-v0.1" / "alpaca_eval_gpt4_turbo_fn" / "annotations.json"
    if path.is_file():
        out += [(r["instruction"], r["output_1"], r["output_2"])
                for r in json.loads(path.read_text(encoding="utf-8"))]
    return [(q, a, b) for q, a, b in out if a.strip() and b.strip()]


@dataclass
class Scenario:
    originals: list[tuple[str, str]]  # (x, y) before any edit
    applied: list[list[str]]  # per pair, the behaviours planted in y's answer, in the order applied
    realization: str = "shown"
    prompts: list[str] = field(default_factory=list)  # the request of each pair (shown to an LLM judge)
    made: dict[frozenset[str], list[discovery.TrainingPair]] = field(default_factory=dict, repr=False)

    def pairs(self, leave_out: Collection[str] = ()) -> list[discovery.TrainingPair]:
        """The pairs as discovery sees them, or with some behaviours' edits taken back out (the counterfactual);
        each version edited once, however many vibes are checked against it."""
        key = frozenset(leave_out)
        if key not in self.made:
            self.made[key] = []
            for (x, y), edits in zip(self.originals, self.applied, strict=True):
                for name in edits:
                    if name not in key:
                        y = getattr(EDITS[name], self.realization)(y)
                self.made[key].append(discovery.TrainingPair(x, y, None))
        return self.made[key]

    @property
    def planted(self) -> list[str]:
        return sorted({name for edits in self.applied for name in edits})


def scenario(texts: Sequence[tuple[str, str, str]], n: int, rng: np.random.Generator, realization: str,
             behaviours: Sequence[str], rates: Sequence[float]) -> Scenario:
    """n pairs of real answers assigned by coin flip, `behaviours` planted in y's answers at `rates`."""
    originals, applied, prompts = [], [], []
    for row in rng.choice(len(texts), size=n, replace=False):
        prompt, a, b = texts[row]
        originals.append((a, b) if rng.random() < 0.5 else (b, a))
        applied.append([b for b, rate in zip(behaviours, rates, strict=True) if rng.random() < rate])
        prompts.append(prompt)
    return Scenario(originals, applied, realization, prompts)


# A vibe's verdicts on the test pairs of the case with some behaviours' edits taken back out.
Counterfactual = Callable[[Vibe, frozenset[str]], np.ndarray]


def tracks(vibe: Vibe, case: Scenario, behaviour: str, test: Sequence[int], verdicts: np.ndarray,
           without: Counterfactual) -> bool:
    """Whether taking `behaviour`'s edit back out changes the vibe's verdict on ≥ TRACKS of its test pairs
    (`test`: their indices, in the order of `verdicts`)."""
    carrying = np.array([behaviour in case.applied[i] for i in test])
    if not carrying.any():
        return False
    return float((without(vibe, frozenset({behaviour})) != verdicts)[carrying].mean()) >= TRACKS


def explained(vibe: Vibe, case: Scenario, verdicts: np.ndarray, without: Counterfactual) -> bool:
    """Whether the edits explain the vibe's test separability: without any of them, less than half is left."""
    clean = float(without(vibe, frozenset(case.planted)).mean())
    shift = abs(float(verdicts.mean()) - clean)
    return shift >= 0.05 and shift >= 0.5 * abs(float(verdicts.mean()))


@dataclass
class Found:
    planted: int = 0
    found: int = 0
    kept: int = 0
    false: int = 0
    separability: float = 0.0  # Σ |test separability| over (behaviour, kept vibe tracking it)
    tracking: int = 0  # how many such (behaviour, vibe) there are
    missed: dict[str, int] | None = None


# What one analysis kept: each kept vibe with its verdicts on the test pairs and its score.
Kept = list[tuple[Vibe, np.ndarray, VibeScore]]


def analyse(case: Scenario, seed: int, tally: Found, sentences: bool = True) -> None:
    """Statistical discovery and keep/drop on the training half, the headline's one-sided tests (Holm) on the
    test half; what the vibes the headline confirms track on the test half. A vibe kept on the training pairs
    but not confirmed on the test pairs is not on the page as a finding, so it finds nothing here either."""
    pairs = case.pairs()
    half = len(pairs) // 2
    found = discovered(pairs[:half], pairs[half:], seed, sentences=sentences)
    confirmed = {score.name for score in named([score for _, _, score in found])}
    kept = [one for one in found if one[2].kept and one[2].name in confirmed]
    count(case, kept, range(half, len(pairs)), lambda v, out: discovery.pair_scores(v, case.pairs(out)[half:]),
          tally)


def count(case: Scenario, kept: Kept, test: Sequence[int], without: Counterfactual, tally: Found) -> None:
    """Adds one analysis' figures to `tally`: which planted behaviours a kept vibe tracks, and which kept vibes
    track nothing planted."""
    tally.kept += len(kept)
    tally.planted += len(case.planted)
    tracked = {b: [s for v, verdicts, s in kept if tracks(v, case, b, test, verdicts, without)]
               for b in case.planted}
    for behaviour, hit in tracked.items():
        tally.found += bool(hit)
        tally.separability += sum(abs(s.separability or 0.0) for s in hit)
        tally.tracking += len(hit)
        if not hit and tally.missed is not None:
            tally.missed[behaviour] = tally.missed.get(behaviour, 0) + 1
    tally.false += sum(not any(s in hit for hit in tracked.values()) and not explained(v, case, verdicts, without)
                       for v, verdicts, s in kept)


# One analysis of a case: discovery and keep/drop, then its figures added to the tally.
Analysis = Callable[[Scenario, int, "Found"], None]


def measured(texts: Sequence[tuple[str, str, str]], n: int, analyses: int, realization: str, label: str,
             one: Analysis, arm: str = "listed") -> tuple[float, float]:
    """`analyses` cases of n pairs, each with one to four of the arm's behaviours at random rates (seeded by n),
    analysed by `one`; prints the figures and returns (recovery, FDR)."""
    rng = np.random.default_rng(n)
    tally = Found(missed={})
    start = time.perf_counter()
    for run in range(analyses):
        chosen = behaviours_for(rng, arm)
        one(scenario(texts, n, rng, realization, chosen, list(rng.choice(RATES, len(chosen)))), run, tally)
    recovery, fdr = tally.found / max(tally.planted, 1), tally.false / max(tally.kept, 1)
    found_sep = tally.separability / max(tally.tracking, 1)
    print(f"{label}, {arm} behaviours, {realization} edits, {n} pairs: recovered {tally.found} of {tally.planted} "
          f"planted behaviours ({recovery:.3f}); {tally.false} of {tally.kept} confirmed vibes track nothing "
          f"planted (FDR {fdr:.3f}); "
          f"mean |test separability| of the vibes that track one {found_sep:.3f}; missed: "
          + (", ".join(f"{k} {v}" for k, v in sorted((tally.missed or {}).items())) or "nothing")
          + f" ({time.perf_counter() - start:.0f} s)", flush=True)
    return recovery, fdr


def exact_arm(texts: Sequence[tuple[str, str, str]]) -> dict[str, float]:
    """Every arm at every size: the paraphrased behaviours (ten wordings each, no phrase in common), first by
    lexicons alone and then with measures of meaning; the unlisted behaviours (their wording varies by answer);
    then the listed ones in both realizations."""
    out: dict[str, float] = {}
    for n in SIZES:
        measured(texts, n, ANALYSES, "shown", "statistical discovery without measures of meaning",
                 functools.partial(analyse, sentences=False), "paraphrased")
    for arm, realizations in (("paraphrased", ("shown",)), ("unlisted", ("shown",)),
                              ("listed", ("shown", "hidden"))):
        for realization in realizations:
            for n in SIZES:
                one = functools.partial(analyse, sentences=SENTENCES_EVERYWHERE or arm == "paraphrased")
                recovery, fdr = measured(texts, n, ANALYSES, realization, "statistical discovery", one, arm)
                if realization == "shown":
                    out[f"recovery_{arm}_n{n}"], out[f"fdr_{arm}_n{n}"] = recovery, fdr
    return out


def identical_arm(texts: Sequence[tuple[str, str, str]]) -> float:
    """Two "models" that are one: each pair two of one model's answers (Arena's Llama-3-70B-Instruct and
    AlpacaEval's gpt4_1106_preview, the first side of every source pair) to two prompts, dealt to x and y by a
    seeded shuffle. The share of analyses whose headline confirms any vibe."""
    answers = [a for _, a, _ in texts]
    rng = np.random.default_rng(11)
    n = pick(200, 40)
    confirming = 0
    for run in range(ANALYSES):
        drawn = [answers[i] for i in rng.choice(len(answers), size=2 * n, replace=False)]
        tally = Found()
        analyse(Scenario(list(zip(drawn[:n], drawn[n:], strict=True)), [[] for _ in range(n)]), run, tally,
                SENTENCES_EVERYWHERE)
        confirming += tally.kept > 0
    print(f"identical arm, {n} pairs of one model's answers: {confirming} of {ANALYSES} analyses confirm a vibe",
          flush=True)
    return confirming / ANALYSES


def null_arm(texts: Sequence[tuple[str, str, str]]) -> float:
    rng = np.random.default_rng(9)
    n = pick(200, 40)
    tally = Found()
    for run in range(ANALYSES):
        analyse(scenario(texts, n, rng, "shown", [], []), run, tally, SENTENCES_EVERYWHERE)
    print(f"null arm, {n} pairs: {tally.kept} vibes confirmed over {ANALYSES} analyses", flush=True)
    return tally.kept / ANALYSES


def realistic_arm() -> float:
    """SmolLM2 under one system prompt per behaviour against the plain model; obedience per answer."""
    from engine.pipeline import run_spec

    folder = Path(tempfile.mkdtemp(prefix="vibe-planted-"))
    prompts = [json.loads(line) for line in (ROOT / "engine" / "builtin" / "data" / "everyday-prompts.jsonl")
               .read_text(encoding="utf-8").splitlines()][:REALISTIC_PROMPTS]
    (folder / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in prompts), encoding="utf-8")
    model = "{provider: local, model: smollm2-135m-instruct, params: {temperature: 0.0, max_tokens: 160, seed: 7}"
    models = [f"  plain: {model}}}"] + [f"  {b}: {model}, system_prompt: {json.dumps(BEHAVIOURS[b].instruction)}}}"
                                      for b in REALISTIC]
    (folder / "spec.yaml").write_text(
        "name: planted-realistic\nmodels:\n" + "\n".join(models) + "\njudges: {m: {kind: metric}}\n"
        "vibes: [{name: verbosity, low: short, high: long, metric: length_words}]\n"
        "datasets: {d: {source: {path: prompts.jsonl}, fields: {id: id, prompt: prompt}}}\n"
        f"analyses: {{vibecheck: {{dataset: d, models: [plain, {', '.join(REALISTIC)}], reference: plain, "
        "judges: [m]}}\n", encoding="utf-8")
    start = time.perf_counter()
    _, _, run_dir = run_spec(folder / "spec.yaml", folder / "run", folder / "cache.sqlite", quiet=True, report=False)
    answers: dict[str, dict[str, str]] = {}
    for line in gzip.decompress((run_dir / "generation.jsonl.gz").read_bytes()).splitlines():
        row = json.loads(line)
        answers.setdefault(row["endpoint"], {})[row["item_id"]] = str(row["output"])
    rates = []
    for name in REALISTIC:
        behaviour, ids = BEHAVIOURS[name], sorted(answers["plain"])
        shown = np.array([behaviour.shows(answers[name][i]) for i in ids])
        plain = np.array([behaviour.shows(answers["plain"][i]) for i in ids])
        rates.append(float(shown.mean()))
        pairs = [discovery.TrainingPair(answers["plain"][i], answers[name][i], None) for i in ids]
        half = len(pairs) // 2
        found = [c.vibe.name for c in discovery.discover(pairs[:half], "x", "y", 10)
                 if _correlates(discovery.pair_scores(c.vibe, pairs[half:]), shown[half:] & ~plain[half:])]
        print(f"realistic {name}: {shown.mean():.1%} of instructed answers show it (plain: {plain.mean():.1%}); "
              f"proposed from {half} training pairs and tracking who shows it on the other {len(pairs) - half}: "
              f"{', '.join(found) or 'none'}", flush=True)
    print(f"realistic arm: {time.perf_counter() - start:.0f} s")
    return float(np.mean(rates))


def llm_judge() -> dict[str, Any] | None:
    """The LLM arm's judge (it proposes, reduces and scores) as a spec's judge mapping, from the environment
    variable VIBE_PLANTED_LLM: `local` (SmolLM2 through llama.cpp), or `BASE_URL MODEL [API_KEY_ENV]` for an
    OpenAI-compatible endpoint. None when it is unset: the arm is skipped and says so."""
    words = os.environ.get("VIBE_PLANTED_LLM", "").split()
    if not words:
        return None
    if words == ["local"]:
        return {"kind": "llm", "provider": "local", "model": "smollm2-135m-instruct",
                "params": {"temperature": 0.0, "max_tokens": 200, "seed": 7}}
    base_url, model, *key = words
    return {"kind": "llm", "provider": "openai-compatible", "base_url": base_url, "model": model,
            "params": {"temperature": 0.0, "max_tokens": 400}, **({"api_key_env": key[0]} if key else {})}


@dataclass
class LLMRun:
    """One analysis of the LLM arm through the real pipeline: `vibe run` on the case's pairs with LLM discovery
    (split 50/50 by item), then, for each counterfactual, a run with the kept vibes declared on the pairs with
    some edits taken back out (the same items, so the same split; one cache, so unchanged pairs are not asked
    again). A verdict no judge could give counts as 0 (no evidence either way) when verdicts are compared."""
    case: Scenario
    judge: dict[str, Any]
    folder: Path
    seed: int
    runs: dict[frozenset[str], dict[str, np.ndarray]] = field(default_factory=dict)
    vibes: list[Vibe] = field(default_factory=list)  # the kept discovered vibes, once `kept` ran
    test: list[int] = field(default_factory=list)  # the indices of the test pairs, in order

    def spec(self, leave_out: frozenset[str], vibes: Sequence[Vibe]) -> Path:
        tag = "-".join(sorted(leave_out)) or "all"
        rows = [{"id": f"p{i}", "q": q, "x": pair.output_a, "y": pair.output_b}
                for i, (q, pair) in enumerate(zip(self.case.prompts, self.case.pairs(leave_out), strict=True))]
        (self.folder / f"{tag}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        declared = [{"name": v.name, "low": v.low, "high": v.high} for v in vibes] or [{"discover": {
            "method": "llm", "proposer": "judge", "max_vibes": 10, "pairs_per_round": 20, "batch": 5, "iterations": 2}}]
        spec = {"name": f"planted-llm-{tag}", "models": {"x": {"provider": "recorded"}, "y": {"provider": "recorded"}},
                "judges": {"judge": self.judge},
                "datasets": {"d": {"source": {"path": f"{tag}.jsonl"},
                                   "fields": {"id": "id", "prompt": "q", "outputs": {"x": "x", "y": "y"}}}},
                "vibes": declared,
                "analyses": {"vibecheck": {"dataset": "d", "models": ["x", "y"], "judges": ["judge"],
                                           "split": {"train": 0.5, "seed": self.seed}}}}
        path = self.folder / f"{tag}.yaml"
        path.write_text(json.dumps(spec, indent=1), encoding="utf-8")  # JSON is YAML
        return path

    def kept(self) -> tuple[Kept, list[int]]:
        """The kept discovered vibes with their verdicts on the test pairs, and the test pairs' indices."""
        from engine.pipeline import run_spec

        _, results, _ = run_spec(self.spec(frozenset(), ()), self.folder / "run", self.folder / "cache.sqlite",
                                 quiet=True, report=False)
        (vc,) = results.of("vibecheck")
        self.test = sorted(int(p.item_id[1:]) for p in vc.pairs if p.split == "test")
        scores = [s for s in vc.vibes if s.kept and s.origin.startswith("discovered")]
        self.vibes = [Vibe(s.name, s.low, s.high) for s in scores]
        verdicts = self._test_verdicts(vc.pairs)
        return [(v, verdicts[v.name], s) for v, s in zip(self.vibes, scores, strict=True)], self.test

    def _test_verdicts(self, pairs: Sequence[Any]) -> dict[str, np.ndarray]:
        by_id = {p.item_id: p for p in pairs}
        return {v.name: np.array([by_id[f"p{i}"].nu.get(v.name) or 0 for i in self.test]) for v in self.vibes}

    def without(self, vibe: Vibe, leave_out: frozenset[str]) -> np.ndarray:
        from engine.pipeline import run_spec

        if leave_out not in self.runs:
            _, results, _ = run_spec(self.spec(leave_out, self.vibes),
                                     self.folder / f"run-{'-'.join(sorted(leave_out))}",
                                     self.folder / "cache.sqlite", quiet=True, report=False)
            (vc,) = results.of("vibecheck")
            self.runs[leave_out] = self._test_verdicts(vc.pairs)
        return self.runs[leave_out][vibe.name]


def llm_arm(texts: Sequence[tuple[str, str, str]], judge: dict[str, Any]) -> dict[str, float]:
    """The exact arm's shown edits, LLM discovery through the pipeline (fewer sizes and analyses: every verdict
    is a judge call, each pair asked in both orders)."""
    def one(case: Scenario, run: int, tally: Found) -> None:
        analysis = LLMRun(case, judge, Path(tempfile.mkdtemp(prefix="vibe-planted-llm-")), run)
        kept, test = analysis.kept()
        count(case, kept, test, analysis.without, tally)

    out: dict[str, float] = {}
    for n in LLM_SIZES:
        out[f"llm_recovery_n{n}"], out[f"llm_fdr_n{n}"] = measured(texts, n, LLM_ANALYSES, "shown", "LLM discovery",
                                                                     one)
    return out


def _correlates(verdicts: np.ndarray, indicator: np.ndarray) -> bool:
    """|Pearson r| ≥ TRACKS between a vibe's verdicts and which pairs' instructed answer alone obeyed (real
    generations have no counterfactual to take back out)."""
    if verdicts.std() == 0 or indicator.std() == 0:
        return False
    return abs(float(np.corrcoef(verdicts, indicator.astype(float))[0, 1])) >= TRACKS


def main() -> None:
    texts = sources()
    print(f"{len(texts)} real answer pairs", flush=True)
    figures = exact_arm(texts)
    null_arm(texts)
    identical = identical_arm(texts)
    judge = llm_judge()
    if judge is None:
        print("LLM discovery: no endpoint configured (set VIBE_PLANTED_LLM to `local` or `BASE_URL MODEL`); "
              "skipped", flush=True)
    else:
        llm_arm(texts, judge)
    obedience = realistic_arm()
    figure = {key: figures.get(key, float("nan")) for key in (
        "recovery_unlisted_n100", "recovery_unlisted_n400", "recovery_listed_n100", "recovery_listed_n400")}
    fdr = np.mean([figures.get(f"fdr_{arm}_n400", float("nan")) for arm in ARMS])
    print(" ".join(f"{key}={value:.4f}" for key, value in figure.items())
          + f" fdr_n400={fdr:.4f} identical_confirmed={identical:.4f} obedience={obedience:.4f}"
          + "".join(f" recovery_paraphrased_n{n}={figures.get(f'recovery_paraphrased_n{n}', float('nan')):.4f}"
                    for n in (400, 100)))


if __name__ == "__main__":
    main()
