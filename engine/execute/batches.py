"""Batch execution: an endpoint with `batch:` sends its calls as provider batches at half the live price.

Each call is rendered exactly as the live call would be (same task, same hash, the provider's own schema form)
and becomes one batch line whose `custom_id` is the task id. Lines are split to the provider's limits (or
`batch.max_requests`), and every batch is written to the run cache (`Cache.add_batch`) before it is first
polled. That record is what makes the mode resumable: a run that finds open batches for its tasks polls them
instead of submitting again, whether the last run was killed a minute ago or the batch was sent yesterday.
Answers are stored as each batch's results are read. Requests that errored, expired or were cancelled are
asked again, up to `limits.max_retries` times, in a new batch or as live calls (`batch.retry`); the page and
the manifest say which, with counts by outcome. An interrupted run leaves its batches running at the
provider: `vibe batches SPEC` shows them, `--cancel` cancels them.

A provider forgets: OpenAI deletes files past their retention, Anthropic serves results for 29 days, and a key
of another organisation sees none of them. A batch (or its results file) answered with "not found" is closed in
the cache as gone, with what the provider said; its unanswered requests are asked again like errored ones.
A transient error (5xx, timeout, no connection) leaves the batch open, so a later run polls it again.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, TypeVar

import orjson

from engine.execute.cache import BatchRecord, Cache
from engine.execute.providers.base import (
    BatchClient,
    BatchFailure,
    BatchState,
    Completion,
    Messages,
    ProviderError,
    ResponseSchema,
    create_batch_client,
)
from engine.execute.scheduler import Failure, OnResult, Render, completed
from engine.records import Result, Task
from engine.spec.model import Endpoint

T = TypeVar("T")
Call = tuple[Messages, dict[str, Any], ResponseSchema | None]


@dataclass
class BatchLog:
    """What a run did through one endpoint's batches, for the manifest and the page."""

    endpoint: str
    batches: list[dict[str, object]] = field(default_factory=list)  # id, requests, status, outcomes, round, wall
    outcomes: dict[str, int] = field(default_factory=dict)  # succeeded / errored / expired / cancelled, all rounds
    resumed: int = 0  # batches found open in the cache and polled instead of submitted
    retried_live: int = 0
    spent: float = 0.0  # $ at the batch rate for the answers read


Announce = Callable[[str, str], None]
MISSING = {"expired": "expired", "cancelled": "cancelled"}  # a batch's end status -> the outcome of its unanswered
GONE_STATUS = frozenset({404, 410})  # the provider has no such batch or file: polling again cannot bring it back


def is_gone(exc: ProviderError) -> bool:
    return exc.status in GONE_STATUS


def gone_reason(record: BatchRecord, exc: ProviderError) -> str:
    """Why a batch was closed without its answers, naming the batch, the provider and what follows."""
    said = (exc.body or str(exc)).strip().replace("\n", " ")[:200]
    return (f"{record.endpoint}: batch {record.batch_id} is gone at {record.provider} (HTTP {exc.status}: {said}); "
            "providers keep batches and results for a limited time and show them only to the key's organisation, "
            "so its unanswered requests are asked again")


async def run_batches(tasks: list[Task], render: Render, endpoint: Endpoint, cache: Cache, on_result: OnResult,
                      announce: Announce, log: BatchLog) -> tuple[list[Failure], list[Task]]:
    """Every task of one batched endpoint through its provider's batches; returns the tasks that failed for
    good and those to ask live (`retry: live`)."""
    assert endpoint.batch is not None
    try:
        client = create_batch_client(endpoint)
    except ProviderError as exc:
        return [Failure(t.id, t.stage, t.endpoint, str(exc), 0) for t in tasks], []
    try:
        return await _Batches(client, endpoint, cache, render, on_result, announce, log).run(tasks)
    except ProviderError as exc:  # the batch API itself failed for good: submitted batches stay recorded
        done = cache.known(t.id for t in tasks)
        waiting = {i: r.batch_id for r in cache.batches(endpoint.name, open_only=True) for i in r.task_ids}
        return [Failure(t.id, t.stage, t.endpoint, f"batch API: {exc}" + (
            f" (batch {waiting[t.id]} at {endpoint.provider} stays open: the next `vibe run` polls it again, "
            "`vibe batches SPEC` shows it)" if t.id in waiting else ""), 1) for t in tasks if t.id not in done], []
    finally:
        await client.aclose()


