"""What a dataset reader yields: typed items, and the one error every reader raises (located at file:row
and field)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class DatasetError(Exception):
    """Bad input, said with the file, the row and the field that hold it."""


@dataclass(frozen=True)
class Battle:
    """One labelled comparison of two models' answers to a prompt, as a battle log records it."""

    model_a: str
    model_b: str
    winner: str  # model_a, model_b or "tie"
    share: float | None = None  # a graded label's share of the win for model_a (None: the winner takes it all)


@dataclass(frozen=True)
class Item:
    """One prompt with whatever the dataset knows about it."""

    id: str
    prompt: str
    reference: str | None = None
    difficulty: str | None = None
    category: str | None = None
    image: str | None = None
    preference: str | None = None  # a model name, "tie", or None when unlabelled
    raw_preference: str | None = None  # the label as the dataset wrote it
    tests: str | None = None  # Python test code for the answer (a unit_tests judge runs it)
    outputs: dict[str, str] = field(default_factory=dict)  # recorded output per model name
    scores: dict[str, float] = field(default_factory=dict)  # recorded score of each model's output
    preferences: dict[str, str] = field(default_factory=dict)  # model -> label of its answer vs the reference's
    battles: tuple[Battle, ...] = ()  # labelled comparisons a battle log holds on this prompt
    # a turn of a conversation (`engine.datasets.conversations`): the conversation's id (the unit analyses
    # resample and split by), which assistant turn is judged (1-based; None for a whole transcript), the user's
    # earlier turns (a generated model answers them first), and per recorded model the messages before this
    # turn (a judge's context) and this turn's assistant and tool messages (the page shows tool calls apart)
    conversation: str | None = None
    turn: int | None = None
    earlier: tuple[str, ...] = ()
    history: dict[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    transcript: dict[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)

    @property
    def cluster(self) -> str:
        """The independent unit this item belongs to: its conversation, else itself."""
        return self.conversation or self.id

    def label_share(self, model: str, other: str) -> float | None:
        """A graded label's share of the win for `model` in its battle with `other` (AlpacaEval's weighted
        annotator); None where the label is all or nothing."""
        for battle in self.battles:
            if {battle.model_a, battle.model_b} == {model, other} and battle.share is not None:
                return battle.share if battle.model_a == model else 1 - battle.share
        return None

    def label(self, model: str, other: str) -> str | None:
        """The label of the comparison of `model` with `other` on this prompt: the battle between the two
        where a battle log has one; else `model`'s own column against the reference, else the row's single
        preference (a wide table labels one comparison per row)."""
        for battle in self.battles:
            if {battle.model_a, battle.model_b} == {model, other}:
                return battle.winner
        if self.battles:
            return None
        return self.preferences.get(model, self.preference)
