"""Property test: mutated example specs never break `vibe validate`.

Hypothesis starts from each example spec (with its `extends` bases beside it, and the shared data reachable
through VIBE_DATA) and deletes keys, swaps a value's type, writes random Unicode (lone surrogates included),
nests values deeply, renames keys, or splices random bytes into the file; a mutated base spec is validated
through an example that extends it. Whatever it writes, validate must
answer with exit 0 or 2, never a traceback, within 5 s, and every line it prints must be located as
FILE:LINE:COL: FIELD: message.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cli import main

# its runs are built once (session-scoped: a worker runs other files between this one's tests, and a module
# scope would build them again after each): every test of this file on one pytest-xdist worker
pytestmark = pytest.mark.xdist_group("spec-properties")

SPECS = Path(__file__).resolve().parents[1] / "specs"
BUILTIN = Path(__file__).resolve().parents[1] / "engine" / "builtin"
# the example specs and the packaged ones, the packaged bases as local files so that a mutated base is what its
# children extend
SOURCES = {p.name: p for p in [*SPECS.glob("*.yaml"), *BUILTIN.glob("*.yaml")]}
EXAMPLES = sorted(SOURCES)


def original(name: str) -> str:
    return re.sub(r"^extends: vibe:([\w-]+)", r"extends: \1.yaml", SOURCES[name].read_text(encoding="utf-8"),
                  flags=re.MULTILINE)
LOCATED = re.compile(r"^(?:warning: )?(?P<file>[^\n]+\.yaml):(?P<line>\d+):(?P<col>\d+): (?P<field>\S.*?): \S")

Path_ = tuple[str | int, ...]
CHILDREN = {"offline-panel.yaml": "llama-vs-gpt.yaml", "smollm2-terse-vs-chatty.yaml": "separability.yaml",
            "vibe-eval.yaml": "vibe-eval-vibes.yaml"}  # a base spec -> an example that extends it

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True),
                    st.text(st.characters(categories=["L", "N", "P", "S", "Zs", "Cc", "Cs"]), max_size=20))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                      max_leaves=6)


@pytest.fixture(scope="session")
def specs_copy(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("specs")
    shutil.copytree(SPECS, folder, dirs_exist_ok=True)
    shutil.copytree(BUILTIN / "data", folder / "data", dirs_exist_ok=True)
    for name in SOURCES:
        (folder / name).write_text(original(name), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VIBE_DATA", str(shared_data))
        yield folder


def node_paths(value: Any, path: Path_ = ()) -> list[Path_]:
    out = [path]
    if isinstance(value, dict):
        for key, inner in value.items():
            out += node_paths(inner, (*path, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            out += node_paths(inner, (*path, i))
    return out


def replace_at(doc: Any, path: Path_, make: Any) -> Any:
    """`doc` with the node at `path` replaced by make(old) (make returns DELETE to remove it)."""
    if not path:
        return make(doc)
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        new = replace_at(doc[head], rest, make)
        return {k: v for k, v in doc.items() if k != head} if new is DELETE and not rest else \
            {k: (new if k == head else v) for k, v in doc.items()}
    new = replace_at(doc[head], rest, make)
    items = list(doc)
    if new is DELETE and not rest:
        del items[head]
    else:
        items[head] = new
    return items


DELETE = object()


@st.composite
def mutated_specs(draw: st.DrawFn) -> tuple[str, bytes, bool]:
    name = draw(st.sampled_from(EXAMPLES))
    doc = yaml.safe_load(original(name))
    nested = False
    for _ in range(draw(st.integers(1, 3))):
        paths = node_paths(doc)
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["delete", "swap", "swap", "rename"] + ([] if nested else ["nest"])))
        if op == "delete" and path:
            doc = replace_at(doc, path, lambda _: DELETE)
        elif op == "nest":  # deeper than a spec may nest, within what PyYAML's dumper can write
            nested = True
            depth = draw(st.integers(1, 120))
            wrap = draw(st.sampled_from(["list", "dict"]))

            def nest(old: Any, depth: int = depth, wrap: str = wrap) -> Any:
                for _ in range(depth):
                    old = [old] if wrap == "list" else {"k": old}
                return old

            doc = replace_at(doc, path, nest)
        elif op == "rename" and path and isinstance(path[-1], str):
            new_key = draw(st.text(st.characters(categories=["L", "N", "P", "S", "Zs", "Cs"]), max_size=12))
            doc = replace_at(doc, path[:-1], lambda parent, old=path[-1], new=new_key: {
                (new if k == old else k): v for k, v in parent.items()})
        else:
            value = draw(VALUES)
            doc = replace_at(doc, path, lambda _, value=value: value)
    text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False, width=10**6).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 9)) == 0:  # one spec in ten gets raw bytes spliced in
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.binary(min_size=1, max_size=4)) + text[at:]
    return name, text, draw(st.booleans())


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=mutated_specs())
def test_validate_answers_every_mutated_spec_with_located_errors(specs_copy: Path,
                                                                 case: tuple[str, bytes, bool]) -> None:
    name, text, through_child = case
    if through_child and name in CHILDREN:  # the mutated file is a base: validate a spec that extends it
        path, target = specs_copy / name, specs_copy / CHILDREN[name]
    else:
        path = target = specs_copy / f"mutated-{name}"
    path.write_bytes(text)
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["validate", str(target)])
    finally:
        (specs_copy / name).write_text(original(name), encoding="utf-8")
    elapsed = time.perf_counter() - start
    assert code in (0, 2), (code, err.getvalue())
    assert elapsed < 5.0, f"validate took {elapsed:.1f} s"
    lines = err.getvalue().splitlines()
    assert (code == 2) == any(not line.startswith("warning: ") for line in lines), err.getvalue()
    for line in lines:
        match = LOCATED.match(line)
        assert match and int(match["line"]) >= 1 and int(match["col"]) >= 1, line
        assert Path(match["file"]).parent == specs_copy, line
