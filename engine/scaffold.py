"""`vibe init`: a commented, valid spec for a user's own file of prompts and answers, or the embedded default.

The file is read by the dataset readers a run uses (CSV, JSONL, JSON, Parquet), and its columns are
recognised by name first and by content second:

- the prompt: a column named like one (prompt, question, instruction, ...), else the first text column;
- an id, a category and a preference label, by name;
- the answers: either one text column per model (wide: every other column holding text, or the columns
  `--models` names), or a model column and an answer column (long: one row per prompt and model);
- the formats other tools write, by their shape: Inspect AI logs (a .eval file, a log folder, a .json log),
  an LLM Comparator file, AlpacaEval annotations (output_1/generator_1 ...) and battle logs (model_a,
  model_b and an answer column for each); their models are named in the file, and a battle log with votes
  is ranked too.

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
from engine.datasets.battles import comparator_rows
from engine.datasets.inspect_logs import log_files, log_model

PROMPT_NAMES = ("prompt", "question", "instruction", "input", "query", "user_prompt", "turns.0", "problem")
ID_NAMES = ("id", "question_id", "prompt_id", "uid", "idx", "item_id", "sample_id")
CATEGORY_NAMES = ("category", "topic", "task", "subset", "domain")
LABEL_NAMES = ("preference", "winner", "label", "preferred", "choice", "human_preference")
MODEL_NAMES = ("model", "model_name", "generator", "system")
ANSWER_NAMES = ("answer", "output", "response", "completion", "generation", "text")
REFERENCE_NAMES = ("reference", "gold", "target", "ideal")
TIES = ("tie", "draw", "tie (bothbad)", "both_bad", "equal")
SAMPLE_ROWS = 200  # rows read to tell text columns from others
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
    label_values: dict[str, str] = field(default_factory=dict)  # label value -> model or tie
    model_column: str | None = None  # long tables only
    answer_column: str | None = None
    format: str | None = None  # a named format other tools write (tidy: the file names the models)
    battle_columns: dict[str, str] = field(default_factory=dict)  # battles: model_a, model_b, answer_a, ...
    names: dict[str, str] = field(default_factory=dict)  # the file's model name -> the spec's, where they differ


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-") or "data"


def _named(columns: list[str], names: tuple[str, ...]) -> str | None:
    lowered = {c.lower(): c for c in columns}
    return next((lowered[n] for n in names if n in lowered), None)


KEY_SUFFIXES = ("id", "url", "uri", "path", "file", "filename", "hash", "name")


def _is_text(rows: list[dict[str, Any]], column: str) -> bool:
    """What an answer or a prompt looks like: strings that differ from row to row and read as words (most hold
    a space), in a column whose name is not that of a key, a link or a file (an id, a URL, a model's name)."""
    if column.lower().replace("-", "_").rsplit("_", 1)[-1] in KEY_SUFFIXES:
        return False
    present = [r.get(column) for r in rows if r.get(column) not in (None, "")]
    values = [v for v in present if isinstance(v, str)]
    if len(values) < 2 or len(values) < len(present) or len(set(values)) == 1:
        return False
    worded = sum(any(c.isspace() for c in v.strip()) for v in values)
    linked = sum(v.startswith(("http://", "https://", "data:")) for v in values)
    return worded >= len(values) / 2 and linked < len(values) / 2


def detect(rows: list[dict[str, Any]], models: list[str] | None = None) -> Layout:
    """The layout of `rows` (see the module docstring); `models` picks the answer columns (wide) or the model
    column's values (long) to compare, in that order."""
    if not rows:
        raise InitError("the file holds no rows")
    columns = list(dict.fromkeys(c for r in rows[:SAMPLE_ROWS] for c in r))
    sample = rows[:SAMPLE_ROWS]
    prompt = _named(columns, PROMPT_NAMES) or next((c for c in columns if _is_text(sample, c)), None)
    if prompt is None:
        raise InitError(f"no column looks like a prompt (columns: {', '.join(columns)}); name it 'prompt'")
    layout = Layout(prompt, {}, _named(columns, ID_NAMES), _named(columns, CATEGORY_NAMES),
                    _named(columns, REFERENCE_NAMES), _named(columns, LABEL_NAMES))
    model_column, answer_column = _named(columns, MODEL_NAMES), _named(columns, ANSWER_NAMES)
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


SIDE_ANSWERS = ("response_{}", "answer_{}", "output_{}", "completion_{}", "text_{}")


def detect_file(data: Path) -> tuple[Layout, str] | None:
    """The layout of Inspect logs or an LLM Comparator file (formats told by the file itself), its models read
    from it, and what was read (for the spec's first line); None for any other file."""
    if data.is_dir() or data.suffix == ".eval" or _json_object_with(data, "eval", "samples"):
        logs = log_files(data)
        return _named_layout("inspect", "input", [log_model(log) for log in logs]), f"{len(logs)} logs"
    if _json_object_with(data, "examples", "models"):
        examples = comparator_rows(data)
        models = [examples[0][1]["model_a"], examples[0][1]["model_b"]] if examples else []
        return _named_layout("llm-comparator", "input_text", models), f"{len(examples)} examples"
    return None


def detect_battles(rows: list[dict[str, Any]]) -> Layout | None:
    """The layout of AlpacaEval annotations or a battle log (model_a, model_b and an answer column for each),
    its models read from the rows, most frequent first; None for any other table."""
    columns = sorted({c for r in rows[:SAMPLE_ROWS] for c in r})
    if {"instruction", "output_1", "generator_1", "output_2", "generator_2"} <= set(columns):
        return _named_layout("alpaca-eval", "instruction", _battle_models(rows, "generator_1", "generator_2"))
    if not {"model_a", "model_b"} <= set(columns):
        return None
    sides = {side: next((f.format(side) for f in SIDE_ANSWERS if f.format(side) in columns), None)
             for side in ("a", "b")}
    prompt = _named(columns, PROMPT_NAMES)
    if None in sides.values() or prompt is None:
        return None
    layout = _named_layout("battles", prompt, _battle_models(rows, "model_a", "model_b"))
    layout.id = _named(columns, ID_NAMES)
    layout.category = _named(columns, CATEGORY_NAMES)
    layout.battle_columns = {"model_a": "model_a", "model_b": "model_b", "answer_a": str(sides["a"]),
                             "answer_b": str(sides["b"])}
    label = _named(columns, LABEL_NAMES)
    if label:
        layout.battle_columns["winner"] = label
    return layout


def _json_object_with(path: Path, *keys: str) -> bool:
    """A JSON file holding one object with these keys (peeking at its start, not parsing it whole)."""
    if path.is_dir() or path.suffix.lower() != ".json":
        return False
    with path.open(encoding="utf-8", errors="replace") as fh:
        head = fh.read(1 << 16).lstrip()
    return head.startswith("{") and all(f'"{key}"' in head for key in keys)


def _battle_models(rows: list[dict[str, Any]], *columns: str) -> list[str]:
    counts = Counter(str(r[c]) for r in rows for c in columns if r.get(c) not in (None, ""))
    return [name for name, _ in counts.most_common()]


def _named_layout(form: str, prompt: str, models: list[str]) -> Layout:
    """A layout whose models the file names, most frequent first, each given a name the spec accepts."""
    names = {}
    for raw in dict.fromkeys(models):
        short = raw.rsplit("/", 1)[-1] if form == "inspect" else raw
        names[raw] = re.sub(r"[^A-Za-z0-9_.-]+", "-", short).strip("-.") or "model"
    spec_names = {v: v for v in names.values()}
    layout = Layout(prompt, spec_names, format=form)
    layout.names = {raw: name for raw, name in names.items() if name != raw and
                    not (form == "inspect" and raw.rsplit("/", 1)[-1] == name)}
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


def _label_values(rows: list[dict[str, Any]], layout: Layout) -> dict[str, str]:
    """Each label value the file holds → the model it favours or tie, where the value says which: a model's
    name or column, a/b or 1/2 for the first two models, a tie word."""
    label = layout.label
    if label is None:
        return {}
    names = list(layout.models)
    columns = {column: name for name, column in layout.models.items()}
    positional = {"a": 0, "b": 1, "model_a": 0, "model_b": 1, "1": 0, "2": 1, "1.0": 0, "2.0": 1}
    out: dict[str, str] = {}
    for value in Counter(str(r[label]) for r in rows if r.get(label) not in (None, "")):
        low = value.lower()
        if value in names or value in columns:
            out[value] = columns.get(value, value)
        elif low in TIES:
            out[value] = "tie"
        elif low in positional and len(names) > positional[low]:
            out[value] = names[positional[low]]
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
        lines += [f"      {_yaml(value)}: {_yaml(model)}" for value, model in layout.label_values.items()]
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
    if "winner" in layout.battle_columns or layout.format in ("alpaca-eval", "llm-comparator"):
        listed = ", ".join(_yaml(m) for m in models)
        lines += ["  rankings:                      # the battles' votes, every model rated", "    method: rankings",
                  f"    dataset: {name}", f"    models: [{listed}]", "    outcomes: labels"]
    return "\n".join([*lines, ""])


FORMAT_NOTES = {"inspect": "Inspect AI logs: each header names its model",
                "llm-comparator": "LLM Comparator: its two models; score's sign is the winner",
                "alpaca-eval": "AlpacaEval annotations: generator_1 against generator_2",
                "battles": "one row per battle of two models"}


def _named_dataset(layout: Layout, form: str) -> list[str]:
    """A named format's own lines: the format, its battle columns, and the models renamed for the spec."""
    lines = [f"    format: {form:<22}# {FORMAT_NOTES[form]}"]
    if layout.battle_columns:
        columns = [("prompt", layout.prompt), ("id", layout.id), ("category", layout.category),
                   *layout.battle_columns.items()]
        lines.append("    fields:")
        lines += [f"      {key}: {_yaml(column)}" for key, column in columns if column]
    if layout.names:
        lines.append("    model_names:                 # the file's names -> the spec's")
        lines += [f"      {_yaml(raw)}: {_yaml(name)}" for raw, name in layout.names.items()]
    if layout.format != "inspect":
        lines.append("    labels: {source: unknown}    # who voted: human | llm-judge | reward-model | metric")
    return lines


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
        found = detect_file(data)
        rows = [] if found else read_rows(data)
    except DatasetError as exc:
        raise InitError(str(exc)) from None
    layout, size = found or (detect_battles(rows) or detect(rows, models), f"{len(rows)} rows")
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
