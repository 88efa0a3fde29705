"""Dataset stage: a spec's dataset declaration → a list of typed `Item`s.

Local files (JSONL, JSON list, CSV, Parquet) are always read when present. When a declared local path is
missing, the public copy (`urls`, or `hub` + `hub_files`) is downloaded to that path if the network allows;
otherwise the error says exactly where the data comes from. Field mapping, joins, de-duplication, filters,
and the seeded `limit` sample are applied in that order, so the same spec always yields the same items.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.spec.model import LONG_ANSWER, LONG_SCORE, ComparisonLabels, Dataset
from engine.text_files import NotUtf8, read_utf8

csv.field_size_limit(sys.maxsize)


class DatasetError(Exception):
    pass


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

    def label(self, model: str) -> str | None:
        """The label of `model`'s comparison: its own column against the reference where the dataset has
        one, else the row's single preference."""
        return self.preferences.get(model, self.preference)

    def content_hash(self) -> str:
        payload = json.dumps([self.prompt, self.reference, self.image], ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def read_rows(path: Path, fmt: str | None = None) -> list[dict[str, Any]]:
    fmt = fmt or _format_of(path)
    if fmt == "parquet":
        import pyarrow.parquet as pq  # optional extra: only Parquet datasets need it

        return pq.read_table(path).to_pylist()
    if fmt not in ("jsonl", "json", "csv"):
        raise DatasetError(f"{path}: unknown format {fmt!r} (jsonl, json, csv, parquet)")
    try:
        text = read_utf8(path)
    except NotUtf8 as exc:
        raise DatasetError(f"{path}:{exc.line}:{exc.col}: {exc.reason}") from None
    if fmt == "jsonl":
        rows = []
        for n, line in enumerate(text.split("\n"), 1):  # not splitlines(): U+2028 may sit inside a JSON string
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise DatasetError(f"{path}:{n}: invalid JSON line: {exc.msg}") from None
                if SURROGATE_ESCAPE.search(line):
                    _refuse_lone_surrogates(rows[-1], f"{path}:{n}")
        return rows
    if fmt == "json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
        if not isinstance(data, list):
            raise DatasetError(f"{path}: expected a JSON list of records")
        for n, row in enumerate(data):
            _refuse_lone_surrogates(row, f"{path}: record {n}")
        return data
    return list(csv.DictReader(io.StringIO(text, newline="")))


SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _refuse_lone_surrogates(value: Any, where: str, field: str = "") -> None:
    """A JSON escape such as \\ud800 without its pair decodes to a string that is not Unicode text: it would
    fail later, when a prompt is hashed or an answer stored. Refused here, naming the row and field."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise DatasetError(f"{where}: field {field or '(value)'!r} holds a lone UTF-16 surrogate "
                               f"({value[exc.start]!r} at character {exc.start}), which is not text; fix or "
                               "drop that escape in the file") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _refuse_lone_surrogates(item, where, f"{field}.{key}" if field else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _refuse_lone_surrogates(item, where, f"{field}.{i}" if field else str(i))


def _format_of(path: Path) -> str:
    suffix = path.suffix.lower().lstrip(".")
    return {"ndjson": "jsonl"}.get(suffix, suffix)


def _remote_sources(ds: Dataset) -> list[str]:
    if ds.source.urls:
        return list(ds.source.urls)
    if ds.source.hub:
        return [f"https://huggingface.co/datasets/{ds.source.hub}/resolve/main/{f}" for f in ds.source.hub_files]
    return []


def ensure_local(ds: Dataset) -> list[Path]:
    """Every local path of the dataset, downloading the public copy of any that is missing."""
    remote = _remote_sources(ds)
    out = []
    for i, path in enumerate(ds.source.paths):
        if not path.exists():
            url = remote[i] if i < len(remote) else None
            if url is None:
                raise DatasetError(f"dataset {ds.name!r}: {path} not found and no public source declared")
            _download(url, path, ds.name)
        out.append(path)
    return out


def _download(url: str, dest: Path, name: str) -> None:
    import httpx

    try:
        with httpx.stream("GET", url, follow_redirects=True, timeout=60) as resp:
            resp.raise_for_status()
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_suffix(dest.suffix + ".part")
            with tmp.open("wb") as fh:
                for chunk in resp.iter_bytes():
                    fh.write(chunk)
            tmp.replace(dest)
    except (httpx.HTTPError, OSError) as exc:
        raise DatasetError(
            f"dataset {name!r}: {dest} is missing and downloading it failed ({exc}).\n"
            f"  Get it with:  curl -L -o {dest} {url}\n"
            f"  or point source.path at a local copy."
        ) from None


def load_items(ds: Dataset, models: frozenset[str] | None = None) -> list[Item]:
    """The dataset's items. With `models`, every preference label must name one of them or 'tie' after
    `preference_values` maps it: a label that names no model would otherwise turn into a missing one, and
    an analysis would rank or regress on whatever few labels happen to match."""
    rows: list[dict[str, Any]] = []
    for path in ensure_local(ds):
        rows.extend(read_rows(path, ds.source.format))
    rows = _dedupe(rows, ds.source.dedupe_on)
    if ds.format == "long":
        rows = _paired(ds, rows)
    id_field = ds.fields.get("id")
    joined = {column: _index(file, id_field, value) for column, (file, value) in ds.source.join.items()}
    for n, row in enumerate(rows):
        key = str(row[id_field]) if id_field else str(n)
        for column, index in joined.items():
            row[column] = index.get(key)
    rows = [r for r in rows if all(_keep(r, f) for f in ds.filters)]
    items = [_item(ds, n, row) for n, row in enumerate(rows)]
    if models is not None:
        check_labels(ds, items, models)
    ids = [it.id for it in items]
    if len(set(ids)) != len(ids):
        raise DatasetError(f"dataset {ds.name!r}: ids are not unique; map fields.id to a unique column")
    if ds.limit is not None and ds.limit < len(items):
        items = sorted(random.Random(ds.seed).sample(items, ds.limit), key=lambda it: ids.index(it.id))
    return items


def _paired(ds: Dataset, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A long table's rows (one per prompt and model) as wide rows (one per prompt, each model's answer in a
    column of its own), paired by fields.id, else by the prompt text, in order of first appearance."""
    f = ds.fields
    key_field = f.get("id") or f["prompt"]
    wide: dict[str, dict[str, Any]] = {}
    first: dict[tuple[str, str], int] = {}  # (key, model) -> its row
    opened: dict[str, int] = {}  # key -> the row that brought its prompt
    for n, row in enumerate(rows):
        for role, column in (("key", key_field), ("model", f["model"]), ("answer", f["answer"])):
            if _field(row, column) is None:
                raise DatasetError(f"dataset {ds.name!r}: row {n} has no {column!r} value (format: long needs a "
                                   f"{role} on every row)")
        key, model = str(_field(row, key_field)), str(_field(row, f["model"]))
        if (key, model) in first:
            raise DatasetError(f"dataset {ds.name!r}: row {n}: a second answer of model {model!r} to prompt "
                               f"{key!r} (the first is row {first[(key, model)]}); keep one answer per prompt "
                               "and model")
        first[(key, model)] = n
        opened.setdefault(key, n)
        merged = wide.setdefault(key, {k: v for k, v in row.items() if k not in (f["model"], f["answer"])})
        if _text(row, f["prompt"]) != _text(merged, f["prompt"]):
            raise DatasetError(f"dataset {ds.name!r}: row {n}: prompt {key!r} has another text in row "
                               f"{opened[key]} ({f['prompt']!r} differs)")
        merged[LONG_ANSWER + model] = _field(row, f["answer"])
        if "score" in f:
            merged[LONG_SCORE + model] = _field(row, f["score"])
    seen = {model for _, model in first}
    missing = [m for m in ds.outputs if m not in seen]
    if missing:
        values = ", ".join(sorted(seen)[:12])
        raise DatasetError(f"dataset {ds.name!r}: recorded model(s) {', '.join(missing)} have no row in column "
                           f"{f['model']!r}, whose values are: {values}")
    return list(wide.values())


def check_labels(ds: Dataset, items: list[Item], models: frozenset[str]) -> None:
    """Raise a DatasetError naming every preference value that maps to no model (with its count and first
    row) and the `preference_values` entry that would fix it."""
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
                f"({len(wrong)} rows, first row {wrong[0]}), which names no model; map it under values: "
                f"{{{value!r}: <model or tie>}}")
    if not unmapped:
        return
    column = ds.fields["preference"]
    listed = ", ".join(f"{value!r} ({len(rows)} rows, first row {rows[0]})"
                       for value, rows in sorted(unmapped.items(), key=lambda kv: -len(kv[1]))[:8])
    example = ", ".join(f"{value!r}: <model or tie>" for value in list(unmapped)[:3])
    raise DatasetError(
        f"dataset {ds.name!r}: the preference column {column!r} holds values that name no model: {listed}. "
        f"Models: {', '.join(sorted(models))}. Map each value with preference_values: {{{example}}}")


