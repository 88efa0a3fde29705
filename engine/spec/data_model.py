"""Typed view of a spec's datasets: where the data is, which columns hold what (the format's own columns
filled in where the spec does not name them) and who labelled it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.formats import dataset_format
from engine.provider_table import is_recorded
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
    format: str = "wide"  # a registered format (`engine.formats`): how the reader gathers rows per prompt
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


def recorded_models(doc: dict[str, Any], dataset: str) -> list[str]:
    """The recorded models whose answers the analyses of `dataset` read: what a long table must hold."""
    models = doc.get("models") or {}
    used = [m for a in (doc.get("analyses") or {}).values() if a.get("dataset") == dataset for m in a.get("models", [])]
    return [m for m in dict.fromkeys(used) if is_recorded((models.get(m) or {}).get("provider"))]


def dataset_from(name: str, raw: dict[str, Any], base: Path, recorded: list[str]) -> Dataset:
    src = raw["source"]
    paths = [src["path"]] if "path" in src else list(src.get("paths", []))
    form = dataset_format(raw.get("format"))
    given = raw.get("fields") or {}
    fields = {k: v for k, v in {**form.fields, **given}.items() if k not in ("outputs", "scores", "preferences")}
    tidy = form.tidy
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
        format=form.name,
        winner_values=raw.get("winner_values", form.winners),
        model_names=dict(raw.get("model_names", {})),
    )
