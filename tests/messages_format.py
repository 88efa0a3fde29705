"""The guide's example dataset format: chat records in OpenAI's `messages` shape, one conversation per JSONL row
with the model named on the row, added as this one module plus one line in `engine.formats.FORMAT_MODULES`
(tests/test_extensions.py adds it, runs a spec that names it and has `vibe init` recognise a file of it).
The last user message is the prompt and the assistant message after it the answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from engine.plugin_api import AnswerRows, Dataset, DatasetError, Located, Sniffed, dataset_format_class


@dataset_format_class("chat-messages")
class ChatMessages(AnswerRows):
    description = "one conversation per row in OpenAI's messages shape (role, content), its model on the row"
    fields: ClassVar[dict[str, str]] = {"id": "id", "prompt": "prompt", "model": "model", "answer": "answer"}
    columns: ClassVar[dict[str, str]] = {"messages": "the column holding each row's list of messages"}
    reads = (*AnswerRows.reads, "messages")

    def records(self, path: Path, ds: Dataset) -> Located:
        column = ds.fields.get("messages", "messages")
        out = []
        for where, row in super().records(path, ds):
            messages = row.get(column)
            if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
                raise DatasetError(f"{where}: field {column!r} must be a list of messages")
            last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=None)
            answer = next((m.get("content") for m in messages[(last or 0) + 1:] if m.get("role") == "assistant"),
                          None)
            if last is None or answer is None:
                raise DatasetError(f"{where}: field {column!r} holds no user message followed by an answer")
            out.append((where, {**row, "prompt": messages[last].get("content"), "answer": answer}))
        return out

    def sniff(self, path: Path, rows: list[dict[str, Any]] | None) -> Sniffed | None:
        if not rows or not all(isinstance(r.get("messages"), list) and r.get("model") for r in rows):
            return None
        models = list(dict.fromkeys(str(r["model"]) for r in rows))
        return Sniffed("prompt", models, f"{len(rows)} conversations")