def _index(path: Path, id_field: str | None, value_field: str) -> dict[str, Any]:
    if id_field is None:
        raise DatasetError(f"{path}: joining files needs fields.id")
    return {str(r[id_field]): r.get(value_field) for r in read_rows(path)}


def _dedupe(rows: list[dict[str, Any]], keys: tuple[str, ...]) -> list[dict[str, Any]]:
    if not keys:
        return rows
    seen: set[tuple[Any, ...]] = set()
    out = []
    for row in rows:
        key = tuple(str(_field(row, k)) for k in keys)
        if key not in seen:
            seen.add(key)
            out.append(row)
    return out


def _keep(row: dict[str, Any], rule: dict[str, Any]) -> bool:
    value = _field(row, rule["field"])
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


def _field(row: dict[str, Any], column: str) -> Any:
    """A column, or a path into nested JSON: `turns.0` is the first element of the `turns` list."""
    if column in row or "." not in column:
        return row.get(column)
    value: Any = row
    for part in column.split("."):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _text(row: dict[str, Any], column: str | None) -> str | None:
    if column is None:
        return None
    value = _field(row, column)
    if value is None or (isinstance(value, float) and value != value):  # NaN from CSV/Parquet
        return None
    return str(value)


def _image(ds: Dataset, value: str | None) -> str | None:
    """URLs pass through; a file name is read relative to the dataset file, as the dataset's rows are."""
    if not value or "://" in value or value.startswith("data:") or Path(value).is_absolute() or not ds.source.paths:
        return value
    return str(ds.source.paths[0].parent / value)


