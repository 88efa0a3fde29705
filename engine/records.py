"""The records every stage passes on: planned tasks and how they bind to items, finished results, and a
prepared run. This module is the ground floor: every stage imports it and it imports no stage (the spec and
item types below are named for type checkers only), so a record can be read anywhere without pulling in the
code that produced it.

A task's id is the content hash of its canonical request; that hash is the cache key, so `content_hash`
and the JSON form of the plan live here with the records they key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from engine.provider_table import is_recorded
from engine.requests import Request, parse

if TYPE_CHECKING:
    from engine.datasets import Item
    from engine.spec.model import Endpoint, Spec

PLAN_VERSION = 1
OFFLINE_PROVIDER = "offline"  # the provider of a task an offline judge does in-process: no call is made


def content_hash(request: dict[str, Any]) -> str:
    """The hash of a request's canonical JSON: a task's id and cache key."""
    return hashlib.sha256(_CANONICAL(request).encode()).hexdigest()[:32]


# the canonical JSON a hash is taken of, with one encoder for every task (`json.dumps` with options builds a new
# one each call)
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


@dataclass(frozen=True)
class Task:
    """One unit of work in the plan: a request to one endpoint, identified by the hash of its content."""

    id: str  # content hash of `request`
    stage: str
    analysis: str
    endpoint: str  # model or judge name
    provider: str
    item_id: str
    request: dict[str, Any]
    depends_on: tuple[str, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0

    @property
    def is_call(self) -> bool:
        """True when running the task sends a request to a model (offline and recorded tasks do not)."""
        return self.provider != OFFLINE_PROVIDER and not is_recorded(self.provider)


@dataclass(frozen=True)
class Deferred:
    """Calls whose exact requests depend on earlier results (e.g. scoring vibes not yet discovered)."""

    stage: str
    analysis: str
    endpoint: str
    calls: int
    input_tokens: int
    output_tokens: int
    cost: float
    note: str
    tasks: int = 0  # tasks these calls and any offline judgments of the same work add (an upper bound)


@dataclass(frozen=True)
class Binding:
    """Which generation tasks hold an analysis's outputs for one item (and variant). Identical requests
    share one task, so items are tied to outputs here rather than through `Task.item_id`."""

    item: str
    variant: str
    outputs: dict[str, list[str]]  # model name -> generation task ids (K of them for separability)


@dataclass(frozen=True)
class PairSet:
    """The pairs one analysis compares, as answer task ids in A/B order with their items. Every `Measured`
    record of the same pairs holds the same PairSet (and the plan's JSON lists it once), so a vibe more costs
    no copy of the pairs."""

    id: str  # content hash of the three columns
    items: tuple[str, ...]
    outputs_a: tuple[str, ...]
    outputs_b: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.items)

    @cached_property
    def rows(self) -> dict[tuple[str, str], int]:
        """(answer A, answer B) -> its row in the columns."""
        return {pair: row for row, pair in enumerate(zip(self.outputs_a, self.outputs_b, strict=True))}

    @classmethod
    def of(cls, items: Sequence[str], outputs_a: Sequence[str], outputs_b: Sequence[str]) -> PairSet:
        return cls(content_hash({"items": list(items), "a": list(outputs_a), "b": list(outputs_b)}), tuple(items),
                   tuple(outputs_a), tuple(outputs_b))


@dataclass(frozen=True)
class Measured:
    """An offline judge's verdicts on one vibe over many pairs, where a verdict compares a value measured on
    each answer alone (a metric, a place on an embedding axis): `measure` (the judge kind's definition of that
    value) is computed once per answer, in bulk, and each pair's verdict is the array rule `compare_columns`
    with `tolerance` (relative to the larger value, or absolute). One record stands for what would otherwise be
    a task per pair: its verdicts hold no object per pair, and the plan and `vibe plan` count its pairs."""

    id: str  # content hash of everything below, the pairs by their PairSet's hash
    stage: str
    analysis: str
    judge: str
    judge_kind: str  # the kind's wire name, as tasks carry it
    vibe: str
    measure: dict[str, Any]
    tolerance: float
    relative: bool
    pairs: PairSet

    @staticmethod
    def content(judge: str, judge_kind: str, vibe: str, measure: dict[str, Any], tolerance: float, relative: bool,
                pairs: str) -> dict[str, Any]:
        return {"kind": "measured", "judge": judge, "judge_kind": judge_kind, "vibe": vibe, "measure": measure,
                "tolerance": tolerance, "relative": relative, "pairs": pairs}


@dataclass(frozen=True)
class MeasuredVerdicts:
    """A `Measured` record's result: per pair (its PairSet's rows), the verdict (+1, 0, −1; NaN where an answer
    has no value) and the value measured on each answer, as NumPy arrays."""

    scores: Any
    value_a: Any
    value_b: Any


@dataclass
class Plan:
    spec_name: str
    spec_hash: str
    tasks: list[Task] = field(default_factory=list)
    deferred: list[Deferred] = field(default_factory=list)
    bindings: dict[str, list[Binding]] = field(default_factory=dict)  # analysis name -> bindings
    measured: list[Measured] = field(default_factory=list)  # offline per-answer judgments, one per judge and vibe
    # the stages the executor runs, in order (`engine.registry.stage_order`: the spec's methods declare theirs)
    stages: tuple[str, ...] = ()

    @cached_property
    def requests(self) -> dict[str, Request]:
        """Task id -> its typed request, parsed once per plan: every analysis and page reads them, some once
        per comparison, and a large plan holds tens of thousands."""
        return {t.id: parse(t.request) for t in self.tasks}

    def to_json(self) -> str:
        """Stable JSON, one task per line: byte-identical for the same spec, and readable in a diff."""
        return "".join(self.json_parts())

    def json_parts(self) -> Iterator[str]:
        """`to_json` in pieces, a task at a time: a large plan's JSON is written without ever being one string
        (at Arena scale that string and its encoding were the run's largest allocation)."""
        head = {"version": PLAN_VERSION, "spec_name": self.spec_name, "spec_hash": self.spec_hash,
                "stages": list(self.stages), "deferred": [asdict(d) for d in self.deferred],
                # a binding's fields by hand: asdict's deep copy of 100,000 bindings' outputs cost seconds
                "bindings": {name: [{"item": b.item, "variant": b.variant, "outputs": b.outputs} for b in bs]
                             for name, bs in self.bindings.items()}}
        if self.measured:  # a plan without them keeps the JSON it always had
            sets = {m.pairs.id: m.pairs for m in self.measured}
            head["pair_sets"] = {key: {"items": list(p.items), "a": list(p.outputs_a), "b": list(p.outputs_b)}
                                 for key, p in sets.items()}
            head["measured"] = [{**{f: getattr(m, f) for f in _MEASURED_FIELDS}, "pairs": m.pairs.id}
                                for m in self.measured]
        yield json.dumps(head, sort_keys=True, ensure_ascii=False)[:-1] + ', "tasks": [\n'
        for n, task in enumerate(self.tasks):
            yield ("" if n == 0 else ",\n") + json.dumps(_task_json(task), sort_keys=True, ensure_ascii=False)
        yield "\n]}\n"

    @classmethod
    def from_json(cls, text: str) -> Plan:
        body = json.loads(text)
        tasks = [Task(**{**t, "depends_on": tuple(t["depends_on"])}) for t in body["tasks"]]
        bindings = {name: [Binding(**b) for b in bs] for name, bs in body["bindings"].items()}
        sets = {key: PairSet(key, tuple(p["items"]), tuple(p["a"]), tuple(p["b"]))
                for key, p in body.get("pair_sets", {}).items()}
        measured = [Measured(**{**m, "pairs": sets[m["pairs"]]}) for m in body.get("measured", [])]
        deferred = [Deferred(**d) for d in body["deferred"]]
        # a plan written before it held its stages: their order is the tasks' (sorted by stage when compiled)
        stages = body.get("stages") or dict.fromkeys([t.stage for t in tasks] + [m.stage for m in measured]
                                                     + [d.stage for d in deferred])
        return cls(body["spec_name"], body["spec_hash"], tasks, deferred, bindings, measured, tuple(stages))


_MEASURED_FIELDS = ("id", "stage", "analysis", "judge", "judge_kind", "vibe", "measure", "tolerance", "relative")


def _task_json(task: Task) -> dict[str, Any]:
    # Built by hand: dataclasses.asdict deep-copies every request, which dominates large plans.
    return {"id": task.id, "stage": task.stage, "analysis": task.analysis, "endpoint": task.endpoint,
            "provider": task.provider, "item_id": task.item_id, "request": task.request,
            "depends_on": list(task.depends_on), "input_tokens": task.input_tokens,
            "output_tokens": task.output_tokens, "cost": round(task.cost, 8)}


@dataclass(frozen=True, slots=True)
class Result:
    """What one finished task produced (slotted: a run holds one per answer, 200,000 at Arena scale)."""

    task_id: str
    stage: str
    endpoint: str
    provider: str
    output: Any  # text for calls; a JSON-able value for offline judges
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    latency_s: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Prepared:
    """A spec, the items of the datasets its analyses use, and the plan compiled from both; per dataset, what
    its reader left out and why (a conversation the models answered in different numbers of turns) and how
    many secrets it redacted."""

    spec: Spec
    items: dict[str, list[Item]]
    plan: Plan
    excluded: dict[str, list[str]] = field(default_factory=dict)
    redacted: dict[str, dict[str, int]] = field(default_factory=dict)  # secrets taken out of a dataset, by kind


def call_endpoints(prepared: Prepared) -> dict[str, Endpoint]:
    """Every endpoint a task may call, by name: the spec's models and its LLM judges."""
    spec = prepared.spec
    out = dict(spec.models)
    out.update({name: j.endpoint for name, j in spec.judges.items() if j.endpoint is not None})
    return out
