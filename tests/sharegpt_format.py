"""The guide's example dataset format: ShareGPT-style records, one conversation per JSONL row under
`conversations`, each turn `{"from": "human" | "gpt" | "system", "value": text}`, the model named on the row. It is
added as this one module plus one line in `engine.plugin_tables.DATASET_FORMATS` (tests/test_extensions.py adds it, runs
a spec that names it and has `vibe init` recognise a file of it). The last human turn is the prompt and the gpt
turn after it the answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from engine.api.data import AnswerRows, Located, Sniffed, dataset_format_class
from engine.api.records import DatasetError
from engine.api.spec import Dataset


@dataset_format_class("sharegpt")
class ShareGPT(AnswerRows):
    description = "one ShareGPT conversation per row (turns of from: human | gpt, value: text), its model on the row"
    fields: ClassVar[dict[str, str]] = {"id": "id", "prompt": "prompt", "model": "model", "answer": "answer"}
    columns: ClassVar[dict[str, str]] = {"conversations": "the column holding each row's list of turns"}
    reads = (*AnswerRows.reads, "conversations")

    def records(self, path: Path, ds: Dataset) -> Located:
        column = ds.fields.get("conversations", "conversations")
        out = []
        for where, row in super().records(path, ds):
            turns = row.get(column)
            if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
                raise DatasetError(f"{where}: field {column!r} must be a list of turns")
            last = max((i for i, t in enumerate(turns) if t.get("from") == "human"), default=None)
            answer = next((t.get("value") for t in turns[(last or 0) + 1:] if t.get("from") == "gpt"), None)
            if last is None or answer is None:
                raise DatasetError(f"{where}: field {column!r} holds no human turn followed by a gpt turn")
            out.append((where, {**row, "prompt": turns[last].get("value"), "answer": answer}))
        return out

    def sniff(self, path: Path, rows: list[dict[str, Any]] | None) -> Sniffed | None:
        if not rows or not all(isinstance(r.get("conversations"), list) and r.get("model") for r in rows):
            return None
        models = list(dict.fromkeys(str(r["model"]) for r in rows))
        return Sniffed("prompt", models, f"{len(rows)} conversations")
