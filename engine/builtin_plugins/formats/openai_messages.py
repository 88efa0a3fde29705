"""OpenAI-style `messages` JSONL, the shared currency of trace tools: one conversation per row (system, user,
assistant with `tool_calls`, `tool` results), its model named on the row or, for a file of one model's
conversations, by the file (its name, or the name `model_names` gives it). Conversations of two models are
paired by `fields.id`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from engine.api.data import (
    CATEGORY_NAMES,
    ID_NAMES,
    MODEL_NAMES,
    ConversationRows,
    Located,
    Sniffed,
    by_frequency,
    columns_of,
    dataset_format_class,
    field_value,
    located_rows,
    named,
    text_value,
)
from engine.api.records import DatasetError
from engine.api.spec import Dataset


@dataset_format_class("openai-messages")
class OpenAIMessages(ConversationRows):
    description = ("OpenAI-style messages JSONL, one conversation per row (fields.messages, tool calls included), "
                   "its model on the row (fields.model) or named by the file; paired across models by fields.id")
    fields: ClassVar[dict[str, str]] = {"id": "id", "prompt": "messages", "messages": "messages", "model": "model"}
    reads: ClassVar[tuple[str, ...]] = ("messages", "model")
    columns: ClassVar[dict[str, str]] = {"messages": "the column holding a conversation's list of messages"}

    def records(self, path: Path, ds: Dataset) -> Located:
        f = ds.fields
        out = []
        for where, row in located_rows(path, ds.source.format):
            cid = text_value(row, f["id"])
            if cid is None:
                raise DatasetError(f"{where}: field {f['id']!r} is missing (conversations of different models are "
                                   "paired on it)")
            model = text_value(row, f["model"]) or (path.name if path.name in ds.model_names else path.stem)
            out.append((where, {"id": cid, "model": model, "messages": field_value(row, f["messages"]),
                                "category": text_value(row, f.get("category"))}))
        return out

    def sniff(self, path: Path, rows: list[dict[str, Any]] | None) -> Sniffed | None:
        """Rows whose `messages` column holds a list of role-tagged objects."""
        if not rows or not all(isinstance(r.get("messages"), list) and r["messages"]
                               and all(isinstance(m, dict) and "role" in m for m in r["messages"]) for r in rows[:20]):
            return None
        columns = columns_of(rows)
        model = named(columns, MODEL_NAMES)
        models = by_frequency(rows, model) if model else [path.stem]
        fields = {"id": named(columns, ID_NAMES), "category": named(columns, CATEGORY_NAMES),
                  "model": model if model and model != "model" else None}
        return Sniffed("messages", models, f"{len(rows)} conversations",
                       fields={k: v for k, v in fields.items() if v})
