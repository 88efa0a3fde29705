"""Reading a dataset's files: JSONL, JSON list, CSV and Parquet rows, and the public copy of a missing file."""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path
from typing import Any

from engine.datasets.items import DatasetError
from engine.spec.data_model import Dataset
from engine.text_files import NotUtf8, check_utf8, read_utf8

csv.field_size_limit(sys.maxsize)


def read_rows(path: Path, fmt: str | None = None) -> list[dict[str, Any]]:
    return [row for _, row in located_rows(path, fmt)]


def located_rows(path: Path, fmt: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The file's records, each with where it sits (`file:line` for JSONL, the record or row number else),
    for errors that name it."""
    fmt = fmt or _format_of(path)
    if fmt == "parquet":
        import pyarrow.parquet as pq  # optional extra: only Parquet datasets need it

        return [(f"{path}: row {n}", row) for n, row in enumerate(pq.read_table(path).to_pylist(), 1)]
    if fmt not in ("jsonl", "json", "csv"):
        raise DatasetError(f"{path}: unknown format {fmt!r} (jsonl, json, csv, parquet)")
    if fmt != "json":  # a JSON list is parsed whole; a table or JSON lines are checked, then read as a stream
        try:
            check_utf8(path)
        except NotUtf8 as exc:
            raise DatasetError(f"{path}:{exc.line}:{exc.col}: {exc.reason}") from None
    if fmt == "jsonl":
        rows = []
        # lines end at "\n" alone (not at U+2028, which may sit inside a JSON string)
        with path.open(encoding="utf-8-sig", newline="\n") as fh:  # -sig: a leading byte-order mark is not data
            for n, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        rows.append((f"{path}:{n}", json.loads(line)))
                    except json.JSONDecodeError as exc:
                        raise DatasetError(f"{path}:{n}: invalid JSON line: {exc.msg}") from None
                    if SURROGATE_ESCAPE.search(line):
                        _refuse_lone_surrogates(rows[-1][1], f"{path}:{n}")
        return rows
    if fmt == "json":
        data = json_document(path)
        if not isinstance(data, list):
            raise DatasetError(f"{path}: expected a JSON list of records")
        for n, row in enumerate(data):
            _refuse_lone_surrogates(row, f"{path}: record {n}")
        return [(f"{path}: record {n}", row) for n, row in enumerate(data)]
    # -sig: Excel writes a byte-order mark before the first column's name, which would then not match the spec's
    with path.open(encoding="utf-8-sig", newline="") as fh:
        return [(f"{path}: row {n}", row) for n, row in enumerate(csv.DictReader(fh), 1)]


def json_document(path: Path) -> Any:
    """A whole JSON file parsed, a byte-order mark allowed; text that is not UTF-8 or not JSON is a
    `DatasetError` at its line (and column)."""
    try:
        text = read_utf8(path)
    except NotUtf8 as exc:
        raise DatasetError(f"{path}:{exc.line}:{exc.col}: {exc.reason}") from None
    try:
        return json.loads(text.removeprefix("\ufeff"))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None


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


