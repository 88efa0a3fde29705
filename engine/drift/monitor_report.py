"""What `vibe monitor` writes after each look: monitor.md (the verdict first, then a row per vibe), index.html
(the same, with each vibe's running shift and its always-valid interval drawn over the looks) and monitor.json
(every figure of every look)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import quote

from engine.drift.monitor import State, VibeWatch, e_value, status
from engine.drift.summary import json_ready, page_environment, signed

ESTIMATOR = ("Each look's answers are paired with the baseline's answers to the same prompts and judged by the "
             "baseline's panel; a unit (a prompt, or a conversation: the mean of its turns' verdicts) gives the shift "
             "head minus base in verdict units (−1…+1). Each claim is an e-process by betting on those units "
             "(Waudby-Smith & Ramdas 2024, JRSS-B: the stake on a unit is the approximate growth-optimal bet from the "
             "last 150 units before it, at most half of what keeps wealth ≥ 0), made when its e-value reaches the "
             "number of claims in the family divided by α; by Ville's inequality the chance of any false claim, over "
             "every vibe and every look, past and future, is at most α. The interval is a confidence sequence at the "
             "same level for the average shift since the baseline (Howard et al. 2021, Ann. Statist.: the normal "
             "mixture, each unit's range 2): it covers that average at every look at once, whether or not the model "
             "moved, so after a move it holds the average over before and after, and the claim says when it moved. A "
             "batch's own mean is one look's figure, with no interval.")
UNPAIRED = ("The looks share no prompt with the baseline (a day's logs, say), so no answer is paired: each unit (a "
            "conversation, or a prompt) gets its value on each vibe, the mean over its answers of the measure the "
            "panel's judge compares, and is ranked among every unit before it, the baseline's first: its smoothed "
            "conformal p-value p (Vovk, Gammerman & Shafer 2022), and x = 1 − 2p. While the model is unchanged, "
            "the units are exchangeable and every p is uniform and independent of the ones before, so x has mean "
            "0 given the past. Each claim (moved up, moved down: no margin applies to a rank) is an e-process by "
            "betting on x (Waudby-Smith & Ramdas 2024, JRSS-B), made when its e-value reaches the number of claims "
            "in the family divided by α; by Ville's inequality the chance of any false claim, over every vibe and "
            "every look, past and future, is at most α. The running figure is the mean rank shift (+1: every new "
            "unit above every unit before it; 0: as a fresh draw of the old ones would rank), with a confidence "
            "sequence at the same level (Howard et al. 2021).")


def estimator(state: State) -> str:
    """How the page's figures were made: paired verdicts, or ranks for looks that share no prompt."""
    if state.design != "unpaired":
        return ESTIMATOR
    left = "; ".join(f"{vibe}: {why}" for vibe, why in state.left_out.items())
    by = ", ".join(f"{vibe} by {judge}" for vibe, judge in state.measured_by.items())
    return UNPAIRED + (f" Measured: {by}." if by else "") + (f" Not watched: {left}." if left else "")


def figure(state: State) -> str:
    """What the running figure is: a shift in verdict units, or a rank shift where no answer is paired."""
    return "rank shift" if state.design == "unpaired" else "shift"


def rows(state: State, watches: list[VibeWatch]) -> list[dict[str, Any]]:
    """A row per vibe as of the last look, gated vibes that moved first, then the rest as the panel lists them."""
    last = len(state.looks) - 1
    out = []
    for w in watches:
        now = w.looks[last]
        crossed = w.crossed
        since = crossed if crossed is not None else w.within  # the look its status was first said at
        link = _explorer(state, w, crossed if crossed is not None else last)
        margin = f"±{w.margin:g}" if w.gated else ("none (a rank)" if state.design == "unpaired" else "not gated (0)")
        out.append({"vibe": w.vibe, "margin": margin,
                    "status": status(w, last), "moved": crossed is not None, "gated": w.gated,
                    "since": "—" if since is None else f"look {since + 1} ({state.looks[since].name})",
                    "running": signed(now.running_mean), "interval": f"[{signed(now.low)}, {signed(now.high)}]",
                    "batch": signed(now.batch_mean),
                    "e_above": e_value(now.e_above), "e_below": e_value(now.e_below),
                    "e_within": e_value(now.e_within), "pairs": link})
    return sorted(out, key=lambda r: (not (r["moved"] and r["gated"]), not r["moved"]))


