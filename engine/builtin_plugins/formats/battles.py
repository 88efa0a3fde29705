"""A battle log: one row per comparison of two models, any number of models, an optional winner column."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from engine.api.data import (
    CATEGORY_NAMES,
    ID_NAMES,
    LABEL_NAMES,
    PROMPT_NAMES,
    BattleRows,
    Sniffed,
    by_frequency,
    columns_of,
    dataset_format_class,
    named,
)

SIDE_ANSWERS = ("response_{}", "answer_{}", "output_{}", "completion_{}", "text_{}")


@dataset_format_class("battles")
class Battles(BattleRows):
    description = ("one row per comparison of two models (fields.model_a, model_b, answer_a, answer_b, optional "
                   "winner read with winner_values), any number of models")
    winners: ClassVar[dict[str, str] | str] = {
        "a": "a", "b": "b", "model_a": "a", "model_b": "b", "tie": "tie", "tie (bothbad)": "tie", "both_bad": "tie",
        "draw": "tie"}

    def sniff(self, path: Path, rows: list[dict[str, Any]] | None) -> Sniffed | None:
        """model_a and model_b columns, an answer column for each side and a prompt column."""
        columns = sorted(columns_of(rows or []))
        if not {"model_a", "model_b"} <= set(columns):
            return None
        sides = {side: next((f.format(side) for f in SIDE_ANSWERS if f.format(side) in columns), None)
                 for side in ("a", "b")}
        prompt = named(columns, PROMPT_NAMES)
        if None in sides.values() or prompt is None or rows is None:
            return None
        fields = {"id": named(columns, ID_NAMES), "category": named(columns, CATEGORY_NAMES),
                  "model_a": "model_a", "model_b": "model_b", "answer_a": sides["a"], "answer_b": sides["b"],
                  "winner": named(columns, LABEL_NAMES)}
        return Sniffed(prompt, by_frequency(rows, "model_a", "model_b"), f"{len(rows)} rows",
                       fields={k: str(v) for k, v in fields.items() if v}, votes=bool(fields["winner"]))
