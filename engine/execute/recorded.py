"""Answers read from a dataset, as task results. The cache never stores them: the dataset (and the run folder's
items file) already keeps each text, and the task's id hashes it, so an edited answer is a new task. Whoever reads a
plan's results from a cache holds the plan's recorded answers in it first, and counts them as done."""

from __future__ import annotations

from engine.execute.cache import Cache
from engine.provider_table import is_recorded
from engine.records import Prepared, Result
from engine.requests import Recorded, parse


def hold_recorded(prepared: Prepared, cache: Cache) -> int:
    """Hold every recorded answer of the plan in `cache` (those it does not hold yet); returns how many the plan has."""
    tasks = [t for t in prepared.plan.tasks if is_recorded(t.provider)]
    new = [t for t in tasks if not cache.holds(t.id)]
    if new:
        by_id = {(name, item.id): item for name, items in prepared.items.items() for item in items}
        sources = {name: {"source": name} for name in prepared.items}  # read only: one per dataset, not per answer
        results = []
        for task in new:
            request = parse(task.request)
            assert isinstance(request, Recorded)
            text = by_id[(request.dataset, request.item)].outputs[request.model]
            results.append(Result(task.id, task.stage, task.endpoint, "recorded", text, meta=sources[request.dataset]))
        cache.hold(results)
    return len(tasks)
