"""AlpacaEval's files: annotations.json (a battle log of generator_1, the reference, against generator_2) and
model_outputs.json (one answer per row); a dataset may read both."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from engine.api.data import BattleRows, Sniffed, by_frequency, columns_of, dataset_format_class


@dataset_format_class("alpaca-eval")
class AlpacaEval(BattleRows):
    description = ("AlpacaEval's annotations.json (a battle log: instruction, generator_1/output_1, "
                   "generator_2/output_2, preference 1 or 2, 1.5 a tie) and model_outputs.json files (one answer "
                   "per row)")
    fields: ClassVar[dict[str, str]] = {
        "id": "instruction", "prompt": "instruction", "category": "dataset", "model": "generator",
        "answer": "output", "model_a": "generator_1", "answer_a": "output_1", "model_b": "generator_2",
        "answer_b": "output_2", "winner": "preference"}
    # its weighted annotators write a value between 1 and 2: the nearest key reads it, 1.5 is a tie
    winners: ClassVar[dict[str, str] | str] = {"1": "a", "2": "b"}
    reads = (*BattleRows.reads, "model", "answer")

    def sniff(self, path: Path, rows: list[dict[str, Any]] | None) -> Sniffed | None:
        if rows is None or not {"instruction", "output_1", "generator_1", "output_2",
                                "generator_2"} <= set(columns_of(rows)):
            return None
        return Sniffed("instruction", by_frequency(rows, "generator_1", "generator_2"), f"{len(rows)} rows",
                       votes=True)
