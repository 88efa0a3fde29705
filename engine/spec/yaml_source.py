"""Safe YAML loading that remembers where every value came from.

PyYAML's safe loader already refuses object tags; on top of it this module
- rejects duplicate mapping keys (PyYAML silently keeps the last one, which hides typos in reviews),
- refuses alias bombs by bounding the number of nodes an expansion may visit,
- records the file, line and column of every value and key, keyed by its path in the document,
so that later checks can point at the exact place in the exact file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from engine.spec.problems import Problem, SpecError
from engine.text_files import LONE_SURROGATE, NotUtf8, line_and_column, read_utf8

MAX_NODES = 200_000  # a real spec has a few thousand; "billion laughs" needs far more
MAX_DEPTH = 64  # a real spec nests 6 or 7 levels; far deeper is a mistake, and would exhaust Python's stack

PathKey = tuple[str | int, ...]  # where in the spec a value sits: ("judges", "tone", "margin"), for errors
_MAP_TAG, _SEQ_TAG = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


@dataclass(frozen=True)
class Mark:
    file: str
    line: int
    col: int


@dataclass
class SourceMap:
    """Where each value (and each mapping key) of a loaded document lives."""

    values: dict[PathKey, Mark] = field(default_factory=dict)
    keys: dict[PathKey, Mark] = field(default_factory=dict)
    file: str = "<unknown>"  # the file a path no value marks is reported in (an empty spec, a missing root)

    def locate(self, path: PathKey) -> Mark:
        """Where the value at `path` starts; for a path that does not exist, its nearest existing parent.
        A block mapping or list starts on the line after its key; the key is the better place to point."""
        mark = self._nearest(path, self.values)
        key = self.keys.get(tuple(path))
        return key if key is not None and key.line < mark.line else mark

    def locate_key(self, path: PathKey) -> Mark:
        """Where the mapping key naming `path` starts (for unknown or duplicate fields)."""
        return self._nearest(path, self.keys) if tuple(path) in self.keys else self.locate(path)

    def _nearest(self, path: PathKey, marks: dict[PathKey, Mark]) -> Mark:
        probe = tuple(path)
        while probe not in marks:
            if not probe:
                return Mark(self.file, 1, 1)
            probe = probe[:-1]
        return marks[probe]

    def update(self, other: SourceMap) -> None:
        self.values.update(other.values)
        self.keys.update(other.keys)


def dotted(path: PathKey) -> str:
    """`models.gpt-4o.params[0]`; a name that would not read as one (empty, spaces, control characters) is
    quoted: `models[' ']`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not part or not part.isprintable() or any(c.isspace() for c in part):
            out += f"[{part!r}]"
        else:
            out += f".{part}" if out else part
    return out


class _Loader(yaml.SafeLoader):
    """Safe loader; a distinct class so that nothing we do leaks into yaml.SafeLoader."""


def load_yaml(path: Path) -> tuple[Any, SourceMap]:
    """Load one YAML file into plain Python values plus its source map; raise SpecError on any problem."""
    name = str(path)
    try:
        text = read_utf8(path)
    except NotUtf8 as exc:
        raise SpecError([Problem(name, exc.line, exc.col, "", exc.reason)]) from None
    except FileNotFoundError:
        raise SpecError([Problem(name, 1, 1, "", "file not found")]) from None
    except IsADirectoryError:
        raise SpecError([Problem(name, 1, 1, "", "is a folder, not a spec file")]) from None
    try:
        loader = _Loader(text)  # the reader checks the first chunk for control characters here, the rest later
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.reader.ReaderError as exc:
        raise SpecError([_unprintable(name, text, exc)]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise SpecError([Problem(name, line, col, "", f"YAML syntax: {exc.problem or exc}")]) from None
    except RecursionError:
        raise SpecError([Problem(name, 1, 1, "", f"nested too deeply to read (more than {MAX_DEPTH} levels)")]) \
            from None
    if node is None:
        return None, SourceMap(file=name)
    builder = _Builder(name, loader)
    data = builder.build(node, ())
    if builder.problems:
        raise SpecError(builder.problems)
    return data, builder.source


def _unprintable(name: str, text: str, exc: yaml.reader.ReaderError) -> Problem:
    """YAML refuses control characters (NUL, most of C0 and C1) anywhere in a file, quoted or not."""
    line, col = line_and_column(text[:exc.position])
    return Problem(name, line, col, "", f"character U+{exc.character:04X} is a control character, which YAML does "
                   "not allow in a file (write it as an escape in a double-quoted string)")


# A plain key that YAML 1.1 would read as a boolean, a number or null (`yes:`, `no:`, `on:`, `1.0:`) is a
# name: it is kept as written, never turned into True or 1.0.
_NAME_LIKE_TAGS = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                   "tag:yaml.org,2002:null"}


