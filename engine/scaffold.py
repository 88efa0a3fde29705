"""`vibe init`: a commented, valid spec for a user's own file of prompts and answers, or the embedded default.

The file is read by the dataset readers a run uses (CSV, JSONL, JSON, Parquet), and its columns are
recognised by name first and by content second:

- the prompt: a column named like one (prompt, question, instruction, ...), else the first text column;
- an id, a category and a preference label, by name;
- the answers: either one text column per model (wide: every other column holding text, or the columns
  `--models` names), or a model column and an answer column (long: one row per prompt and model);
- the formats other tools write, each recognised by its dataset format (`DatasetFormat.sniff`, tried in the
  registry's order): Inspect AI logs and LLM Comparator files by the file itself, AlpacaEval annotations and
  battle logs by their columns; their models are named in the file, and a file with votes between models is
  ranked too.

Nothing is asked that the file answers. The spec extends the packaged offline panel, compares the first two
models with VibeCheck (every other model against the first when there are more), discovers vibes
statistically, and is validated before it is written: a spec `vibe init` writes always runs.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from engine.datasets import DatasetError, read_rows
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
DEFAULT_SPEC = "smollm2-terse-vs-chatty"


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


def _slug(text: str) -> str:
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


def detect(rows: list[dict[str, Any]], models: list[str] | None = None) -> Layout:
    """The layout of `rows` (see the module docstring); `models` picks the answer columns (wide) or the model
    column's values (long) to compare, in that order."""
    if not rows:
        raise InitError("the file holds no rows")
    columns = columns_of(rows)
    sample = rows[:SAMPLE_ROWS]
    prompt = named(columns, PROMPT_NAMES) or next((c for c in columns if _is_text(sample, c)), None)
    if prompt is None:
        raise InitError(f"no column looks like a prompt (columns: {', '.join(columns)}); name it 'prompt'")
    layout = Layout(prompt, {}, named(columns, ID_NAMES), named(columns, CATEGORY_NAMES),
                    named(columns, REFERENCE_NAMES), named(columns, LABEL_NAMES))
    model_column, answer_column = named(columns, MODEL_NAMES), named(columns, ANSWER_NAMES)
    if model_column and answer_column and answer_column != prompt:
        layout.model_column, layout.answer_column = model_column, answer_column
        seen = list(dict.fromkeys(str(r[model_column]) for r in rows if r.get(model_column) not in (None, "")))
        chosen = _choose(models, seen, f"values of the {model_column!r} column")
        layout.models = {name: name for name in chosen}
    else:
        taken = {prompt, layout.id, layout.category, layout.reference, layout.label}
        answers = [c for c in columns if c not in taken and _is_text(sample, c)]
        chosen = _choose(models, answers, "text columns")
        layout.models = {_slug(c): c for c in chosen}
    if layout.label:
        layout.label_values = _label_values(rows, layout)
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
                    id=found.fields.get("id"), category=found.fields.get("category"), votes=found.votes)
    layout.format_fields = {k: v for k, v in found.fields.items() if k not in ("id", "category")}
    layout.names = {raw: name for raw, (name, read_as) in names.items() if name != read_as}
    return layout


def _choose(wanted: list[str] | None, found: list[str], what: str) -> list[str]:
    if wanted:
        missing = [m for m in wanted if m not in found]
        if missing:
            raise InitError(f"--models names {', '.join(missing)}, not among the {what}: {', '.join(found)}")
        return wanted
    if len(found) < 2:
        raise InitError(f"need answers from at least two models, found {len(found)} among the {what}"
                        f"{': ' + ', '.join(found) if found else ''}; pass --models A,B")
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


