"""Spec stage: YAML file(s) → one merged, validated document → typed `Spec`.

Order of checks: YAML syntax and duplicate keys (per file), `extends` resolution (cycles rejected), JSON
Schema (every error, not the first), then semantic checks the schema cannot express (references between
sections, files that must exist). Each problem carries the file and line of the value it is about, which
after an `extends` merge may be the base file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from engine import settings, user_cache
from engine.formats import DEFAULT_FORMAT, dataset_format, format_names
from engine.judges.kinds import ALIASES, ROLES, judge_kind, kind_names
from engine.names import did_you_mean
from engine.provider_table import PROVIDERS, settings_record
from engine.registry import get_method, method_names
from engine.spec.build import spec_from_document
from engine.spec.model import ANALYSIS_FIELDS, Spec
from engine.spec.paths import expand_path
from engine.spec.problems import Problem, SpecError
from engine.spec.schema_inputs import schema_inputs
from engine.spec.semantics import check_semantics
from engine.spec.yaml_source import PathKey, SourceMap, dotted, load_yaml

BUILTIN = "vibe:"  # `extends: vibe:offline-panel`, `vibe run vibe:smollm2-terse-vs-chatty`: specs the package ships


def builtin_specs() -> list[str]:
    """The names of the specs the package ships (engine/builtin/*.yaml)."""
    return sorted(p.name[:-5] for p in resources.files("engine.builtin").iterdir() if p.name.endswith(".yaml"))


def spec_path(ref: str | Path) -> Path:
    """A spec file from what a user wrote: a path, or `vibe:NAME` for a spec the package ships (the same
    file from any folder and any install, checkout or wheel)."""
    text = str(ref)
    if not text.startswith(BUILTIN):
        return Path(ref)
    name = text[len(BUILTIN):]
    found = resources.files("engine.builtin").joinpath(f"{name}.yaml")
    if not name or not found.is_file():
        known = builtin_specs()
        raise FileNotFoundError(f"no packaged spec {text!r}{did_you_mean(text, [BUILTIN + k for k in known])}; "
                                "the package ships: "
                                + ", ".join(BUILTIN + k for k in known))
    return Path(str(found))


@cache
def _schema_file() -> str:
    return resources.files("engine.spec").joinpath("schema.json").read_text(encoding="utf-8")


def schema() -> dict[str, Any]:
    """The spec's JSON schema: `schema.json`, with the providers, judge kinds and analysis methods as
    registered; each method's options block is read off its options record (`engine.settings`). Building it
    imports every plug-in (0.5 s, most of `vibe validate`), so it is kept on disk under what it is built from
    (`schema_inputs`) and built again only when that changes."""
    return dict(user_cache.remembered("schema", schema_inputs(_schema_file()), _built_schema))


def _built_schema() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(_schema_file())
    _registered_endpoints(document["properties"])
    _registered_formats(document["properties"]["datasets"]["additionalProperties"]["properties"])
    analyses = document["properties"]["analyses"]["additionalProperties"]
    names = method_names()
    analyses["properties"]["method"]["enum"] = names
    for name in names:  # each method's options, read off its options record (`engine.settings`)
        method = get_method(name)
        own = settings.block(method.options)
        analyses["allOf"].append({
            "if": {"properties": {"method": {"const": name}}, "required": ["method"]},
            "then": {"additionalProperties": False,
                     "required": [*(["models"] if method.needs_models else []), *own.get("required", [])],
                     "properties": {**ANALYSIS_FIELDS, **own["properties"]}}})
    return document


def _provider_rules() -> list[dict[str, Any]]:
    """The fields each provider needs beside it (`ProviderInfo.needs`), and its own settings' schemas with the
    ones it requires (`ProviderInfo.settings`), checked on its endpoints only."""
    rules = []
    for name, info in PROVIDERS.items():
        record = settings_record(name)
        own = settings.block(record) if record is not None else {"properties": {}}
        needs = [*info.needs, *own.get("required", [])]
        if needs or own["properties"]:
            rules.append({"if": {"properties": {"provider": {"const": name}}, "required": ["provider"]},
                          "then": {"required": needs, **({"properties": own["properties"]} if own["properties"]
                                                         else {})}})
    return rules


def _provider_fields() -> dict[str, dict[str, Any]]:
    """Each provider's own settings as the endpoint entries' properties list them (see `_field_entry`)."""
    owners: dict[str, dict[str, dict[str, Any]]] = {}
    for name in PROVIDERS:
        record = settings_record(name)
        for field_name, field_schema in (settings.schemas(record) if record is not None else {}).items():
            owners.setdefault(field_name, {})[name] = field_schema
    return {field_name: _field_entry(by_provider) for field_name, by_provider in owners.items()}


def _registered_endpoints(sections: dict[str, Any]) -> None:
    """Provider and judge-kind names come from their registries, never from a list kept by hand here."""
    models, judges = sections["models"]["additionalProperties"], sections["judges"]["additionalProperties"]
    models["properties"]["provider"]["enum"] = list(PROVIDERS)
    models["allOf"] = rules = _provider_rules()
    for field_name, entry in _provider_fields().items():
        models["properties"].setdefault(field_name, entry)
        judges["properties"].setdefault(field_name, entry)
    judges["properties"]["provider"]["enum"] = [name for name, info in PROVIDERS.items() if info.judges]
    kinds, broken = {}, {}
    for name in kind_names():
        try:
            kinds[name] = judge_kind(name)
        except ImportError as exc:  # a plug-in whose module cannot be imported: left out, and said why
            broken[name] = f"{name}: not available here, its module cannot be imported ({exc})"
    judges["properties"]["kind"]["enum"] = list(kinds)
    judges["properties"]["kind"]["description"] = "; ".join([*(
        f"{name}: {kind.label}, to {' or '.join(ROLES[r] for r in sorted(kind.roles))}"
        + (f" (older name of {' or '.join(ALIASES[name])})" if name in ALIASES else "")
        for name, kind in kinds.items()), *broken.values()]) + "."
    called = [name for name, kind in kinds.items() if not kind.offline]
    judges["allOf"] = [{"if": {"properties": {"kind": {"enum": called}}, "required": ["kind"]},
                        "then": {"required": ["provider", "model"], "allOf": rules}}]
    owners: dict[str, dict[str, dict[str, Any]]] = {}  # field -> kind -> its schema there
    for name, kind in kinds.items():
        if kind.field_schemas:  # its own fields' values, checked on its judges only
            judges["allOf"].append(kind_block(name, kind.field_schemas, kind.required))
        if name not in ALIASES:
            for field_name, field_schema in kind.field_schemas.items():
                owners.setdefault(field_name, {})[name] = field_schema
    for field_name, by_kind in owners.items():
        judges["properties"].setdefault(field_name, _field_entry(by_kind))


def _field_entry(by_kind: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A kind's field as the judges' properties list it: its schema where every kind that takes the name gives it
    the same one (each kind's block checks it all the same), and each kind's description."""
    shapes = {json.dumps({k: v for k, v in s.items() if k != "description"}, sort_keys=True) for s in by_kind.values()}
    entry: dict[str, Any] = json.loads(shapes.pop()) if len(shapes) == 1 else {}
    entry["description"] = " ".join(f"{kind}: {s.get('description', '')}" for kind, s in by_kind.items())
    return entry


def kind_block(kind: str, field_schemas: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    """The schema rule that holds a judge of `kind` to its own fields' schemas and the fields it requires."""
    return {"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
            "then": {"properties": dict(field_schemas), **({"required": list(required)} if required else {})}}


def _registered_formats(dataset: dict[str, Any]) -> None:
    """Format names and what each reads come from the format registry; a format's own columns join
    `fields` (the common ones are described in the file)."""
    formats = {name: dataset_format(name) for name in format_names()}
    dataset["format"]["enum"] = list(formats)
    dataset["format"]["description"] = (
        "How rows hold answers. " + "; ".join(f"{name}: {form.description}" for name, form in formats.items())
        + f". Default: {DEFAULT_FORMAT}. Tidy formats (those whose rows name the models) pair answers by "
        "fields.id, else by the prompt text.")
    columns = dataset["fields"]["properties"]
    for name, form in formats.items():
        for column, description in form.columns.items():
            columns.setdefault(column, {"type": "string", "description": f"format: {name}: {description}"})


def load_spec(path: str | Path) -> Spec:
    """Load, merge, validate and type a spec; raise SpecError listing every problem."""
    path = spec_path(path)
    document, source = load_document(path)
    problems = validate_document(document, source, path)
    if problems:
        raise SpecError(problems, own=str(path))
    return spec_from_document(document, path)


def load_document(path: Path, _chain: tuple[Path, ...] = ()) -> tuple[dict[str, Any], SourceMap]:
    """Read a spec and every spec it extends, deep-merged with the child winning."""
    resolved = path.resolve()
    data, source = load_yaml(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        mark = source.locate(())
        raise SpecError([Problem(str(path), mark.line, mark.col, "", "a spec must be a mapping at the top level")])
    base_ref = data.get("extends")
    if base_ref is None:
        return data, source
    mark = source.locate_key(("extends",))
    if not isinstance(base_ref, str):
        raise SpecError([Problem(mark.file, mark.line, mark.col, "extends", "must be a path string")])
    try:
        base_path = spec_path(base_ref) if base_ref.startswith(BUILTIN) else path.parent / base_ref
    except FileNotFoundError as exc:
        raise SpecError([Problem(mark.file, mark.line, mark.col, "extends", str(exc))]) from None
    chain = (*_chain, resolved)
    if base_path.resolve() in chain:
        names = " -> ".join(str(p) for p in (*chain, base_path.resolve()))
        raise SpecError([Problem(mark.file, mark.line, mark.col, "extends", f"extends cycle: {names}")])
    if not base_path.is_file():
        raise SpecError([Problem(mark.file, mark.line, mark.col, "extends", f"base spec not found: {base_path}")])
    base, base_source = load_document(base_path, chain)
    _rebase_paths(base, base_path.parent, path.parent)
    child = {k: v for k, v in data.items() if k != "extends"}
    merger = _Merger(base_source, source, SourceMap(file=str(path)))
    return merger.merge(base, child, (), (), ()), merger.out


def _rebase_paths(doc: dict[str, Any], old_dir: Path, new_dir: Path) -> None:
    """Make the base's relative file paths relative to the child's folder, so that the merged document
    means the same files whichever folder each part came from."""
    if old_dir.resolve() == new_dir.resolve():
        return

    def rebase(raw: str) -> str:
        raw = expand_path(raw)
        return raw if Path(raw).is_absolute() else os.path.relpath(old_dir / raw, new_dir)

    for ds in (doc.get("datasets") or {}).values():
        src = ds.get("source") if isinstance(ds, dict) else None
        if not isinstance(src, dict):
            continue
        if isinstance(src.get("path"), str):
            src["path"] = rebase(src["path"])
        if isinstance(src.get("paths"), list):
            src["paths"] = [rebase(p) if isinstance(p, str) else p for p in src["paths"]]
        if isinstance(src.get("join"), dict):
            for entry in src["join"].values():
                if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                    entry["path"] = rebase(entry["path"])
    for persona in (doc.get("personas") or {}).values():
        if isinstance(persona, dict) and isinstance(persona.get("profile"), str):
            persona["profile"] = rebase(persona["profile"])
    for section in ("models", "judges"):
        for entry in (doc.get(section) or {}).values():
            if isinstance(entry, dict) and str(entry.get("model", "")).endswith(".gguf"):
                entry["model"] = rebase(entry["model"])


class _Merger:
    """The merge of a base spec and its child, with the child winning. Mappings merge key by key, and
    `key: null` in the child removes the base's entry. Lists of named entries (vibes) merge by name, so a
    child can add or override one vibe without restating the others; any other value, lists included, is
    replaced. Every value's source mark goes to its path in the merged document: a vibe merged by name moves
    to another index, and an error in it must still name the file and line where it is written, however
    deep the `extends` chain."""

    def __init__(self, base_source: SourceMap, child_source: SourceMap, out: SourceMap):
        self.sources = {"base": base_source, "child": child_source}
        self.out = out

    def merge(self, base: Any, child: Any, base_path: PathKey, child_path: PathKey, path: PathKey) -> Any:
        self._mark(self.sources["child"], child_path, path)
        if isinstance(base, dict) and isinstance(child, dict):
            out = {}
            for key, value in base.items():  # the base's keys keep their order; the child's new ones follow
                if key not in child:
                    out[key] = self.copy(value, "base", (*base_path, key), (*path, key))
                elif child[key] is not None:
                    out[key] = self.merge(value, child[key], (*base_path, key), (*child_path, key), (*path, key))
            for key, value in child.items():
                if key not in base and value is not None:
                    out[key] = self.copy(value, "child", (*child_path, key), (*path, key))
            return out
        if isinstance(base, list) and isinstance(child, list):
            base_keys, child_keys = [_entry_key(v) for v in base], [_entry_key(v) for v in child]
            if None not in base_keys and None not in child_keys:
                where = {key: i for i, key in enumerate(base_keys)}
                order = list(dict.fromkeys([*base_keys, *child_keys]))
                from_child = dict(zip(child_keys, range(len(child)), strict=True))
                merged = []
                for i, key in enumerate(order):
                    if key in from_child and key in where:
                        merged.append(self.merge(base[where[key]], child[from_child[key]], (*base_path, where[key]),
                                                 (*child_path, from_child[key]), (*path, i)))
                    elif key in from_child:
                        merged.append(self.copy(child[from_child[key]], "child", (*child_path, from_child[key]),
                                                (*path, i)))
                    else:
                        merged.append(self.copy(base[where[key]], "base", (*base_path, where[key]), (*path, i)))
                return merged
        return self.copy(child, "child", child_path, path)

    def copy(self, value: Any, side: str, from_path: PathKey, path: PathKey) -> Any:
        """Take `value` whole from one side, with the marks of everything inside it."""
        self._mark(self.sources[side], from_path, path)
        if isinstance(value, dict):
            for key, inner in value.items():
                self.copy(inner, side, (*from_path, key), (*path, key))
        elif isinstance(value, list):
            for i, inner in enumerate(value):
                self.copy(inner, side, (*from_path, i), (*path, i))
        return value

    def _mark(self, source: SourceMap, from_path: PathKey, path: PathKey) -> None:
        for ours, theirs in ((self.out.values, source.values), (self.out.keys, source.keys)):
            if from_path in theirs:
                ours[path] = theirs[from_path]


def _entry_key(entry: Any) -> str | None:
    if isinstance(entry, dict):
        if isinstance(entry.get("name"), str):
            return str(entry["name"])
        if "discover" in entry:
            return "\0discover"
    return None


def validate_document(document: dict[str, Any], source: SourceMap, spec_path: Path) -> list[Problem]:
    _default_analysis_methods(document)
    problems = [_schema_problem(err, source) for err in _schema_errors(document)]
    if not problems:
        problems.extend(check_semantics(document, source, spec_path))
    return problems


def _default_analysis_methods(document: dict[str, Any]) -> None:
    """`analyses: {vibecheck: {...}}` may omit `method:` when its key names the method."""
    analyses = document.get("analyses")
    if isinstance(analyses, dict):
        for key, body in analyses.items():
            if isinstance(body, dict) and "method" not in body and key in method_names():
                body["method"] = key


def _schema_errors(document: dict[str, Any]) -> list[jsonschema.ValidationError]:
    validator = jsonschema.Draft202012Validator(schema())
    leaves: list[jsonschema.ValidationError] = []

    def collect(err: jsonschema.ValidationError) -> None:
        # if/then and oneOf wrap the useful errors; report the most specific ones of the branch the entry
        # was meant for: the one whose shape (its keys) it fits best.
        if err.context and err.validator in ("oneOf", "anyOf"):
            branches: dict[Any, list[jsonschema.ValidationError]] = {}
            for sub in err.context:
                branches.setdefault(sub.relative_schema_path[0], []).append(sub)
            meant = min(branches.values(), key=lambda errs: sum(
                not e.relative_path and e.validator in ("additionalProperties", "required") for e in errs))
            collect(jsonschema.exceptions.best_match(meant))
        else:
            leaves.append(err)

    for err in validator.iter_errors(document):
        collect(err)
    return leaves


def _looks_secret(value: str) -> bool:
    """Long, unbroken and mixed like an API key ("sk-…", a hex token), not like a variable name."""
    return len(value) >= 20 and " " not in value and any(c.isdigit() for c in value) and not value.isupper()


def _schema_problem(err: jsonschema.ValidationError, source: SourceMap) -> Problem:
    path: PathKey = tuple(err.absolute_path)
    message = err.message
    if err.validator == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        if extra:
            path = (*path, extra[0])
            allowed = ", ".join(sorted(err.schema.get("properties", {})))
            message = (f"unknown field {extra[0]!r}{did_you_mean(extra[0], err.schema.get('properties', {}))} "
                       f"(allowed: {allowed})")
            mark = source.locate_key(path)
            return Problem(mark.file, mark.line, mark.col, dotted(path), message)
    elif err.validator == "enum":
        message += did_you_mean(err.instance, err.validator_value)
    elif err.validator == "required":
        message = err.message.replace("is a required property", "is required")
    elif err.validator == "propertyNames" or "propertyNames" in err.absolute_schema_path:
        name = str(err.instance)
        path = (*path, name)  # the offending name: point at its own line, not the mapping's
        mark = source.locate_key(path)
        rule = f" (pattern {err.schema['pattern']})" if "pattern" in err.schema else ""
        return Problem(mark.file, mark.line, mark.col, dotted(path),
                       f"invalid name {name!r}: use letters, digits, '_', '.' and '-', starting with a letter or "
                       f"digit{rule}")
    if path and path[-1] == "api_key_env":  # never echo what may be a pasted secret
        message = ("takes the name of an environment variable that holds the key (such as OPENAI_API_KEY), not "
                   "the key itself" + ("; the value written here looks like a key, so it is not shown"
                                       if isinstance(err.instance, str) and _looks_secret(err.instance) else ""))
    mark = source.locate(path)
    return Problem(mark.file, mark.line, mark.col, dotted(path), message)
