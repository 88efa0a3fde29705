"""Dataset stage: a spec's dataset declaration → a list of typed `Item`s.

Local files are always read when present; when a declared local path is missing, the public copy (`urls`,
or `hub` + `hub_files`) is downloaded to that path if the network allows, otherwise the error says exactly
where the data comes from. Rows are read as the dataset's format (`engine.formats`) says, one row per prompt,
then joins, de-duplication, filters and the seeded `limit` sample are applied, so the same spec always yields
the same items.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from engine.datasets.conversations import REDACTED, conversation_items
from engine.datasets.files import ensure_local, read_rows
from engine.datasets.items import DatasetError, Item
from engine.datasets.mapped_columns import absent_columns
from engine.datasets.rows import field_value, mapped_label, text_value
from engine.datasets.shapes import TableRecords
from engine.datasets.tidy import BATTLES, WHERE
from engine.formats import Located, dataset_format
from engine.spec.data_model import ComparisonLabels, Dataset


def load_items(ds: Dataset, models: frozenset[str] | None = None, excluded: list[str] | None = None,
               redacted: Counter[str] | None = None, located: Located | None = None) -> list[Item]:
    """The dataset's items. With `models`, every preference label must name one of them or 'tie' after
    `preference_values` maps it: a label that names no model would otherwise turn into a missing one, and
    an analysis would rank or regress on whatever few labels happen to match. A conversation format's
    conversations that cannot be compared are left out and said in `excluded`, and the secrets an agent log's
    reader took out are counted by kind in `redacted` (each when given). `located`: the dataset's records where
    the caller has read them already (`vibe validate`, which checks their columns first), so no file is read
    twice."""
    form = dataset_format(ds.format)
    if located is None:
        located = [record for path in ensure_local(ds) for record in form.records(path, ds)]
    if isinstance(form, TableRecords) and located:
        _refuse_absent_columns(ds, [row for _, row in located], form.fields)
    rows = form.rows(ds, _dedupe(located, ds.source.dedupe_on))
    id_field = ds.fields.get("id")
    joined = {column: _index(file, id_field, value) for column, (file, value) in ds.source.join.items()}
    for n, row in enumerate(rows):
        key = str(row[id_field]) if id_field else str(n)
        for column, index in joined.items():
            row[column] = index.get(key)
    read = len(rows)
    rows = [r for r in rows if all(_keep(r, f) for f in ds.filters)]
    if not rows:  # an empty file runs to a page of [-inf, inf] intervals that reads like a result
        why = f"its filters keep none of its {read} rows" if read else "it has no rows"
        raise DatasetError(f"dataset {ds.name!r} ({_files(ds)}): {why}, so there is nothing to compare")
    if form.conversations:
        if redacted is not None:
            for row in rows:
                redacted.update(row.get(REDACTED) or {})
        items = [item for row in rows for item in conversation_items(ds, row, excluded if excluded is not None else [])]
        wheres = [f"dataset {ds.name!r}: conversation {item.cluster!r}" for item in items]
    else:
        wheres = [str(row.get(WHERE) or f"dataset {ds.name!r}: row {n}") for n, row in enumerate(rows)]
        items = [_item(ds, n, where, row) for n, (where, row) in enumerate(zip(wheres, rows, strict=True))]
        said: list[str] = excluded if excluded is not None else []
        items, wheres = _leave_out_empty_and_repeated(items, wheres, said)
        if not items:
            raise DatasetError(f"dataset {ds.name!r}: every row was left out ({said[0]}; {len(said)} in all), so "
                               "there is nothing to compare")
    if models is not None:
        check_labels(ds, items, models, wheres)
    _check_unique(ds, items, wheres)
    clusters = list(dict.fromkeys(it.cluster for it in items))
    if ds.limit is not None and ds.limit < len(clusters):  # a conversation is kept or left out whole
        kept = set(random.Random(ds.seed).sample(clusters, ds.limit))
        items = [it for it in items if it.cluster in kept]
    return items


def _leave_out_empty_and_repeated(items: list[Item], wheres: list[str],
                                  excluded: list[str]) -> tuple[list[Item], list[str]]:
    """Empty answer cells, and rows that repeat an earlier row's prompt and answers, left out and said in
    `excluded` (a run prints the count and the first few): an empty cell is most often a missing answer, so
    that model is left out of the prompt's comparisons (its answer, score, label and battles) while the other
    models keep theirs; a row left with fewer than two answers is left out whole. A repeated row would count one
    comparison twice."""
    kept: list[tuple[Item, str]] = []
    first: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}
    for item, where in zip(items, wheres, strict=True):
        empty = [model for model, text in item.outputs.items() if not text.strip()]
        if empty and len(item.outputs) - len(empty) >= 2:
            excluded.append(f"{where}: {', '.join(empty)}'s answer is empty: left out of this prompt's comparisons "
                            f"(the other {len(item.outputs) - len(empty)} answers kept)")
            item, empty = _without(item, set(empty)), []
        key = (item.prompt, tuple(sorted(item.outputs.items())))
        if empty:
            excluded.append(f"{where}: {', '.join(empty)}'s answer is empty")
        elif item.outputs and key in first:
            excluded.append(f"{where}: the same prompt and answers as {first[key]}")
        else:
            first.setdefault(key, where)
            kept.append((item, where))
    return [item for item, _ in kept], [where for _, where in kept]


def _without(item: Item, gone: set[str]) -> Item:
    """`item` with nothing of the models in `gone`: no answer, score, label, battle or conversation of theirs."""
    return replace(item, outputs={m: t for m, t in item.outputs.items() if m not in gone},
                   scores={m: v for m, v in item.scores.items() if m not in gone},
                   preferences={m: v for m, v in item.preferences.items() if m not in gone},
                   preference=None if item.preference in gone else item.preference,
                   battles=tuple(b for b in item.battles if b.model_a not in gone and b.model_b not in gone),
                   history={m: v for m, v in item.history.items() if m not in gone},
                   transcript={m: v for m, v in item.transcript.items() if m not in gone})


def _refuse_absent_columns(ds: Dataset, rows: list[dict[str, Any]], preset: dict[str, str]) -> None:
    """A mapped column that none of the dataset's tables has, named with its files (`vibe validate` locates
    the same problem at the spec's field)."""
    absent = absent_columns(ds, rows, preset)
    if absent:
        where, _, said = absent[0]
        raise DatasetError(f"{_files(ds)}: {said}; dataset {ds.name!r} maps it as fields.{'.'.join(where)}")


