"""Vibes turn by turn: in conversations, each model's separability against the reference on each assistant
turn alone, and how it moves from the first turn to a later one (does a model turn terser, or more list-heavy,
when asked to revise?).

One turn holds at most one pair per conversation, so a turn's cell is over independent conversations: its 95%
interval is Tango's score interval over their verdicts (−1, 0 or +1 each) and its p-value an exact sign test
(one-sided in the training direction, on held-out conversations only, for a discovered vibe; two-sided for a
declared one). The change from turn 1 is
paired within conversations (ν on turn k minus ν on turn 1, over conversations that have both), with a
betting interval over those conversations (`stats.change_interval`). Every turn cell of the profile is one family under
Benjamini–Hochberg (5% false discovery rate); a profile adds its overall grid's cells to that family.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from engine.api.analysis import stats
from engine.api.spec import Vibe
from engine.builtin_plugins.methods.vibecheck.records import TurnCell, VibeCheckResult

TURN_TEST = ("per turn: an exact sign test over conversations (one-sided in the training direction on held-out "
             "conversations for a discovered vibe, two-sided for a declared one), Benjamini–Hochberg over every turn "
             "cell, a family of its own apart from the headline's; the change from turn 1: a betting interval over the "
             "conversations that have both turns")


def turn_cells(comparisons: list[VibeCheckResult], vibes: list[Vibe], held_out: dict[str, bool]) -> list[TurnCell]:
    """Every (model, vibe, turn) cell of comparisons whose pairs are turns of conversations; none otherwise."""
    cells = []
    for vc in comparisons:
        turns = sorted({p.turn for p in vc.pairs if p.turn is not None})
        if len(turns) < 2:
            continue
        for vibe in vibes:
            score = next((v for v in vc.vibes if v.name == vibe.name), None)
            direction = int(np.sign(score.separability_train)) if held_out[vibe.name] and score is not None else 0
            by_turn = {t: {p.cluster: float(v) for p in vc.pairs if p.turn == t and (v := p.nu[vibe.name]) is not None
                           and (not held_out[vibe.name] or p.split == "test")} for t in turns}
            for t in turns:
                first = by_turn[turns[0]] if t != turns[0] else None
                cells.append(_cell(vc.model_a, vibe.name, t, by_turn[t], first, direction))
    adjusted = stats.benjamini_hochberg([c.p_value for c in cells])
    return [replace(c, p_adjusted=q) for c, q in zip(cells, adjusted, strict=True)]


def _cell(model: str, vibe: str, turn: int, verdicts: dict[str, float], first: dict[str, float] | None,
          direction: int) -> TurnCell:
    """One turn's cell from its verdicts (conversation → ν), and its change from the first turn's (`first`)."""
    nu = np.array(list(verdicts.values()), dtype=float)
    if not len(nu):
        return TurnCell(model, vibe, turn, None, None, None, 0)
    low, high = stats.verdict_interval(nu)  # one verdict per conversation: Tango's score interval
    cell = TurnCell(model, vibe, turn, float(nu.mean()), low, high, len(nu), stats.sign_test(nu, direction))
    both = [c for c in verdicts if c in first] if first is not None else []
    if first is None or not both:
        return cell
    change = np.array([verdicts[c] - first[c] for c in both])
    change_low, change_high = stats.change_interval(change)
    return replace(cell, change=float(change.mean()), change_low=change_low, change_high=change_high,
                   change_n=len(both))
