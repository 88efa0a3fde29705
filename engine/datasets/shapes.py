"""The shapes a dataset format's rows take, as bases its class extends: one row per prompt with a column per
model (wide), one answer per row (long tables, logs), one comparison of two answers per row (battle logs),
whole conversations. Each format then says only how it reads a file and which columns it presets."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from engine.datasets.battles import battle_records
from engine.datasets.conversations import gathered
from engine.datasets.files import located_rows
from engine.datasets.tidy import WHERE, gather, long_answers
from engine.formats import DatasetFormat, Located
from engine.spec.data_model import Dataset


class TableRecords(DatasetFormat):
    """Records read from a CSV, JSONL, JSON or Parquet file (as `source.format` says, else its suffix)."""

    def records(self, path: Path, ds: Dataset) -> Located:
        return located_rows(path, ds.source.format)


class WideRows(TableRecords):
    """One row per prompt already, each model's answer in a column of its own."""

    tidy = False

    def rows(self, ds: Dataset, located: Located) -> list[dict[str, Any]]:
        for where, row in located:
            row[WHERE] = where
        return [row for _, row in located]


class AnswerRows(TableRecords):
    """One model's answer per row (fields.model, fields.answer), gathered per prompt."""

    needs: ClassVar[tuple[str, ...]] = ("model", "answer")
    reads: ClassVar[tuple[str, ...]] = ("model", "answer", "score")

    def rows(self, ds: Dataset, located: Located) -> list[dict[str, Any]]:
        return gather(ds, long_answers(ds, located), [], repeats=False)


BATTLE_COLUMNS = ("model_a", "model_b", "answer_a", "answer_b")


class BattleRows(TableRecords):
    """One comparison of two models per row, with an optional winner; a prompt's battles are kept with it."""

    battles = True
    needs: ClassVar[tuple[str, ...]] = BATTLE_COLUMNS
    reads: ClassVar[tuple[str, ...]] = (*BATTLE_COLUMNS, "winner")

    def rows(self, ds: Dataset, located: Located) -> list[dict[str, Any]]:
        return gather(ds, *battle_records(ds, located), repeats=True)


class ConversationRows(DatasetFormat):
    """Whole conversations, one per model and conversation id: each format's `records` normalises its file
    into records `conversations.gathered` reads (id, model and messages; or the user turns alone; or a
    labelled pair), and the dataset's `unit` turns them into items."""

    conversations = True
    fields: ClassVar[dict[str, str]] = {"id": "id", "prompt": "messages"}

    def rows(self, ds: Dataset, located: Located) -> list[dict[str, Any]]:
        return gathered(ds, located)
