"""What `vibe compare` writes: compare.json (every figure), compare.md (the pull-request comment) and
index.html (the same table as a page), and the exit status a gate sets."""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from engine.drift.compare import GoverningGate, Run, SlotComparison
from engine.drift.people import flagged_in
from engine.drift.shift import ALPHA, Shift
from engine.judges.kinds import kind_of

if TYPE_CHECKING:
    from jinja2 import Environment
    from markupsafe import Markup

MARKER = "<!-- vibe-compare -->"  # the GitHub Action finds and updates its own comment by this first line
ESTIMATOR = ("shift = head minus base, in verdict units (the panel's verdict per prompt: −1, 0 or +1), the mean "
             "over shared prompts with Tango's 95% score interval for a paired difference of proportions; moved: the "
             "exact two-sided sign test, Holm over each model slot's vibes; gates: beyond the margin by Tango's score "
             "test on both sides with exact unconditional p-values, the smaller doubled (Holm over every gated vibe of "
             "every slot), within it by TOST "
             f"on the same statistic, at α = {ALPHA}; no shift is a claim about the vibe as this panel measures it")
TIED_MOSTLY = 0.5  # above this share of tied prompts a pass says how little of the data it speaks for


def gate_status(comparisons: list[SlotComparison], inconclusive_fails: bool) -> tuple[bool, list[str]]:
    """Whether every gate holds, and a line per gate that does not."""
    lines = []
    for c in comparisons:
        for s in c.shifts:
            if s.verdict == "fail" or (s.verdict == "inconclusive" and inconclusive_fails):
                lines.append(f"{c.model} · {s.vibe}: {_verdict(s)}")
    return not lines, lines


def signed(x: float | None) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x:+.3f}"


def _p(x: float | None) -> str:
    return "—" if x is None else f"{x:.2g}"


def _verdict(s: Shift) -> str:
    if s.verdict == "fail":
        return f"FAIL: shift {signed(s.shift)} is beyond ±{s.margin:g} (p = {_p(s.p_beyond_adjusted)}, Holm)"
    if s.verdict == "pass":
        if s.tied > TIED_MOSTLY:
            return (f"pass: within ±{s.margin:g} as this panel sees it: {s.tied:.0%} of {s.unit} tied (TOST p = "
                    f"{_p(s.p_equivalent)}; {_detects(s)})")
        return f"pass: within ±{s.margin:g} (TOST p = {_p(s.p_equivalent)}; {_seen(s)})"
    if s.verdict == "inconclusive":
        need = f"about {s.prompts_needed} {s.unit} would decide it" if s.prompts_needed else s.undecidable
        return f"inconclusive: neither beyond nor within ±{s.margin:g} at {s.n} {s.unit}; {need} ({_seen(s)})"
    return ""


def _seen(s: Shift) -> str:
    """What a pass or an inconclusive gate rests on: the share of tied prompts and the shift the data could
    have shown."""
    return f"{s.tied:.0%} tied; {_detects(s)}" if s.n else "no prompt"


def _detects(s: Shift) -> str:
    if s.detectable is not None:
        return f"a shift of ±{s.detectable:.3f} would have been seen with 80% power"
    if s.unit == "conversations":
        return "no detectable size: a conversation's mean verdict is not −1, 0 or +1, which that formula assumes"
    return "no prompt moved, so no shift size can be said to be detectable"


def moved(s: Shift) -> bool:
    """The vibe moved: its Holm-adjusted sign-test p is under α (bold in the table, named in the verdict), and
    it is not a rate that moved with the answers' length alone (`Shift.with_length`), which the table says
    apart."""
    return s.p_moved_adjusted is not None and s.p_moved_adjusted < ALPHA and not s.with_length


def moved_with_length(s: Shift) -> bool:
    """A rate that moved while what it counts did not: the answers' length moved it."""
    return s.p_moved_adjusted is not None and s.p_moved_adjusted < ALPHA and s.with_length


def pairs_link(c: SlotComparison, s: Shift, served_at: str = "") -> str | None:
    """Where a moved vibe's pairs are: the slot's explorer filtered to the vibe and to the pairs that moved its
    way (the explorer's model A is the base: dir=1 where the base sits higher), under `served_at` (the
    comparison folder's address) or relative to that folder."""
    if c.explorer is None or not moved(s):
        return None
    way = "-1" if s.shift > 0 else "1"
    return f"{served_at.rstrip('/') + '/' if served_at else ''}{c.explorer}#vibe={quote(s.vibe, safe='')}&dir={way}"


