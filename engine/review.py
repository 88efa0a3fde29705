"""The pull-request comment: what every spec a change touches does to its plan and cost, in one Markdown body.

`vibe diff --changed BASE` (what the GitHub Action runs) lists the spec files that differ between the git
revision BASE and the working tree, and writes one section per file: a changed spec is diffed against its
version at BASE, a new spec against nothing (every task added), a removed spec against nothing the other way
(every task removed). A spec that no longer validates says so with its problems instead of failing the whole
comment. The first line is a marker the action uses to update its own comment instead of adding another.
"""

from __future__ import annotations

import fnmatch
import subprocess
from pathlib import Path

from engine.datasets import DatasetError
from engine.diff import Revision, diff_plans, git_toplevel, spec_at_revision, to_markdown
from engine.pipeline import prepare
from engine.plan import PlanError
from engine.plan_outline import Outline
from engine.plan_view import outline, outline_of
from engine.records import Prepared
from engine.spec.problems import SpecError

MARKER = "<!-- vibe-diff -->"
# the specs folder, and the spec `vibe init` writes at the top of a project
DEFAULT_PATTERNS = ("specs/**/*.yaml", "specs/**/*.yml", "specs/*.yaml", "specs/*.yml", "vibe.yaml", "vibe.yml")
_EMPTY = Outline("", "", {}, ())


def changed_specs(base: str, patterns: tuple[str, ...], root: Path) -> list[tuple[str, str]]:
    """(status, path) for every file matching `patterns` that differs between `base` and the working tree,
    status A (added), M (modified) or D (deleted); a rename is a deletion and an addition."""
    listed = subprocess.run(["git", "diff", "--name-status", "--no-renames", base, "--"], cwd=root,
                            capture_output=True, text=True)
    if listed.returncode != 0:
        raise FileNotFoundError(f"git diff against {base!r} failed: {listed.stderr.strip()}")
    untracked = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=root, capture_output=True,
                               text=True, check=True).stdout.split()
    rows = [tuple(line.split("\t", 1)) for line in listed.stdout.splitlines() if "\t" in line]
    rows += [("A", path) for path in untracked]
    return sorted((status[0], path) for status, path in rows
                  if any(fnmatch.fnmatch(path, pattern) for pattern in patterns))


def _problem(exc: Exception) -> str:
    if isinstance(exc, SpecError):
        return "\n".join(f"    {p}" for p in exc.problems[:20])
    return f"    {exc}"


def prepared_at(then: Revision, label: str) -> Prepared:
    """The spec at a revision, prepared; its problems named as the revision (`label`), not the temporary file."""
    try:
        return prepare(then.path)
    except SpecError as error:
        raise then.located(error, label) from None


def _section(status: str, path: str, base: str, root: Path) -> str:
    where = root / path
    try:
        if status == "A":
            new = outline(where)
            return to_markdown(diff_plans({}, _EMPTY, new.document, new), "(none)", path)
        if status == "D":
            with spec_at_revision(base, where) as then:
                old = prepared_at(then, f"{path}@{base}")
            return to_markdown(diff_plans(old.spec.document, outline_of(old), {}, _EMPTY), f"{path}@{base}",
                               "(removed)")
        with spec_at_revision(base, where) as then:
            old = prepared_at(then, f"{path}@{base}")
        new = outline(where)
        return to_markdown(diff_plans(then.document(old.spec.document), outline_of(old), new.document, new),
                           f"{path}@{base}", path, then.data_changed)
    except (SpecError, DatasetError, PlanError, FileNotFoundError) as exc:
        what = {"A": "new", "D": "removed", "M": "changed"}[status]
        return f"### `{path}` ({what}): no plan could be compiled\n\n{_problem(exc)}\n"


def comment(base: str, patterns: tuple[str, ...] = DEFAULT_PATTERNS, root: Path | None = None) -> str:
    """The whole comment body for the specs changed since `base` (see the module docstring)."""
    root = root or git_toplevel(Path.cwd(), f"--changed {base}")
    changed = changed_specs(base, patterns, root)
    lines = [MARKER, f"## vibe: {len(changed)} spec file(s) changed since `{base}`", ""]
    if not changed:
        lines.append(f"No file matching {', '.join(patterns)} changed.")
    lines += [_section(status, path, base, root) for status, path in changed]
    return "\n".join(lines) + "\n"
