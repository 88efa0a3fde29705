"""`vibe monitor BASE_RUN LOOK...`: watch one model slot's vibes over a sequence of later runs or log batches,
with claims that stay valid however often, and for however long, the monitor is looked at.

Each look is a run folder, or a data file in the baseline dataset's format (run here with the baseline's spec,
its dataset swapped for the file). Its answers are paired with the baseline's answers to the same prompts (same
id and text, as `vibe compare` pairs them: the baseline's reading of the same prompts, not of a prompt
distribution), judged by the baseline's panel, and each unit's verdict (a prompt's, or a conversation's mean
over its turns) joins the vibe's stream (`engine.drift.anytime`).

The family is every claim the monitor can make: for each vibe the panel measures, "moved above +margin" and
"moved below −margin" (margin: the baseline spec's `gates` max_shift, 0 for a vibe it does not gate: "moved at
all"), and for a gated vibe "stayed within ±margin" (both one-sided e-processes past the threshold). A claim is
made when its e-value reaches (claims in the family)/α, so by Ville's inequality and a union bound the chance
that any false claim is ever made, at any look, is at most α.

State is one small file, `monitor-state.json` in the output folder: the units' values of every look, written
after each look (atomically). A look already in it is not judged again, and every figure is recomputed from it,
so a monitor stopped midway and started again gives the answer an uninterrupted one gives.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from engine.datasets.items import DatasetError, Item
from engine.datasets.load import load_items
from engine.datasets.sessions import SessionRows
from engine.drift.anytime import Look, track
from engine.drift.compare import CompareError, Run, slot_verdicts
from engine.drift.unpaired import AnswerMeasures, answer_measures, rank_shifts, tie_breaks, unit_values
from engine.formats import dataset_format

ALPHA = 0.05
STATE = "monitor-state.json"
STATE_VERSION = 1


@dataclass
class Batch:
    """One look's units as the state keeps them: every figure of the monitor is recomputed from these."""

    name: str  # the look's name (its folder's or file's), unique in the monitor
    source: str  # the run folder or data file it was read from
    unit: str  # "prompts", or "conversations" (each the mean of its turns' verdicts)
    ids: list[str]  # the units, in the order they are bet on (sorted)
    values: dict[str, list[float | None]]  # vibe -> each unit's shift, head minus base (None: no verdict)
    only_base: int = 0  # the baseline's prompts this look did not answer (or not whole conversations)
    only_look: int = 0  # this look's prompts the baseline did not ask: left out
    explorer: str | None = None  # the look's pairs in the explorer, from the output folder
    measured: dict[str, list[float | None]] = field(default_factory=dict)  # unpaired: vibe -> each unit's value


@dataclass
class State:
    """The monitor: its baseline, model slot and family, fixed at the first look, and every look so far."""

    baseline: str
    model: str
    vibes: list[str]
    margins: dict[str, float]  # vibe -> margin (0: not gated, "moved at all")
    alpha: float = ALPHA
    looks: list[Batch] = field(default_factory=list)
    version: int = STATE_VERSION
    # "paired": each look's answers paired with the baseline's to the same prompts; "unpaired": looks that share
    # no prompt (a day's logs), each unit ranked among every unit before it (`engine.drift.unpaired`)
    design: str = "paired"
    reference: dict[str, list[float | None]] = field(default_factory=dict)  # unpaired: the baseline's unit values
    left_out: dict[str, str] = field(default_factory=dict)  # unpaired: vibes no judge measures on one answer
    measured_by: dict[str, str] = field(default_factory=dict)  # unpaired: vibe -> the judge whose measure ranks it

    @property
    def gated(self) -> list[str]:
        """The vibes the baseline spec gates: those with a margin."""
        return [v for v in self.vibes if self.margins[v] > 0]

    @property
    def claims(self) -> int:
        """Claims in the family: above and below for every vibe, within for every gated one."""
        return 2 * len(self.vibes) + len(self.gated)

    @property
    def threshold(self) -> float:
        """The e-value at which a claim is made."""
        return self.claims / self.alpha


@dataclass(frozen=True)
class VibeWatch:
    """One vibe over every look: its figures per look and the looks at which each claim was first made."""

    vibe: str
    margin: float
    gated: bool
    looks: list[Look]
    above: int | None  # the index of the look at which "moved above +margin" was first made
    below: int | None
    within: int | None  # gated vibes: the first look at which "stayed within ±margin" was made

    @property
    def crossed(self) -> int | None:
        """The first look at which the vibe moved beyond its margin, on either side."""
        seen = [k for k in (self.above, self.below) if k is not None]
        return min(seen) if seen else None


class MonitorError(CompareError):
    """A monitor that cannot go on, and why (a mismatched baseline, panel or look)."""


