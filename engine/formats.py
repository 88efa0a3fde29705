"""The dataset formats a spec may name (`datasets.<name>.format`), behind a small lazy registry.

A format says how a file's records become one row per prompt: which columns it reads (its own presets, those
it needs mapped), whether its rows name the models (tidy: one answer or one battle per row, gathered per
prompt) or hold one column per model (wide), how a battle's winner column reads, and, for `vibe init`, how
to recognise a file of its kind. The spec's schema, its checks, the dataset reader and `vibe init` ask the
format; none of them names one. A format lives in one module (`engine/builtin_plugins/formats/`) whose class
registers itself with `@dataset_format_class`.

Adding a format: write its module, add its line to `engine.plugin_tables.DATASET_FORMATS` (or publish it under the
`vibe.dataset_formats` entry-point group from a package of your own).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from engine.plugin_tables import DATASET_FORMATS
from engine.plugins import Plugins, names_with_published

if TYPE_CHECKING:
    from pathlib import Path

    from engine.spec.data_model import Dataset

DEFAULT_FORMAT = "wide"
ENTRY_POINTS = "vibe.dataset_formats"

Located = list[tuple[str, dict[str, Any]]]  # records, each with where it sits (`file:line`, a row number)


@dataclass(frozen=True)
class Sniffed:
    """What a format recognised in a file, for `vibe init`: the prompt column, the models the file names (as
    written, most frequent first), what was read (for the spec's first line), the name the reader gives a
    model where it is not the one written (an Inspect header's `openai/gpt-4o` is read as `gpt-4o`), and the
    columns to write under `fields:` (none: the format's presets read the file)."""

    prompt: str
    models: list[str]
    size: str
    names: dict[str, str] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)
    votes: bool = False  # the file holds votes between models: `vibe init` ranks them too
    actions: bool = False  # the file holds what agents did (tool calls): `vibe init` compares that too
    source: Path | None = None  # what the spec should read, where it is not the path given (the folder around it)


class DatasetFormat:
    """One dataset format. Subclasses set the class attributes and implement `records` and `rows`
    (`engine.datasets.shapes` holds the three usual shapes: wide, one answer per row, one battle per row)."""

    name: ClassVar[str]
    description: ClassVar[str]  # a sentence for the schema and `vibe init`'s comment
    tidy: ClassVar[bool] = True  # its rows name the models; False: one column per model (fields.outputs)
    battles: ClassVar[bool] = False  # a row compares two answers, its winner read with winner_values
    fields: ClassVar[dict[str, str]] = {}  # the columns it reads where the spec's `fields` does not say
    winners: ClassVar[dict[str, str] | str] = {}  # how its winner column reads by default
    needs: ClassVar[tuple[str, ...]] = ()  # the columns it needs mapped, beyond the prompt
    reads: ClassVar[tuple[str, ...]] = ()  # the columns it reads beyond the common ones
    columns: ClassVar[dict[str, str]] = {}  # columns only it reads, described for the schema (`fields.<x>`)
    # fields that choose how it reads rather than name a column (`fields.model: agent` of agent logs): their values
    choices: ClassVar[dict[str, tuple[str, ...]]] = {}
    reads_folders: ClassVar[bool] = False  # a source path may be a folder of its files
    conversations: ClassVar[bool] = False  # rows hold whole conversations; the dataset's `unit` says what is judged

    def records(self, path: Path, ds: Dataset) -> Located:
        """Every record of one source file (or folder), with where it sits."""
        raise NotImplementedError

    def rows(self, ds: Dataset, located: Located) -> list[dict[str, Any]]:
        """The records as one row per prompt: the columns `fields` names, and for a tidy format every
        recorded model's answer under `LONG_ANSWER + model` (its score under `LONG_SCORE + model`)."""
        raise NotImplementedError

    def sniff(self, path: Path, rows: list[dict[str, Any]] | None) -> Sniffed | None:
        """What `vibe init` recognises in `path` (`rows`: its records when it is a table the common readers
        read, else None), or None when the file is not of this format."""
        return None


class UnknownFormat(KeyError):
    pass


_FORMATS: Plugins[DatasetFormat] = Plugins("dataset format", DATASET_FORMATS.get, UnknownFormat, ENTRY_POINTS)


def dataset_format_class(name: str) -> Callable[[type[DatasetFormat]], type[DatasetFormat]]:
    """Class decorator: register a dataset format under `name` (a second registration is an error)."""
    def register(cls: type[DatasetFormat]) -> type[DatasetFormat]:
        _FORMATS.add(name, cls())
        cls.name = name
        return cls
    return register


def format_source(name: str) -> str | None:
    """The module that registers format `name`, not imported (`Plugins.source`)."""
    return _FORMATS.source(name)


def format_names() -> list[str]:
    """The formats a spec may name: the table's, then those installed packages publish."""
    return names_with_published(DATASET_FORMATS, ENTRY_POINTS)


def dataset_format(name: str | None) -> DatasetFormat:
    """The format registered as `name` (None: the default, wide), imported on first use."""
    return _FORMATS.get(name or DEFAULT_FORMAT)


def column_owners() -> dict[str, list[str]]:
    """Each column some format reads beyond the common ones -> the formats that read it."""
    owners: dict[str, list[str]] = {}
    for name in format_names():
        for column in dataset_format(name).reads:
            owners.setdefault(column, []).append(name)
    return owners
