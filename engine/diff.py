"""Spec diff for review: what a change to a spec does to its content and to its plan, as Markdown.

The plan side compares task hashes, so an "unchanged" task is the very same work, which a cache that holds it
serves at no cost: a reviewer sees how many calls and dollars the change really costs, not just which lines
moved. Against a git revision the spec's data is read as it was then too, so a commit that edits recorded
answers shows as the tasks it adds and removes, with the data files it changed named.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.plan_outline import MeasuredOutline, Outline
from engine.spec.problems import SpecError

SECTIONS = ("models", "judges", "datasets", "vibes", "personas", "analyses")


@dataclass
class SpecDiff:
    sections: dict[str, dict[str, list[str]]]  # section -> {"added"|"removed"|"changed": [entry labels]}
    stages: dict[str, dict[str, int]]  # stage -> {"added", "removed", "unchanged"}
    base_cost: float
    new_cost: float
    added_cost: float
    description_changed: bool


def _entries(doc: dict[str, Any], section: str) -> dict[str, Any]:
    value = doc.get(section) or {}
    if section == "vibes":
        return {v.get("name", "discover"): v for v in value}
    return value


def _changed_fields(a: Any, b: Any, prefix: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in sorted(set(a) | set(b)):
            path = f"{prefix}.{key}" if prefix else key
            if key not in a or key not in b:
                out.append(path)
            else:
                out.extend(_changed_fields(a[key], b[key], path))
        return out
    return [] if a == b else [prefix or "(value)"]


def _measured_changes(base: Outline, new: Outline) -> dict[str, Counter[str]]:
    """Stage -> verdicts of `Measured` records added, removed and unchanged, pair by pair: a verdict is unchanged
    when the other plan has the same judge, vibe and measure over the same two answers (a record whose id is in
    both plans is unchanged whole)."""
    def pairs(records: list[MeasuredOutline], ids: set[str]) -> dict[tuple[str, ...], set[tuple[str, str]]]:
        out: dict[tuple[str, ...], set[tuple[str, str]]] = {}
        for m in records:
            if m.id not in ids:
                out.setdefault(m.question, set()).update(zip(m.outputs_a, m.outputs_b, strict=True))
        return out

    shared = {m.id for m in base.measured} & {m.id for m in new.measured}
    counts: dict[str, Counter[str]] = {}
    for m in new.measured:
        if m.id in shared:
            counts.setdefault(m.stage, Counter())["unchanged"] += len(m.outputs_a)
    before, after = pairs(base.measured, shared), pairs(new.measured, shared)
    for key in set(before) | set(after):
        old, now = before.get(key, set()), after.get(key, set())
        tally = counts.setdefault(key[0], Counter())
        tally["unchanged"] += len(now & old)
        tally["added"] += len(now - old)
        tally["removed"] += len(old - now)
    return counts


def diff_plans(base_doc: dict[str, Any], base: Outline, new_doc: dict[str, Any], new: Outline) -> SpecDiff:
    """What changed between two specs (`base_doc`, `new_doc`: their documents) and their plans' outlines
    (`plan_view.outline_of`)."""
    sections: dict[str, dict[str, list[str]]] = {}
    for section in SECTIONS:
        old_entries, new_entries = _entries(base_doc, section), _entries(new_doc, section)
        changes = {
            "added": sorted(set(new_entries) - set(old_entries)),
            "removed": sorted(set(old_entries) - set(new_entries)),
            "changed": [f"{name} ({', '.join(fields)})" for name in sorted(set(old_entries) & set(new_entries))
                        if (fields := _changed_fields(old_entries[name], new_entries[name]))],
        }
        if any(changes.values()):
            sections[section] = changes
    base_ids, new_ids = set(base.ids), set(new.ids)
    stages: dict[str, Counter[str]] = {}
    for task_id, stage in zip(new.ids, new.task_stages, strict=True):
        stages.setdefault(stage, Counter())["unchanged" if task_id in base_ids else "added"] += 1
    for task_id, stage in zip(base.ids, base.task_stages, strict=True):
        if task_id not in new_ids:
            stages.setdefault(stage, Counter())["removed"] += 1
    for stage, counts in _measured_changes(base, new).items():
        stages.setdefault(stage, Counter()).update(counts)
    order = {s: n for n, s in enumerate(dict.fromkeys((*new.stages, *base.stages)))}
    return SpecDiff(
        sections=sections,
        stages={s: {k: stages[s][k] for k in ("added", "removed", "unchanged")}
                for s in sorted(stages, key=lambda s: order.get(s, 99))},
        base_cost=sum(base.costs) + sum(d["cost"] for d in base.deferred),
        new_cost=sum(new.costs) + sum(d["cost"] for d in new.deferred),
        added_cost=sum(cost for task_id, cost in zip(new.ids, new.costs, strict=True) if task_id not in base_ids),
        description_changed=base_doc.get("description") != new_doc.get("description"),
    )


def to_markdown(diff: SpecDiff, base_label: str, new_label: str, data_changed: list[str] | None = None) -> str:
    """The diff as a pull-request comment; `data_changed`: the data files that changed between the two sides."""
    lines = [f"### vibe spec diff: `{base_label}` → `{new_label}`", ""]
    if not diff.sections and not diff.description_changed:
        lines.append("No change to models, judges, datasets, vibes, personas or analyses"
                     + ("; the data they read changed (below)." if data_changed else "."))
    if data_changed:
        lines += ["", "**data** changed: " + ", ".join(f"`{name}`" for name in data_changed), ""]
    for section, changes in diff.sections.items():
        lines.append(f"**{section}**")
        for kind in ("added", "removed", "changed"):
            for label in changes[kind]:
                lines.append(f"- {kind}: `{label}`")
        lines.append("")
    if diff.description_changed:
        lines += ["**description** changed", ""]
    lines += ["| stage | added | removed | unchanged |", "|---|---:|---:|---:|"]
    for stage, counts in diff.stages.items():
        lines.append(f"| {stage} | {counts['added']:,} | {counts['removed']:,} | {counts['unchanged']:,} |")
    total = {k: sum(c[k] for c in diff.stages.values()) for k in ("added", "removed", "unchanged")}
    lines.append(f"| **total** | **{total['added']:,}** | **{total['removed']:,}** | **{total['unchanged']:,}** |")
    delta = diff.new_cost - diff.base_cost
    lines += [
        "",
        f"Estimated cost (upper bound): ${diff.base_cost:,.2f} → ${diff.new_cost:,.2f} "
        f"({'+' if delta >= 0 else '-'}${abs(delta):,.2f}); running the new tasks costs at most "
        f"${diff.added_cost:,.2f}.",
        "",
    ]
    return "\n".join(lines)


def git_toplevel(folder: Path, option: str) -> Path:
    """The top of the git repository that holds `folder`. `option` (e.g. "--git HEAD~1") names what needed git,
    for the one-line error a folder outside any repository, or a machine without git, gets."""
    try:
        found = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=folder, capture_output=True, text=True)
    except FileNotFoundError:
        raise FileNotFoundError(f"{option} needs the git command, which is not installed here") from None
    if found.returncode != 0:
        raise FileNotFoundError(f"{option}: {folder.resolve()} is not inside a git repository")
    return Path(found.stdout.strip())


@dataclass
class Revision:
    """A spec as it was at a git revision, materialized in temporary files: its path, the data files it reads
    that changed since (their paths in the repository), and the temporary files to remove."""

    path: Path
    data_changed: list[str] = field(default_factory=list)
    made: list[Path] = field(default_factory=list)
    written: dict[str, str] = field(default_factory=dict)  # a data file's temporary path -> the spec's own words

    def document(self, doc: dict[str, Any]) -> dict[str, Any]:
        """The spec document at the revision with its data paths as the spec wrote them (a spec diff compares
        what was written; the data's change is said on its own)."""
        def undo(value: Any) -> Any:
            if isinstance(value, dict):
                return {key: undo(item) for key, item in value.items()}
            if isinstance(value, list):
                return [undo(item) for item in value]
            return self.written.get(value, value) if isinstance(value, str) else value

        return {**doc, "datasets": undo(doc.get("datasets") or {})} if self.written else doc

    def located(self, error: SpecError, label: str) -> SpecError:
        """`error`'s problems with the temporary file named as `label` (`spec.yaml@HEAD~1`)."""
        temporary = {str(p) for p in self.made} | {str(p.resolve()) for p in self.made}
        return SpecError([replace(p, file=label) if p.file in temporary else p for p in error.problems])


@contextmanager
def spec_at_revision(ref: str, path: Path) -> Iterator[Revision]:
    """Materialize `path` (the chain of specs it extends, and the data files it reads that changed since `ref`)
    as they were at git revision `ref`: the specs beside the current file so that relative data paths still
    resolve, changed data in temporary files they are pointed at."""
    revision = Revision(path)
    try:
        revision.path = _materialize(ref, path, revision)
        yield revision
    finally:
        for tmp in revision.made:
            tmp.unlink(missing_ok=True)


def _materialize(ref: str, path: Path, revision: Revision) -> Path:
    path = path.resolve()  # a spec removed since `ref` is not on disk, but its folder is
    top = git_toplevel(path.parent, f"--git {ref}")
    rel = path.relative_to(top).as_posix()
    shown = subprocess.run(["git", "show", f"{ref}:{rel}"], cwd=top, capture_output=True, text=True)
    if shown.returncode != 0:
        raise FileNotFoundError(f"{rel} does not exist at git revision {ref!r}: {shown.stderr.strip()}")
    text = shown.stdout
    import yaml  # here: a diff of two kept plans reads no YAML

    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError:  # written as it was: the spec loader locates what is wrong, at this revision's lines
        doc = None
    if isinstance(doc, dict):
        moved = isinstance(doc.get("extends"), str) and not doc["extends"].startswith("vibe:")
        if moved:
            base = _materialize(ref, path.parent / doc["extends"], revision)  # a packaged base is the installed one
            doc["extends"] = base.name if base.parent == path.parent else str(base)
        if _data_at(ref, top, path.parent, doc, revision) or moved:
            text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    made = _temporary(path.parent, f".{path.stem}@", ".yaml", text.encode("utf-8"))
    revision.made.append(made)
    return made


def _data_at(ref: str, top: Path, folder: Path, doc: dict[str, Any], revision: Revision) -> bool:
    """Point the spec's data files (source paths and joined files) that changed since `ref` at their content
    then; True when any did. A path with a variable, outside the repository or not in it at `ref` is left as it
    is: the plan then reads it as it is now."""
    before = len(revision.data_changed)

    def then(raw: Any) -> Any:
        found = _file_at(ref, top, folder, raw, revision) if isinstance(raw, str) else None
        if found is None:
            return raw
        revision.written[str(found)] = raw
        return str(found)

    for dataset in (doc.get("datasets") or {}).values():
        source = dataset.get("source") if isinstance(dataset, dict) else None
        if not isinstance(source, dict):
            continue
        if "path" in source:
            source["path"] = then(source["path"])
        if isinstance(source.get("paths"), list):
            source["paths"] = [then(raw) for raw in source["paths"]]
        for entry in (source.get("join") or {}).values():
            if isinstance(entry, dict) and "path" in entry:
                entry["path"] = then(entry["path"])
    return len(revision.data_changed) > before


def _file_at(ref: str, top: Path, folder: Path, raw: str, revision: Revision) -> Path | None:
    """A temporary copy of data file `raw` as it was at `ref`, where it differs from the file now; else None."""
    if "$" in raw:
        return None
    try:
        rel = (folder / raw).resolve().relative_to(top).as_posix()
    except ValueError:
        return None
    unchanged = subprocess.run(["git", "diff", "--quiet", ref, "--", rel], cwd=top, capture_output=True)
    if unchanged.returncode == 0:
        return None
    then = subprocess.run(["git", "show", f"{ref}:{rel}"], cwd=top, capture_output=True)
    if then.returncode != 0:
        return None
    revision.data_changed.append(rel)
    made = _temporary(Path(tempfile.gettempdir()), f"{Path(rel).stem}@", Path(rel).suffix, then.stdout)
    revision.made.append(made)
    return made


def _temporary(folder: Path, prefix: str, suffix: str, content: bytes) -> Path:
    with tempfile.NamedTemporaryFile("wb", dir=folder, prefix=prefix, suffix=suffix, delete=False) as fh:
        fh.write(content)
    return Path(fh.name)