def _rows(c: SlotComparison, served_at: str = "") -> list[dict[str, Any]]:
    """One comparison's table as both the Markdown and the page show it: largest shift first, each figure
    formatted, moved (Holm-adjusted p < α) marked and linked to its pairs."""
    return [{"vibe": s.vibe, "moved": moved(s), "pairs": pairs_link(c, s, served_at),
             "shift": signed(s.shift), "interval": f"[{signed(s.low)}, {signed(s.high)}]",
             "p": _p(s.p_moved_adjusted), "detects": "—" if s.detectable is None else f"±{s.detectable:.3f}",
             "metric": _metric(s),
             "gate": _verdict(s) or "—"} for s in sorted(c.shifts, key=lambda s: -abs(s.shift))]


def _people_rows(c: SlotComparison) -> list[dict[str, str]]:
    """The slot's vibes against people's labels of its pairs, as both the Markdown and the page show them."""
    rows = []
    for p in c.people:
        a, k = p.agreement, p.corrected
        rows.append({"vibe": p.vibe, "labels": str(a.labels),
                     "agreement": "—" if a.agreement is None else
                     f"{a.agreement:.0%} [{a.agreement_low:.0%}, {a.agreement_high:.0%}]",
                     "kappa": "—" if a.kappa is None else f"{a.kappa:.2f} [{_num(a.kappa_low)}, {_num(a.kappa_high)}]",
                     "corrected": "—" if k is None else f"{signed(k.estimate)} [{signed(k.low)}, {signed(k.high)}] "
                                                         f"(λ {k.weight:.2f})",
                     "labels_only": "—" if k is None else
                     f"{signed(k.labels_only)} [{signed(k.labels_low)}, {signed(k.labels_high)}]",
                     "panel": "—" if k is None else signed(k.panel)})
    return rows


PEOPLE = ("People's labels of these pairs (a: the base's answer, b: the head's). Agreement: the share of labels the "
          "panel's verdict equals, with Wilson's 95% interval, continuity-corrected (the betting interval over "
          "prompts where a prompt holds several labels), and Cohen's κ, with a 95% interval from 1,000 bootstrap "
          "rounds over prompts (conversations), given from 50 of them. People's shift: the mean of people's "
          "verdicts (+1: the head higher) over every shared prompt, estimated by prediction-powered inference "
          "(PPI++: the labels, corrected by the panel's verdicts on the prompts nobody labelled, weighted by λ), "
          "with a 95% t-interval, beside the labelled prompts alone and the panel's own mean over the same "
          "prompts. Valid where the labelled prompts are a random sample. The gates read the panel's shift, not "
          "people's.")


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def _metric(s: Shift) -> str:
    """A metric vibe's own paired difference with its interval: what the verdicts' ties hide (an answer 4%
    longer on every prompt is a tie for a 5% tolerance, and a difference here)."""
    if s.metric is None or s.metric_difference is None:
        return "—"
    said = f"{s.metric} {s.metric_difference:+.3g} [{_g(s.metric_low)}, {_g(s.metric_high)}]"
    if moved_with_length(s):
        said += (f"; moved with length only: what it counts changed by {s.count_difference:+.3g} a "
                 f"{s.unit.rstrip('s')} (sign test p {_p(s.p_count)}), so the rate moved because the answers' "
                 "length did")
    return said


def _g(x: float | None) -> str:
    """A metric's difference as people read numbers: three significant digits, never an exponent (what rounds
    below a thousandth reads as ±0.000)."""
    if x is None or not math.isfinite(x):
        return "—"
    size = abs(x)
    return f"{x:+,.0f}" if size >= 100 else f"{x:+.3g}" if size >= 0.001 else f"{x:+.3f}"


def verdict_line(comparisons: list[SlotComparison]) -> str:
    """What the comparison concludes, first: the gates that failed (or that all N pass, or are undecided), else
    how many vibes moved."""
    gated = [(c.model, s) for c in comparisons for s in c.shifts if s.verdict]
    failed = [f"{model} · {s.vibe}" for model, s in gated if s.verdict == "fail"]
    undecided = [f"{model} · {s.vibe}" for model, s in gated if s.verdict == "inconclusive"]
    shifted = [f"{c.model} · {s.vibe}" for c in comparisons for s in c.shifts if moved(s)]
    if failed:
        line = f"**{len(failed)} of {len(gated)} gates fail**: {', '.join(failed)}."
    elif undecided:
        line = f"**No gate fails; {len(undecided)} of {len(gated)} cannot tell yet**: {', '.join(undecided)}."
    elif gated:
        line = f"**All {len(gated)} gates pass.**"
    else:
        line = "No gates."
    return line + (f" Moved: {', '.join(shifted)}." if shifted else " No vibe moved.")


