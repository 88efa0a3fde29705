"""Reading a text file that must be UTF-8, with the place of the first byte that is not.

Specs and datasets are both user files: one written in Latin-1 or UTF-16 must be refused at its line and
column, never with a UnicodeDecodeError traceback.
"""

from __future__ import annotations

import codecs
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
    _refuse_utf16(path, data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, data, exc.start, exc.reason) from None


def check_utf8(path: Path, block: int = 1 << 22) -> None:
    """Raise what `read_utf8` would for a file that is not UTF-8, reading it a block at a time and keeping no
    text: a large dataset is then read as a stream. (Decoded whole, a file with one character beyond U+FFFF, an
    emoji, is a Python string of 4 bytes a character: 1.8 GB for Arena's 440 MB of answers.)"""
    decoder = codecs.getincrementaldecoder("utf-8")()
    read = 0  # bytes before the current block
    with path.open("rb") as fh:
        _refuse_utf16(path, fh.read(2))
        fh.seek(0)
        while chunk := fh.read(block):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:  # its bytes: what the decoder held back from the last block, then this
                raise _not_utf8(path, path.read_bytes(), read - (len(exc.object) - len(chunk)) + exc.start,
                                exc.reason) from None
            read += len(chunk)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as exc:  # a character cut off by the end of the file
            raise _not_utf8(path, path.read_bytes(), read - len(exc.object) + exc.start, exc.reason) from None


def _refuse_utf16(path: Path, start: bytes) -> None:
    if start[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise NotUtf8(path, 1, 1, "the file is UTF-16; it must be UTF-8 (save it as UTF-8)")


def _not_utf8(path: Path, data: bytes, at: int, reason: str) -> NotUtf8:
    line, col = line_and_column(data[:at])
    return NotUtf8(path, line, col, f"byte 0x{data[at]:02x} is not UTF-8 ({reason}); the file must be UTF-8 text")


def line_and_column(before: str | bytes) -> tuple[int, int]:
    """1-based line and column of the character (or byte) that follows `before`, the file's start."""
    if isinstance(before, bytes):
        return before.count(b"\n") + 1, len(before) - before.rfind(b"\n")
    return before.count("\n") + 1, len(before) - before.rfind("\n")
