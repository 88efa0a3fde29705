"""Inspect AI eval logs (.eval or .json, or a folder of them): one model per log, each sample one answer, the
samples' scores as per-answer scores."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from engine.api.data import (
    AnswerRows,
    Located,
    Sniffed,
    dataset_format_class,
    holds_logs,
    log_files,
    log_model,
    log_rows,
)
from engine.api.spec import Dataset


@dataset_format_class("inspect")
class Inspect(AnswerRows):
    description = ("Inspect AI eval logs (.eval or .json, or a folder of them), one model per log, the samples' "
                   "scores as per-answer scores")
    fields: ClassVar[dict[str, str]] = {
        "id": "id", "prompt": "input", "model": "model", "answer": "output", "score": "score", "reference": "target"}
    reads_folders = True

    def records(self, path: Path, ds: Dataset) -> Located:
        # with no score named, the log's only scorer is read (a log with several must be told which)
        pick = ds.fields.get("score") == self.fields["score"]
        return [row for log in log_files(path) for row in log_rows(log, pick, ds.model_names)]

    def sniff(self, path: Path, rows: list[dict[str, Any]] | None) -> Sniffed | None:
        if not holds_logs(path):
            return None
        logs = log_files(path)
        # a header names its model with the provider in front (openai/gpt-4o); the reader matches the rest
        models = [log_model(log) for log in logs]
        return Sniffed("input", models, f"{len(logs)} logs",
                       names={raw: raw.rsplit("/", 1)[-1] for raw in models})
