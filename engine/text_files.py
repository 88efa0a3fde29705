"""Reading a text file that must be UTF-8, with the place of the first byte that is not.

Specs and datasets are both user files: one written in Latin-1 or UTF-16 must be refused at its line and
column, never with a UnicodeDecodeError traceback.
"""

from __future__ import annotations

import re
from pathlib import Path

# A surrogate code point in a Python string is always unpaired (a valid pair decodes to one character): a JSON
# or YAML escape such as \ud83d cut from its pair. Such a string cannot be encoded, stored or hashed.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class NotUtf8(ValueError):
    def __init__(self, path: Path, line: int, col: int, reason: str):
        self.path, self.line, self.col, self.reason = path, line, col, reason
        super().__init__(f"{path}:{line}:{col}: {reason}")


def read_utf8(path: Path) -> str:
    """The file's text; UTF-16 (which editors on Windows write) is named as such."""
    data = path.read_bytes()
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise NotUtf8(path, 1, 1, "the file is UTF-16; it must be UTF-8 (save it as UTF-8)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = line_and_column(data[:exc.start])
        raise NotUtf8(path, line, col, f"byte 0x{data[exc.start]:02x} is not UTF-8 ({exc.reason}); the file must "
                      "be UTF-8 text") from None


def line_and_column(before: str | bytes) -> tuple[int, int]:
    """1-based line and column of the character (or byte) that follows `before`, the file's start."""
    if isinstance(before, bytes):
        return before.count(b"\n") + 1, len(before) - before.rfind(b"\n")
    return before.count("\n") + 1, len(before) - before.rfind("\n")
