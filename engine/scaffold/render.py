"""The spec `vibe init` writes for a layout, with a comment on every choice, and the one line it prints of what it
took for what."""

from __future__ import annotations

import re
from pathlib import Path

from engine.formats import dataset_format
from engine.scaffold.layout import Layout, slug


def _yaml(value: str) -> str:
    """A YAML scalar for a name or path: quoted when plain style would misread it."""
    plain = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-/ ]*", value) and value.lower() not in (
        "yes", "no", "true", "false", "null", "on", "off", "y", "n", "~")
    return value if plain and value == value.strip() else '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _spec_path(data: Path, spec_dir: Path) -> str:
    """`data` as the spec names it: relative to the spec's folder where it lies below it."""
    try:
        return data.resolve().relative_to(spec_dir.resolve()).as_posix()
    except ValueError:
        return str(data.resolve())


# the names a tool gives every file it writes (AlpacaEval's), which say nothing of what one holds: a spec read
# from one is named after the models it compares
GENERIC_NAMES = frozenset({"annotations", "model_outputs"})
LLM_WORDS = ("gpt", "claude", "llm", "judge", "gemini", "llama")  # an annotator named so is a model's judgment


def render(layout: Layout, files: list[Path], spec_dir: Path, size: str) -> tuple[str, str]:
    """The spec's text, with a comment on every choice `vibe init` made, and what it takes for what in one line
    for the console (`_taken`), read off the same choices."""
    data = files[0]
    several = len(files) > 1
    parent = data.parent.name if several and len({f.parent for f in files}) == 1 else ""
    models = list(layout.models)
    name = slug(parent or data.stem)
    if name in GENERIC_NAMES or (several and not parent):  # a file's usual name says nothing: name what it compares
        name = slug("-vs-".join(models[:2]) + (f"-and-{len(models) - 2}-more" if len(models) > 2 else ""))
    paths = [_spec_path(f, spec_dir) for f in files]
    source = f"{{paths: [{', '.join(_yaml(p) for p in paths)}]}}" if several else f"{{path: {_yaml(paths[0])}}}"
    read_from = (f"{len(files)} files" + (f" in {parent}/" if parent else "")) if several else data.name
    lines = ["# Written by `vibe init` from " + read_from + f" ({size}). Edit freely; `vibe validate` checks it.",
             f"name: {name}",
             "extends: vibe:offline-panel   # the packaged offline judges (text metrics, MiniLM) and style vibes",
             "", "models:                        # answers recorded in the file: nothing is generated"]
    lines += [f"  {_yaml(m)}: {{provider: recorded}}" for m in models]
    lines += ["  # a model to call instead: {provider: openai, model: gpt-4o-mini, api_key_env: OPENAI_API_KEY}",
              "", "datasets:", f"  {name}:", f"    source: {source}"]
    fields = [("prompt", layout.prompt), ("id", layout.id), ("category", layout.category),
              ("reference", layout.reference), ("preference", layout.label if layout.label_values else None)]
    named: dict[str, str | None] = {}
    if layout.format:
        format_lines, named = _named_dataset(layout, layout.format)
        lines += format_lines
        fields = []
    elif layout.model_column:
        lines.append("    format: long                 # one row per prompt and model")
        fields += [("model", layout.model_column), ("answer", layout.answer_column)]
    elif layout.answer_column:
        lines.append("    format: long                 # a file per model: rows that name no model are the "
                     "model the file is named after")
        fields.append(("answer", layout.answer_column))
    taken = named if layout.format else dict(fields)  # the columns the spec maps, by what they are taken for
    if fields:
        lines.append("    fields:")
    lines += [f"      {key}: {_yaml(column)}" for key, column in fields if column]
    wide = not layout.model_column and not layout.answer_column and not layout.format
    if wide:
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
    elif not layout.votes:
        lines.append("    # no preference labels in these files: which answer people (or a judge) preferred is a "
                     "column mapped as fields.preference, or, for AlpacaEval, its annotations.json, which "
                     "`vibe init` reads (or the folder that holds them)")
    analysis = [f"    models: [{', '.join(_yaml(m) for m in models)}]"]
    if len(models) > 2:
        analysis.append(f"    reference: {_yaml(models[0])}          # every other model is compared with this one")
    lines += ["", "vibes:", "  - discover: {method: statistical, max_vibes: 10}   # found on the training prompts only",
              "", "analyses:", "  vibecheck:", f"    dataset: {name}", *analysis,
              "    judges: [metrics, minilm]", "    split: {train: 0.5, seed: 0}"]
    listed = ", ".join(_yaml(m) for m in models)
    if layout.votes:
        lines += ["  rankings:                      # the battles' votes, every model rated", "    method: rankings",
                  f"    dataset: {name}", f"    models: [{listed}]", "    outcomes: labels"]
    if layout.actions:
        lines += ["  behaviour:                     # what the agents did: tool calls, failures, tokens, time",
                  "    method: agents", f"    dataset: {name}", f"    models: [{listed}]"]
    return "\n".join([*lines, ""]), _taken(name, taken, layout.models if wide else None, models)


def _named_dataset(layout: Layout, form: str) -> tuple[list[str], dict[str, str | None]]:
    """A named format's own lines (the format, its battle columns, and the models renamed for the spec) and the
    columns it maps."""
    lines = [f"    format: {form:<22}# {dataset_format(form).description}"]
    columns: list[tuple[str, str | None]] = []
    if layout.format_fields:
        columns = [("prompt", layout.prompt), ("id", layout.id), ("category", layout.category),
                   *layout.format_fields.items()]
        lines.append("    fields:")
        lines += [f"      {key}: {_yaml(column)}" for key, column in columns if column]
    if layout.names:
        lines.append("    model_names:                 # the file's names -> the spec's")
        lines += [f"      {_yaml(raw)}: {_yaml(name)}" for raw, name in layout.names.items()]
    if layout.votes and layout.voter:
        source = "llm-judge" if any(word in layout.voter.lower() for word in LLM_WORDS) else "unknown"
        lines.append(f"    labels: {{source: {source}, description: {_yaml('annotator ' + layout.voter)}}}"
                     "    # who voted, as the file names it: human | llm-judge | reward-model | metric")
    elif layout.votes:
        lines.append("    labels: {source: unknown}    # who voted: human | llm-judge | reward-model | metric")
    return lines, dict(columns)


def _taken(name: str, fields: dict[str, str | None], outputs: dict[str, str] | None, models: list[str]) -> str:
    """What the spec takes for what, in one line for the console: the prompt and each model's column, and the id,
    category, reference and preference columns where it found them (a column taken for the wrong thing is seen
    before anything runs)."""
    parts = [f"{role} ← {fields[role]!r}" for role in ("prompt", "id", "category", "reference", "preference", "model",
                                                        "answer") if fields.get(role)]
    parts.append("models: " + ", ".join(f"{model} ← {column!r}" if column != model else model
                                        for model, column in outputs.items()) if outputs else
                 "models: " + ", ".join(models))
    return f"took, in {name}: " + "; ".join(parts)