class _Builder:
    def __init__(self, file: str, loader: _Loader):
        self.file = file
        self.loader = loader
        self.source = SourceMap(file=file)
        self.problems: list[Problem] = []
        self.visited = 0

    def _mark(self, node: yaml.Node) -> Mark:
        return Mark(self.file, node.start_mark.line + 1, node.start_mark.column + 1)

    def _problem(self, node: yaml.Node, path: PathKey, message: str) -> None:
        mark = self._mark(node)
        self.problems.append(Problem(self.file, mark.line, mark.col, dotted(path), message))

    def build(self, node: yaml.Node, path: PathKey) -> Any:
        self.visited += 1
        if self.visited > MAX_NODES:
            mark = self._mark(node)
            raise SpecError([Problem(self.file, mark.line, mark.col, dotted(path),
                                     f"document expands to more than {MAX_NODES} nodes (alias bomb?)")])
        self.source.values[path] = self._mark(node)
        if len(path) > MAX_DEPTH:
            self._problem(node, path[:MAX_DEPTH], f"nested deeper than {MAX_DEPTH} levels")
            return None
        if isinstance(node, yaml.CollectionNode) and node.tag not in (_MAP_TAG, _SEQ_TAG):
            self._problem(node, path, f"unsupported YAML value: tag {node.tag!r} is not allowed")
            return None
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(child, (*path, i)) for i, child in enumerate(node.value)]
        try:
            value = self.loader.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as exc:
            self._problem(node, path, f"unsupported YAML value: {exc.problem}")
            return None
        if isinstance(value, str) and LONE_SURROGATE.search(value):
            self._problem(node, path, "holds a lone UTF-16 surrogate escape (such as \\ud800 without its pair), "
                          "which is not text: write the character itself or its full pair")
            return None
        return value

    def _mapping(self, node: yaml.MappingNode, path: PathKey) -> dict[str, Any]:
        explicit = {id(key) for key, _ in node.value if key.tag != "tag:yaml.org,2002:merge"}
        try:
            self.loader.flatten_mapping(node)  # resolves "<<" merge keys; merged entries come first
        except yaml.constructor.ConstructorError as exc:
            self._problem(node, path, f"bad merge key: {exc.problem}")
            return {}
        out: dict[str, Any] = {}
        explicit_seen: set[str] = set()
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                self._problem(key_node, path, "mapping keys must be plain strings")
                continue
            if key_node.tag in _NAME_LIKE_TAGS and key_node.style is None:
                key = key_node.value
            else:
                try:
                    key = str(self.loader.construct_object(key_node))
                except yaml.constructor.ConstructorError as exc:
                    self._problem(key_node, path, f"unsupported YAML key: {exc.problem}")
                    continue
                if LONE_SURROGATE.search(key):
                    self._problem(key_node, path, "a key holds a lone UTF-16 surrogate escape, which is not text")
                    continue
            child = (*path, key)
            if id(key_node) in explicit:
                if key in explicit_seen:
                    first = self.source.keys[child]
                    self._problem(key_node, child, f"duplicate key {key!r} (first defined at line {first.line})")
                    continue
                explicit_seen.add(key)
            self.source.keys[child] = self._mark(key_node)
            out[key] = self.build(value_node, child)
        return out
