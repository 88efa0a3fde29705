"""vibe-testing's chart: each persona condition's verdicts per model."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd

from engine.api.report import A_COLOR, B_COLOR, kept, vega


@kept
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
