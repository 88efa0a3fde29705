"""The one error type of the spec stage: a problem located at FILE:LINE:COL and a dotted field path.

Every check (YAML syntax, schema, references, files) reports through `Problem`, so that `vibe validate`
can print all of them at once in the same compiler-like format editors and CI annotators understand.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    line: int
    col: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: {self.field or '<root>'}: {self.message}"


class SpecError(Exception):
    """Raised with every problem found, never just the first."""

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(set(problems))
        super().__init__("\n".join(str(p) for p in self.problems))
