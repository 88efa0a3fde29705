"""Tidy sources gathered per prompt. A long table or an Inspect log holds one model's answer per row, a battle
log one labelled comparison of two; the rest of the reader wants one row per prompt with every model's answer
(and the battles fought on it). Rows are keyed by `fields.id`, else by the prompt text, in order of first
appearance, and every disagreement between rows is an error naming both."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.datasets.items import Battle, DatasetError
from engine.datasets.rows import field_value, text_value
from engine.spec.data_model import LONG_ANSWER, LONG_SCORE, Dataset

BATTLES = "\0battles\0"  # the gathered row's list of Battle records
WHERE = "\0where\0"  # where a row (its first record) sits in its file, for errors found once items are read


@dataclass(frozen=True)
class Answer:
    """One model's answer to one prompt, and where the file holds it."""

    key: str
    model: str  # as the file names it
    text: Any
    score: Any
    row: dict[str, Any]
    where: str


@dataclass(frozen=True)
class Vote:
    """One labelled comparison of two models on one prompt: `winner` is "a", "b" or "tie"; `share`, a graded
    label's share of the win for side a (None: all or nothing)."""

    key: str
    model_a: str
    model_b: str
    winner: str
    where: str
    share: float | None = None


def key_of(ds: Dataset, row: dict[str, Any], where: str) -> str:
    column = ds.fields.get("id") or ds.fields["prompt"]
    key = text_value(row, column)
    if key is None:
        raise DatasetError(f"{where}: field {column!r} is missing (every answer is paired on it)")
    return key


def long_answers(ds: Dataset, located: list[tuple[str, dict[str, Any]]]) -> list[Answer]:
    """A long table's rows (or an Inspect log's samples): one answer each."""
    f = ds.fields
    out = []
    for where, row in located:
        for role in ("model", "answer"):
            if field_value(row, f[role]) is None:
                raise DatasetError(f"{where}: field {f[role]!r} is missing (format: {ds.format} needs the {role} "
                                   "on every row)")
        out.append(Answer(key_of(ds, row, where), str(field_value(row, f["model"])), field_value(row, f["answer"]),
                          field_value(row, f["score"]) if "score" in f else None, row, where))
    return out


def spec_name(ds: Dataset, raw: str, wanted: set[str]) -> str:
    """A model's name in the spec: `model_names` maps it, else it is used as written, else (a provider's
    prefix such as openai/ in front) the part after the last slash when the spec names that."""
    if raw in ds.model_names:
        return ds.model_names[raw]
    if raw not in wanted and "/" in raw and raw.rsplit("/", 1)[1] in wanted:
        return raw.rsplit("/", 1)[1]
    return raw


def gather(ds: Dataset, answers: list[Answer], votes: list[Vote], *, repeats: bool) -> list[dict[str, Any]]:
    """One row per prompt: the first row's columns, each wanted model's answer and score under LONG_ANSWER +
    model and LONG_SCORE + model, and the battles between wanted models under BATTLES. `repeats`: a model may
    give the same answer to a prompt in several rows (a battle log shows it in each battle); a long table may
    not."""
    wanted = set(ds.outputs)
    rows: dict[str, dict[str, Any]] = {}
    first: dict[tuple[str, str], Answer] = {}
    opened: dict[str, Answer] = {}
    seen: set[str] = set()
    prompt = ds.fields["prompt"]
    for answer in answers:
        model = spec_name(ds, answer.model, wanted)
        seen.add(answer.model)
        if model not in wanted:  # another model's rows (a log of another task, a battle the spec leaves out)
            continue
        if answer.key in opened and text_value(answer.row, prompt) != text_value(opened[answer.key].row, prompt):
            raise DatasetError(f"{answer.where}: prompt {answer.key!r} has another text in {opened[answer.key].where} "
                               f"(field {prompt!r} differs); give fields.id a column that tells them apart")
        row = rows.setdefault(answer.key, {**answer.row, BATTLES: [], WHERE: answer.where})
        opened.setdefault(answer.key, answer)
        earlier = first.get((answer.key, model))
        if earlier is not None and not (repeats and earlier.text == answer.text):
            why = "a second answer" if not repeats else "another answer"
            raise DatasetError(f"{answer.where}: {why} of model {model!r} to prompt {answer.key!r} (the first is "
                               f"{earlier.where}); keep one answer per prompt and model, or give fields.id a column "
                               "that tells the conversations apart")
        first[(answer.key, model)] = answer
        row[LONG_ANSWER + model] = answer.text
        if answer.score is not None:
            row[LONG_SCORE + model] = answer.score
    answered = {model for _, model in first}
    missing = [m for m in ds.outputs if m not in answered]
    if missing:
        raise DatasetError(f"dataset {ds.name!r}: recorded model(s) {', '.join(missing)} have no answer in the data, "
                           f"whose models are: {', '.join(sorted(seen)[:12])}; name the spec's models as the data "
                           "does, or map them with model_names")
    if len(wanted) > 1:
        _refuse_lone_answers(first)
    fought: dict[tuple[str, frozenset[str]], str] = {}
    for vote in votes:
        a, b = spec_name(ds, vote.model_a, wanted), spec_name(ds, vote.model_b, wanted)
        if a not in wanted or b not in wanted:
            continue
        if a == b:
            raise DatasetError(f"{vote.where}: a battle of model {a!r} against itself")
        pair = (vote.key, frozenset((a, b)))
        if pair in fought:
            raise DatasetError(f"{vote.where}: a second battle of {a!r} and {b!r} on prompt {vote.key!r} (the first "
                               f"is {fought[pair]}); keep one, or give fields.id a column that tells them apart")
        fought[pair] = vote.where
        winner = {"a": a, "b": b}.get(vote.winner, vote.winner)
        rows[vote.key][BATTLES].append(Battle(a, b, winner, vote.share))
    return list(rows.values())


def _refuse_lone_answers(first: dict[tuple[str, str], Answer]) -> None:
    """A prompt only one of the recorded models answered has nothing to be compared with: named, where it is."""
    by_key: dict[str, list[Answer]] = {}
    for (key, _), answer in first.items():
        by_key.setdefault(key, []).append(answer)
    for key, answers in by_key.items():
        if len(answers) == 1:
            only = answers[0]
            raise DatasetError(f"{only.where}: prompt {key!r} is answered by model {only.model!r} only, so it has "
                               "nothing to be compared with; add the other models' answers or drop the row")
