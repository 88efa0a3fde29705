"""The near name to suggest when a spec names something that does not exist: every layer's errors use it."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(name: object, known: Iterable[object]) -> str:
    """" (did you mean 'x'?)" when a known name is close to the one written, else ""."""
    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
