"""The columns a dataset entry maps, and which of them a file does not have.

A misspelt column used to surface far from its cause: a wrong answer column passed `vibe validate` and failed
the run naming neither column nor file, and a wrong prompt column was reported at the spec's `preference:`
line as a field with no value. The reader refuses such a file naming the file and the column, and `vibe
validate` locates the same problem at the spec's field."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.names import did_you_mean
from engine.spec.data_model import Dataset

SpecPath = tuple[str, ...]  # below datasets.<name>.fields


def mapped_columns(ds: Dataset, preset: dict[str, str]) -> list[tuple[SpecPath, str]]:
    """Every column the entry maps to a role, with where under `fields` it is mapped. Not the file's to have: a
    tidy format's gathered answers, columns a `join` adds, and the columns the format itself presets for a role
    (`preset`: a format that reads several kinds of file knows which of them holds each)."""
    mapped: list[tuple[SpecPath, str]] = [((role,), column) for role, column in ds.fields.items()
                                          if preset.get(role) != column]
    mapped += [(("outputs", model), column) for model, column in ds.outputs.items()]
    mapped += [(("scores", model), column) for model, column in ds.scores.items()]
    mapped += [(("preferences", model, "column"), labels.column) for model, labels in ds.preferences.items()]
    return [(path, column) for path, column in mapped if not column.startswith("\0") and column not in ds.source.join]


def absent_columns(ds: Dataset, rows: Sequence[dict[str, Any]],
                   preset: dict[str, str]) -> list[tuple[SpecPath, str, str]]:
    """The mapped columns no row of the dataset's files has (a dotted path counts when its first part is there),
    each with where it is mapped and a sentence naming the columns the rows do have."""
    present = list(dict.fromkeys(key for row in rows for key in row if isinstance(key, str) and key[:1] != "\0"))
    have = set(present)
    return [(path, column, f"column {column!r} is not in the file{did_you_mean(column, present)} (its columns: "
             f"{', '.join(present[:20])}{' …' if len(present) > 20 else ''})")
            for path, column in mapped_columns(ds, preset) if column not in have and column.split(".")[0] not in have]
