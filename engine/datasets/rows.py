"""Reading one value from a row: a column, or a dotted path into nested JSON."""

from __future__ import annotations

import math
from typing import Any


def field_value(row: dict[str, Any], column: str) -> Any:
    """A column, or a path into nested JSON: `turns.0` is the first element of the `turns` list."""
    if column in row or "." not in column:
        return row.get(column)
    value: Any = row
    for part in column.split("."):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def text_value(row: dict[str, Any], column: str | None) -> str | None:
    """The value as text; None where the row has none (a missing column, null, or NaN from CSV/Parquet)."""
    if column is None:
        return None
    value = field_value(row, column)
    if value is None or (isinstance(value, float) and value != value):
        return None
    return str(value)


def mapped_label(values: dict[str, str], raw: str) -> str:
    """A label as written → what `values` maps it to. With numeric keys, a numeric label goes to the nearest
    key and one halfway between the two nearest (naming different things) is a tie; a label no key reads is
    returned as written, for the caller to name."""
    if raw in values:
        return values[raw]
    keys = [(_number(k), v) for k, v in values.items()]
    value = _number(raw)
    if value is None or not keys or any(k is None for k, _ in keys):
        return raw
    distance = sorted((abs(value - float(k)), name) for k, name in keys if k is not None)
    if len(distance) > 1 and math.isclose(distance[0][0], distance[1][0]) and distance[0][1] != distance[1][1]:
        return "tie"
    return distance[0][1]


def share_of_a(values: dict[str, str], raw: str) -> float | None:
    """How much of the win a numeric label between a key read as "a" and one read as "b" gives side a (1 at
    a's key, 0 at b's, in proportion between: AlpacaEval's weighted annotator writes 1.73 for a 27% share to
    output_1); None for a label at a key, outside the two, or not a number."""
    value = _number(raw)
    ends = {side: _number(k) for k, side in values.items() if side in ("a", "b")}
    low, high = ends.get("a"), ends.get("b")
    if value is None or low is None or high is None or low == high or raw in values:
        return None
    share = (high - value) / (high - low)
    return share if 0 < share < 1 else None


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
