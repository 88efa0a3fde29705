"""`vibe compare BASE_RUN HEAD_RUN`: did a model slot's behaviour move between two runs?

Each run folder is read on its own (its spec and prompts are kept in it, `engine.execute.snapshot`). For every
model slot both runs answered with, the answers to the prompts both runs asked (same id, same text) become a
pair, base's answer first; prompts only one run has are counted and left out. The pairs are judged by one
run's panel through the ordinary pipeline (a spec of two recorded models is written into the output folder, so
cached verdicts are reused and new judgments are planned and priced like any run's), and each vibe's shift is
tested (`engine.drift.shift`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.datasets.items import Item
from engine.discover.stage import read_discovered, vibe_entry
from engine.drift.conversations import FILE as CONVERSATIONS_FILE
from engine.drift.conversations import messages, whole
from engine.drift.conversations import turns_of as conversation_turns
from engine.drift.people import PeopleShift, people_shifts, read_compare_labels
from engine.drift.shift import Shift, gate, shift_of, with_metric
from engine.execute.snapshot import (
    output_text,
    read_bindings,
    read_items,
    read_spec_document,
    stage_file,
    task_records,
)
from engine.registry import PairOptions, get_method
from engine.spec.build import spec_from_document
from engine.spec.model import Spec, Vibe

BASE, HEAD = "base", "head"


class CompareError(Exception):
    """Two runs that cannot be compared, and why."""


@dataclass
class Run:
    """What a comparison reads from one run folder."""

    folder: Path
    spec: Spec
    answers: dict[str, dict[str, str]]  # model slot -> item id -> its (first) answer
    prompts: dict[str, str]  # item id -> prompt
    discovered: list[Vibe] = field(default_factory=list)  # the vibes the run's discovery found
    panel_note: str = ""  # why this run's panel judged a comparison, when that was a choice
    items: dict[str, Item] = field(default_factory=dict)  # item id -> the item (a conversation's turn: its context)

    @classmethod
    def open(cls, folder: Path) -> Run:
        kept = read_spec_document(folder)
        items = read_items(folder)
        if not (folder / "manifest.json").is_file():
            raise CompareError(f"{folder}: not a run folder (no manifest.json); `vibe run SPEC` writes one")
        if kept is None or items is None:
            raise CompareError(f"{folder}: the run keeps no copy of its spec and prompts (spec.json, items.jsonl.gz): "
                               "it was written by an older vibe; run its spec again to compare it")
        spec = spec_from_document(*kept)
        by_id = {item.id: item for dataset in items.values() for item in dataset}
        return cls(folder, spec, _answers(folder, spec), {i: item.prompt for i, item in by_id.items()},
                   read_discovered(folder)[0], items=by_id)

    def panel(self) -> tuple[str, list[str]]:
        """The analysis whose panel judges the pairs (the first whose method judges vibes on pairs) and its
        judges."""
        for name, analysis in self.spec.analyses.items():
            if get_method(analysis.method).discovers:
                return name, list(PairOptions.of(analysis).judges)
        raise CompareError(f"{self.folder}: spec {self.spec.name!r} has no analysis that judges vibes on pairs")

    def vibe_entries(self) -> list[dict[str, Any]]:
        """The vibes its panel measured: those the spec declares, then those discovery found."""
        declared = [v for v in self.spec.document.get("vibes") or [] if "name" in v]
        found = [vibe_entry(v) for v in self.discovered]
        return declared + [v for v in found if v["name"] not in {d["name"] for d in declared}]


def _answers(folder: Path, spec: Spec) -> dict[str, dict[str, str]]:
    """Each model slot's answer per item as the run's panel analysis paired it: the original prompt's first
    sample (a persona's rewritten prompt and a separability analysis's further samples share the item id)."""
    panel = next((name for name, a in spec.analyses.items() if get_method(a.method).discovers), None)
    if panel is None or not stage_file(folder, "generation").is_file():
        return {}
    texts = {row["task_id"]: output_text(row) for row in task_records(folder, "generation")}
    answers: dict[str, dict[str, str]] = {}
    for binding in read_bindings(folder).get(panel, []):
        if binding["variant"] != "original":
            continue
        for model, tasks in binding["outputs"].items():
            if tasks and tasks[0] in texts:
                answers.setdefault(model, {}).setdefault(binding["item"], texts[tasks[0]])
    return {model: answers[model] for model in spec.models if model in answers}  # in the spec's order


@dataclass
class SlotComparison:
    model: str
    shared: int
    only_base: int
    only_head: int
    shifts: list[Shift]
    conversations: int = 0  # the conversations the shared prompts are turns of (0: independent prompts)
    people: list[PeopleShift] = field(default_factory=list)  # the panel against people's labels of these pairs
    explorer: str | None = None  # the judged pairs' explorer page, relative to the comparison's folder


@dataclass(frozen=True)
class GoverningGate:
    """The margin a gated vibe is held to, and whose spec set it: where both revisions gate a vibe the
    stricter margin governs, so a change cannot widen the margin it is judged by."""

    margin: float
    source: str  # e.g. "base's (head's ±0.2 is wider)", "base's and head's", "head's"


def governing_gates(base: Mapping[str, float], head: Mapping[str, float]) -> dict[str, GoverningGate]:
    """Every vibe either spec gates, with the stricter margin where both do."""
    out = {}
    for name in dict.fromkeys([*base, *head]):
        margins = {side: gates[name] for side, gates in ((BASE, base), (HEAD, head)) if name in gates}
        strictest = min(margins.values())
        source = " and ".join(f"{side}'s" for side, m in margins.items() if m == strictest)
        wider = [f"{side}'s ±{m:g}" for side, m in margins.items() if m != strictest]
        out[name] = GoverningGate(strictest, source + (f" ({wider[0]} is wider)" if wider else ""))
    return out


def compare_runs(base_dir: Path, head_dir: Path, out_dir: Path, cache: Path, *, models: list[str] | None = None,
                 panel: str | None = None, quiet: bool = True, plan_only: bool = False,
                 labels: list[Path] | None = None) -> tuple[list[SlotComparison], dict[str, GoverningGate], Run]:
    """Each shared model slot's shifts, judged by the `panel` run's panel ("base" or "head"; by default the
    base's). Returns them with the gates that govern every slot and the run whose panel judged; with
    `plan_only`, each slot's plan
    is printed and nothing is judged (no shifts). `labels`: files of people's labels of one slot's compared
    pairs (`engine.drift.people`)."""
    base, head = Run.open(base_dir), Run.open(head_dir)
    judging = _choose_panel(base, head, panel)
    shared_models = [m for m in base.answers if m in head.answers]
    chosen = models or shared_models
    unknown = [m for m in chosen if m not in shared_models]
    if unknown or not chosen:
        raise CompareError(f"no model slot {', '.join(unknown) or ''} answered in both runs; shared: "
                           f"{', '.join(shared_models) or 'none'} (base: {', '.join(base.answers) or 'none'}; "
                           f"head: {', '.join(head.answers) or 'none'})")
    if labels and len(chosen) > 1:
        raise CompareError(f"--labels: people's labels are of one model slot's pairs, and {len(chosen)} are compared "
                           f"({', '.join(chosen)}): name the one labelled with --model")
    gates = governing_gates(base.spec.gates or {}, head.spec.gates or {})
    vibes = judging.vibe_entries()
    people = read_compare_labels(labels or [], [v["name"] for v in vibes], BASE, HEAD)
    missing = [name for name in gates if name not in {v["name"] for v in vibes}]
    if missing:
        raise CompareError(f"gates: {', '.join(missing)} name no vibe the panel measures "
                           f"({', '.join(v['name'] for v in vibes)})")
    out = []
    for model in chosen:
        judged = slot_verdicts(base, head, judging, model, vibes, out_dir / model, cache, quiet=quiet,
                               plan_only=plan_only, report=True)
        if judged is None:
            continue
        nu, clusters = judged.verdicts, judged.clusters
        shifts = [shift_of(v["name"], nu[:, j], gates[v["name"]].margin if v["name"] in gates else None, clusters)
                  for j, v in enumerate(vibes)]
        pairs = ([base.answers[model][i] for i in judged.ids], [head.answers[model][i] for i in judged.ids])
        shifts = [with_metric(s, v["metric"], *pairs, clusters) if v.get("metric") else s
                  for s, v in zip(shifts, vibes, strict=True)]
        out.append(SlotComparison(model, len(judged.ids), judged.only_base, judged.only_head, shifts,
                                  conversations=len(set(clusters or ())),
                                  people=people_shifts(people, judged.ids, nu, [v["name"] for v in vibes], clusters),
                                  explorer=None if judged.explorer is None else
                                  judged.explorer.relative_to(out_dir).as_posix()))
    for slot, shifts in zip(out, gate([c.shifts for c in out]), strict=True):
        slot.shifts = shifts
    return out, gates, judging


@dataclass(frozen=True)
class SlotVerdicts:
    """The panel's verdicts on one model slot's shared prompts: ν[prompt, vibe], +1 where base's answer sits
    higher (NaN: no verdict), with each prompt's conversation where the prompts are turns."""

    ids: list[str]  # the shared prompts judged, in the order of `verdicts`' rows
    verdicts: np.ndarray
    clusters: list[str] | None  # each prompt's conversation (None: the prompts are independent units)
    only_base: int  # prompts one run has and the other lacks (or whose conversation is not shared whole)
    only_head: int
    explorer: Path | None = None  # the pairs' explorer page, where the judging run wrote its pages


def slot_verdicts(base: Run, head: Run, judging: Run, model: str, vibes: list[dict[str, Any]], folder: Path,
                  cache: Path, *, quiet: bool = True, plan_only: bool = False,
                  report: bool = False) -> SlotVerdicts | None:
    """`model`'s answers in both runs to the prompts both asked (same id, same text; for turns of conversations,
    only conversations shared whole), judged by `judging`'s panel in `folder` (None with `plan_only`). `report`:
    the judging run writes its pages too (its explorer lists the pairs)."""
    conversations = conversation_turns(base.items)
    turns = {BASE: conversations, HEAD: conversation_turns(head.items)} if conversations else {}
    ids = [i for i in base.answers[model] if i in head.answers[model] and i in base.prompts
           and base.prompts[i] == head.prompts.get(i)]
    if conversations:
        ids = whole(conversations, ids)
    if not ids:
        raise CompareError(f"model {model!r}: the runs share no prompt (same id and text)"
                           + (" and no whole conversation" if conversations else ""))
    judged = _judge(base, head, judging, model, ids, vibes, folder, cache, quiet, plan_only, turns, report)
    if judged is None:
        return None
    item_ids, nu = judged
    pages = sorted(p for p in (folder / "run" / "explore").glob("*.html") if not p.name.endswith("-label.html"))
    return SlotVerdicts(item_ids, nu, [base.items[i].cluster for i in item_ids] if conversations else None,
                        len(set(base.answers[model]) - set(ids)), len(set(head.answers[model]) - set(ids)),
                        pages[0] if pages else None)


def _choose_panel(base: Run, head: Run, panel: str | None) -> Run:
    """The run whose panel judges both: the one named, else the base's. When the two panels differ (a spec that
    discovers vibes finds different ones in each run) the base's judges and vibes, declared and discovered,
    measure both runs, and `Run.panel_note` says so."""
    chosen, side = (head, HEAD) if panel == HEAD else (base, BASE)
    judges = {side: {j: run.spec.document["judges"][j] for j in run.panel()[1]}
              for side, run in ((BASE, base), (HEAD, head))}
    vibes = {BASE: base.vibe_entries(), HEAD: head.vibe_entries()}
    differ = [what for what, both in (("judges", judges), ("vibes", vibes)) if both[BASE] != both[HEAD]]
    if differ:
        how = f"`--panel {side}`" if panel else "by default; `--panel head` for the head's"
        chosen.panel_note = (f"The two runs' panels differ ({' and '.join(differ)}); the {side}'s panel judged both "
                             f"runs ({how}).")
    return chosen


def _judge(base: Run, head: Run, judging: Run, model: str, ids: list[str], vibes: list[dict[str, Any]],
           folder: Path, cache: Path, quiet: bool, plan_only: bool,
           turns: dict[str, dict[str, list[Item]]], report: bool = False) -> tuple[list[str], np.ndarray] | None:
    """The panel's ν on every shared prompt (+1: base's answer sits higher), through the pipeline, its plan
    printed first (and only, with `plan_only`: then None)."""
    from engine.execute.cache import Cache
    from engine.execute.measures import finished_results
    from engine.pipeline import prepare, run_spec
    from engine.plan_view import finished, outline_of, print_plan
    from engine.readiness import missing_extras

    analysis_name, judges = judging.panel()
    block = judging.spec.document["analyses"][analysis_name]
    folder.mkdir(parents=True, exist_ok=True)
    dataset = _dataset(base, head, judging, model, ids, folder, turns)
    spec = {"name": f"compare-{model}",
            "description": f"{model}: {base.folder} (base) against {head.folder} (head)",
            "models": {BASE: {"provider": "recorded"}, HEAD: {"provider": "recorded"}},
            "judges": {j: judging.spec.document["judges"][j] for j in judges},
            "datasets": {"shared": dataset},
            "vibes": vibes,
            "analyses": {"drift": {"method": block["method"], "dataset": "shared", "models": [BASE, HEAD],
                                   "judges": judges}}}
    path = folder / "compare.yaml"
    path.write_text(json.dumps(spec, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")  # JSON is YAML
    prepared = prepare(path)
    absent = missing_extras(prepared.spec)
    if absent:
        raise CompareError(f"the panel of {judging.folder} cannot judge here: " + "; ".join(str(p) for p in absent))
    shown = outline_of(prepared)
    with Cache(cache) as opened:
        cached = finished(shown, opened)
    if not quiet or plan_only:  # what judging the pairs costs, before it is paid for
        print_plan(shown, cached)
    if plan_only:
        return None
    run_spec(path, folder / "run", cache, quiet=quiet, report=report)
    with Cache(cache) as opened:
        results = finished_results(prepared, opened)
    analysis = prepared.spec.analyses["drift"]
    declared = [v for v in prepared.spec.vibes if v.name in {e["name"] for e in vibes}]
    order = {v["name"]: j for j, v in enumerate(vibes)}
    declared.sort(key=lambda v: order[v.name])
    return get_method(analysis.method).pair_verdicts(prepared, analysis, results, declared)


def _dataset(base: Run, head: Run, judging: Run, model: str, ids: list[str], folder: Path,
             turns: dict[str, dict[str, list[Item]]]) -> dict[str, Any]:
    """The shared prompts as the comparison's dataset, written into `folder`: a pair per prompt, base's answer
    then head's; for turns of conversations, each side's conversations as OpenAI messages (each run's own
    earlier turns, tool traffic included), cut into the same turns and shown to an LLM judge within the panel
    dataset's `context_tokens`, as in the runs. `turns`: each side's conversations (`turns_of`), none where the
    prompts are not turns."""
    rows: list[dict[str, Any]]
    if not turns:
        rows = [{"id": i, "prompt": base.prompts[i], BASE: base.answers[model][i], HEAD: head.answers[model][i]}
                for i in ids]
        _write_rows(folder / "pairs.jsonl", rows)
        return {"source": {"path": "pairs.jsonl"},
                "fields": {"id": "id", "prompt": "prompt", "outputs": {BASE: BASE, HEAD: HEAD}}}
    chosen = {base.items[i].cluster for i in ids}
    rows = [{"id": cid, "model": side, "messages": messages(turns[side][cid], model, run.answers[model])}
            for cid in turns[BASE] if cid in chosen for side, run in ((BASE, base), (HEAD, head))]
    _write_rows(folder / CONVERSATIONS_FILE, rows)
    panel = judging.spec.analyses[judging.panel()[0]]
    source = judging.spec.datasets[panel.dataset]
    return {"source": {"path": CONVERSATIONS_FILE}, "format": "openai-messages", "unit": source.unit,
            "context_tokens": source.context_tokens}


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