def read_state(out: Path) -> State | None:
    path = out / STATE
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        looks = [Batch(**look) for look in raw.pop("looks")]
        state = State(**raw, looks=looks)
    except (ValueError, TypeError, KeyError) as exc:
        raise MonitorError(f"{path}: not a monitor state this vibe can read ({exc}); start a new monitor with "
                           "another --out") from None
    if state.version != STATE_VERSION:
        raise MonitorError(f"{path}: state version {state.version}, this vibe reads {STATE_VERSION}")
    return state


def write_state(state: State, out: Path) -> None:
    """The state, replaced whole (a crash leaves the previous look's state, never half of this one's)."""
    out.mkdir(parents=True, exist_ok=True)
    partial = out / f"{STATE}.partial"
    partial.write_text(json.dumps(asdict(state), indent=1, allow_nan=False) + "\n", encoding="utf-8")
    os.replace(partial, out / STATE)


def start(base: Run, base_dir: Path, model: str | None, state: State | None, unpaired: bool = False) -> State:
    """The monitor's state: the one found in the output folder (checked against this baseline and slot), or a new
    one whose family is the baseline panel's vibes and gates (`unpaired`: the vibes a judge measures on one answer,
    each watched for any move, with the baseline's units as the first reference)."""
    if unpaired:
        return _start_unpaired(base, base_dir, model, state)
    slots = list(base.answers)
    if model is None:
        if state is not None:
            model = state.model
        elif len(slots) == 1:
            model = slots[0]
        else:
            raise MonitorError(f"{base_dir}: the baseline answered with {len(slots)} model slots "
                               f"({', '.join(slots) or 'none'}); name the one to watch with --model")
    if model not in slots:
        raise MonitorError(f"--model {model}: the baseline {base_dir} has no answers of that slot (it has "
                           f"{', '.join(slots) or 'none'})")
    vibes = [v["name"] for v in base.vibe_entries()]
    gates = base.spec.gates or {}
    unknown = [g for g in gates if g not in vibes]
    if unknown:
        raise MonitorError(f"gates: {', '.join(unknown)} name no vibe the baseline's panel measures "
                           f"({', '.join(vibes)})")
    fresh = State(str(base_dir.resolve()), model, vibes, {v: float(gates.get(v, 0.0)) for v in vibes})
    return _kept(fresh, state)


def _kept(fresh: State, state: State | None) -> State:
    """`state` where it was started as `fresh` would be, else the reason it cannot go on; `fresh` if none."""
    if state is None:
        return fresh
    for what, now, then in (("baseline", fresh.baseline, state.baseline), ("model slot", fresh.model, state.model),
                            ("vibes", fresh.vibes, state.vibes), ("margins", fresh.margins, state.margins),
                            ("design", fresh.design, state.design)):
        if now != then:
            raise MonitorError(f"this monitor's state was started with {what} {then!r}, and now it is {now!r}: "
                               "a family that changes midway loses its guarantee; start a new monitor with another "
                               "--out")
    return state


def _start_unpaired(base: Run, base_dir: Path, model: str | None, state: State | None) -> State:
    slots = sorted({m for item in base.items.values() for m in item.outputs})
    if model is None:
        model = state.model if state is not None else (slots[0] if len(slots) == 1 else None)
        if model is None:
            raise MonitorError(f"{base_dir}: the baseline holds answers of {len(slots)} models "
                               f"({', '.join(slots) or 'none'}); name the one to watch with --model")
    if model not in slots:
        raise MonitorError(f"--model {model}: the baseline {base_dir} has no answers of it (it has "
                           f"{', '.join(slots) or 'none'})")
    measures = panel_measures(base)
    vibes = [v for v in (e["name"] for e in base.vibe_entries()) if v in measures.by_vibe]
    if not vibes:
        raise MonitorError(f"{base_dir}: no vibe of the panel is measured on one answer alone, so looks that share "
                           "no prompt with the baseline cannot be watched (" + "; ".join(
                               f"{v}: {why}" for v, why in measures.left_out.items()) + ")")
    fresh = State(str(base_dir.resolve()), model, vibes, dict.fromkeys(vibes, 0.0), design="unpaired",
                  left_out=measures.left_out, measured_by={v: measures.judge[v] for v in vibes})
    if state is None:  # the baseline's units are measured once, at the first look; a restart reads them back
        _, _, reference = unit_values(list(base.items.values()), model, measures)
        fresh.reference = {v: reference[v] for v in vibes}
    return _kept(fresh, state)


