"""Inspect AI eval logs read with each sample's full message history: the system prompt, every user and
assistant turn, the tool calls and the tools' results (an agent's transcript), one model per log. Recognised
ahead of `inspect` when a log holds tool traffic or more than one user turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from engine.api.data import (
    ConversationRows,
    Located,
    Sniffed,
    dataset_format_class,
    holds_logs,
    log_files,
    log_model,
    log_rows,
)
from engine.api.records import DatasetError
from engine.api.spec import Dataset


@dataset_format_class("inspect-messages")
class InspectMessages(ConversationRows):
    description = ("Inspect AI eval logs (.eval or .json, or a folder of them) with every sample's full message "
                   "history: turns, tool calls and tool results; one model per log")
    fields: ClassVar[dict[str, str]] = {"id": "id", "prompt": "input", "reference": "target"}
    reads_folders = True

    def records(self, path: Path, ds: Dataset) -> Located:
        out: Located = []
        for log in log_files(path):
            for where, row in log_rows(log, False, ds.model_names):
                if not row["messages"]:
                    raise DatasetError(f"{where}: field 'messages' is missing or empty (the sample's history)")
                out.append((where, {"id": row["id"], "model": row["model"], "messages": row["messages"],
                                    "category": (row["metadata"] or {}).get("category")}))
        return out

    def sniff(self, path: Path, rows: list[dict[str, Any]] | None) -> Sniffed | None:
        if not holds_logs(path):
            return None
        logs = log_files(path)
        histories = [row["messages"] or [] for log in logs for _, row in log_rows(log, False, {})]
        if not any(sum(m.get("role") == "user" for m in h) > 1 or any(m.get("role") == "tool" for m in h)
                   for h in histories):
            return None  # single answers: the `inspect` format reads them with their scores
        models = [log_model(log) for log in logs]
        return Sniffed("input", models, f"{len(logs)} logs, {len(histories)} transcripts",
                       names={raw: raw.rsplit("/", 1)[-1] for raw in models})
