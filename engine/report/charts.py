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
import numpy as np
import pandas as pd
from markupsafe import Markup

from engine import derived

A_COLOR, B_COLOR = "#4C78A8", "#F58518"


def safe_json(value: Any) -> Markup:
    """JSON that can sit inside a <script> element: '<', '>' and '&' are escaped, so a model output holding
    '</script>' cannot end the element."""
    text = json.dumps(value, ensure_ascii=False)
    return Markup(text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e"))


def _kept(build: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """A chart builder whose Vega-Lite spec is read back from the run cache when its inputs (and this module)
    did not change: building a spec through altair's schema validation takes tens of milliseconds a chart,
    and a report has a few per vibe."""

    @functools.wraps(build)
    def spec(*args: Any, **kwargs: Any) -> dict[str, Any]:
        inputs = {"chart": build.__name__, "args": args, "kwargs": kwargs}
        return derived.cached("chart-spec", inputs, lambda: build(*args, **kwargs),
                              lambda value: json.dumps(value).encode(), json.loads)

    return spec


@_kept
def separability_chart(rows: list[dict[str, Any]], model_a: str, model_b: str) -> dict[str, Any]:
    """A diverging bar per kept vibe: its separability on the test pairs, drawn toward the model that sits
    higher on the vibe (in that model's colour), with its 95% interval. Rows: vibe, separability, ci_low,
    ci_high, higher (a model name), and optionally explore (the link a click on the bar opens)."""
    frame = pd.DataFrame(rows)
    if frame.empty:
        frame = pd.DataFrame({"vibe": [], "separability": [], "ci_low": [], "ci_high": [], "higher": []})
    order = frame.sort_values("separability")["vibe"].tolist() if len(frame) else []
    base = alt.Chart(frame).encode(y=alt.Y("vibe:N", sort=order, title=None))
    links = {"href": alt.Href("explore:N")} if "explore" in frame else {}
    bars = base.mark_bar(cursor="pointer" if links else "default").encode(
        x=alt.X("separability:Q", scale=alt.Scale(domain=[-1, 1]),
                title=f"← {model_b} higher · separability on test pairs · {model_a} higher →"),
        color=alt.Color("higher:N", scale=model_scale(model_a, model_b), title="sits higher"),
        tooltip=["vibe", "higher", alt.Tooltip("separability:Q", format=".3f"),
                 alt.Tooltip("ci_low:Q", format=".3f"), alt.Tooltip("ci_high:Q", format=".3f")], **links)
    errors = base.mark_rule(color="#333333").encode(x="ci_low:Q", x2="ci_high:Q")
    zero = _zero_rule()
    return vega((bars + errors + zero).properties(width=460, height=max(80, 24 * len(frame))))


def vega(chart: Any) -> dict[str, Any]:
    """A chart's Vega-Lite specification, as pages embed it."""
    spec: dict[str, Any] = chart.to_dict()
    return spec


def _zero_rule() -> alt.Chart:
    """The vertical line at 0: no difference between the two sides."""
    rule: alt.Chart = alt.Chart(pd.DataFrame({"x": [0.0]})).mark_rule(color="#666666").encode(x="x:Q")
    return rule


def model_scale(model_a: str, model_b: str) -> alt.Scale:
    """The one colour of each model on every chart of a comparison."""
    return alt.Scale(domain=[model_a, model_b], range=[A_COLOR, B_COLOR])


@_kept
def verdict_distribution_chart(counts: dict[str, int], model_a: str, model_b: str,
                               links: dict[str, str] | None = None) -> dict[str, Any]:
    """Pairs per panel verdict; with `links` ("-1", "0", "1" → address) a bar opens its pairs."""
    order = [f"{model_b} higher", "tie / N/A", f"{model_a} higher"]
    keys = ("-1", "0", "1")
    frame = pd.DataFrame({"verdict": order, "pairs": [counts.get(k, 0) for k in keys]})
    extra = {}
    if links:
        frame["explore"] = [links[k] for k in keys]
        extra = {"href": alt.Href("explore:N")}
    chart = alt.Chart(frame).mark_bar(cursor="pointer" if links else "default").encode(
        x=alt.X("verdict:N", sort=order, title="panel verdict (every pair, training and test)"), y=alt.Y("pairs:Q"),
        color=alt.Color("verdict:N", sort=order, scale=alt.Scale(domain=order, range=[B_COLOR, "#bbbbbb", A_COLOR]),
                        legend=None),
        tooltip=["verdict", "pairs"], **extra,
    ).properties(width=360, height=200)
    return vega(chart)


@_kept
def measure_chart(values: list[dict[str, Any]], measure: str, model_a: str, model_b: str,
                  bins: int = 30) -> dict[str, Any]:
    """Distribution of the measured property per model (metric judges), binned here so that the page
    carries 30 numbers per model rather than every value."""
    frame = pd.DataFrame(values)
    edges = np.histogram_bin_edges(frame["value"], bins=bins)
    rows = []
    for model, group in frame.groupby("model", sort=False):
        counts, _ = np.histogram(group["value"], bins=edges)
        share = counts / max(1, counts.sum())
        rows += [{"model": model, "start": float(lo), "end": float(hi), "share": float(c)}
                 for lo, hi, c in zip(edges[:-1], edges[1:], share, strict=True)]
    chart = alt.Chart(pd.DataFrame(rows)).mark_bar(opacity=0.55).encode(
        x=alt.X("start:Q", title=measure[:60]), x2="end:Q", y=alt.Y("share:Q", title="share of answers", stack=None),
        y2=alt.datum(0), color=alt.Color("model:N", scale=model_scale(model_a, model_b)),
        tooltip=["model", alt.Tooltip("start:Q", format=".2f"), alt.Tooltip("share:Q", format=".1%")],
    ).properties(width=420, height=200)
    return vega(chart)


@_kept
def accuracy_chart(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Each regression's held-out accuracy beside its baselines on the same test pairs, with 95% intervals.
    Rows: task, rule, accuracy, ci_low, ci_high, n_test. The vibes' model is dark, the baselines grey."""
    frame = pd.DataFrame(rows)
    frame["row"] = frame["task"] + " · " + frame["rule"]
    frame["what"] = np.where(frame["rule"] == "vibes", "vibes' model", "baseline")
    order = frame["row"].tolist()
    base = alt.Chart(frame).encode(y=alt.Y("row:N", sort=order, title=None))
    bars = base.mark_bar().encode(
        x=alt.X("accuracy:Q", scale=alt.Scale(domain=[0, 1]), title="held-out accuracy (95% interval)"),
        color=alt.Color("what:N", scale=alt.Scale(domain=["vibes' model", "baseline"], range=["#333333", "#bbbbbb"]),
                        title=None),
        tooltip=["task", "rule", alt.Tooltip("accuracy:Q", format=".1%"), alt.Tooltip("ci_low:Q", format=".1%"),
                 alt.Tooltip("ci_high:Q", format=".1%"), alt.Tooltip("n_test:Q", title="test pairs")])
    errors = base.mark_rule().encode(x="ci_low:Q", x2="ci_high:Q")
    chance = alt.Chart(pd.DataFrame({"x": [0.5], "label": ["chance (50%)"]}))
    rule = chance.mark_rule(strokeDash=[4, 4]).encode(x="x:Q")
    label = chance.mark_text(align="left", dx=3, dy=-6, fontSize=10).encode(x="x:Q", text="label:N", y=alt.value(0))
    return vega((bars + errors + rule + label).properties(width=420, height=max(80, 22 * len(frame))))


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
    import vl_convert as vlc

    target = assets / "vega-bundle.js"
    if not target.exists():
        assets.mkdir(parents=True, exist_ok=True)
        bundle = vlc.javascript_bundle()  # type: ignore[call-arg]  # its stub omits the default
        target.write_text(bundle, encoding="utf-8")


@_kept
def ratings_chart(rows: list[dict[str, Any]], title: str) -> dict[str, Any]:
    """Rating per model with its bootstrap 95% interval."""
    frame = pd.DataFrame(rows)
    order = frame.sort_values("rating", ascending=False)["model"].tolist()
    base = alt.Chart(frame).encode(y=alt.Y("model:N", sort=order, title=None))
    bars = base.mark_rule(strokeWidth=2, color="#999").encode(x=alt.X("ci_low:Q", scale=alt.Scale(zero=False),
                                                                      title=title), x2="ci_high:Q")
    points = base.mark_point(filled=True, size=60, color=A_COLOR).encode(
        x="rating:Q", tooltip=["model", alt.Tooltip("rating:Q", format=".1f"), alt.Tooltip("ci_low:Q", format=".1f"),
                               alt.Tooltip("ci_high:Q", format=".1f")])
    return vega((bars + points).properties(width=420, height=max(80, 22 * len(frame))))


@_kept
def delta_histogram(deltas: list[float], title: str, bins: int = 20) -> dict[str, Any]:
    counts, edges = np.histogram(deltas, bins=bins, range=(min(0.0, min(deltas, default=0.0)), 1.0))
    frame = pd.DataFrame({"start": edges[:-1], "end": edges[1:], "items": counts})
    return vega(alt.Chart(frame).mark_bar(color=A_COLOR).encode(
        x=alt.X("start:Q", title=title), x2="end:Q", y=alt.Y("items:Q"), y2=alt.datum(0),
        tooltip=["start", "end", "items"],
    ).properties(width=420, height=200))


@_kept
def persona_chart(rows: list[dict[str, Any]], model_a: str, model_b: str) -> dict[str, Any]:
    """Stacked shares of votes per persona and prompt type: A wins, ties, B wins."""
    order = [f"{model_a} wins", "tie", f"{model_b} wins"]
    frame = pd.DataFrame(rows) if rows else pd.DataFrame({"condition": [], "outcome": [], "share": [], "votes": []})
    return vega(alt.Chart(frame).mark_bar().encode(
        x=alt.X("share:Q", stack="normalize", title="share of judge votes", axis=alt.Axis(format="%")),
        y=alt.Y("condition:N", title=None, sort=None),
        color=alt.Color("outcome:N", sort=order, scale=alt.Scale(domain=order, range=[A_COLOR, "#bbbbbb", B_COLOR]),
                        title=None),
        order=alt.Order("rank:Q"),
        tooltip=["condition", "outcome", "votes", alt.Tooltip("share:Q", format=".1%")],
    ).properties(width=420, height=max(80, 24 * len({r["condition"] for r in rows}))))


WIN_RATE = "win rate"


@_kept
def profile_heatmap(rows: list[dict[str, Any]], vibes: list[str], reference: str,
                    sort_options: list[str]) -> dict[str, Any]:
    """Models × vibes: each cell the model's separability against the reference (the reference's own row is
    0 throughout, the centre of the diverging scale), faded where it is not significant after the profile's
    correction over its cells (`clear`). A drop-down
    orders the models by any vibe or by win rate. Rows: model, vibe, separability, ci_low, ci_high, clear,
    win_rate."""
    frame = pd.DataFrame(rows)
    sort_by = alt.param(name="sort_by", value=sort_options[0],
                        bind=alt.binding_select(options=sort_options, name="order models by "))
    key = (f"sort_by == '{WIN_RATE}' ? datum.win_rate : (datum.vibe == sort_by ? datum.separability : null)"
           if WIN_RATE in sort_options else "datum.vibe == sort_by ? datum.separability : null")
    base = alt.Chart(frame).transform_calculate(key=key).transform_joinaggregate(
        order="max(key)", groupby=["model"]).encode(
        x=alt.X("vibe:N", sort=vibes, title=None, axis=alt.Axis(labelAngle=-40, orient="top")),
        y=alt.Y("model:N", title=None, sort=alt.EncodingSortField("order", op="max", order="descending")))
    links = {"href": alt.Href("explore:N")} if "explore" in frame else {}
    cells = base.mark_rect().encode(
        **links,
        color=alt.Color("separability:Q", scale=alt.Scale(scheme="redblue", domain=[-1, 1], domainMid=0, reverse=True),
                        title=f"vs {reference}"),
        opacity=alt.condition("datum.clear", alt.value(1.0), alt.value(0.35)),
        tooltip=["model", "vibe", alt.Tooltip("separability:Q", format="+.2f"),
                 alt.Tooltip("ci_low:Q", format="+.2f", title="95% low"),
                 alt.Tooltip("ci_high:Q", format="+.2f", title="95% high"),
                 alt.Tooltip("win_rate:Q", format=".1%", title=WIN_RATE)])
    text = base.mark_text(fontSize=10).encode(text=alt.Text("separability:Q", format="+.2f"))
    return vega((cells + text).add_params(sort_by).properties(
        width=max(240, 46 * len(vibes)), height=max(80, 24 * frame["model"].nunique())))


@_kept
def vibe_ranking(rows: list[dict[str, Any]], vibes: list[str], reference: str) -> dict[str, Any]:
    """One vibe at a time (a drop-down): the models ordered on it, each with its 95% interval; the
    reference sits at 0. Rows: model, vibe, separability, ci_low, ci_high."""
    frame = pd.DataFrame(rows)
    vibe = alt.param(name="vibe", value=vibes[0], bind=alt.binding_select(options=vibes, name="vibe "))
    base = alt.Chart(frame).transform_filter("datum.vibe == vibe").encode(
        y=alt.Y("model:N", title=None, sort=alt.EncodingSortField("separability", op="max", order="descending")))
    rules = base.mark_rule(strokeWidth=2, color="#999999").encode(
        x=alt.X("ci_low:Q", scale=alt.Scale(domain=[-1, 1]),
                title=f"← lower than {reference} · separability (95% interval) · higher →"), x2="ci_high:Q")
    links = {"href": alt.Href("explore:N")} if "explore" in frame else {}
    points = base.mark_point(filled=True, size=70, color=A_COLOR).encode(
        **links, x="separability:Q", tooltip=["model", "vibe", alt.Tooltip("separability:Q", format="+.3f"),
                                     alt.Tooltip("ci_low:Q", format="+.3f"), alt.Tooltip("ci_high:Q", format="+.3f")])
    zero = _zero_rule()
    return vega((rules + points + zero).add_params(vibe).properties(
        width=420, height=max(80, 24 * frame["model"].nunique())))