def _item(ds: Dataset, n: int, row: dict[str, Any]) -> Item:
    f = ds.fields
    prompt = _text(row, f["prompt"])
    if prompt is None:
        raise DatasetError(f"dataset {ds.name!r}: row {n} has no {f['prompt']!r} value")
    raw_preference = _text(row, f.get("preference"))
    preference = raw_preference
    if preference is not None and ds.preference_values:
        preference = ds.preference_values.get(preference, preference)
    if preference == "":
        preference = None
    return Item(
        id=_text(row, f.get("id")) or f"{ds.name}-{n}",
        prompt=prompt,
        reference=_text(row, f.get("reference")),
        difficulty=_text(row, f.get("difficulty")),
        category=_text(row, f.get("category")),
        image=_image(ds, _text(row, f.get("image"))),
        preference=preference,
        raw_preference=raw_preference,
        tests=_text(row, f.get("tests")),
        outputs={model: text for model, col in ds.outputs.items() if (text := _text(row, col)) is not None},
        scores={model: float(value) for model, col in ds.scores.items()
                if (value := _text(row, col)) not in (None, "")},
        preferences={model: value for model, labels in ds.preferences.items()
                     if (value := _comparison_label(labels, _text(row, labels.column))) is not None},
    )


def _comparison_label(labels: ComparisonLabels, raw: str | None) -> str | None:
    """A label value → the model it favours or 'tie'. With numeric keys, a numeric value goes to the nearest
    key and one halfway between the two nearest is a tie; a value no key reads is returned as written, so
    that `check_labels` names it."""
    if raw is None or raw == "":
        return None
    if raw in labels.values:
        return labels.values[raw]
    keys = _numbers(labels.values)
    value = _number(raw)
    if keys is None or value is None:
        return raw
    distance = sorted((abs(value - key), name) for key, name in keys)
    if len(distance) > 1 and math.isclose(distance[0][0], distance[1][0]) and distance[0][1] != distance[1][1]:
        return "tie"
    return distance[0][1]


def _numbers(values: dict[str, str]) -> list[tuple[float, str]] | None:
    keys = [(_number(k), v) for k, v in values.items()]
    return None if any(k is None for k, _ in keys) else [(float(k), v) for k, v in keys if k is not None]


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
