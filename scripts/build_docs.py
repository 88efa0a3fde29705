"""Write the generated pages of the documentation site from the code they describe, so they cannot drift:

- site/docs/reference/spec.md: every field of the spec's JSON Schema (type, default, description, example);
- site/docs/reference/cli.md: every command and option, from vibe's argument parser;
- site/docs/reference/api.md: every name of the public API a plug-in imports (`api_reference.py`);
- site/docs/schema/spec.json: the JSON Schema itself, served where its `$id` points.

Defaults come from the schema where it states one, else from the typed records the spec is read into (an
analysis method's options, a judge kind's settings, a model's params and limits); examples from the example
specs in specs/ and the packaged ones, where a field is used there, else from the schema's enum or type.
`tests/test_docs.py` runs this into a temporary folder and compares, so a change to the schema or the CLI
without `python scripts/build_docs.py` fails the suite. The pages describe vibe's built-in plug-ins only: the
script sets `VIBE_DISABLE_PLUGIN_AUTOLOAD` before it reads any, so a plug-in package installed beside vibe
neither adds its names to vibe's reference nor makes the comparison fail.

Usage: python scripts/build_docs.py [OUT_DIR]   (default: site/docs)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from api_reference import api_reference  # noqa: E402

from engine import plugins  # noqa: E402
from engine.cli import build_parser  # noqa: E402
from engine.judges.kinds import ALIASES, judge_kind, kind_names  # noqa: E402
from engine.options import dataclass_in  # noqa: E402
from engine.registry import get_method, method_names  # noqa: E402
from engine.spec.load import builtin_specs, load_document, schema, spec_path  # noqa: E402
from engine.spec.model import Limits, Params, Price  # noqa: E402

NAME = "<name>"
ITEM = "[]"
RECORDS = {"params": Params, "limits": Limits, "price": Price}  # the typed records some objects are read into


@dataclasses.dataclass
class Field:
    path: str
    type: str
    default: str
    description: str
    example: str
    only: str = ""  # "method: X" for an analysis option of one method


def _type(node: dict[str, Any]) -> str:
    if "enum" in node:
        return " \\| ".join(f"`{v}`" for v in node["enum"])
    if "const" in node:
        return f"`{node['const']}`"
    kinds = node.get("type")
    if isinstance(kinds, list):
        return " or ".join(kinds)
    if kinds == "array" and isinstance(node.get("items"), dict):
        return f"array of {_type(node['items'])}"
    if kinds == "object" and isinstance(node.get("additionalProperties"), dict) and not node.get("properties"):
        return f"map of {_type(node['additionalProperties'])}"
    alternatives = node.get("oneOf") or node.get("anyOf")
    if alternatives:
        return " or ".join(_type(a) for a in alternatives)
    return kinds or "any"


def _fields(node: dict[str, Any], path: tuple[str, ...], only: str = "") -> Iterator[tuple[tuple[str, ...], dict, str]]:
    for key, child in (node.get("properties") or {}).items():
        yield (*path, key), child, only
        yield from _fields(child, (*path, key), only)
    if isinstance(node.get("additionalProperties"), dict):
        yield from _fields(node["additionalProperties"], (*path, NAME), only)
    if isinstance(node.get("items"), dict):
        yield from _fields(node["items"], (*path, ITEM), only)
    for alternative in (node.get("oneOf") or []) + (node.get("anyOf") or []):
        if isinstance(alternative, dict):
            yield from _fields(alternative, path, only)
    for rule in node.get("allOf") or []:
        method = (rule.get("if", {}).get("properties", {}).get("method", {}) or {}).get("const")
        if "then" in rule:
            yield from _fields(rule["then"], path, f"method: {method}" if method else only)


def _options_default(record: type | None, path: tuple[str, ...]) -> Any:
    """The default of an option (`path` below the analysis), through nested blocks (split.train)."""
    for name in path[:-1]:
        record = dataclass_in(typing.get_type_hints(record).get(name)) if record is not None else None
    found = {f.name: f for f in dataclasses.fields(record)}.get(path[-1]) if record is not None else None
    if found is None:
        return dataclasses.MISSING
    if found.default is not dataclasses.MISSING:
        return found.default
    if found.default_factory is not dataclasses.MISSING:
        value = found.default_factory()
        return dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value
    return dataclasses.MISSING


def _record_default(path: tuple[str, ...], only: str) -> Any:
    if only.startswith("method: ") and len(path) >= 3 and path[0] == "analyses":
        found = _options_default(get_method(only[len("method: "):]).options, path[2:])
        if found is not dataclasses.MISSING:
            return found
    if len(path) == 3 and path[0] == "judges":  # a judge kind's setting: its settings record's default
        records = {name: judge_kind(name).settings_record for name in kind_names() if name not in ALIASES}
        found = {name: default for name, record in records.items()
                 if (default := _options_default(record, path[2:])) is not dataclasses.MISSING}
        if len({repr(v) for v in found.values()}) == 1:
            return next(iter(found.values()))
        if found:
            return "; ".join(f"{name}: {value}" for name, value in found.items())
    if len(path) >= 2 and path[-2] in RECORDS:
        found = {f.name: f for f in dataclasses.fields(RECORDS[path[-2]])}.get(path[-1])
        if found is not None and found.default is not dataclasses.MISSING:
            return found.default
    return dataclasses.MISSING


def _examples() -> dict[tuple[str, ...], Any]:
    """The first value each field takes in the example and packaged specs, by field path (names generalised)."""
    found: dict[tuple[str, ...], Any] = {}
    files = sorted((ROOT / "specs").glob("*.yaml")) + [spec_path(f"vibe:{name}") for name in builtin_specs()]

    def visit(value: Any, path: tuple[str, ...], shape: tuple[str, ...]) -> None:
        if isinstance(value, dict):
            for key, child in value.items():
                generic = NAME if path and path[-1] in NAMED else key
                visit(child, (*path, str(key)), (*shape, generic))
        elif isinstance(value, list):
            for child in value:
                visit(child, (*path, ITEM), (*shape, ITEM))
        if shape and shape not in found and not isinstance(value, dict):
            found[shape] = value

    for file in files:
        try:
            document, _ = load_document(file)
        except Exception:  # an example that does not load has nothing to show
            continue
        visit(document, (), ())
    return found


# objects whose keys are names the user chooses (models, datasets, ...), by the key that holds them
NAMED = {"models", "judges", "datasets", "personas", "analyses", "resources", "outputs", "scores", "preferences",
         "join", "preference_values", "values", "dimensions", "prefers"}


def _show(value: Any) -> str:
    if value is dataclasses.MISSING:
        return "—"
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    text = text if len(text) <= 60 else text[:57] + "…"
    return f"`{text}`".replace("|", "\\|")


def spec_fields() -> list[Field]:
    document = schema()
    examples = _examples()
    out: dict[tuple[str, str], Field] = {}
    for path, node, only in _fields(document, ()):
        dotted = ".".join(path)
        if (dotted, only) in out:
            continue
        default = node.get("default", _record_default(path, only))
        example = examples.get(path, node["enum"][0] if "enum" in node else dataclasses.MISSING)
        description = " ".join(str(node.get("description", "")).split()).replace("|", "\\|")
        out[(dotted, only)] = Field(dotted, _type(node), _show(default), description, _show(example), only)
    return list(out.values())


def schema_paths(document: dict[str, Any]) -> set[str]:
    """Every field path of a schema `document`, as the reference names them (what the docs test compares with)."""
    return {".".join(path) for path, _, _ in _fields(document, ())}


def spec_reference() -> str:
    fields = spec_fields()
    lines = ["# Spec reference", "",
             "Every field a spec may hold, generated from the JSON Schema that `vibe validate` checks "
             "(`python scripts/build_docs.py`). `<name>` stands for a name you choose (a model, a dataset...), "
             "`[]` for each entry of a list. Defaults are those of the schema or of the record the field is read "
             "into; examples come from the example specs where a field is used there. The schema itself is at "
             "[schema/spec.json](../schema/spec.json) (`vibe schema --write PATH` writes it for an editor).", ""]
    sections: dict[str, list[Field]] = {}
    for f in fields:
        sections.setdefault(f.path.split(".")[0], []).append(f)
    for section, rows in sections.items():
        lines += [f"## `{section}`", "", "| field | type | default | example | description |",
                  "|---|---|---|---|---|"]
        for f in rows:
            where = f" *({f.only})*" if f.only else ""
            lines.append(f"| `{f.path}`{where} | {f.type} | {f.default} | {f.example} | {f.description} |")
        lines.append("")
    lines += ["## Analysis methods", "", "Methods registered: " + ", ".join(f"`{m}`" for m in method_names()) + ".", ""]
    return "\n".join(lines)


def cli_reference() -> str:
    os.environ["COLUMNS"] = "110"  # argparse wraps to the terminal: a fixed width keeps the page the same
    parser = build_parser()
    lines = ["# Command-line reference", "", "Generated from vibe's argument parser (`python scripts/build_docs.py`).",
             "", "```text", parser.format_help().rstrip(), "```", ""]
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in commands.choices.items():
        sub.prog = f"vibe {name}"
        lines += [f"## `vibe {name}`", "", "```text", sub.format_help().rstrip(), "```", ""]
    return "\n".join(lines)


def build(out: Path) -> list[Path]:
    """Write the generated pages under `out` (a docs folder); returns the files written."""
    pages = {out / "reference" / "spec.md": spec_reference(), out / "reference" / "cli.md": cli_reference(),
             out / "reference" / "api.md": api_reference(),
             out / "schema" / "spec.json": json.dumps(schema(), indent=2) + "\n"}
    for path, text in pages.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(pages)


if __name__ == "__main__":
    os.environ[plugins.DISABLE_AUTOLOAD] = "1"  # the built-ins only: see the module docstring
    plugins._entry_points.cache_clear()
    written = build(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "site" / "docs")
    print("\n".join(str(p) for p in written))
