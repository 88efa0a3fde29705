"""What columns are usually called, for recognising a file's layout (`vibe init` and the formats' sniffing):
each tuple lists the names, lower-cased, in order of preference."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

# the column names `vibe init` and the formats take for a prompt, an id, a category, a label and a model
# name, in the order they are tried
PROMPT_NAMES = ("prompt", "question", "instruction", "input", "query", "user_prompt", "turns.0", "problem")
ID_NAMES = ("id", "question_id", "prompt_id", "uid", "idx", "item_id", "sample_id", "example_id")
CATEGORY_NAMES = ("category", "topic", "task", "subset", "domain")
LABEL_NAMES = ("preference", "winner", "label", "preferred", "choice", "human_preference")
MODEL_NAMES = ("model", "model_name", "generator", "system")
ANSWER_NAMES = ("answer", "output", "response", "completion", "generation", "text")
REFERENCE_NAMES = ("reference", "gold", "target", "ideal")
SAMPLE_ROWS = 200  # rows read to tell what a file's columns hold


def named(columns: list[str], names: tuple[str, ...]) -> str | None:
    """The first of `names` among `columns` (compared lower-cased), as the file spells it."""
    lowered = {c.lower(): c for c in columns}
    return next((lowered[n] for n in names if n in lowered), None)


def columns_of(rows: list[dict[str, Any]]) -> list[str]:
    """The columns of the first SAMPLE_ROWS rows, in order of first appearance."""
    return list(dict.fromkeys(c for r in rows[:SAMPLE_ROWS] for c in r))


def by_frequency(rows: list[dict[str, Any]], *columns: str) -> list[str]:
    """The values of `columns` over every row, most frequent first (the models a battle log names)."""
    counts = Counter(str(r[c]) for r in rows for c in columns if r.get(c) not in (None, ""))
    return [name for name, _ in counts.most_common()]


def json_object_with(path: Path, *keys: str) -> bool:
    """A JSON file holding one object with these keys (peeking at its start, not parsing it whole)."""
    if path.is_dir() or path.suffix.lower() != ".json":
        return False
    with path.open(encoding="utf-8-sig", errors="replace") as fh:
        head = fh.read(1 << 16).lstrip()
    return head.startswith("{") and all(json.dumps(key) in head for key in keys)
