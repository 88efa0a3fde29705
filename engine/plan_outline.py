"""What `vibe plan` and `vibe diff` show of a prepared run, without its requests: each task's id, stage, endpoint,
tokens and cost as columns, the measured and deferred work, the spec document and the notes under the plan's
table. Built once from the prepared run (`plan_view.outline_of`) and kept beside it (`prepared_memo.view`): read
back, 10,000 tasks' outline takes milliseconds and imports nothing, where the prepared run takes a tenth of a
second and the modules its classes live in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class MeasuredOutline:
    """A `Measured` record as a plan's table and a diff count it: pair by pair, by the question it answers."""

    id: str
    stage: str
    judge: str
    question: tuple[str, ...]  # stage, judge, kind, vibe, measure and tolerance: equal questions, equal verdicts
    key: str  # where its answers' values live in the cache (`execute.measures.measure_key`)
    outputs_a: tuple[str, ...]
    outputs_b: tuple[str, ...]


@dataclass(frozen=True)
class Outline:
    spec_name: str
    spec_hash: str
    document: dict[str, Any]  # the spec as written (its bases merged), which a diff compares section by section
    stages: tuple[str, ...]
    # one entry per task, as columns
    ids: list[str] = field(default_factory=list)
    task_stages: list[str] = field(default_factory=list)
    endpoints: list[str] = field(default_factory=list)
    calls: list[bool] = field(default_factory=list)  # sent to a model (not offline, not read from the data)
    recorded: list[bool] = field(default_factory=list)  # an answer read from the data: always done
    input_tokens: list[int] = field(default_factory=list)
    output_tokens: list[int] = field(default_factory=list)
    costs: list[float] = field(default_factory=list)
    measured: list[MeasuredOutline] = field(default_factory=list)
    # work that depends on earlier results: stage, endpoint, tasks, calls, input_tokens, output_tokens, cost
    deferred: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # said under the table: how judges answer, batches, the cluster
    # (variable, warning) for each API key an endpoint reads: warned about where the variable is unset now
    keys: list[tuple[str, str]] = field(default_factory=list)
    excluded: dict[str, list[str]] = field(default_factory=dict)  # dataset -> what its reader left out, and why