def _files(ds: Dataset) -> str:
    """The dataset's source files, as an error names them."""
    return ", ".join(str(p) for p in ds.source.paths) or "its source"


def _check_unique(ds: Dataset, items: list[Item], wheres: list[str]) -> None:
    """Refuse two items with one id, naming the id and where each sits."""
    first: dict[str, int] = {}
    for n, item in enumerate(items):
        earlier = first.setdefault(item.id, n)
        if earlier != n:
            raise DatasetError(f"{wheres[n]}: id {item.id!r} is taken by {wheres[earlier]} (dataset {ds.name!r}: "
                               "ids are not unique; map fields.id to a unique column)")


def check_labels(ds: Dataset, items: list[Item], models: frozenset[str], wheres: list[str] | None = None) -> None:
    """Raise a DatasetError naming every preference value that maps to no model (with its count and where the
    first sits: `wheres`, one per item, else its position) and the `preference_values` entry that would fix it."""
    where = wheres or [f"row {n}" for n in range(len(items))]
    unmapped: dict[str, list[int]] = {}
    for n, item in enumerate(items):
        if item.preference is not None and item.preference != "tie" and item.preference not in models:
            unmapped.setdefault(item.raw_preference or item.preference, []).append(n)
    for model, labels in ds.preferences.items():
        wrong = [n for n, item in enumerate(items) if item.preferences.get(model) not in (None, "tie", *models)]
        if wrong:
            value = items[wrong[0]].preferences[model]
            raise DatasetError(
                f"dataset {ds.name!r}: fields.preferences.{model}: column {labels.column!r} holds {value!r} "
                f"({len(wrong)} rows, the first at {where[wrong[0]]}), which names no model; map it under values: "
                f"{{{value!r}: <model or tie>}}")
    if not unmapped:
        return
    column = ds.fields["preference"]
    listed = ", ".join(f"{value!r} ({len(rows)} rows, the first at {where[rows[0]]})"
                       for value, rows in sorted(unmapped.items(), key=lambda kv: -len(kv[1]))[:8])
    example = ", ".join(f"{value!r}: <model or tie>" for value in list(unmapped)[:3])
    raise DatasetError(
        f"dataset {ds.name!r}: the preference column {column!r} holds values that name no model: {listed}. "
        f"Models: {', '.join(sorted(models))}. Map each value with preference_values: {{{example}}} (null for a "
        "value that gives no label)")


