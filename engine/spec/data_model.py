"""Typed view of a spec's datasets: where the data is, which columns hold what, who labelled it, and the columns
each named format (AlpacaEval, LLM Comparator, Inspect, battle logs) writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.spec.paths import resolve_path


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
    name: str
    source: DatasetSource
    fields: dict[str, str]
    outputs: dict[str, str]  # model name -> column
    preference_values: dict[str, str]
    scores: dict[str, str] = field(default_factory=dict)  # model name -> column of a recorded score
    filters: tuple[dict[str, Any], ...] = ()
    limit: int | None = None
    seed: int = 0
    labels: Labels = field(default_factory=lambda: Labels())
    preferences: dict[str, ComparisonLabels] = field(default_factory=dict)  # model -> its labels vs the reference
    format: str = "wide"  # wide, or a tidy format (TIDY_FORMATS) whose rows the reader gathers per prompt
    winner_values: dict[str, str] | str = field(default_factory=dict)  # battles: label -> a | b | tie | model; "sign"
    model_names: dict[str, str] = field(default_factory=dict)  # a model's name in the file -> its name in the spec


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


# Formats whose rows hold one answer (long, inspect) or one comparison of two (battles and its presets) rather
# than every model's answer to a prompt: the reader gathers them into one row per prompt.
TIDY_FORMATS = ("long", "battles", "alpaca-eval", "llm-comparator", "inspect")


BATTLE_FORMATS = ("battles", "alpaca-eval", "llm-comparator")


# The columns each named format writes, used where the spec's `fields` does not say otherwise.
PRESET_FIELDS: dict[str, dict[str, str]] = {
    # AlpacaEval writes two kinds of file: model_outputs.json (one answer per row) and annotations.json (the
    # reference, generator_1, against a model, generator_2); a preset dataset may read both.
    "alpaca-eval": {"id": "instruction", "prompt": "instruction", "category": "dataset", "model": "generator",
                    "answer": "output", "model_a": "generator_1", "answer_a": "output_1", "model_b": "generator_2",
                    "answer_b": "output_2", "winner": "preference"},
    "llm-comparator": {"prompt": "input_text", "category": "tags.0", "model_a": "model_a", "answer_a": "output_text_a",
                       "model_b": "model_b", "answer_b": "output_text_b", "winner": "score"},
    "inspect": {"id": "id", "prompt": "input", "model": "model", "answer": "output", "score": "score",
                "reference": "target"},
}


# How each format's winner column reads when `winner_values` is not given: a side (a, b), a tie, or "sign"
# (positive favours A). AlpacaEval's preference is 1 or 2, and its weighted annotators write a value between.
PRESET_WINNERS: dict[str, dict[str, str] | str] = {
    "battles": {"a": "a", "b": "b", "model_a": "a", "model_b": "b", "tie": "tie", "tie (bothbad)": "tie",
                "both_bad": "tie", "draw": "tie"},
    "alpaca-eval": {"1": "a", "2": "b"},
    "llm-comparator": "sign",
}


def recorded_models(doc: dict[str, Any], dataset: str) -> list[str]:
    """The recorded models whose answers the analyses of `dataset` read: what a long table must hold."""
    models = doc.get("models") or {}
    used = [m for a in (doc.get("analyses") or {}).values() if a.get("dataset") == dataset for m in a.get("models", [])]
    return [m for m in dict.fromkeys(used) if (models.get(m) or {}).get("provider") == "recorded"]


def dataset_from(name: str, raw: dict[str, Any], base: Path, recorded: list[str]) -> Dataset:
    src = raw["source"]
    paths = [src["path"]] if "path" in src else list(src.get("paths", []))
    form = raw.get("format", "wide")
    given = raw.get("fields") or {}
    fields = {k: v for k, v in {**PRESET_FIELDS.get(form, {}), **given}.items()
              if k not in ("outputs", "scores", "preferences")}
    tidy = form in TIDY_FORMATS
    outputs = ({m: LONG_ANSWER + m for m in recorded} if tidy else dict(given.get("outputs", {})))
    scores = ({m: LONG_SCORE + m for m in recorded} if tidy and "score" in fields
              else dict(given.get("scores", {})))
    return Dataset(
        name=name,
        source=DatasetSource(
            paths=tuple(resolve_path(base, p) for p in paths),
            format=src.get("format"),
            urls=tuple(src.get("urls", ())),
            hub=src.get("hub"),
            hub_files=tuple(src.get("hub_files", ())),
            dedupe_on=tuple(src.get("dedupe_on", ())),
            join={k: (resolve_path(base, v["path"]), v["field"]) for k, v in src.get("join", {}).items()},
        ),
        fields=fields,
        outputs=outputs,
        preference_values=dict(raw.get("preference_values", {})),
        scores=scores,
        filters=tuple(raw.get("filters", ())),
        limit=raw.get("limit"),
        seed=raw.get("seed", 0),
        labels=Labels(**raw["labels"]) if "labels" in raw else Labels(),
        preferences={model: ComparisonLabels(entry["column"], dict(entry["values"]))
                     for model, entry in given.get("preferences", {}).items()},
        format=form,
        winner_values=raw.get("winner_values", PRESET_WINNERS.get(form, {})),
        model_names=dict(raw.get("model_names", {})),
    )