def _read(base: Run, source: Path, model: str) -> list[Item]:
    """`model`'s items of the baseline panel's dataset, read from `source` instead of its own files (a look holds
    the watched model's answers, not every model's)."""
    name, _ = base.panel()
    dataset = base.spec.datasets[base.spec.analyses[name].dataset]
    try:
        return load_items(replace(dataset, source=replace(dataset.source, paths=(source,), urls=(), hub=None,
                                                          hub_files=()),
                                  outputs={m: c for m, c in dataset.outputs.items() if m == model}))
    except DatasetError as exc:
        raise MonitorError(str(exc)) from None


def reads_sessions(base: Run) -> bool:
    """Whether the baseline panel's dataset is agent sessions (an agent log format), whose looks are a day's
    folder of logs and share no prompt with the baseline."""
    name, _ = base.panel()
    return isinstance(dataset_format(base.spec.datasets[base.spec.analyses[name].dataset].format), SessionRows)


def panel_measures(base: Run) -> AnswerMeasures:
    """How the baseline panel's judges measure each of its vibes on one answer (`unpaired.answer_measures`)."""
    by_name = {v.name: v for v in (*base.spec.vibes, *base.discovered)}
    _, judges = base.panel()
    return answer_measures([by_name[e["name"]] for e in base.vibe_entries() if e["name"] in by_name],
                           [base.spec.judges[j] for j in judges if j in base.spec.judges])


def measure_look(state: State, base: Run, name: str, source: Path) -> Batch:
    """One look that shares no prompt with the baseline (a run folder, or data the baseline's dataset reads: a
    day's folder of logs): its units' values on each vibe, and each unit's rank shift among every unit before it
    (the baseline's, every earlier look's, this look's before it). Nothing of it is written but those values."""
    items = (list(Run.open(source).items.values()) if (source / "manifest.json").is_file()
             else _read(base, source, state.model))
    ids, unit, values = unit_values(items, state.model, panel_measures(base))
    if not ids:
        raise MonitorError(f"{source}: no answer of {state.model!r} (the look holds "
                           f"{', '.join(sorted({m for i in items for m in i.outputs})) or 'none'})")
    shifts: dict[str, list[float | None]] = {}
    for vibe in state.vibes:
        before = [*state.reference[vibe], *(v for look in state.looks for v in look.measured[vibe])]
        shifts[vibe] = rank_shifts(before, values[vibe], tie_breaks([f"{vibe}|{name}|{i}" for i in ids]))
    return Batch(name, str(source), unit, ids, shifts, measured={v: values[v] for v in state.vibes})


def unit_batch(name: str, source: Path, ids: list[str], verdicts: np.ndarray, clusters: list[str] | None,
               vibes: list[str]) -> Batch:
    """A look's units from the panel's ν on its shared prompts (+1: base higher): each prompt's −ν, or each
    conversation's mean of −ν over its turns with a verdict; sorted by unit id, the order they are bet on."""
    shift = -np.asarray(verdicts, dtype=float)
    units = clusters if clusters is not None else ids
    order = sorted(set(units))
    rows = {u: k for k, u in enumerate(order)}
    index = np.array([rows[u] for u in units])
    values: dict[str, list[float | None]] = {}
    for j, vibe in enumerate(vibes):
        column = shift[:, j]
        judged = np.isfinite(column)
        sums = np.bincount(index[judged], weights=column[judged], minlength=len(order))
        counts = np.bincount(index[judged], minlength=len(order))
        values[vibe] = [float(s / c) if c else None for s, c in zip(sums, counts, strict=True)]
    return Batch(name, str(source), "conversations" if clusters is not None else "prompts", order, values)


def watch(state: State) -> list[VibeWatch]:
    """Every vibe's figures at every look (`anytime.track`), and the first look at which each claim was made."""
    out = []
    gated = set(state.gated)
    for vibe in state.vibes:
        batches = [np.array([np.nan if v is None else v for v in look.values[vibe]], dtype=float)
                   for look in state.looks]
        looks = track(batches, state.margins[vibe], state.threshold)
        out.append(VibeWatch(vibe, state.margins[vibe], vibe in gated, looks,
                             _first(looks, state.threshold, "e_above"), _first(looks, state.threshold, "e_below"),
                             _first(looks, state.threshold, "e_within") if vibe in gated else None))
    return out


def _first(looks: list[Look], threshold: float, what: str) -> int | None:
    return next((k for k, look in enumerate(looks) if (getattr(look, what) or 0.0) >= threshold), None)


def status(w: VibeWatch, look: int) -> str:
    """What the monitor says of one vibe as of look `look` (0-based)."""
    crossed = w.crossed
    if crossed is not None and crossed <= look:
        up = w.above == crossed
        if not w.gated:  # margin 0: moved at all
            return f"moved {'up' if up else 'down'} (not gated)"
        return f"moved {'above +' if up else 'below −'}{w.margin:g}"
    if w.within is not None and w.within <= look:
        return f"within ±{w.margin:g}"
    return "watching"