def _index(path: Path, id_field: str | None, value_field: str) -> dict[str, Any]:
    if id_field is None:
        raise DatasetError(f"{path}: joining files needs fields.id")
    return {str(r[id_field]): r.get(value_field) for r in read_rows(path)}


def _dedupe(rows: list[tuple[str, dict[str, Any]]], keys: tuple[str, ...]) -> list[tuple[str, dict[str, Any]]]:
    if not keys:
        return rows
    seen: set[tuple[Any, ...]] = set()
    out = []
    for where, row in rows:
        key = tuple(str(field_value(row, k)) for k in keys)
        if key not in seen:
            seen.add(key)
            out.append((where, row))
    return out


def _keep(row: dict[str, Any], rule: dict[str, Any]) -> bool:
    value = field_value(row, rule["field"])
    if "equals" in rule and value != rule["equals"]:
        return False
    if "in" in rule and value not in rule["in"]:
        return False
    if "not_in" in rule and value in rule["not_in"]:
        return False
    text = "" if value is None else str(value)
    if "min_length" in rule and len(text) < rule["min_length"]:
        return False
    return not ("max_length" in rule and len(text) > rule["max_length"])


def _image(ds: Dataset, value: str | None) -> str | None:
    """URLs pass through; a file name is read relative to the dataset file, as the dataset's rows are."""
    if not value or "://" in value or value.startswith("data:") or Path(value).is_absolute() or not ds.source.paths:
        return value
    return str(ds.source.paths[0].parent / value)


def _item(ds: Dataset, n: int, where: str, row: dict[str, Any]) -> Item:
    f = ds.fields
    prompt = text_value(row, f["prompt"])
    if prompt is None:
        raise DatasetError(f"{where}: field {f['prompt']!r} has no value (dataset {ds.name!r}'s prompt)")
    raw_preference = text_value(row, f.get("preference"))
    preference = raw_preference
    if preference is not None and ds.preference_values:
        preference = ds.preference_values.get(preference, preference)
    if preference == "":
        preference = None
    return Item(
        id=text_value(row, f.get("id")) or f"{ds.name}-{n}",
        prompt=prompt,
        reference=text_value(row, f.get("reference")),
        difficulty=text_value(row, f.get("difficulty")),
        category=text_value(row, f.get("category")),
        image=_image(ds, text_value(row, f.get("image"))),
        preference=preference,
        raw_preference=raw_preference,
        tests=text_value(row, f.get("tests")),
        outputs={model: text for model, col in ds.outputs.items() if (text := text_value(row, col)) is not None},
        scores={model: float(value) for model, col in ds.scores.items()
                if (value := text_value(row, col)) not in (None, "")},
        preferences={model: value for model, labels in ds.preferences.items()
                     if (value := _comparison_label(labels, text_value(row, labels.column))) is not None},
        battles=tuple(row.get(BATTLES, ())),
    )


def _comparison_label(labels: ComparisonLabels, raw: str | None) -> str | None:
    """A label value → the model it favours or 'tie' (numeric labels go to the nearest key, see
    `mapped_label`); a value no key reads is returned as written, so that `check_labels` names it."""
    if raw is None or raw == "":
        return None
    return mapped_label(labels.values, raw)