def _explorer(state: State, w: VibeWatch, look: int) -> str | None:
    """The pairs of one look in its explorer, filtered to the vibe and, once it moved, to the pairs that moved
    its way (the explorer's model A is the baseline: dir=1 where the baseline sits higher, the look lower)."""
    page = state.looks[look].explorer
    if page is None:
        return None
    way = "" if w.crossed is None else "&dir=" + ("-1" if w.above == w.crossed else "1")
    return f"{page}#vibe={quote(w.vibe, safe='')}{way}"


def headline(state: State, watches: list[VibeWatch]) -> str:
    """The verdict a reader needs first: which gated vibes moved, else that none did."""
    last = len(state.looks) - 1
    gated = [w for w in watches if w.gated]
    moved = [w for w in gated if w.crossed is not None]
    looks = f"{len(state.looks)} look{'s' if len(state.looks) != 1 else ''}"
    if moved:
        return (f"**{len(moved)} of {len(gated)} gated vibes moved beyond their margins**: "
                + "; ".join(f"{w.vibe} {status(w, last)} at look {(w.crossed or 0) + 1}" for w in moved)
                + f" ({looks}).")
    if gated:
        within = sum(w.within is not None for w in gated)
        return (f"All {len(gated)} gated vibes hold: none moved beyond its margin in {looks}; {within} of "
                f"{len(gated)} shown within it.")
    moved = [w for w in watches if w.crossed is not None]
    why = ("no pair, so no margin: a rank has none" if state.design == "unpaired"
           else "no gate is declared in the baseline spec's `gates`")
    if moved:
        return (f"**{len(moved)} of {len(watches)} vibes moved**: "
                + "; ".join(f"{w.vibe} {status(w, last)} at look {(w.crossed or 0) + 1} "
                            f"({state.looks[w.crossed or 0].name})" for w in moved) + f" ({looks}; {why}).")
    return f"No vibe moved in {looks} ({why}: any move is watched)."


