"""What `vibe init` finds in a table: which column holds the prompts, the answers (a column per model, a model
column, or a file per model), the id, category, reference and preference label, read by name first and by
content second; and, for files other tools write, the layout their dataset format recognises."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.datasets.column_names import (
    ANSWER_NAMES,
    CATEGORY_NAMES,
    ID_NAMES,
    LABEL_NAMES,
    MODEL_NAMES,
    PROMPT_NAMES,
    REFERENCE_NAMES,
    SAMPLE_ROWS,
    columns_of,
    named,
)
from engine.formats import Sniffed, dataset_format, format_names

TIES = ("tie", "draw", "tie (bothbad)", "both_bad", "equal")
NO_LABEL = ("n/a", "na", "none", "null", "nan", "-", "?", "unknown", "missing")  # a row nobody labelled


class InitError(Exception):
    """What `vibe init` cannot infer, said with what to pass instead."""


@dataclass
class Layout:
    """The columns `vibe init` found in a file."""

    prompt: str
    models: dict[str, str]  # model name -> its answer column (wide) or the value of the model column (long)
    id: str | None = None
    category: str | None = None
    reference: str | None = None
    label: str | None = None
    label_values: dict[str, str | None] = field(default_factory=dict)  # label value -> model, tie or None
    model_column: str | None = None  # long tables only
    answer_column: str | None = None
    format: str | None = None  # a named format other tools write (tidy: the file names the models)
    format_fields: dict[str, str] = field(default_factory=dict)  # columns its presets do not name: id, model_a ...
    names: dict[str, str] = field(default_factory=dict)  # the file's model name -> the spec's, where they differ
    votes: bool = False  # the file holds votes between models (ranked too)
    actions: bool = False  # the file holds what agents did (their tool use compared too)
    source: Path | None = None  # what the spec reads, where a format reads more than the file given
    voter: str | None = None  # who the file says voted (AlpacaEval's `annotator`), where it names one


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-") or "data"


KEY_SUFFIXES = ("id", "url", "uri", "path", "file", "filename", "hash", "name")


WORD = re.compile(r"[^\W\d_]{2,}")  # a run of two letters or more, in any script


def _is_text(rows: list[dict[str, Any]], column: str) -> bool:
    """What an answer or a prompt looks like: strings that differ from row to row and read as words (most hold
    a space and a word of letters: a column of scores written as lists, "[1.0, -1.0]", is not a model's
    answers), in a column whose name is not that of a key, a link or a file (an id, a URL, a model's
    name)."""
    if column.lower().replace("-", "_").rsplit("_", 1)[-1] in KEY_SUFFIXES:
        return False
    present = [r.get(column) for r in rows if r.get(column) not in (None, "")]
    values = [v for v in present if isinstance(v, str)]
    if len(values) < 2 or len(values) < len(present) or len(set(values)) == 1:
        return False
    worded = sum(any(c.isspace() for c in v.strip()) and WORD.search(v) is not None for v in values)
    linked = sum(v.startswith(("http://", "https://", "data:")) for v in values)
    return worded >= len(values) / 2 and linked < len(values) / 2


def _is_answers(rows: list[dict[str, Any]], column: str) -> bool:
    """Text that differs from prompt to prompt as answers do: a column whose values repeat (a topic, a label such
    as 'Creative Writing') is not a model's answers, whatever its words."""
    values = [r[column] for r in rows if isinstance(r.get(column), str) and r[column]]
    return _is_text(rows, column) and len(set(values)) >= len(values) / 2


def detect(rows: list[dict[str, Any]], models: list[str] | None = None, files: Sequence[Path] = (),
           prompt: str | None = None) -> Layout:
    """The layout of `rows` (see the module docstring); `models` picks the answer columns (wide) or the model
    column's values (long) to compare, in that order; `prompt` names the prompt column. `files`: the files
    whose rows are joined, when several (a file per model, when their rows name none). Where a guess could be
    wrong (no column named like a prompt; one column named like a model's answer in one file, so the file may
    be one model's), it is refused with the option that settles it."""
    several = len(files) > 1
    if not rows:
        read = ", ".join(str(f) for f in files) or "the file"
        raise InitError(f"{read}: {'they hold' if several else 'it holds'} no rows: nothing to compare")
    columns = columns_of(rows)
    sample = rows[:SAMPLE_ROWS]
    if prompt is not None and prompt not in columns:
        raise InitError(f"--prompt {prompt!r} is not a column (columns: {', '.join(columns)})")
    prompt = prompt or named(columns, PROMPT_NAMES)
    if prompt is None:
        texts = [c for c in columns if _is_text(sample, c) and c.lower() not in ANSWER_NAMES]
        raise InitError(f"no column is named like a prompt ({', '.join(PROMPT_NAMES[:4])}, ...; columns: "
                        f"{', '.join(columns)}); say which holds the prompts with --prompt "
                        f"{texts[0] if texts else 'COLUMN'}, or, where they are in another file, join it in "
                        "(source.join in the spec)")
    layout = Layout(prompt, {}, named(columns, ID_NAMES), named(columns, CATEGORY_NAMES),
                    named(columns, REFERENCE_NAMES), named(columns, LABEL_NAMES))
    model_column, answer_column = named(columns, MODEL_NAMES), named(columns, ANSWER_NAMES)
    if model_column and answer_column and answer_column != prompt:
        layout.model_column, layout.answer_column = model_column, answer_column
        seen = list(dict.fromkeys(str(r[model_column]) for r in rows if r.get(model_column) not in (None, "")))
        chosen = choose(models, seen, f"values of the {model_column!r} column", single_file=not several)
        layout.models = {name: name for name in chosen}
    else:
        taken = {prompt, layout.id, layout.category, layout.reference, layout.label}
        answers = [c for c in columns if c not in taken and _is_answers(sample, c)]
        one_model = named(answers, ANSWER_NAMES) or (answers[0] if several and len(answers) == 1 else None)
        if one_model and several:
            return _file_per_model(layout, one_model, files, models)
        if one_model and not models:  # 'generation' beside 'evaluator_explanation' is one model's answers, not two
            others = [c for c in answers if c != one_model]
            raise InitError(f"{one_model!r} reads as one model's answers"
                            f"{' (beside ' + ', '.join(repr(c) for c in others) + ')' if others else ''}: give each "
                            "model's file (vibe init FILE FILE ...), or name the columns to compare with --models A,B")
        if several and len(answers) < 2:
            raise InitError(f"the files' rows name no model (no column called {', '.join(MODEL_NAMES)}) and hold "
                            f"{len(answers)} answer column{'s' * (len(answers) != 1)}: add a 'model' column to each "
                            "file's rows, or put the answers side by side in one file, a column per model")
        chosen = choose(models, answers, "text columns", single_file=not several)
        layout.models = {slug(c): c for c in chosen}
    if layout.label:
        layout.label_values = _label_values(rows, layout)
    return layout


