"""The typed options of a rankings analysis, with their defaults: in a module of their own so that the method and
its vibe control both read them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from engine.api.methods import UNIQUE_LIST, Options, Setting


@dataclass(frozen=True)
class ControlOptions:
    """`control:` of a rankings analysis: which vibes to control for and how the prompts are split."""

    vibes: Annotated[list[str] | str, Setting(  # "discover": chosen from every text metric on the training prompts
        "discover (default): chosen on the training prompts from every text metric and every declared vibe with a "
        "metric; or a list of those, fixed in advance.",
        schema={"oneOf": [{"const": "discover"}, {"type": "array", "items": {"type": "string"}, **UNIQUE_LIST}]})
    ] = "discover"
    max_vibes: Annotated[int, Setting("At most this many vibes are chosen (default 4).", minimum=1, maximum=20)] = 4
    train: Annotated[float, Setting(
        "Share of the prompts (or conversations) that choose the vibes and train the held-out comparison; the rest "
        "test (default 0.5).", constraints={"exclusiveMinimum": 0, "exclusiveMaximum": 1})] = 0.5


@dataclass(frozen=True)
class RankingsOptions(Options):
    outcomes: Annotated[str, Setting(
        "labels: the dataset's preference labels between two models, whoever wrote them (datasets.<name>.labels "
        "says who; 'human' is the older name of this choice); scores: per-item comparisons of recorded scores "
        "across all models.", constraints={"enum": ["labels", "human", "scores"]})]
    methods: Annotated[list[str], Setting(
        "The rating methods to rank by (bradley_terry, elo, style_controlled: Arena's four style features; "
        "vibe_controlled: vibes chosen on training prompts, fitted on the rest, see control).",
        schema={"type": "array", "items": {"enum": ["bradley_terry", "elo", "style_controlled", "vibe_controlled"]},
                **UNIQUE_LIST})] = field(default_factory=lambda: ["bradley_terry", "elo"])
    # percentile intervals: at 200 rounds their endpoints' Monte Carlo error left 95% intervals covering 92.8%
    bootstrap: Annotated[int, Setting("Bootstrap rounds for the ratings' intervals.", minimum=0,
                                      maximum=100000)] = 1000
    seed: Annotated[int, Setting("Seed of the analysis' random choices (bootstrap, sampling).")] = 0
    tie_gap: Annotated[float, Setting("scores: a difference below this is a tie (default 1: only equal scores tie).",
                                      minimum=0)] = 1.0
    ties: Annotated[str | None, Setting(  # None: the convention of where the outcomes come from (see TIE_RULES)
        "How ties enter the fits: half (half a win each, as Chatbot Arena) or drop (left out, as Vibe-Eval). "
        "Default: half for outcomes: labels, drop for outcomes: scores.", constraints={"enum": ["half", "drop"]})
    ] = None
    k: Annotated[float, Setting("Elo's K factor.", constraints={"exclusiveMinimum": 0})] = 4.0
    control: Annotated[ControlOptions, Setting(  # for the vibe_controlled method
        "What vibe_controlled controls for, and the split of the prompts that chooses it.")] = field(
        default_factory=ControlOptions)

    def tie_rule(self) -> str:
        return self.ties or TIE_RULES["scores" if self.outcomes == "scores" else "labels"]


# A vote between two answers follows Chatbot Arena, where a tie is half a win for each side; ratings compared
# item by item follow Vibe-Eval, where a tie says nothing about which answer is better and is left out.
TIE_RULES = {"labels": "half", "scores": "drop"}
