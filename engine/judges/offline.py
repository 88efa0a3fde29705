"""Run the offline judge tasks of a plan in batches, by judge kind, and cache their verdicts."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from engine.execute.cache import Cache, Result
from engine.judges import embedding, metric
from engine.plan import Task

Batch = Callable[[list[dict[str, Any]], dict[str, str]], list[dict[str, Any]]]
PAIR_JUDGES: dict[str, Batch] = {"metric": metric.judge_pairs, "embedding": embedding.judge_pairs}


def run_offline(tasks: list[Task], cache: Cache) -> list[Result]:
    """Judge every task whose inputs are available; returns the new results (also written to the cache)."""
    needed = {dep for t in tasks for dep in t.depends_on}
    texts = {tid: str(r.output) for tid, r in cache.get_many(needed).items()}
    by_kind: dict[str, list[Task]] = defaultdict(list)
    for task in tasks:
        if all(dep in texts for dep in task.depends_on) and task.request["kind"] == "judge":
            by_kind[task.request["judge_kind"]].append(task)
    results = []
    for kind, group in by_kind.items():
        verdicts = PAIR_JUDGES[kind]([t.request for t in group], texts)
        results.extend(Result(t.id, t.stage, t.endpoint, t.provider, v) for t, v in zip(group, verdicts, strict=True))
    cache.put_many(results)
    return results
