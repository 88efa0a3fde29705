"""What a method's pages are drawn with: the Vega-Lite chart helpers and colours (`charts`), and the pager that
writes item pages and names them (`paging`).

Part of the public API (see `engine.api`): plug-ins, built-in or not, import from here."""

from engine.report import charts
from engine.report.charts import A_COLOR, B_COLOR, kept, model_scale, vega
from engine.report.paging import ITEMS_PER_PAGE, slug, text_of, write_pages

__all__ = [
    "A_COLOR",
    "B_COLOR",
    "ITEMS_PER_PAGE",
    "charts",
    "kept",
    "model_scale",
    "slug",
    "text_of",
    "vega",
    "write_pages",
]