class _Batches:
    def __init__(self, client: BatchClient, endpoint: Endpoint, cache: Cache, render: Render, on_result: OnResult,
                 announce: Announce, log: BatchLog):
        assert endpoint.batch is not None
        self.client, self.endpoint, self.mode, self.cache = client, endpoint, endpoint.batch, cache
        self.render, self.on_result, self.announce, self.log = render, on_result, announce, log
        self.rendered: dict[str, Call] = {}

    def _call(self, task: Task) -> Call:
        if task.id not in self.rendered:
            self.rendered[task.id] = self.render(task)
        return self.rendered[task.id]

    async def run(self, tasks: list[Task]) -> tuple[list[Failure], list[Task]]:
        by_id = {t.id: t for t in tasks}
        open_batches = [r for r in self.cache.batches(self.endpoint.name, open_only=True)
                        if set(r.task_ids) & by_id.keys()]
        self.log.resumed += len(open_batches)
        covered = {i for r in open_batches for i in r.task_ids}
        fresh = [t for t in tasks if t.id not in covered]
        attempts: Counter[str] = Counter()
        for round_ in range(self.endpoint.limits.max_retries + 1):
            for task in fresh:
                attempts[task.id] += 1
            open_batches += [await self._submit(group, round_) for group in self._groups(fresh)]
            failed = await self._collect(open_batches, by_id, round_)
            open_batches = []
            if not failed or round_ == self.endpoint.limits.max_retries:
                break
            retry = [by_id[i] for i in failed]
            if self.mode.retry == "live":
                self.log.retried_live += len(retry)
                return [], retry
            fresh = retry
        for task_id in failed:
            self.on_result(by_id[task_id], None)
        return [Failure(i, by_id[i].stage, by_id[i].endpoint, reason, attempts[i] or 1)
                for i, reason in failed.items()], []

    def _groups(self, tasks: list[Task]) -> list[list[tuple[Task, bytes]]]:
        """The tasks' lines in batches within the request and byte limits."""
        most = min(self.mode.max_requests or self.client.max_requests, self.client.max_requests)
        groups: list[list[tuple[Task, bytes]]] = []
        size = 0
        for task in tasks:
            line = orjson.dumps(self.client.line(task.id, *self._call(task))) + b"\n"
            if not groups or len(groups[-1]) >= most or size + len(line) > self.client.max_bytes:
                groups.append([])
                size = 0
            groups[-1].append((task, line))
            size += len(line)
        return groups

    async def _submit(self, group: list[tuple[Task, bytes]], round_: int) -> BatchRecord:
        state = await self._retrying(lambda: self.client.submit([line for _, line in group]))
        record = BatchRecord(state.id, self.endpoint.name, self.endpoint.provider, tuple(t.id for t, _ in group),
                             time.time(), state.status)
        self.cache.add_batch(record)  # before any poll: a run killed from here on resumes this batch
        self.log.batches.append({"id": state.id, "requests": len(group), "round": round_, "status": state.status})
        self.announce(state.id, f"submitted, {len(group):,} requests")
        return record

    async def _collect(self, records: list[BatchRecord], by_id: dict[str, Task], round_: int) -> dict[str, str]:
        """Poll until every batch has ended, storing answers as each one's results are read; the reasons of the
        requests that got none."""
        failed: dict[str, str] = {}
        waiting = list(records)
        while waiting:
            for record in list(waiting):
                try:
                    state = await self._retrying(partial(self.client.state, record.batch_id))
                    self.announce(state.id, _describe(state))
                    if state.ended:
                        failed.update(await self._read(record, state, by_id, round_))
                        waiting.remove(record)
                except ProviderError as exc:
                    if not is_gone(exc):
                        raise
                    failed.update(self._gone(record, by_id, round_, gone_reason(record, exc)))
                    waiting.remove(record)
            if waiting:
                await asyncio.sleep(self.mode.poll_s)
        return failed

    async def _read(self, record: BatchRecord, state: BatchState, by_id: dict[str, Task],
                    round_: int) -> dict[str, str]:
        mine = [i for i in record.task_ids if i in by_id]
        schemas = {i: self._call(by_id[i])[2] for i in mine}
        outcomes = await self._retrying(lambda: self.client.results(state, schemas))
        results: list[Result] = []
        failed: dict[str, BatchFailure] = {}
        missing = BatchFailure(MISSING.get(state.status, "errored"), f"{self.endpoint.name}: batch {state.id} ended "
                               f"{state.status} with no result for this request")
        for task_id in mine:
            task, outcome = by_id[task_id], outcomes.get(task_id, missing)
            if isinstance(outcome, Completion):
                result = completed(task, self.endpoint, outcome, 1, structured=schemas[task_id] is not None)
                results.append(replace(result, cost=self.endpoint.cost(outcome.input_tokens, outcome.output_tokens,
                                                                       batched=True),
                                       meta={**result.meta, "batch_id": state.id}))
            else:
                failed[task_id] = outcome
        self.cache.put_many(results)
        for result in results:
            self.on_result(by_id[result.task_id], result)
        counts = Counter({"succeeded": len(results)}) + Counter(f.outcome for f in failed.values())
        self.log.spent += sum(r.cost for r in results)
        self.cache.end_batch(state.id, state.status, dict(counts))
        self._logged(record, round_, state.status, counts)
        return {task_id: failure.reason for task_id, failure in failed.items()}

    def _gone(self, record: BatchRecord, by_id: dict[str, Task], round_: int, reason: str) -> dict[str, str]:
        """Close a batch the provider no longer has; its requests without a stored answer, to ask again."""
        answered = self.cache.known(record.task_ids)
        unanswered = [i for i in record.task_ids if i in by_id and i not in answered]
        counts = Counter({"gone": len(unanswered)})
        self.cache.end_batch(record.batch_id, "gone", dict(counts), reason)
        self.announce(record.batch_id, f"gone: {len(unanswered):,} requests to ask again")
        self._logged(record, round_, "gone", counts, reason=reason)
        return dict.fromkeys(unanswered, reason)

    def _logged(self, record: BatchRecord, round_: int, status: str, counts: Counter[str], **extra: object) -> None:
        """A batch's end in the run's log: its outcome counts, and its entry (made here for one an earlier run
        submitted)."""
        for name, n in counts.items():
            self.log.outcomes[name] = self.log.outcomes.get(name, 0) + n
        entry = next((b for b in self.log.batches if b["id"] == record.batch_id), None)
        if entry is None:  # a batch an earlier run submitted
            entry = {"id": record.batch_id, "requests": len(record.task_ids), "round": round_, "resumed": True}
            self.log.batches.append(entry)
        entry.update(status=status, outcomes=dict(counts), wall_s=round(time.time() - record.submitted_at, 1),
                     **extra)

    async def _retrying(self, call: Callable[[], Awaitable[T]]) -> T:
        """A batch API call, retried with backoff on what a live call would retry (429, 5xx, dropped
        connections); anything else ends the endpoint's batches with that error."""
        for attempt in range(self.endpoint.limits.max_retries + 1):
            try:
                return await call()
            except ProviderError as exc:
                if not exc.retryable or attempt == self.endpoint.limits.max_retries:
                    raise
                await asyncio.sleep(exc.retry_after if exc.retry_after is not None else min(30.0, 0.5 * 2**attempt))
        raise AssertionError("unreachable")


