"""The typed options of an analysis: the base every method's options extend, and the pair options every method
that discovers vibes takes. Below the spec records that hold them and the registry that names the methods."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol, TypeVar

from engine.settings import UNIQUE_LIST, Setting


class HasOptions(Protocol):
    """An analysis as `Options.of` reads it (`engine.spec.model.Analysis`)."""

    @property
    def name(self) -> str: ...

    @property
    def method(self) -> str: ...

    @property
    def options(self) -> Options: ...


OptionsT = TypeVar("OptionsT", bound="Options")


@dataclass(frozen=True)
class Options:
    """Base of every method's typed options: the spec's analysis block less `method`, `dataset`, `models`
    and `description`, with the method's defaults filled in once, when the spec is loaded. A nested block
    (a split, an encoder) is a dataclass of its own, so its defaults live in one place too."""

    @classmethod
    def from_spec(cls: type[OptionsT], block: Mapping[str, Any]) -> OptionsT:
        """The options from an analysis block the schema has accepted; a nested mapping whose field is a
        dataclass (or an optional one) becomes that class."""
        hints = typing.get_type_hints(cls)
        return cls(**{key: _nested(hints.get(key), value) for key, value in block.items()})

    @classmethod
    def of(cls: type[OptionsT], analysis: HasOptions) -> OptionsT:
        """`analysis`' options as this class. A method reads its options through its own class, so a type
        checker follows every option it reads; an analysis of another method is a TypeError, not a missing
        attribute found later."""
        if not isinstance(analysis.options, cls):
            raise TypeError(f"analysis {analysis.name!r} (method {analysis.method}) has "
                            f"{type(analysis.options).__name__}, not {cls.__name__}")
        return analysis.options


def dataclass_in(hint: Any) -> type | None:
    """The dataclass an option field holds (its type itself, or inside `X | None`), if any."""
    for kind in (hint, *typing.get_args(hint)):
        if isinstance(kind, type) and dataclasses.is_dataclass(kind):
            return kind
    return None


def _nested(hint: Any, value: Any) -> Any:
    record = dataclass_in(hint) if isinstance(value, Mapping) else None
    return record(**value) if record is not None else value


@dataclass(frozen=True)
class Split:
    """The seeded split of an analysis' prompts: the training share chooses (discovery, keep/drop, variable
    selection), the rest tests."""

    train: Annotated[float, Setting("Share of prompts in the training split.",
                                    constraints={"exclusiveMinimum": 0, "exclusiveMaximum": 1})] = 0.5
    seed: Annotated[int, Setting("Seed of the split.")] = 0


@dataclass(frozen=True)
class PairOptions(Options):
    """What every method that `discovers` takes, since discovery reads it: the judges of the panel, the
    train/test split of the prompts, and the model every other one is compared with (None: the analysis' two
    models are compared with each other)."""

    judges: Annotated[list[str], Setting("The judges on its panel.", constraints=UNIQUE_LIST)]
    split: Annotated[Split, Setting("The random split of prompts into training pairs (selection) and test pairs "
                                    "(every reported test).")] = field(default_factory=Split)
    reference: Annotated[str | None, Setting(
        "Compare every other model of the analysis with this one (one of `models`): a vibe profile per model, on "
        "one shared set of vibes. Needed with more than 2 models.")] = None
