"""The drill-down pages' shared pieces: file-name slugs, an output's text, and paging."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from jinja2 import Environment

from engine.records import Result

ITEMS_PER_PAGE = 25  # answers per page where a report lists every item


def slug(text: str) -> str:
    """A name made safe for a file or an anchor: lower case, anything else than letters and digits a dash."""
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-") or "x"


def text_of(outputs: dict[str, Result], task_id: str) -> str:
    """A task's answer as a page shows it, or a note where the task did not finish."""
    result = outputs.get(task_id)
    return "(no output: the task did not finish)" if result is None else str(result.output)


def write_pages(env: Environment, template: str, folder: Path, prefix: str, rows_name: str, rows: list[Any],
                per_page: int, **context: Any) -> None:
    """A paged drill-down: <folder>/<prefix>-<n>.html, `per_page` rows each (one page even with no rows)."""
    pages = max(1, math.ceil(len(rows) / per_page))
    for n in range(pages):
        html = env.get_template(template).render(**{rows_name: rows[n * per_page:(n + 1) * per_page]}, page=n + 1,
                                                 pages=pages, prefix=prefix, root="..", **context)
        (folder / f"{prefix}-{n + 1}.html").write_text(html, encoding="utf-8")
