"""Battle logs: one row per labelled comparison of two models' answers to a prompt (Chatbot Arena's releases,
AlpacaEval's annotations, LLM Comparator's files), with any number of models. Each row gives both answers
and, where it is labelled, a vote for a side or a tie."""

from __future__ import annotations

from typing import Any

from engine.datasets.items import DatasetError
from engine.datasets.rows import field_value, mapped_label, share_of_a, text_value
from engine.datasets.tidy import Answer, Vote, key_of, long_answers, spec_name
from engine.spec.data_model import Dataset

SIDES = ("a", "b", "tie")


def battle_records(ds: Dataset, located: list[tuple[str, dict[str, Any]]]) -> tuple[list[Answer], list[Vote]]:
    """Both answers and the vote of every battle row. An AlpacaEval dataset may also hold its model_outputs
    files, whose rows carry one answer each: a row without `answer_a` is read as one of those."""
    f = ds.fields
    answers: list[Answer] = []
    votes: list[Vote] = []
    single = []
    for where, row in located:
        if "model" in f and "answer" in f and field_value(row, f["answer_a"]) is None \
                and field_value(row, f["answer"]) is not None:
            single.append((where, row))
            continue
        for column in ("model_a", "model_b", "answer_a", "answer_b"):
            if field_value(row, f[column]) is None:
                raise DatasetError(f"{where}: field {f[column]!r} is missing (format: {ds.format} needs "
                                   f"fields.{column} on every battle)")
        key = key_of(ds, row, where)
        a, b = str(field_value(row, f["model_a"])), str(field_value(row, f["model_b"]))
        answers += [Answer(key, a, field_value(row, f["answer_a"]), None, row, where),
                    Answer(key, b, field_value(row, f["answer_b"]), None, row, where)]
        raw = text_value(row, f.get("winner"))
        if raw not in (None, ""):
            share = share_of_a(ds.winner_values, raw) if isinstance(ds.winner_values, dict) else None
            votes.append(Vote(key, a, b, winner_side(ds, raw, a, b, where), where, share))
    return long_answers(ds, single) + answers, votes


def winner_side(ds: Dataset, raw: str, a: str, b: str, where: str) -> str:
    """The side a winner value favours: "a", "b" or "tie"."""
    column = ds.fields["winner"]
    if ds.winner_values == "sign":
        try:
            value = float(raw)
        except ValueError:
            raise DatasetError(f"{where}: field {column!r} holds {raw!r}, not a number (its sign says which answer "
                               "won)") from None
        return "a" if value > 0 else "b" if value < 0 else "tie"
    assert isinstance(ds.winner_values, dict)
    side = mapped_label(ds.winner_values, raw)
    wanted = set(ds.outputs)
    names = {a: "a", b: "b", spec_name(ds, a, wanted): "a", spec_name(ds, b, wanted): "b"}
    side = names.get(side, side)
    if side not in SIDES:
        raise DatasetError(f"{where}: field {column!r} holds {raw!r}, which names neither model of this battle "
                           f"({a}, {b}) nor a tie; map it with winner_values: {{{raw!r}: a | b | tie}}")
    return side