def _file_per_model(layout: Layout, answer: str, files: Sequence[Path], models: list[str] | None) -> Layout:
    """Several files whose rows name no model, each holding one answer column: a file per model, named by the
    file's stem (as the long format reads it)."""
    stems = [f.stem for f in files]
    repeated = sorted({s for s in stems if stems.count(s) > 1})
    if repeated:
        raise InitError(f"the files' rows name no model and their names do not tell the models apart "
                        f"({', '.join(repeated)} twice): add a 'model' column to each file's rows, or rename the "
                        "files after their models")
    layout.model_column, layout.answer_column = None, answer
    layout.models = {name: name for name in choose(models, stems, "files")}
    return layout


def sniff(data: Path, rows: list[dict[str, Any]] | None) -> tuple[Layout, str] | None:
    """The layout of a file some dataset format recognises (`rows`: its records, None before they are read,
    when only formats told by the file itself can answer), and what was read; None when none does."""
    for form in format_names():
        found = dataset_format(form).sniff(data, rows)
        if found is not None:
            return _named_layout(form, found), found.size
    return None


def _named_layout(form: str, found: Sniffed) -> Layout:
    """A layout whose models the file names, most frequent first, each given a name the spec accepts: the
    name the format's reader gives it, made safe; `model_names` maps those that had to change."""
    names = {}
    for raw in dict.fromkeys(found.models):
        read_as = found.names.get(raw, raw)
        names[raw] = (re.sub(r"[^A-Za-z0-9_.-]+", "-", read_as).strip("-.") or "model", read_as)
    layout = Layout(found.prompt, {name: name for name, _ in names.values()}, format=form,
                    id=found.fields.get("id"), category=found.fields.get("category"), votes=found.votes,
                    actions=found.actions,
                    source=found.source)
    layout.format_fields = {k: v for k, v in found.fields.items() if k not in ("id", "category")}
    layout.names = {raw: name for raw, (name, read_as) in names.items() if name != read_as}
    return layout


def choose(wanted: list[str] | None, found: list[str], what: str, single_file: bool = True) -> list[str]:
    """The models to compare: those `--models` names (each must be among `found`), else every one found, of
    which there must be two; the refusal says how to give more (`single_file`: the data was one file)."""
    if wanted:
        missing = [m for m in wanted if m not in found]
        if missing:
            raise InitError(f"--models names {', '.join(missing)}, not among the {what}: {', '.join(found)}")
        return wanted
    if len(found) < 2:
        more = ("; a file of one model's answers goes with the others': vibe init FILE FILE ... (or their folder)"
                if single_file and len(found) == 1 else
                " (no column holds text that differs from prompt to prompt, as answers do)" if not found else
                "; pass --models A,B to name them")
        raise InitError(f"need answers from at least two models, found {len(found)} among the {what}"
                        f"{': ' + ', '.join(found) if found else ''}{more}")
    return found


def _label_values(rows: list[dict[str, Any]], layout: Layout) -> dict[str, str | None]:
    """Each label value the file holds → the model it favours or tie, where the value says which: a model's
    name or column (in any case, or cut short to a prefix of one of them alone, as VibeCheck's files write
    'TNLGv' for TNLGv2), a/b or 1/2 for the first two models, a tie word; None for a value that gives no label
    ('N/A')."""
    label = layout.label
    if label is None:
        return {}
    names = list(layout.models)
    columns = {column: name for name, column in layout.models.items()}
    positional = {"a": 0, "b": 1, "model_a": 0, "model_b": 1, "1": 0, "2": 1, "1.0": 0, "2.0": 1}
    spelled = {written.lower(): name for name, column in layout.models.items() for written in (name, column)}
    out: dict[str, str | None] = {}
    for value in Counter(str(r[label]) for r in rows if r.get(label) not in (None, "")):
        low = value.lower()
        if value in names or value in columns:
            out[value] = columns.get(value, value)
        elif low in spelled:
            out[value] = spelled[low]
        elif low in TIES:
            out[value] = "tie"
        elif low in NO_LABEL:
            out[value] = None
        elif low in positional and len(names) > positional[low]:
            out[value] = names[positional[low]]
        elif len(low) >= 3 and len(prefixed := {name for written, name in spelled.items()
                                                 if written.startswith(low)}) == 1:
            out[value] = prefixed.pop()
    return out
