"""The options a spec gives a vibecheck analysis, typed, with their defaults. In a module of their own so that
the method, its analysis and its pages all read them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

from engine.api.methods import UNIQUE_LIST, PairOptions, Setting

if TYPE_CHECKING:
    from engine.api.spec import Vibe


@dataclass(frozen=True)
class Regression:
    """Which kept vibes enter the regressions: `lars`, VibeCheck's first `top` to enter a least-angle
    regression path predicting model identity on the training pairs, or `all`."""

    select: Annotated[str, Setting(
        "Which kept vibes enter the regressions: lars (default, as VibeCheck) takes the first `top` to enter a "
        "least-angle regression path predicting model identity on the training pairs; all takes every kept vibe.",
        constraints={"enum": ["lars", "all"]})] = "lars"
    top: Annotated[int, Setting("How many vibes lars selection keeps (default 10, as the paper).", minimum=1)] = 10


LABEL_COLUMN = {"type": "object", "additionalProperties": False, "required": ["vibe", "column"], "properties": {
    "vibe": {"type": "string", "description": "The vibe the column's labels are about."},
    "column": {"type": "string", "description": "The dataset's column holding a label per prompt: a, b or neither, a "
                                                "model's name, or scores [A's, B's]."},
    "labeller": {"type": "string", "description": "Who wrote the column's labels (default: the column's name)."}}}


@dataclass(frozen=True)
class ValidationLabels:
    """People's labels of the pairs: `files`, each shaped as Inspect Scout's validation sets (id, label_<vibe>,
    split, labeller), relative to the spec, and `columns` of the dataset itself (each {vibe, column, labeller});
    `dev`: the share of labelled prompts put in the dev split where a label has none."""

    files: Annotated[list[str], Setting(
        "Labels files (CSV or JSON lines, relative to the spec), shaped as Inspect Scout's validation sets and as "
        "the explorer's label view downloads them: id (the pair's prompt id), label_<vibe> (a, b or neither), and "
        "optionally split (dev or test), labeller, and model_a and model_b (the two models a and b are, as the "
        "label view writes them; needed where the analysis has a reference, and a row of another comparison is "
        "skipped).", constraints={"minItems": 1})] = field(default_factory=list)
    columns: Annotated[list[dict[str, str]], Setting(
        "Labels the dataset ships in its own columns, one per prompt (data with people's labels of a vibe).",
        schema={"type": "array", "minItems": 1, "items": LABEL_COLUMN})] = field(default_factory=list)
    dev: Annotated[float, Setting(
        "Share of the labelled prompts put in the dev split where a file gives no split (default 0.5); the rest "
        "are test labels.", constraints={"exclusiveMinimum": 0, "exclusiveMaximum": 1})] = 0.5


@dataclass(frozen=True)
class VibeCheckOptions(PairOptions):
    vibes: Annotated[list[str] | None, Setting("The vibes this analysis scores (default: every vibe of the spec).",
                                               constraints=UNIQUE_LIST)] = None
    regression: Annotated[Regression, Setting(
        "How the kept vibes are chosen for the model-matching and preference regressions.")] = field(
        default_factory=Regression)
    preference_judges: Annotated[list[str], Setting(
        "LLM judges asked which answer serves the user better, on every pair in both orders; the page reports "
        "their position consistency and, where the dataset has labels, their agreement with them.",
        constraints=UNIQUE_LIST)] = field(default_factory=list)
    validation: Annotated[ValidationLabels | None, Setting(
        "People's labels of the pairs, to check the judges against: agreement and Cohen's kappa per judge and "
        "vibe on dev and test labels, people's agreement with each other where several labelled a pair, and each "
        "vibe's separability corrected with the labels (prediction-powered inference).")] = None

    def measured(self, declared: tuple[Vibe, ...]) -> list[Vibe]:
        """The vibes of `declared` the analysis measures: those it lists, or all of them."""
        return [v for v in declared if not self.vibes or v.name in self.vibes]
