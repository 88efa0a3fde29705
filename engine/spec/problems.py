"""The one error type of the spec stage: a problem located at FILE:LINE:COL and a dotted field path.

Every check (YAML syntax, schema, references, files) reports through `Problem`, so that `vibe validate`
can print all of them at once in the same compiler-like format editors and CI annotators understand.
"""

from __future__ import annotations

from dataclasses import dataclass

# A problem prints as one line, whatever its message quotes from the spec (a name, a path): the characters
# that would end that line are written as escapes.
LINE_BREAKS = str.maketrans({c: repr(c)[1:-1] for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"})


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    line: int
    col: int
    field: str
    message: str

    def __str__(self) -> str:
        line = f"{self.file}:{self.line}:{self.col}: {self.field or '<root>'}: {self.message}"
        return line.translate(LINE_BREAKS)


class SpecError(Exception):
    """Raised with every problem found, never just the first."""

    def __init__(self, problems: list[Problem], own: str | None = None):
        """`own`: the spec file the user ran; its problems come first, those located in a base it extends after
        them, since a mistake of one's own (a misspelt judge) is most often what makes a base's line fail."""
        self.problems = sorted(set(problems), key=lambda p: (own is not None and p.file != own, p))
        super().__init__("\n".join(str(p) for p in self.problems))
