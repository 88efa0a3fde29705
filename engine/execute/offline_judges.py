"""Run the offline judge tasks of a plan in batches, by judge kind, and cache their results: pairwise
verdicts (`judge` tasks) from metric and embedding judges, reference ratings (`rate` tasks) from the
reference-similarity judge or the unit-test judge, and the preservation check of persona rewrites (`verify`
tasks)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from engine.execute.cache import Cache
from engine.judges import embedding_judge, metric_judge, preservation, reference_similarity, unit_tests
from engine.records import Result, Task
from engine.requests import PairJudgment, parse

PAIR_JUDGES: dict[str, Callable[[Sequence[PairJudgment], dict[str, str]], Sequence[Any]]] = {
    "metric": metric_judge.judge_pairs, "embedding": embedding_judge.judge_pairs}


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
        elif kind == "rate" and judge_kind == "unit_tests":
            verdicts = unit_tests.rate(requests, texts)
        elif kind == "rate":
            verdicts = reference_similarity.rate(requests, texts, corpora)
        else:
            verdicts = PAIR_JUDGES[judge_kind](requests, texts)
        results.extend(Result(t.id, t.stage, t.endpoint, t.provider, v.to_json())
                       for t, v in zip(group, verdicts, strict=True))
    cache.put_many(results)
    return results
