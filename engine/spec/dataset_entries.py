"""A spec's `datasets:` block read into typed `Dataset` records: the format's own columns filled in where the
spec names none, paths resolved against the spec's folder, and a tidy source's recorded models named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.formats import dataset_format
from engine.provider_table import is_recorded
from engine.spec.data_model import (
    LONG_ANSWER,
    LONG_SCORE,
    ComparisonLabels,
    Dataset,
    DatasetSource,
    Labels,
)
from engine.spec.paths import resolve_path


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
        unit=raw.get("unit", "turn"),
        context_tokens=raw.get("context_tokens", 1000),
    )
