"""The options a spec gives a reference analysis, typed, with their defaults. In a module of their own so that
the method, its analysis and its pages all read them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from engine.api.methods import Options, Setting


@dataclass(frozen=True)
class ReferenceOptions(Options):
    judge: Annotated[str, Setting("The judge that rates each answer against its reference.")]
    repeats: Annotated[int, Setting("LLM judge: ratings per answer, averaged (Vibe-Eval: 3). Offline judges are "
                                    "deterministic and rate once.", minimum=1, maximum=10)] = 3
    tie_gap: Annotated[float, Setting(
        "Rating gap below which two answers tie in the derived pairwise preferences (default 2, as Vibe-Eval: a "
        "one-point difference is no preference).", minimum=0, maximum=4)] = 2.0
    ties: Annotated[str, Setting(
        "How ties enter the Bradley-Terry and Elo rankings of the derived preferences: drop (default, as "
        "Vibe-Eval: only preferences stronger than a tie are fitted) or half (half a win each, as Chatbot Arena).",
        constraints={"enum": ["drop", "half"]})] = "drop"
    seed: Annotated[int, Setting("Seed of the bootstrap intervals.")] = 0
    bootstrap: Annotated[int, Setting("Bootstrap rounds for score intervals (default 1000).", minimum=0,
                                      maximum=100000)] = 1000
