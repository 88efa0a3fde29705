"""VibeCheck's charts: the separability of kept vibes, verdict and measure distributions, the held-out accuracies
beside their baselines, and the profile heatmap and ranking of many models."""

from __future__ import annotations

from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from engine.api.report import A_COLOR, B_COLOR, kept, model_scale, vega

WIN_RATE = "win rate"  # the heatmap's sort option that orders models by their labelled win rate


def zero_rule() -> alt.Chart:
    """The vertical line at 0: no difference between the two sides."""
    rule: alt.Chart = alt.Chart(pd.DataFrame({"x": [0.0]})).mark_rule(color="#666666").encode(x="x:Q")
    return rule


@kept
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
    zero = zero_rule()
    return vega((bars + errors + zero).properties(width=460, height=max(80, 24 * len(frame))))


@kept
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


def measure_bins(values: dict[str, np.ndarray], bins: int = 30) -> list[dict[str, Any]]:
    """Each model's share of answers in `bins` equal bins over the range of every value (`values`: model -> its
    answers' values, in the order the chart lists the models): the page carries 30 numbers per model rather
    than every value, and the chart's cached spec is keyed by these, not by the values."""
    edges = np.histogram_bin_edges(np.concatenate(list(values.values())), bins=bins)
    rows = []
    for model, group in values.items():
        counts, _ = np.histogram(group, bins=edges)
        share = counts / max(1, counts.sum())
        rows += [{"model": model, "start": float(lo), "end": float(hi), "share": float(c)}
                 for lo, hi, c in zip(edges[:-1], edges[1:], share, strict=True)]
    return rows


@kept
def measure_chart(rows: list[dict[str, Any]], measure: str, model_a: str, model_b: str) -> dict[str, Any]:
    """Distribution of the measured property per model (metric judges), from `measure_bins`' rows."""
    chart = alt.Chart(pd.DataFrame(rows)).mark_bar(opacity=0.55).encode(
        x=alt.X("start:Q", title=measure[:60]), x2="end:Q", y=alt.Y("share:Q", title="share of answers", stack=None),
        y2=alt.datum(0), color=alt.Color("model:N", scale=model_scale(model_a, model_b)),
        tooltip=["model", alt.Tooltip("start:Q", format=".2f"), alt.Tooltip("share:Q", format=".1%")],
    ).properties(width=420, height=200)
    return vega(chart)


@kept
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
                 alt.Tooltip("ci_high:Q", format=".1%"), alt.Tooltip("n_test:Q", title="n (test)")])
    errors = base.mark_rule().encode(x="ci_low:Q", x2="ci_high:Q")
    chance = alt.Chart(pd.DataFrame({"x": [0.5], "label": ["chance (50%)"]}))
    rule = chance.mark_rule(strokeDash=[4, 4]).encode(x="x:Q")
    label = chance.mark_text(align="left", dx=3, dy=-6, fontSize=10).encode(x="x:Q", text="label:N", y=alt.value(0))
    return vega((bars + errors + rule + label).properties(width=420, height=max(80, 22 * len(frame))))


@kept
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


@kept
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
    zero = zero_rule()
    return vega((rules + points + zero).add_params(vibe).properties(
        width=420, height=max(80, 24 * frame["model"].nunique())))

