"""Run model calls concurrently: per-endpoint concurrency and rate limits, retries with backoff, and an
endpoint-level circuit breaker.

- Each endpoint has its own semaphore (`limits.concurrency`) and token buckets for requests and tokens
  per minute, so a slow or throttled provider never starves another.
- A retryable failure (429, 5xx, timeout, connection error, malformed body) waits `Retry-After` when the
  server sent one, else exponential backoff with full jitter, then tries again up to `limits.max_retries`.
- An endpoint-fatal failure (missing key, 401/403/404, a 400 before any success, a server that cannot be
  reached at all) stops that endpoint: its remaining tasks are recorded as skipped with that one reason,
  and every other endpoint carries on.
- A structured answer refused by the endpoint (an error naming the schema field; see `refuses_schema`) is
  asked again in free text, and every later call of that endpoint in the run goes in free text: the first
  refusal is remembered and reported (`fallbacks`), and each result records whether its answer was
  schema-constrained.
- Every success is written to the cache the moment it arrives.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.execute.cache import Cache
from engine.execute.providers import Completion, Provider, ProviderError, ResponseSchema, refuses_schema
from engine.records import Result, Task
from engine.spec.model import Endpoint
from engine.text_files import LONE_SURROGATE

Render = Callable[[Task], tuple[list[dict[str, Any]], dict[str, Any], ResponseSchema | None]]
OnResult = Callable[[Task, Result | None], None]
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0


@dataclass(frozen=True)
class Failure:
    task_id: str
    stage: str
    endpoint: str
    error: str
    attempts: int


class TokenBucket:
    """`rate_per_minute` units refill continuously; `acquire(n)` waits until n units are available."""

    def __init__(self, rate_per_minute: float):
        self.rate = rate_per_minute / 60.0
        self.capacity = rate_per_minute
        self.level = rate_per_minute
        self.updated = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self, amount: float = 1.0) -> None:
        amount = min(amount, self.capacity)
        async with self._lock:
            while True:
                now = time.monotonic()
                self.level = min(self.capacity, self.level + (now - self.updated) * self.rate)
                self.updated = now
                if self.level >= amount:
                    self.level -= amount
                    return
                await asyncio.sleep((amount - self.level) / self.rate)


@dataclass
class _EndpointState:
    endpoint: Endpoint
    provider: Provider | None
    semaphore: asyncio.Semaphore
    requests: TokenBucket | None
    tokens: TokenBucket | None
    stopped: str | None = None
    successes: int = 0
    free_text: str | None = None  # why this endpoint answers in free text for the rest of the run


def backoff_delay(attempt: int, retry_after: float | None, rng: random.Random) -> float:
    if retry_after is not None:
        return min(retry_after, 300.0)
    return rng.uniform(0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**attempt))


class Scheduler:
    def __init__(self, cache: Cache, endpoints: dict[str, Endpoint], providers: dict[str, Provider | ProviderError],
                 on_result: OnResult | None = None, seed: int = 0):
        self.cache = cache
        self.on_result = on_result or (lambda task, result: None)
        self.rng = random.Random(seed)
        self.states: dict[str, _EndpointState] = {}
        self.stop_messages: dict[str, str] = {}
        self.fallbacks: dict[str, str] = {}  # endpoint -> the refusal that turned its schemas off
        for name, endpoint in endpoints.items():
            provider = providers[name]
            limits = endpoint.limits
            state = _EndpointState(
                endpoint=endpoint,
                provider=None if isinstance(provider, ProviderError) else provider,
                semaphore=asyncio.Semaphore(limits.concurrency),
                requests=TokenBucket(limits.rpm) if limits.rpm else None,
                tokens=TokenBucket(limits.tpm) if limits.tpm else None,
            )
            if isinstance(provider, ProviderError):
                self._stop(state, str(provider))
            self.states[name] = state

    def _stop(self, state: _EndpointState, reason: str) -> None:
        if state.stopped is None:
            state.stopped = reason
            self.stop_messages[state.endpoint.name] = reason

    async def run(self, tasks: list[Task], render: Render) -> list[Failure]:
        results = await asyncio.gather(*(self._run_one(task, render) for task in tasks))
        return [r for r in results if r is not None]

    async def _run_one(self, task: Task, render: Render) -> Failure | None:
        state = self.states[task.endpoint]
        if state.stopped:
            self.on_result(task, None)
            return Failure(task.id, task.stage, task.endpoint, f"skipped: {state.stopped}", 0)
        messages, params, schema = render(task)
        limits = state.endpoint.limits
        async with state.semaphore:
            attempt = 0
            while True:
                if state.stopped:
                    self.on_result(task, None)
                    return Failure(task.id, task.stage, task.endpoint, f"skipped: {state.stopped}", attempt)
                if state.requests:
                    await state.requests.acquire(1)
                if state.tokens:
                    await state.tokens.acquire(task.input_tokens + task.output_tokens)
                attempt += 1
                if state.free_text:
                    schema = None
                try:
                    assert state.provider is not None
                    completion = await state.provider.complete(messages, params, limits.timeout_s, schema)
                except ProviderError as exc:
                    if schema is not None and refuses_schema(exc):
                        state.free_text = state.free_text or str(exc)
                        self.fallbacks.setdefault(state.endpoint.name, state.free_text)
                        attempt -= 1  # not a failure of the task: it is asked again at once, in free text
                        continue
                    fatal = exc.endpoint_fatal and (exc.status != 400 or state.successes == 0)
                    exhausted = attempt > limits.max_retries
                    if fatal or (exhausted and exc.status is None and state.successes == 0):
                        self._stop(state, str(exc))
                    if fatal or exhausted or not exc.retryable:
                        self.on_result(task, None)
                        return Failure(task.id, task.stage, task.endpoint, str(exc), attempt)
                    await asyncio.sleep(backoff_delay(attempt - 1, exc.retry_after, self.rng))
                    continue
                break
        state.successes += 1
        result = completed(task, state.endpoint, completion, attempt, structured=schema is not None)
        self.cache.put(result)
        self.on_result(task, result)
        return None


def completed(task: Task, endpoint: Endpoint, completion: Completion, attempts: int, *, structured: bool,
              ran_on: str | None = None) -> Result:
    """The cached result of a finished call, whichever backend made it."""
    # replaced rather than refused: the answer is paid for and otherwise usable; the count is kept
    text, replaced = LONE_SURROGATE.subn("\ufffd", completion.text)
    return Result(
        task_id=task.id, stage=task.stage, endpoint=task.endpoint, provider=task.provider,
        output=text, input_tokens=completion.input_tokens, output_tokens=completion.output_tokens,
        cost=endpoint.price.cost(completion.input_tokens, completion.output_tokens),
        latency_s=completion.meta.get("latency_s", 0.0),
        meta={"model": completion.model, "finish_reason": completion.finish_reason,
              "response_id": completion.meta.get("id"), "attempts": attempts,
              **({"lone_surrogates_replaced": replaced} if replaced else {}),
              **({"structured": structured} if "answer" in task.request else {}),
              **({"ran_on": ran_on} if ran_on else {})},
    )