def unchanged(c: SlotComparison) -> bool:
    """A slot whose every vibe tied on every shared prompt and whose measured values did not move (its answers
    alike as the panel reads them), with no gate failing or undecided: one line, not a table of zeros."""
    return bool(c.shifts) and all(s.n and s.tied == 1.0 and not s.metric_difference and s.verdict in ("", "pass")
                                  for s in c.shifts)


def judged_by(panel: Run) -> str:
    """Who produced the verdicts: the panel's run and each judge with its kind."""
    judges = ", ".join(kind_of(panel.spec.judges[name]).describe(panel.spec.judges[name], "vibe")
                       for name in panel.panel()[1])
    return f"Judged by the panel of `{panel.folder}`: {judges}"


def to_markdown(comparisons: list[SlotComparison], base: str, head: str, panel: Run, below: list[str],
                served_at: str = "") -> str:
    """The pull-request comment: its verdict, each slot's table (one line for a slot where nothing differs),
    then how the figures were made and `below` (the flags and notes under the tables). `served_at`: the
    comparison folder's address, which the links to each moved vibe's pairs start from (else they are relative
    to the folder)."""
    lines = [MARKER, f"## vibe compare: {base} → {head}", "", verdict_line(comparisons), ""]
    for c in comparisons:
        if unchanged(c):
            lines += [f"### {c.model}: no vibe differs: every one of its {len(c.shifts)} vibes tied on all "
                      f"{c.shared} shared prompts" + ("; its gates pass" if any(s.verdict for s in c.shifts) else ""),
                      ""]
            continue
        lines += [f"### {c.model}: {c.shared} shared prompts"
                  + (f" (the turns of {c.conversations} conversations)" if c.conversations else "")
                  + (f" ({c.only_base} only in base, {c.only_head} only in head, left out)"
                     if c.only_base or c.only_head else ""), "",
                  "| vibe | shift | 95% interval | p (Holm) | detects (80% power) | metric, head − base (95% CI) "
                  "| gate |",
                  "|---|---|---|---|---|---|---|"]
        for r in _rows(c, served_at):
            name = f"**{r['vibe']}**" if r["moved"] else r["vibe"]
            name = f"[{name}]({r['pairs']})" if r["pairs"] else name
            lines.append(f"| {name} | {r['shift']} | {r['interval']} | "
                         f"{r['p']} | {r['detects']} | {r['metric']} | {r['gate']} |")
        lines.append("")
        if c.people:
            lines += [f"People: {PEOPLE}", "", "| vibe | labels | panel agrees (95%) | κ (95%) | people's shift, PPI++ "
                      "(95%) | labels alone (95%) | panel's mean |", "|---|---|---|---|---|---|---|"]
            lines += [f"| {r['vibe']} | {r['labels']} | {r['agreement']} | {r['kappa']} | {r['corrected']} | "
                      f"{r['labels_only']} | {r['panel']} |" for r in _people_rows(c)]
            lines.append("")
    lines += [f"{judged_by(panel)}. {panel.panel_note + ' ' if panel.panel_note else ''}{ESTIMATOR}.", ""]
    for note in below:
        lines += [note, ""]
    return "\n".join(lines[:-1]) + "\n"


def flags(panel: Run) -> list[str]:
    """A line for every vibe whose panel people's labels flagged in the judging run (its `validation`)."""
    return [f"People flagged the panel's reading of {vibe}: {why}." for vibe, why in
            flagged_in(panel.folder, panel.panel()[0]).items()]


def notes(comparisons: list[SlotComparison], margins: dict[str, GoverningGate]) -> list[str]:
    """What the tables' marks mean and which margin governs each gate (`margins`, every slot's), under the
    tables of both the comment and the page."""
    gates = (["Gates: " + "; ".join(f"{name} ±{g.margin:g}, {g.source} margin" for name, g in margins.items())
              + ". Where both runs' specs gate a vibe, the stricter margin governs."] if margins else [])
    conversations = [CONVERSATIONS] if any(s.unit == "conversations" for c in comparisons for s in c.shifts) else []
    return [*gates, "Bold: moved (Holm-adjusted p < 0.05), linked to the pairs that moved its way. Positive: the "
                    "head sits higher on the vibe than the base. "
                    "Detects: the shift the sign test sees with 80% power at Holm's first step (α over the slot's "
                    "vibes), at the observed share of tied prompts.", *conversations]


