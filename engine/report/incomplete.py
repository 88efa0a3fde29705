"""What a run did not finish, per analysis, for the page to show beside the results it affects.

A call that failed for good (after its retries) leaves its prompt out of every number built on it; the exit
code alone does not tell a reader of the leaderboard. Each analysis gets the count of unfinished tasks by
model or judge and stage, with the reasons recorded in failures.jsonl ("not run" when a task has no recorded
failure: the run was interrupted, or an endpoint was stopped before it).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.records import Plan, Result

NOT_RUN = "not run (the run was interrupted before it)"
REASONS_SHOWN = 3


@dataclass(frozen=True)
class Unfinished:
    """Tasks of one stage and one model or judge that have no result."""

    endpoint: str
    role: str  # "model" or "judge"
    stage: str
    missing: int
    planned: int
    reasons: tuple[tuple[str, int], ...]  # the most frequent reasons, with how many tasks each


@dataclass(frozen=True)
class Incomplete:
    analysis: str
    missing: int
    planned: int
    rows: tuple[Unfinished, ...]


def read_failures(run_dir: Path) -> list[dict[str, Any]]:
    """The run's failures.jsonl records (task_id, stage, endpoint, error, attempts), in file order."""
    path = run_dir / "failures.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def incomplete_work(plan: Plan, outputs: dict[str, Result], failures: list[dict[str, Any]],
                    judges: set[str]) -> dict[str, Incomplete]:
    """Analysis name → what of it did not finish; analyses that finished everything are left out. A generation
    two analyses share (one task, one request) counts in both."""
    reasons = {failure["task_id"]: failure["error"] for failure in failures}
    tasks = {task.id: task for task in plan.tasks}
    used = {name: {task_id for binding in bindings for ids in binding.outputs.values() for task_id in ids}
            for name, bindings in plan.bindings.items()}
    planned: Counter[tuple[str, str, str]] = Counter()
    missing: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    shared = [(name, tasks[i]) for name, ids in used.items() for i in sorted(ids)
              if i in tasks and tasks[i].analysis != name]
    for analysis, task in [(t.analysis, t) for t in plan.tasks] + shared:
        key = (analysis, task.endpoint, task.stage)
        planned[key] += 1
        if task.id not in outputs:
            missing[key][reasons.get(task.id, NOT_RUN)] += 1
    for record in plan.measured:  # a pair whose answer has no measured value has no verdict
        key = (record.analysis, record.judge, record.stage)
        planned[key] += len(record.pairs)
        result = outputs.get(record.id)
        unjudged = len(record.pairs) if result is None else int(np.isnan(result.output.scores).sum())
        if unjudged:
            missing[key][reasons.get(record.id, NOT_RUN)] += unjudged
    by_analysis: dict[str, list[Unfinished]] = defaultdict(list)
    for (analysis, endpoint, stage), why in sorted(missing.items()):
        by_analysis[analysis].append(Unfinished(
            endpoint, "judge" if endpoint in judges else "model", stage, sum(why.values()),
            planned[(analysis, endpoint, stage)], tuple(why.most_common(REASONS_SHOWN))))
    return {analysis: Incomplete(analysis, sum(r.missing for r in rows),
                                 sum(n for (a, _, _), n in planned.items() if a == analysis), tuple(rows))
            for analysis, rows in by_analysis.items()}