async def look_up(endpoints: dict[str, Endpoint], cache: Cache, cancel: bool = False) -> list[tuple[BatchRecord, str]]:
    """Each open batch of these endpoints with its state at the provider, in words (or why it could not be
    read); `cancel` cancels them first. A later run still reads what a cancelled batch finished. A batch the
    provider no longer has is shown as gone; `cancel` closes it here, so the next run asks its requests again."""
    out: list[tuple[BatchRecord, str]] = []
    for record in cache.batches(open_only=True):
        if record.endpoint not in endpoints:
            continue
        try:
            client = create_batch_client(endpoints[record.endpoint])
        except ProviderError as exc:
            out.append((record, str(exc)))
            continue
        try:
            state = await (client.cancel if cancel else client.state)(record.batch_id)
            out.append((record, ("cancelling: " if cancel else "") + _describe(state)))
        except ProviderError as exc:
            if not is_gone(exc):
                out.append((record, str(exc)))
            elif cancel:
                cache.end_batch(record.batch_id, "gone", {"gone": len(record.task_ids)}, gone_reason(record, exc))
                out.append((record, f"gone at the provider (HTTP {exc.status}): closed here; the next run asks "
                                    "its requests again"))
            else:
                out.append((record, f"gone at the provider (HTTP {exc.status}): the next run closes it and asks its "
                                    "requests again (--cancel closes it now)"))
        finally:
            await client.aclose()
    return out


def _describe(state: BatchState) -> str:
    counts = ", ".join(f"{k} {v:,}" for k, v in state.counts.items() if v)
    return f"{state.status}" + (f" ({counts})" if counts else "")
