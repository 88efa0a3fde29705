"""What a judge kind that learns from people's labels is given and gives back (`JudgeKind.learns`).

Such a judge is not asked pair by pair while the run executes: its verdicts depend on every labelled pair at
once, so a method fits it when it reads the run's answers, on the labels of its analysis' development split
only. It gives a verdict on every pair, and for a pair whose unit it learned from, a verdict from a fit that
left that unit out (cross-fitted), so no verdict a page compares with a person's label was fitted to it. In the
reference role it learns recorded ratings of answers, and rates each model's answers by a fit that never saw
that model's ratings."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PairToFit:
    """One pair of the comparison as a learning judge reads it."""

    prompt: str
    a: str
    b: str
    reference: str | None
    unit: str  # its independent unit (the conversation, else the prompt): a fold never splits one
    # people's development labels of this pair (+1 A higher, −1 B higher, 0 neither), each a training row; a
    # pair without one (unlabelled, or labelled on the test split) teaches the judge nothing
    labels: tuple[int, ...] = ()


@dataclass(frozen=True)
class FittedVerdicts:
    """A learning judge's verdicts, one per pair in the order given (None where it gives none). A pair that
    carries labels gets its verdict from a fit that left its unit out: that pair is the cross-fitted one."""

    scores: list[int | None]
    # the fitted probability that people who put one answer higher put A higher (above ½: it leans to A)
    probability: list[float | None]
    description: str  # how it was fitted, for the page: labels, units, regularization, cross-fitted agreement


@dataclass(frozen=True)
class AnswerToRate:
    """One answer as a judge that learns ratings reads it (the reference role)."""

    prompt: str
    answer: str
    reference: str
    unit: str  # its prompt (a conversation's turns share one)
    group: str  # who wrote it (the model): a fit never rates a group whose ratings it learned from
    rating: float | None = None  # its recorded rating (1–5), where the dataset gives one


@dataclass(frozen=True)
class FittedRatings:
    """A learning judge's ratings (1–5), one per answer in the order given (None where it gives none)."""

    ratings: list[float | None]
    description: str  # how it was fitted, for the page