def to_markdown(state: State, said: str, table: list[dict[str, Any]]) -> str:
    """The comment: `said` (the headline), then `table` (`rows`)."""
    last = state.looks[-1]
    lines = [f"## vibe monitor: {state.model} since `{state.baseline}`", "", said, "",
             f"Last look: {last.name}, {len(last.ids)} {last.unit}"
             + (f" ({last.only_look} of its prompts not in the baseline, left out)" if last.only_look else "")
             + f". Family: {state.claims} claims over {len(state.vibes)} vibes, each made at e ≥ "
               f"{e_value(state.threshold)} (α = {state.alpha:g}).", "",
             f"| vibe | margin | status | since | running {figure(state)} [always-valid 95%] | last batch | e above "
             "| e below "
             "| e within | pairs |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in table:
        pairs = f"[pairs]({r['pairs']})" if r["pairs"] else "—"
        name = f"**{r['vibe']}**" if r["moved"] else r["vibe"]
        lines.append(f"| {name} | {r['margin']} | {r['status']} | {r['since']} | {r['running']} {r['interval']} | "
                     f"{r['batch']} | {r['e_above']} | {r['e_below']} | {r['e_within']} | {pairs} |")
    lines += ["", estimator(state), ""]
    return "\n".join(lines)


def write(state: State, watches: list[VibeWatch], out: Path, stopped: str | None = None) -> None:
    """monitor.json, monitor.md and index.html in `out`, beside the state; `stopped`: why the call judged no
    further look (the looks shown are those judged before it)."""
    body = {"baseline": state.baseline, "model": state.model, "alpha": state.alpha, "claims": state.claims,
            "stopped": stopped,
            "threshold": state.threshold, "estimator": estimator(state), "design": state.design,
            "looks": [{"name": look.name, "source": look.source, "unit": look.unit, "units": len(look.ids),
                       "only_base": look.only_base, "only_look": look.only_look, "explorer": look.explorer}
                      for look in state.looks],
            "vibes": [asdict(w) for w in watches]}
    (out / "monitor.json").write_text(json.dumps(json_ready(body), indent=1) + "\n", encoding="utf-8")
    said, table = headline(state, watches), rows(state, watches)
    markdown = to_markdown(state, said, table)
    if stopped:
        markdown = markdown.replace("\n\n", f"\n\n> **Stopped:** {stopped}. The looks before it are judged and "
                                    "shown here.\n\n", 1)
    (out / "monitor.md").write_text(markdown, encoding="utf-8")
    _page(state, watches, out, said, table, stopped)


def _page(state: State, watches: list[VibeWatch], out: Path, said: str, table: list[dict[str, Any]],
          stopped: str | None) -> None:
    from markupsafe import Markup

    env = page_environment(out)
    charts = {w.vibe: Markup(_chart(state, w)) for w in watches}
    baseline = os.path.relpath(state.baseline, out.resolve())  # as a link from the page's folder
    page = env.get_template("monitor.html.j2").render(
        state=state, headline=_plain(said), rows=table, charts=charts, stopped=stopped, baseline=baseline,
        estimator=estimator(state), threshold=e_value(state.threshold), root=".", results=None, figure=figure(state))
    (out / "index.html").write_text(page, encoding="utf-8")


def _plain(markdown: str) -> str:
    return markdown.replace("**", "").replace("`", "")


def _chart(state: State, w: VibeWatch) -> str:
    """One vibe's running shift over the looks with its always-valid interval as a band, each batch's own mean
    as a dot, the margins as dashed lines and the look at which it moved as a red rule, as inline SVG."""
    import altair as alt
    import pandas as pd
    import vl_convert as vlc

    frame = pd.DataFrame([{"look": k + 1, "name": state.looks[k].name, "running": look.running_mean,
                           "low": look.low, "high": look.high, "batch": look.batch_mean}
                          for k, look in enumerate(w.looks)])
    x = alt.X("name:N", sort=None, title="look (its file or run folder)", axis=alt.Axis(labelAngle=-45))
    y = alt.Scale(domain=[-1, 1])
    band = alt.Chart(frame).mark_area(opacity=0.25, color="#4C78A8").encode(
        x=x, y=alt.Y("low:Q", scale=y, title="rank shift" if state.design == "unpaired" else "shift, head − base"),
        y2="high:Q")
    line = alt.Chart(frame).mark_line(color="#4C78A8", point=True).encode(
        x=x, y=alt.Y("running:Q", scale=y), tooltip=["name", "running", "low", "high", "batch"])
    dots = alt.Chart(frame).mark_point(color="#F58518", filled=True, size=20).encode(x=x, y=alt.Y("batch:Q", scale=y))
    layers = [band, line, dots]
    if w.margin:
        edges = pd.DataFrame({"y": [w.margin, -w.margin]})
        layers.append(alt.Chart(edges).mark_rule(strokeDash=[4, 3], color="#666666").encode(y="y:Q"))
    if w.crossed is not None:
        crossed = pd.DataFrame({"name": [state.looks[w.crossed].name]})
        layers.append(alt.Chart(crossed).mark_rule(color="#d62728").encode(x=alt.X("name:N", sort=None)))
    chart = alt.layer(*layers).properties(width=320, height=140, title=w.vibe)  # small multiples, a grid
    svg: str = vlc.vegalite_to_svg(chart.to_dict())
    return svg

