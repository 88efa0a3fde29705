"""Chatbot Arena's conversation pairs, as its public releases store them: one battle per row with
`conversation_a` and `conversation_b` (message lists, often several turns), `model_a`, `model_b`, `winner` and
`turn`. Each battle is its own conversation (its id: fields.id), labelled as `winner_values` reads the winner."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from engine.api.data import (
    ID_NAMES,
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
    winner_side,
)
from engine.api.records import DatasetError
from engine.api.spec import Dataset

SIDES = ("a", "b")


@dataset_format_class("arena-conversations")
class ArenaConversations(ConversationRows):
    description = ("Chatbot Arena conversation pairs: conversation_a, conversation_b (message lists), model_a, "
                   "model_b, an optional winner read with winner_values; each battle its own conversation")
    battles = True
    fields: ClassVar[dict[str, str]] = {
        "id": "question_id", "prompt": "conversation_a", "model_a": "model_a", "model_b": "model_b",
        "winner": "winner", "conversation_a": "conversation_a", "conversation_b": "conversation_b"}
    winners: ClassVar[dict[str, str] | str] = {
        "model_a": "a", "model_b": "b", "tie": "tie", "tie (bothbad)": "tie", "a": "a", "b": "b"}
    reads: ClassVar[tuple[str, ...]] = ("model_a", "model_b", "winner", "conversation_a", "conversation_b")
    columns: ClassVar[dict[str, str]] = {"conversation_a": "model A's side of the battle, a list of messages",
                                         "conversation_b": "model B's side of the battle, a list of messages"}

    def records(self, path: Path, ds: Dataset) -> Located:
        f = ds.fields
        out: Located = []
        for where, row in located_rows(path, ds.source.format):
            cid = text_value(row, f["id"])
            if cid is None:
                raise DatasetError(f"{where}: field {f['id']!r} is missing (each battle's conversation id)")
            models = {}
            for side in SIDES:
                model = text_value(row, f[f"model_{side}"])
                if model is None:
                    raise DatasetError(f"{where}: field {f[f'model_{side}']!r} is missing")
                models[side] = model
                out.append((where, {"id": cid, "model": model, "messages": field_value(row, f[f"conversation_{side}"]),
                                    "category": text_value(row, f.get("category"))}))
            raw = text_value(row, f.get("winner"))
            if raw not in (None, ""):
                out.append((where, {"id": cid, "model_a": models["a"], "model_b": models["b"],
                                    "winner": winner_side(ds, raw, models["a"], models["b"], where)}))
        return out

    def sniff(self, path: Path, rows: list[dict[str, Any]] | None) -> Sniffed | None:
        columns = columns_of(rows or [])
        if rows is None or not {"conversation_a", "conversation_b", "model_a", "model_b"} <= set(columns):
            return None
        fields = {"id": named(columns, ID_NAMES)}
        return Sniffed("conversation_a", by_frequency(rows, "model_a", "model_b"), f"{len(rows)} battles",
                       fields={k: v for k, v in fields.items() if v}, votes="winner" in columns)