def _yaml(value: str) -> str:
    """A YAML scalar for a name or path: quoted when plain style would misread it."""
    plain = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-/ ]*", value) and value.lower() not in (
        "yes", "no", "true", "false", "null", "on", "off", "y", "n", "~")
    return value if plain and value == value.strip() else '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(layout: Layout, data: Path, spec_dir: Path, size: str) -> str:
    """The spec's text, with a comment on every choice `vibe init` made."""
    name = _slug(data.stem)
    models = list(layout.models)
    try:
        path = data.resolve().relative_to(spec_dir.resolve()).as_posix()
    except ValueError:
        path = str(data.resolve())
    lines = ["# Written by `vibe init` from " + data.name + f" ({size}). Edit freely; `vibe validate` checks it.",
             f"name: {name}",
             "extends: vibe:offline-panel   # the packaged offline judges (text metrics, MiniLM) and style vibes",
             "", "models:                        # answers recorded in the file: nothing is generated"]
    lines += [f"  {_yaml(m)}: {{provider: recorded}}" for m in models]
    lines += ["  # a model to call instead: {provider: openai, model: gpt-4o-mini, api_key_env: OPENAI_API_KEY}",
              "", "datasets:", f"  {name}:", f"    source: {{path: {_yaml(path)}}}"]
    if layout.format:
        lines += _named_dataset(layout, layout.format)
    fields = [("prompt", layout.prompt), ("id", layout.id), ("category", layout.category),
              ("reference", layout.reference), ("preference", layout.label if layout.label_values else None)]
    if layout.format:
        fields = []
    elif layout.model_column:
        lines.append("    format: long                 # one row per prompt and model")
        fields += [("model", layout.model_column), ("answer", layout.answer_column)]
    if fields:
        lines.append("    fields:")
    lines += [f"      {key}: {_yaml(column)}" for key, column in fields if column]
    if not layout.model_column and not layout.format:
        lines.append("      outputs:                   # model -> the column holding its answers")
        lines += [f"        {_yaml(m)}: {_yaml(column)}" for m, column in layout.models.items()]
    if layout.label_values:
        lines.append("    preference_values:           # label as written -> the model it favours (or tie)")
        lines += [f"      {_yaml(value)}: {_yaml(model)}" if model is not None
                  else f"      {_yaml(value)}: null   # gives no label: the row counts as unlabelled"
                  for value, model in layout.label_values.items()]
        lines.append("    labels: {source: unknown}    # who wrote them: human | llm-judge | reward-model | metric")
    elif layout.label:
        lines.append(f"    # {layout.label!r} looks like a preference label, but its values name no model: map "
                     "them with preference_values and add fields.preference")
    analysis = [f"    models: [{', '.join(_yaml(m) for m in models)}]"]
    if len(models) > 2:
        analysis.append(f"    reference: {_yaml(models[0])}          # every other model is compared with this one")
    lines += ["", "vibes:", "  - discover: {method: statistical, max_vibes: 10}   # found on the training prompts only",
              "", "analyses:", "  vibecheck:", f"    dataset: {name}", *analysis,
              "    judges: [metrics, minilm]", "    split: {train: 0.5, seed: 0}"]
    if layout.votes:
        listed = ", ".join(_yaml(m) for m in models)
        lines += ["  rankings:                      # the battles' votes, every model rated", "    method: rankings",
                  f"    dataset: {name}", f"    models: [{listed}]", "    outcomes: labels"]
    return "\n".join([*lines, ""])


def _named_dataset(layout: Layout, form: str) -> list[str]:
    """A named format's own lines: the format, its battle columns, and the models renamed for the spec."""
    lines = [f"    format: {form:<22}# {dataset_format(form).description}"]
    if layout.format_fields:
        columns = [("prompt", layout.prompt), ("id", layout.id), ("category", layout.category),
                   *layout.format_fields.items()]
        lines.append("    fields:")
        lines += [f"      {key}: {_yaml(column)}" for key, column in columns if column]
    if layout.names:
        lines.append("    model_names:                 # the file's names -> the spec's")
        lines += [f"      {_yaml(raw)}: {_yaml(name)}" for raw, name in layout.names.items()]
    if layout.votes:
        lines.append("    labels: {source: unknown}    # who voted: human | llm-judge | reward-model | metric")
    return lines


def what_was_taken(path: Path) -> str:
    """What a spec `vibe init` wrote takes for what, in one line for the console: the prompt and each model's
    column, and the id, category, reference and preference columns where it found them."""
    import yaml

    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    (name, dataset), = doc["datasets"].items()
    fields = dataset.get("fields", {})
    parts = [f"{role} ← {fields[role]!r}" for role in ("prompt", "id", "category", "reference", "preference", "model",
                                                        "answer") if role in fields]
    outputs = fields.get("outputs") or {}
    parts.append("models: " + ", ".join(f"{model} ← {column!r}" if column != model else model
                                        for model, column in outputs.items()) if outputs else
                 "models: " + ", ".join(doc["analyses"]["vibecheck"]["models"]))
    return f"took, in {name}: " + "; ".join(parts)


def init_spec(data: Path | None, out: Path, models: list[str] | None = None) -> Path:
    """Write the spec for `data` (or the embedded default with its prompts, when there is none) to `out`,
    refusing to overwrite; validated before it is written. Returns the path written."""
    from engine.spec.load import load_spec

    if out.exists():
        raise InitError(f"{out} already exists; pass --out to write elsewhere")
    if data is None:
        return _write_default(out)
    if not data.exists():
        raise InitError(f"{data}: no such file")
    try:
        found = sniff(data, None)
        rows = [] if found else read_rows(data)
        found = found or sniff(data, rows)
    except DatasetError as exc:
        raise InitError(str(exc)) from None
    layout, size = found or (detect(rows, models), f"{len(rows)} rows")
    if layout.format:
        layout.models = {name: name for name in _choose(models, list(layout.models), "models in the file")}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(layout, data, out.parent, size), encoding="utf-8")
    try:
        load_spec(out)
    except Exception:
        out.unlink()
        raise
    return out


def _write_default(out: Path) -> Path:
    """The embedded default spec, standalone: its prompts file beside it, the offline panel by reference."""
    source = resources.files("engine.builtin")
    text = source.joinpath(f"{DEFAULT_SPEC}.yaml").read_text(encoding="utf-8")
    out.parent.mkdir(parents=True, exist_ok=True)
    data = out.parent / "data"
    data.mkdir(exist_ok=True)
    with resources.as_file(source.joinpath("data", "everyday-prompts.jsonl")) as prompts:
        target = data / "everyday-prompts.jsonl"
        if not target.exists():
            shutil.copyfile(prompts, target)
    out.write_text(text, encoding="utf-8")
    return out
