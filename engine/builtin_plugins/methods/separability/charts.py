"""Generation separability's chart: the distribution of per-prompt differences."""

from __future__ import annotations

from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from engine.api.report import A_COLOR, kept, vega


@kept
def delta_histogram(deltas: list[float], title: str, bins: int = 20) -> dict[str, Any]:
    counts, edges = np.histogram(deltas, bins=bins, range=(min(0.0, min(deltas, default=0.0)), 1.0))
    frame = pd.DataFrame({"start": edges[:-1], "end": edges[1:], "items": counts})
    return vega(alt.Chart(frame).mark_bar(color=A_COLOR).encode(
        x=alt.X("start:Q", title=title), x2="end:Q", y=alt.Y("items:Q"), y2=alt.datum(0),
        tooltip=["start", "end", "items"],
    ).properties(width=420, height=200))
