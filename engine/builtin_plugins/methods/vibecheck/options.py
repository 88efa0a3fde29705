"""The options a spec gives a vibecheck analysis, typed, with their defaults. In a module of their own so that
the method, its analysis and its pages all read them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.api.methods import PairOptions

if TYPE_CHECKING:
    from engine.api.spec import Vibe


@dataclass(frozen=True)
class Regression:
    """Which kept vibes enter the regressions: `lars`, VibeCheck's first `top` to enter a least-angle
    regression path predicting model identity on the training pairs, or `all`."""

    select: str = "lars"
    top: int = 10


@dataclass(frozen=True)
class ValidationLabels:
    """People's labels of the pairs: `files`, each shaped as Inspect Scout's validation sets (id, label_<vibe>,
    split, labeller), relative to the spec, and `columns` of the dataset itself (each {vibe, column, labeller});
    `dev`: the share of labelled prompts put in the dev split where a label has none."""

    files: list[str] = field(default_factory=list)
    columns: list[dict[str, str]] = field(default_factory=list)
    dev: float = 0.5


@dataclass(frozen=True)
class VibeCheckOptions(PairOptions):
    vibes: list[str] | None = None  # None: every declared (and discovered) vibe
    regression: Regression = field(default_factory=Regression)
    preference_judges: list[str] = field(default_factory=list)
    validation: ValidationLabels | None = None

    def measured(self, declared: tuple[Vibe, ...]) -> list[Vibe]:
        """The vibes of `declared` the analysis measures: those it lists, or all of them."""
        return [v for v in declared if not self.vibes or v.name in self.vibes]
