"""The stages wired together: spec → items → plan, the part every command shares."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.datasets import Item, load_items
from engine.plan import Plan, compile_plan
from engine.spec.load import load_spec
from engine.spec.model import Spec


@dataclass
class Prepared:
    spec: Spec
    items: dict[str, list[Item]]
    plan: Plan


def prepare(spec_path: str | Path) -> Prepared:
    spec = load_spec(spec_path)
    used = {a.dataset for a in spec.analyses.values()}
    items = {name: load_items(ds) for name, ds in spec.datasets.items() if name in used}
    return Prepared(spec, items, compile_plan(spec, items))


def default_run_dir(spec: Spec) -> Path:
    return Path(spec.report.get("output_dir") or Path("runs") / spec.name)


def default_cache_path() -> Path:
    """One cache for every spec of a project: a generation shared by two specs is made once."""
    return Path("runs") / "cache.sqlite"
