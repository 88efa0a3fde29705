"""A plug-in's settings, declared once: a frozen dataclass whose fields are the settings, each annotated with
what it is (`Annotated[float, Setting("…", minimum=0)]`). Everything else vibe needs is read off that record:
the JSON schema of each setting (from its type and its `Setting`), the settings a spec must give (the fields
without a default), their names, and a value for each required one that the contract suite can build a sample
with. Declared in five places, the five drifted: a judge kind whose `required` line was missing validated and
then died in the run with a `TypeError` (as Inspect reads a scorer's settings off its signature, and HELM a
component's off its constructor)."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

T = TypeVar("T")
_SCHEMA_TYPES = {str: "string", float: "number", int: "integer", bool: "boolean"}
UNIQUE_LIST = {"minItems": 1, "uniqueItems": True}  # a list setting's constraints: names, each once, at least one


@dataclass(frozen=True)
class Setting:
    """What a setting is, for the schema and the reference: `doc` says what it does; `example` is a value the
    contract suite gives a required one; the bounds and any other `constraints` go into the schema (`schema`
    replaces the schema read off the type, for a shape the type cannot say)."""

    doc: str
    example: Any = None
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    schema: Mapping[str, Any] | None = None
    constraints: Mapping[str, Any] | None = None  # any other JSON-schema keywords: {"exclusiveMinimum": 0}


def read(record: type[T], given: Mapping[str, Any]) -> T:
    """`record` built from what a spec gave (`given` may hold other fields, which are not its settings): the
    typed settings a plug-in reads, with the record's defaults where a setting was left out."""
    known = set(names(record))
    return record(**{name: value for name, value in given.items() if name in known})


def names(record: type) -> tuple[str, ...]:
    """The settings, in the record's order."""
    return tuple(f.name for f in dataclasses.fields(record))


def required(record: type) -> tuple[str, ...]:
    """The settings a spec must give: the fields without a default."""
    return tuple(f.name for f in dataclasses.fields(record)
                 if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)


def schemas(record: type) -> dict[str, dict[str, Any]]:
    """Each setting's JSON schema, read off its type and its `Setting`. A field whose type has no JSON schema here
    (a dict, a class) and no `Setting(schema=…)` is a TypeError naming it, raised where the plug-in is defined
    rather than where a spec first uses it."""
    out = {}
    for name, hint in typing.get_type_hints(record, include_extras=True).items():
        setting = _setting(hint)
        schema = dict(setting.schema) if setting and setting.schema else _schema_of(record, name, hint)
        if setting is not None:
            bounds = {"minimum": setting.minimum, "maximum": setting.maximum, "minLength": setting.min_length,
                      **(setting.constraints or {})}
            schema.update({key: value for key, value in bounds.items() if value is not None})
            schema["description"] = setting.doc
        out[name] = schema
    return out


def sample(record: type) -> dict[str, Any]:
    """A value for each required setting that states an `example`."""
    hints = typing.get_type_hints(record, include_extras=True)
    return {name: setting.example for name in required(record)
            if (setting := _setting(hints[name])) is not None and setting.example is not None}


def _setting(hint: Any) -> Setting | None:
    return next((m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Setting)), None)


def block(record: type) -> dict[str, Any]:
    """`record`'s settings as a closed JSON-schema object: each one's schema, the required ones."""
    found = required(record)
    return {"type": "object", "additionalProperties": False, **({"required": list(found)} if found else {}),
            "properties": schemas(record)}


def _schema_of(record: type, name: str, hint: Any) -> dict[str, Any]:
    """The JSON schema of a setting's type: a str, number, integer or boolean, a Literal of strings, a dataclass
    of settings (a nested block), a list or tuple of any of those; `X | None` is X's (None is what leaving the
    setting out gives)."""
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in _SCHEMA_TYPES:
        return {"type": _SCHEMA_TYPES[hint]}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return block(hint)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (list, tuple) and (len(args) == 1 or (len(args) == 2 and args[1] is Ellipsis)):
        return {"type": "array", "items": _schema_of(record, name, args[0])}
    if origin in (types.UnionType, typing.Union) and type(None) in args and len(args) == 2:
        return _schema_of(record, name, next(a for a in args if a is not type(None)))
    raise TypeError(f"{record.__name__}.{name}: no JSON schema for {hint!r}; give it Setting(schema={{...}})")
