"""A long table: one row per prompt and model; or a file per model, whose rows need not name it."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from engine.api.data import AnswerRows, Located, dataset_format_class, field_value
from engine.api.spec import Dataset


@dataset_format_class("long")
class Long(AnswerRows):
    description = ("one row per prompt and model (fields.model, fields.answer, optional fields.score); of a "
                   "dataset read from several files, a file whose rows name no model holds the answers of the "
                   "model the file is named after")
    fields: ClassVar[dict[str, str]] = {"model": "model"}
    reads = (*AnswerRows.reads, "preference")

    def records(self, path: Path, ds: Dataset) -> Located:
        """The file's rows; where none names its model and the dataset reads several files, each is given the
        file's model: its name as `model_names` maps it, else its stem (as a file per model of OpenAI messages)."""
        located = super().records(path, ds)
        column = ds.fields["model"]
        if len(ds.source.paths) > 1 and located and all(field_value(row, column) is None for _, row in located):
            model = path.name if path.name in ds.model_names else path.stem
            for _, row in located:
                row[column] = model
        return located