def e_value(x: float | None) -> str:
    """An e-value for people: a whole number above 10, two significant digits below."""
    if x is None:
        return "—"
    if not math.isfinite(x) or x >= 1e6:
        return f"{x:.1e}"
    return f"{x:,.0f}" if x >= 10 else f"{x:.2g}"


def look_line(state: State, watches: list[VibeWatch], k: int) -> str:
    """The console's line for look `k`: its units, and every vibe that moved (or stayed within) by then."""
    look = state.looks[k]
    n = len(look.ids)
    moved = [f"{w.vibe} {status(w, k)} (look {w.crossed + 1}, e = {e_value(_crossing_e(w))})"
             for w in watches if w.crossed is not None and w.crossed <= k]
    within = sum(w.within is not None and w.within <= k and (w.crossed is None or w.crossed > k) for w in watches)
    said = "; ".join(moved) if moved else "no vibe moved beyond its margin"
    return (f"look {k + 1} {look.name}: {n} {look.unit if n != 1 else look.unit[:-1]}; {said}"
            + (f"; {within} of {len(state.gated)} gated vibes shown within" if state.gated else "")
            + f" (claims made at e ≥ {e_value(state.threshold)})")


def _crossing_e(w: VibeWatch) -> float:
    look = w.looks[w.crossed or 0]
    return look.e_above if w.above == w.crossed else look.e_below


def gate_broken(state: State, watches: list[VibeWatch]) -> list[str]:
    """A line per gated vibe that has moved beyond its margin by the last look: a crossed gate stays crossed. An
    unpaired monitor holds no margin (a rank has none): every vibe that moved at all."""
    return [f"{state.model} · {w.vibe}: {status(w, len(state.looks) - 1)} at look {w.crossed + 1} "
            f"({state.looks[w.crossed].name})" for w in watches
            if (w.gated or state.design == "unpaired") and w.crossed is not None]


def judge_look(state: State, base: Run, head_dir: Path, name: str, source: Path, out: Path, cache: Path,
               quiet: bool) -> Batch:
    """One look: the run at `head_dir` paired with the baseline on shared prompts and judged by the baseline's
    panel, in out/looks/<name>/judged/ (its pages too, so each vibe's pairs are one link away)."""
    head = Run.open(head_dir)
    if state.model not in head.answers:
        raise MonitorError(f"{source}: no answers of model slot {state.model!r} (it has "
                           f"{', '.join(head.answers) or 'none'})")
    entries = [v for v in base.vibe_entries() if v["name"] in state.vibes]
    folder = out / "looks" / name / "judged"
    judged = slot_verdicts(base, head, base, state.model, entries, folder, cache, quiet=quiet, report=True)
    assert judged is not None  # judged, not only planned
    batch = unit_batch(name, source, judged.ids, judged.verdicts, judged.clusters, state.vibes)
    batch.only_base, batch.only_look = judged.only_base, judged.only_head
    batch.explorer = None if judged.explorer is None else str(judged.explorer.relative_to(out))
    return batch


def batch_run(base: Run, data: Path, folder: Path, cache: Path, quiet: bool) -> Path:
    """A data file run as the baseline's spec would run it in place of the panel's dataset (only the panel's
    analysis and dataset kept), in `folder`; the run folder is returned."""
    from engine.pipeline import run_spec

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "look.yaml"
    path.write_text(json.dumps(_batch_spec(base, data), indent=1, ensure_ascii=False) + "\n",
                    encoding="utf-8")  # JSON is YAML
    run_spec(path, folder / "run", cache, quiet=quiet, report=False)
    return folder / "run"


def _batch_spec(base: Run, data: Path) -> dict[str, Any]:
    """The baseline's spec document with its panel analysis alone, reading `data` as that analysis's dataset."""
    from engine.execute.snapshot import read_spec_document

    kept = read_spec_document(base.folder)
    if kept is None:
        raise MonitorError(f"{base.folder}: the run keeps no copy of its spec (spec.json)")
    document = kept[0]
    name, _ = base.panel()
    analysis = dict(document["analyses"][name])
    dataset = dict(document["datasets"][analysis["dataset"]])
    where = ("path", "paths", "hub", "hub_files")  # how the baseline found its file; the batch is this one
    dataset["source"] = {**{k: v for k, v in dataset.get("source", {}).items() if k not in where},
                         "path": str(data.resolve())}
    return {**document, "name": f"{document.get('name', 'monitor')}-look",
            "datasets": {analysis["dataset"]: dataset}, "analyses": {name: analysis}}
