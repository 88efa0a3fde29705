"""Typed records of a spec's datasets: where the data is, which columns hold what and who labelled it (read
from a spec by `engine.spec.dataset_entries`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class DatasetSource:
    paths: tuple[Path, ...] = ()
    format: str | None = None
    urls: tuple[str, ...] = ()
    hub: str | None = None
    hub_files: tuple[str, ...] = ()
    dedupe_on: tuple[str, ...] = ()
    join: dict[str, tuple[Path, str]] = field(default_factory=dict)  # column -> (file, field)


@dataclass(frozen=True)
class Dataset:
    """A dataset of the spec: where it is read from, its format, and which columns hold what."""

    name: str
    source: DatasetSource
    fields: dict[str, str]
    outputs: dict[str, str]  # model name -> column
    preference_values: dict[str, str | None]  # raw label -> model or tie; None: the value gives no label
    scores: dict[str, str] = field(default_factory=dict)  # model name -> column of a recorded score
    filters: tuple[dict[str, Any], ...] = ()
    limit: int | None = None
    seed: int = 0
    labels: Labels = field(default_factory=lambda: Labels())
    preferences: dict[str, ComparisonLabels] = field(default_factory=dict)  # model -> its labels vs the reference
    format: str = "wide"  # a registered format (`engine.formats`): how the reader gathers rows per prompt
    winner_values: dict[str, str] | str = field(default_factory=dict)  # battles: label -> a | b | tie | model; "sign"
    model_names: dict[str, str] = field(default_factory=dict)  # a model's name in the file -> its name in the spec
    unit: str = "turn"  # conversation formats: what is judged (turn | final | conversation)
    context_tokens: int = 1000  # conversation formats: the earlier turns an LLM judge is shown, at most


@dataclass(frozen=True)
class ComparisonLabels:
    """Where a dataset labels one model's answer against a reference's on the same row: the column, and
    what each value favours (a model name or 'tie')."""

    column: str
    values: dict[str, str]


@dataclass(frozen=True)
class Labels:
    """Who wrote a dataset's preference labels. A page that says "people preferred" must be able to show
    that people did: an LLM judge's or a reward model's labels are named as such."""

    source: str = "unknown"  # human | llm-judge | reward-model | metric | unknown
    description: str = ""

    def who(self) -> str:
        """The labeller in a few words, for sentences such as "which answer {who} preferred"."""
        return {"human": "people", "llm-judge": "an LLM judge", "reward-model": "a reward model",
                "metric": "a metric"}.get(self.source, "the labellers (not declared)")


LONG_ANSWER = "\0answer\0"  # the columns a tidy source's answers (and scores) are gathered into


LONG_SCORE = "\0score\0"
