"""Charts as Vega-Lite specs built with altair, embedded in the pages and exported as SVG and PNG.

Pages render charts with the Vega bundle that vl-convert ships (written once to assets/), so the report
works from file:// and behind firewalls. Every chart is also saved as SVG and PNG for READMEs and PRs.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
from markupsafe import Markup

from engine import derived

# what a plug-in may use of this module, through the public API (held by tests/test_api_surface.py)
__all__ = ["export", "ratings_chart"]

A_COLOR, B_COLOR = "#4C78A8", "#F58518"  # model A's and model B's colour on every chart


def safe_json(value: Any) -> Markup:
    """JSON that can sit inside a <script> element: '<', '>' and '&' are escaped, so a model output holding
    '</script>' cannot end the element."""
    text = json.dumps(value, ensure_ascii=False)
    return Markup(text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e"))


def kept(build: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """A chart builder whose Vega-Lite spec is read back from the run cache when its inputs and the code of the
    builder's module did not change: building a spec through altair's schema validation takes tens of
    milliseconds a chart, and a report has a few per vibe. Each method keeps its builders in its own package."""

    @functools.wraps(build)
    def spec(*args: Any, **kwargs: Any) -> dict[str, Any]:
        inputs = {"chart": build.__name__, "args": args, "kwargs": kwargs}
        return derived.cached("chart-spec", inputs, lambda: build(*args, **kwargs),
                              lambda value: json.dumps(value).encode(), json.loads, module=build.__module__)

    return spec


def vega(chart: Any) -> dict[str, Any]:
    """A chart's Vega-Lite specification, as pages embed it."""
    spec: dict[str, Any] = chart.to_dict()
    return spec


def model_scale(model_a: str, model_b: str) -> alt.Scale:
    """The one colour of each model on every chart of a comparison."""
    return alt.Scale(domain=[model_a, model_b], range=[A_COLOR, B_COLOR])


def export(spec: dict[str, Any], path: Path) -> None:
    """SVG and PNG copies of a chart (path without suffix); a re-run reads back the images of an unchanged
    chart from the run cache instead of drawing them again."""
    import vl_convert as vlc

    path.parent.mkdir(parents=True, exist_ok=True)
    spec = _without_links(spec)  # the files leave the report: its relative links would lead nowhere
    svg = derived.cached("chart-svg", spec, lambda: vlc.vegalite_to_svg(spec).encode("utf-8"), bytes, bytes)
    png = derived.cached("chart-png", spec, lambda: vlc.vegalite_to_png(spec, scale=2), bytes, bytes)
    path.with_suffix(".svg").write_bytes(svg)
    path.with_suffix(".png").write_bytes(png)


def _without_links(spec: Any) -> Any:
    if isinstance(spec, dict):
        return {key: _without_links(value) for key, value in spec.items() if key != "href"}
    if isinstance(spec, list):
        return [_without_links(value) for value in spec]
    return spec


def write_vega_bundle(assets: Path) -> None:
    """Vega's scripts for the pages' charts, bundled by vl-convert once per its version (bundling takes most of a
    second) and kept in the user's cache."""
    from importlib.metadata import version

    import vl_convert as vlc

    from engine.user_cache import remembered

    target = assets / "vega-bundle.js"
    if not target.exists():
        assets.mkdir(parents=True, exist_ok=True)
        bundle = remembered("vega-bundle", version("vl-convert-python"),
                            vlc.javascript_bundle)  # type: ignore[arg-type]  # its stub omits the default
        target.write_text(bundle, encoding="utf-8")


@kept
def ratings_chart(rows: list[dict[str, Any]], title: str) -> dict[str, Any]:
    """Rating per model with its percentile bootstrap interval (nominal 95%, `Ranking.interval_kind`)."""
    frame = pd.DataFrame(rows)
    order = frame.sort_values("rating", ascending=False)["model"].tolist()
    base = alt.Chart(frame).encode(y=alt.Y("model:N", sort=order, title=None))
    bars = base.mark_rule(strokeWidth=2, color="#999").encode(x=alt.X("ci_low:Q", scale=alt.Scale(zero=False),
                                                                      title=title), x2="ci_high:Q")
    points = base.mark_point(filled=True, size=60, color=A_COLOR).encode(
        x="rating:Q", tooltip=["model", alt.Tooltip("rating:Q", format=".1f"), alt.Tooltip("ci_low:Q", format=".1f"),
                               alt.Tooltip("ci_high:Q", format=".1f")])
    return vega((bars + points).properties(width=420, height=max(80, 22 * len(frame))))


