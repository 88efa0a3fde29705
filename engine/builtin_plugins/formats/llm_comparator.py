"""An LLM Comparator JSON file: its two models, and the sign of each example's score as the winner."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from engine.api.data import BattleRows, Located, Sniffed, comparator_rows, dataset_format_class, json_object_with
from engine.api.spec import Dataset


@dataset_format_class("llm-comparator")
class LLMComparator(BattleRows):
    description = "an LLM Comparator JSON file (its two models, and score's sign as the winner)"
    fields: ClassVar[dict[str, str]] = {
        "prompt": "input_text", "category": "tags.0", "model_a": "model_a", "answer_a": "output_text_a",
        "model_b": "model_b", "answer_b": "output_text_b", "winner": "score"}
    winners = "sign"

    def records(self, path: Path, ds: Dataset) -> Located:
        return comparator_rows(path)

    def sniff(self, path: Path, rows: list[dict[str, Any]] | None) -> Sniffed | None:
        if not json_object_with(path, "examples", "models"):
            return None
        examples = comparator_rows(path)
        models = [examples[0][1]["model_a"], examples[0][1]["model_b"]] if examples else []
        return Sniffed("input_text", models, f"{len(examples)} examples", votes=True)