CONVERSATIONS = ("The prompts are turns of conversations, judged with the earlier turns each run's model saw, so the "
                 "unit is the conversation: its shift is the mean over its turns, the interval a betting interval over "
                 "conversations (Waudby-Smith & Ramdas 2024; it holds its level at any number of conversations), "
                 "moved the sign test over their means, and the gates one-sided t-tests of the mean against the margin "
                 "(TOST within it), every n a count of conversations.")


def write(comparisons: list[SlotComparison], gates: dict[str, GoverningGate], base: Path, head: Path, panel: Run,
          out: Path, names: tuple[str, str] | None = None, served_at: str = "") -> Path:
    """compare.json, compare.md and index.html in `out` (`gates`: the margins that govern every slot); `names`: how
    the heading names the two sides (the
    commits, where they are runs of a spec at two revisions), else their run folders; `served_at`: where `out`
    will be served, for the comment's links to pairs."""
    out.mkdir(parents=True, exist_ok=True)
    names = names or (f"`{base}`", f"`{head}`")
    body = {"base": str(base), "head": str(head), "panel": str(panel.folder), "judged_by": judged_by(panel),
            "estimator": ESTIMATOR, "gates": {name: asdict(g) for name, g in gates.items()},
            "comparisons": [asdict(c) for c in comparisons]}
    (out / "compare.json").write_text(json.dumps(json_ready(body), indent=1) + "\n", encoding="utf-8")
    below = [*flags(panel), *notes(comparisons, gates)]  # the judging run's validation files are read once
    (out / "compare.md").write_text(to_markdown(comparisons, *names, panel, below, served_at), encoding="utf-8")
    _page(comparisons, names, panel, out, below)
    return out


def _page(comparisons: list[SlotComparison], names: tuple[str, str], panel: Run, out: Path,
          below: list[str]) -> None:
    """index.html in the run folders' style (their stylesheet, copied into assets/): the comment's content, its
    `code` spans as code and its **bold** as bold."""
    from engine.report.render import use_kinds

    env = page_environment(out)
    env.filters["inline"] = inline_markdown
    tables = [{"model": c.model, "shared": c.shared, "conversations": c.conversations, "only_base": c.only_base,
               "only_head": c.only_head, "rows": _rows(c), "people": _people_rows(c), "unchanged": unchanged(c),
               "vibes": len(c.shifts)} for c in comparisons]
    use_kinds(env, [panel.spec.judges[name].kind for name in panel.panel()[1]], out / "assets")
    page = env.get_template("compare.html.j2").render(
        comparisons=tables, base=names[0], head=names[1], verdict=verdict_line(comparisons),
        judged_by=judged_by(panel), estimator=ESTIMATOR, root=".", notes=below, panel_note=panel.panel_note,
        people_note=PEOPLE, results=None)
    (out / "index.html").write_text(page, encoding="utf-8")


def inline_markdown(text: str) -> Markup:
    """`code` and **bold** of a line of the comment as HTML, everything else escaped."""
    import re

    from markupsafe import Markup, escape

    html = str(escape(text))
    html = re.sub(r"`([^`]+)`", r"<code>\1</code>", html)
    return Markup(re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", html))


def page_environment(out: Path) -> Environment:
    """The templates of the drift pages (this package's, then the report's shared ones), with the run folders'
    stylesheet copied into out/assets/."""
    from jinja2 import ChoiceLoader, Environment, FileSystemLoader, select_autoescape

    from engine.report.render import TEMPLATES, use_kinds

    (out / "assets").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(TEMPLATES / "style.css", out / "assets" / "style.css")
    env = Environment(loader=ChoiceLoader([FileSystemLoader([Path(__file__).parent / "templates", TEMPLATES])]),
                      autoescape=select_autoescape(["html", "j2"]), trim_blocks=True, lstrip_blocks=True)
    use_kinds(env, [], out / "assets")  # the shared page links assets/kinds.css: these pages show no verdict badge
    return env


def json_ready(value: object) -> object:
    """`value` with every NaN or infinity as null (JSON has neither)."""
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    return None if isinstance(value, float) and not math.isfinite(value) else value
