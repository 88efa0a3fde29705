"""`vibe init`: a commented, valid spec for a user's own files of prompts and answers, or the embedded default.

A file is read by the dataset readers a run uses (CSV, JSONL, JSON, Parquet); its layout is found by
`layout.detect` (the columns, by name first and by content second) or by the dataset format that recognises it
(`DatasetFormat.sniff`: Inspect AI logs, LLM Comparator files, AlpacaEval annotations, battle logs, MT-Bench,
conversations). Several files of one kind (or their folder) are one dataset: a file per model.

Nothing is asked that the files answer, and nothing is guessed where a guess could be wrong: then init writes
nothing and says in one line what it could not decide and the option that decides it. The spec extends the
packaged offline panel, compares the first two models with VibeCheck (every other model against the first
when there are more), discovers vibes statistically, and is validated before it is written.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from engine.datasets import DatasetError, read_rows
from engine.datasets.column_names import columns_of
from engine.scaffold.layout import InitError, Layout, choose, detect, sniff
from engine.scaffold.render import render

__all__ = ["InitError", "Layout", "detect", "init_spec", "sniff"]

DEFAULT_SPEC = "smollm2-terse-vs-chatty"
DATA_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson", ".json", ".parquet")


def init_spec(data: Path | Sequence[Path] | None, out: Path, models: list[str] | None = None,
              prompt: str | None = None, say: Callable[[str], object] | None = None) -> Path:
    """Write the spec for `data` (or the embedded default with its prompts, when there is none) to `out`,
    refusing to overwrite; validated before it is written. Returns the path written. `data` may be several
    files of one shape (a file per model, each naming its model), or a folder of them that no format claims.
    `say` is given, in one line, what the spec takes each column for (`vibe init` prints it)."""
    from engine.spec.load import load_spec

    if out.exists():
        raise InitError(f"{out} already exists and is kept: write the spec elsewhere with --out PATH, or delete "
                        f"{out} first")
    files = [data] if isinstance(data, Path) else list(data or ())
    if not files:
        return _write_default(out)
    for path in files:
        if not path.exists():
            raise InitError(f"{path}: no such file")
    try:
        if len(files) == 1 and (found := _read_one(files[0])) is not None:
            layout, size, rows = found
        elif len(files := _data_files(files)) == 1 and (found := _read_one(files[0])) is not None:
            layout, size, rows = found  # a folder holding one data file (AlpacaEval's annotations, say)
        else:
            layout, size, rows = _read_several(files)
    except DatasetError as exc:
        raise InitError(str(exc)) from None
    if layout.source:
        files = [layout.source]
    if not layout.format:
        layout = detect(rows, models, files=files, prompt=prompt)
    else:
        layout.models = {name: name for name in choose(models, list(layout.models), "models in the file")}
    voters = Counter(str(row["annotator"]) for row in rows if row.get("annotator"))  # AlpacaEval names its judge
    layout.voter = voters.most_common(1)[0][0] if voters else None
    out.parent.mkdir(parents=True, exist_ok=True)
    text, taken = render(layout, files, out.parent, size)
    out.write_text(text, encoding="utf-8")
    try:
        load_spec(out)
    except Exception:
        out.unlink()
        raise
    if say is not None:
        say(taken)
    return out


def _read(path: Path) -> tuple[tuple[Layout, str] | None, list[dict[str, Any]]]:
    """What a format recognises in `path` and its rows: a file a format tells by itself (an Inspect log, a folder
    a format claims) is not read as a table; any other is, and its rows are offered to the formats again."""
    found = sniff(path, None)
    if found or path.is_dir():
        return found, []
    rows = read_rows(path)
    return sniff(path, rows), rows


def _read_one(data: Path) -> tuple[Layout, str, list[dict[str, Any]]] | None:
    """A file (or a folder a format claims): its layout when a format recognises it, else its rows for `detect`;
    None for a folder no format claims (its files are read as several)."""
    found, rows = _read(data)
    if found:
        return found[0], found[1], rows
    if data.is_dir():
        return None
    return Layout("", {}), f"{len(rows)} rows", rows  # no format: an empty layout, which `detect` replaces


def _data_files(paths: list[Path]) -> list[Path]:
    """The files named, a folder standing for the data files directly in it (a file per model), or for
    AlpacaEval's layout as it ships (`<model>/<annotator>/annotations.json`, which hold both answers and the
    vote, else `<model>/model_outputs.json`)."""
    out = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in DATA_SUFFIXES)
            inside = inside or sorted(path.glob("*/*/annotations.json")) or sorted(path.glob("*/model_outputs.json"))
            if not inside:
                raise InitError(f"{path}: a folder with no CSV, JSONL, JSON or Parquet file in it, and no format "
                                "recognises it")
            out += inside
        else:
            out.append(path)
    return out


def _read_several(files: list[Path]) -> tuple[Layout, str, list[dict[str, Any]]]:
    """Several files of one shape, read as one dataset (`source.paths`): a format other tools write, recognised
    in every file (their models joined: an agent's messages per file), or tables of the same columns whose rows
    are joined (a model column on each row tells the models apart; AlpacaEval's model_outputs.json per model)."""
    read = [(path, *reversed(_read(path))) for path in files]
    forms = {path: found[0].format if found else None for path, _, found in read}
    if len(set(forms.values())) > 1:
        said = "; ".join(f"{p.name}: {form or 'a plain table'}" for p, form in forms.items())
        raise InitError(f"the files are not of one format ({said}); a dataset reads one format: pass files of "
                        "one kind, or write a dataset for each")
    if read[0][2] is not None:
        layouts = [found[0] for _, _, found in read if found]
        layout = layouts[0]
        for other in layouts[1:]:
            layout.models.update({m: m for m in other.models if m not in layout.models})
            layout.names.update(other.names)
            layout.votes = layout.votes or other.votes
        return layout, f"{len(files)} files", []
    columns = [set(columns_of(rows)) for _, rows, _ in read]
    if any(c != columns[0] for c in columns[1:]):
        odd = next(k for k, c in enumerate(columns) if c != columns[0])
        raise InitError(f"{files[odd].name} and {files[0].name} do not have the same columns ({files[0].name}: "
                        f"{', '.join(sorted(columns[0]))}; {files[odd].name}: {', '.join(sorted(columns[odd]))}): "
                        "the files are read as one table")
    return Layout("", {}), f"{sum(len(r) for _, r, _ in read)} rows", [
        row for _, rows, _ in read for row in rows]


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
