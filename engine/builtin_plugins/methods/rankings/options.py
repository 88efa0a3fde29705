"""The typed options of a rankings analysis, with their defaults: in a module of their own so that the method and
its vibe control both read them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.api.methods import Options


@dataclass(frozen=True)
class ControlOptions:
    """`control:` of a rankings analysis: which vibes to control for and how the prompts are split."""

    vibes: list[str] | str = "discover"  # "discover": chosen from every text metric on the training prompts
    max_vibes: int = 4
    train: float = 0.5  # share of the prompts (or conversations) that choose the vibes


@dataclass(frozen=True)
class RankingsOptions(Options):
    outcomes: str = "labels"  # labels (or its older name, human) | scores
    methods: list[str] = field(default_factory=lambda: ["bradley_terry", "elo"])
    # percentile intervals: at 200 rounds their endpoints' Monte Carlo error left 95% intervals covering 92.8%
    bootstrap: int = 1000
    seed: int = 0
    tie_gap: float = 1.0
    ties: str | None = None  # None: the convention of where the outcomes come from (see TIE_RULES)
    k: float = 4.0
    control: ControlOptions = field(default_factory=ControlOptions)  # for the vibe_controlled method

    def tie_rule(self) -> str:
        return self.ties or TIE_RULES["scores" if self.outcomes == "scores" else "labels"]


# A vote between two answers follows Chatbot Arena, where a tie is half a win for each side; ratings compared
# item by item follow Vibe-Eval, where a tie says nothing about which answer is better and is left out.
TIE_RULES = {"labels": "half", "scores": "drop"}
