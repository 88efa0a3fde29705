"""The answer a VibeCheck section gives in words, and the rows of its diverging chart.

Only vibes that pass every test the page shows are named: kept on the training pairs, and separating the
models on the test pairs in the direction the training pairs showed, with a Holm-adjusted p < 0.05 (an exact
sign test per kept vibe, one-sided in that direction, corrected by a weighted Holm, each vibe weighted by its
training evidence, together with the coefficient tests of the same section, since the page makes all of those
claims at once). A test pair leaning the other way is
evidence against the claim, never for the opposite one: the sentence cannot name a direction that no selection
proposed. Strongest first, grouped by the model that sits higher, so the sentence reads "chatty sits higher on
verbosity and paragraphs; terse on formality".
"""

from __future__ import annotations

import itertools
from typing import Any

from engine.api.analysis import stats
from engine.api.judging import PHRASES_PREFIX
from engine.builtin_plugins.methods.vibecheck.records import VibeCheckResult, VibeScore

MAX_NAMED = 4  # vibes named per model; the chart and the table carry the rest


ALPHA = 0.05


def confirmed(vc: VibeCheckResult) -> list[VibeScore]:
    """Kept vibes whose test separability confirms their training direction (one-sided, weighted Holm over
    the comparison's claims), strongest first."""
    out = [v for v in vc.vibes if v.kept and v.separability is not None and v.separability_p_adjusted is not None
           and v.separability_p_adjusted < ALPHA and v.separability * v.direction > 0]
    return sorted(out, key=lambda v: -abs(v.separability or 0.0))


def words(vibe: VibeScore) -> str:
    """The vibe as a headline names it: a phrase lexicon discovery mined by its two strongest phrases (its name
    says only whose phrasing it is), any other vibe by its name."""
    if vibe.origin.startswith("discovered (phrases") and vibe.metric and vibe.metric.startswith(PHRASES_PREFIX):
        phrases = vibe.metric.removeprefix(PHRASES_PREFIX).split("|")[:2]
        return "phrasing such as " + " and ".join(f"‘{p}’" for p in phrases)
    return vibe.name.replace("_", " ")


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def headline(vc: VibeCheckResult) -> str:
    """One sentence naming both models and the vibes that set them apart (see the module docstring)."""
    vibes = confirmed(vc)
    if not vc.pairs:
        return (f"{vc.model_a} and {vc.model_b} answered no prompt in common, so no answer of one is compared with "
                "an answer of the other (agent sessions that open with different prompts, say); an agents analysis "
                "compares the distributions of what each did.")
    tested = {p.cluster for p in vc.pairs if p.split == "test"}
    if not tested:
        shared = len({p.cluster for p in vc.pairs})
        return (f"Nothing is known yet of how {vc.model_a} and {vc.model_b} differ: they answered {shared} "
                f"prompt{'s' * (shared != 1)} in common, all of {'them' if shared != 1 else 'it'} used to choose the "
                "vibes, and none was left to test them on. Compare more shared prompts (or sessions) to test "
                f"anything. {could_show(vc)}")
    if not vibes:
        return (f"No vibe separates {vc.model_a} from {vc.model_b} on the test pairs beyond chance (no kept vibe "
                f"confirms its training direction at a weighted-Holm-adjusted p < 0.05). {could_show(vc)}")
    parts = []
    for model, sign in ((vc.model_a, 1), (vc.model_b, -1)):
        mine = [words(v) for v in vibes if (v.separability or 0) * sign > 0][:MAX_NAMED]
        parts.append((model, mine))
    parts.sort(key=lambda part: -len(part[1]))
    (first, first_vibes), (second, second_vibes) = parts
    sentence = f"{first} sits higher on {_listed(first_vibes)}"
    if second_vibes:
        sentence += f"; {second} on {_listed(second_vibes)}"
    else:
        sentence += f"; no vibe puts {second} higher"
    return sentence + (f" (test pairs, in the direction the training pairs showed; weighted-Holm-adjusted p < 0.05 "
                       f"over the {vc.claims} claims this comparison makes about its vibes).")


TYPICAL = 0.3  # a separability of the size the VibeCheck paper's vibes show between two chat models


def could_show(vc: VibeCheckResult) -> str:
    """What the test pairs could have shown, for a headline that names no vibe: the smallest separability the
    one-sided sign test detects with 80% power at unweighted Holm's first step (a vibe of the family's mean
    weight) even if every pair leans one way, and about how many test pairs a typical vibe needs. A trial of a
    few prompts then reads as too small, not as "no difference". Where the test pairs are turns of conversations
    the unit is the conversation, whose mean verdict is not −1, 0 or +1: the count is of conversations, and no
    detectable size is given, since the sign test's formula for it does not hold there."""
    tested = [p for p in vc.pairs if p.split == "test"]
    n = len(tested)
    if any(p.conversation for p in tested):
        talks = len({p.cluster for p in tested})
        return (f"Its {talks} test conversation{'s' if talks != 1 else ''} ({n} turns) give no detectable "
                "separability: a conversation's mean verdict is not −1, 0 or +1, which that formula assumes.")
    alpha = ALPHA / max(vc.claims, 1)
    smallest = stats.sign_test_mde(n, n, alpha=alpha)
    need = next(m for m in itertools.count(2)
                if (found := stats.sign_test_mde(m, m, alpha=alpha)) is not None and found <= TYPICAL)
    seen = (f"Its {n} test pairs detect a separability of {smallest:.2f} or more with 80% power, even with every "
            "pair leaning one way" if smallest is not None else
            f"{n} test pair{'s' if n != 1 else ''} cannot show any vibe at that level, however far they lean")
    return f"{seen}; a typical vibe (separability {TYPICAL}) needs about {need} test pairs."


def chart_rows(vc: VibeCheckResult) -> list[dict[str, Any]]:
    """One row per kept vibe for the diverging chart: test separability, its interval, the model higher."""
    rows = []
    for v in vc.vibes:
        if not v.kept or v.separability is None:
            continue
        low, high = v.separability_ci or (v.separability, v.separability)
        rows.append({"vibe": v.name, "separability": round(v.separability, 4), "ci_low": round(max(-1.0, low), 4),
                     "ci_high": round(min(1.0, high), 4),
                     "higher": vc.model_a if v.separability > 0 else vc.model_b if v.separability < 0 else "neither"})
    return rows
