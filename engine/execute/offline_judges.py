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
from engine.judges.verdicts import PairVerdict, PreservationCheck, RatingScore
from engine.records import Result, Task
from engine.requests import PairJudgment, Preservation, Rating, parse


def run_offline(tasks: list[Task], cache: Cache, corpora: dict[str, tuple[str, ...]]) -> list[Result]:
    """Judge every task whose inputs are available; returns the new results (also written to the cache).
    `corpora`: reference corpus hash → the references, for rating tasks (see the `reference_similarity` kind)."""
    needed = {dep for t in tasks for dep in t.depends_on}
    texts = {tid: str(r.output) for tid, r in cache.get_many(needed).items()}
    groups: dict[tuple[str, str], list[tuple[Task, Any]]] = defaultdict(list)  # (task kind, judge kind) -> tasks
    for task in tasks:
        if all(dep in texts for dep in task.depends_on):
            request = parse(task.request)
            judge_kind = request.judge_kind if isinstance(request, PairJudgment | Rating) else ""
            groups[(request.kind, judge_kind)].append((task, request))
    results: list[Result] = []
    for (kind, judge_kind), group in groups.items():
        requests = [request for _, request in group]  # one kind per group
        verdicts: Sequence[PairVerdict | RatingScore | PreservationCheck]
        if kind == Preservation.kind:
            verdicts = preservation.check(requests, texts)
        elif kind == Rating.kind:
            verdicts = offline_runner(kind, judge_kind).rate(requests, texts, corpora)
        else:
            verdicts = offline_runner(kind, judge_kind).judge_pairs(requests, texts)
        stored = [v.to_json() for v in verdicts]
        results.extend(Result(t.id, t.stage, t.endpoint, t.provider, record)
                       for (t, _), record in zip(group, stored, strict=True))
    cache.put_many(results)
    return results
