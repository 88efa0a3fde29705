"""What every spec check works with: the document, where each of its keys sits, and the problems found so far,
with the lookups the checks share. The schema-level and semantic checks (`engine.spec.semantics`) and each
method's own (`AnalysisMethod.check`) report through it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from engine.judges.kinds import ALIASES, ROLES, JudgeKind, judge_kind, kind_names
from engine.names import did_you_mean
from engine.spec.paths import resolve_path, unset_variables
from engine.spec.problems import Problem
from engine.spec.yaml_source import PathKey, SourceMap, dotted


class SpecChecker:
    """The document being checked and the problems found, with the lookups checks share. A method's own
    checks (`AnalysisMethod.check`) receive it too."""

    def __init__(self, document: dict[str, Any], source: SourceMap, spec_path: Path):
        self.doc = document
        self.source = source
        self.spec_dir = spec_path.parent
        self.problems: list[Problem] = []

    def report(self, path: PathKey, message: str) -> None:
        mark = self.source.locate(path)
        self.problems.append(Problem(mark.file, mark.line, mark.col, dotted(path), message))

    def section(self, key: str) -> dict[str, Any]:
        return self.doc.get(key) or {}

    def must_exist(self, path: PathKey, name: str, section: str) -> bool:
        if name in self.section(section):
            return True
        declared = ", ".join(sorted(self.section(section))) or "none declared"
        self.report(path, f"unknown {section[:-1]} {name!r}{did_you_mean(name, self.section(section))} "
                    f"(declared: {declared})")
        return False

    def each_ref(self, path: PathKey, names: Iterable[str], section: str) -> None:
        for i, name in enumerate(names):
            self.must_exist((*path, i), name, section)

    def judge_for(self, path: PathKey, name: str, *roles: str) -> JudgeKind | None:
        """Report a judge that is not declared, or whose kind can do none of `roles` (`engine.judges.kinds.ROLES`);
        the judge's kind when it can."""
        if not self.must_exist(path, name, "judges"):
            return None
        spelled = self.section("judges")[name]["kind"]
        kind = judge_kind(spelled)
        if not any(kind.does(role) for role in roles):
            able = [k for k in kind_names() if any(judge_kind(k).does(role) for role in roles) and k not in ALIASES]
            self.report(path, f"judge {name!r} is {kind.label} (kind: {spelled}), which cannot "
                        f"{' or '.join(ROLES[r] for r in roles)}; kinds that can: {', '.join(able)}")
            return None
        return kind

    def dataset(self, analysis: dict[str, Any]) -> dict[str, Any]:
        """The dataset entry an analysis names ({} when it names none that is declared)."""
        entry: dict[str, Any] = self.section("datasets").get(analysis.get("dataset", ""), {})
        return entry

    def file_path(self, path: PathKey, raw: str) -> Path:
        """Paths are relative to the spec file (a base spec's paths were rebased when merged). A `${NAME}`
        whose variable is unset and that gives no default is reported here, where the field is known."""
        for name in unset_variables(raw):
            self.report(path, f"${{{name}}} is not set and gives no default: export {name}=… or write "
                        f"${{{name}:-<default path>}}")
        return resolve_path(self.spec_dir, raw)

    def file_problem(self, path: PathKey, raw: str, missing_ok: bool = False, folder_ok: bool = False) -> None:
        """Report a data file that plan and run could not read: missing (unless it is downloaded when
        missing), a folder (unless the format reads folders), or unreadable."""
        file = self.file_path(path, raw)
        if file.is_dir():
            if not folder_ok:
                self.report(path, f"{file} is a folder; give the data file inside it")
        elif file.exists():
            if not os.access(file, os.R_OK):
                self.report(path, f"{file} cannot be read (permissions)")
        elif not missing_ok:
            self.report(path, f"file not found: {file}")
