"""A long table: one row per prompt and model."""

from __future__ import annotations

from engine.datasets.shapes import AnswerRows
from engine.formats import dataset_format_class


@dataset_format_class("long")
class Long(AnswerRows):
    description = "one row per prompt and model (fields.model, fields.answer, optional fields.score)"
    reads = (*AnswerRows.reads, "preference")
