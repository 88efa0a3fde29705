"""Run the offline judge tasks of a plan in batches, by judge kind, and cache their results: pairwise
verdicts (`judge` tasks), ratings of one answer (`rate` tasks), each by the judge kind their requests name
(`engine.judges.kinds.offline_runner`), and the preservation check of persona rewrites (`verify` tasks)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from engine.execute.cache import Cache
from engine.judges import preservation
from engine.judges.kinds import offline_runner
from engine.records import Result, Task
from engine.requests import parse


def run_offline(tasks: list[Task], cache: Cache, corpora: dict[str, tuple[str, ...]]) -> list[Result]:
    """Judge every task whose inputs are available; returns the new results (also written to the cache).
    `corpora`: reference corpus hash → the references, for rating tasks (see `engine.judges.reference_similarity`)."""
    needed = {dep for t in tasks for dep in t.depends_on}
    texts = {tid: str(r.output) for tid, r in cache.get_many(needed).items()}
    groups: dict[tuple[str, str], list[Task]] = defaultdict(list)  # (task kind, judge kind) -> tasks
    for task in tasks:
        if all(dep in texts for dep in task.depends_on):
            groups[(task.request["kind"], task.request.get("judge_kind", ""))].append(task)
    results: list[Result] = []
    for (kind, judge_kind), group in groups.items():
        requests: list[Any] = [parse(t.request) for t in group]  # one kind per group
        verdicts: Sequence[Any]
        if kind == "verify":
            verdicts = preservation.check(requests, texts)
        elif kind == "rate":
            verdicts = offline_runner(kind, judge_kind).rate(requests, texts, corpora)
        else:
            verdicts = offline_runner(kind, judge_kind).judge_pairs(requests, texts)
        results.extend(Result(t.id, t.stage, t.endpoint, t.provider, v.to_json())
                       for t, v in zip(group, verdicts, strict=True))
    cache.put_many(results)
    return results
