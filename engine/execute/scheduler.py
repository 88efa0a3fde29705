"""Run model calls concurrently: per-endpoint concurrency and rate limits, retries with backoff, and an
endpoint-level circuit breaker.

- Each endpoint has its own semaphore (`limits.concurrency`) and token buckets for requests and tokens
  per minute, so a slow or throttled provider never starves another.
- A retryable failure (429, 5xx, timeout, connection error, malformed body) waits `Retry-After` when the
  server sent one, else exponential backoff with full jitter, then tries again up to `limits.max_retries`.
- A failure that points at the endpoint rather than the call (missing key, 401/403/404, a web page instead
  of JSON, a 400 before any success, a refused connection) stops that endpoint at once while it has never
  answered, and so does a call that used up its retries without any answer (every attempt timed out or
  dropped): a wrong base_url or key, or a hung server, costs a few calls, and its remaining tasks are recorded
  as skipped with that one reason. Once it has answered, such failures are retried within each call's budget and feed a
  circuit breaker instead: BREAKER_THRESHOLD of them in a row (no success between) open it, calls wait
  BREAKER_COOLDOWN_S, then one probe goes through; its success closes the breaker, its failure stops the
  endpoint for good, with what tripped it. One odd page in a 50,000-call stage costs one retry, not the
  stage; every other endpoint carries on either way.
- A structured answer refused by the endpoint (an error naming the schema field; see `refuses_schema`) is
  asked again in free text, and every later call of that endpoint in the run goes in free text: the first
  refusal is remembered and reported (`fallbacks`), and each result records whether its answer was
  schema-constrained.
- Successes are committed to the cache in batches, every FLUSH_S or FLUSH_AT results, whichever comes first,
  and at the end of the run however it ends (an interrupt included): one transaction per call was a large
  share of the client's CPU at hundreds of calls in flight. A killed process loses at most FLUSH_S of
  answers besides the calls in flight; a re-run asks for exactly what is missing.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
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
FLUSH_S = 0.25
FLUSH_AT = 512
BREAKER_THRESHOLD = 5
BREAKER_COOLDOWN_S = 5.0


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
class Breaker:
    """The circuit breaker of one endpoint (see the module docstring): closed, open since `opened_at`, or
    half-open while its one probe is in flight."""

    threshold: int = BREAKER_THRESHOLD
    cooldown_s: float = BREAKER_COOLDOWN_S
    in_a_row: int = 0
    opened_at: float | None = None
    probing: bool = False

    def success(self) -> None:
        self.in_a_row, self.opened_at, self.probing = 0, None, False

    def inconclusive(self) -> None:
        """The probe failed in a way that says nothing of the endpoint (a 500, a timeout): wait again."""
        self.opened_at, self.probing = time.monotonic(), False

    def failure(self, probe: bool) -> bool:
        """Count a failure that points at the endpoint; True when the endpoint should stop for good (the
        half-open probe failed)."""
        if probe:
            return True
        self.in_a_row += 1
        if self.in_a_row >= self.threshold and self.opened_at is None:
            self.opened_at = time.monotonic()
        return False

    async def admit(self, stopped: Callable[[], bool]) -> bool:
        """Wait while the breaker is open; True when this call is the half-open probe."""
        while self.opened_at is not None and not stopped():
            if not self.probing and time.monotonic() - self.opened_at >= self.cooldown_s:
                self.probing = True
                return True
            await asyncio.sleep(0.05)
        return False


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
    breaker: Breaker = field(default_factory=Breaker)


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
        self._unwritten: list[Result] = []  # answers not yet committed (see FLUSH_S)
        for name, endpoint in endpoints.items():
            provider = providers[name]
            limits = endpoint.limits
            state = _EndpointState(
                endpoint=endpoint,
                provider=None if isinstance(provider, ProviderError) else provider,
                semaphore=asyncio.Semaphore(limits.concurrency),
                requests=TokenBucket(limits.rpm) if limits.rpm else None,
                tokens=TokenBucket(limits.tpm) if limits.tpm else None,
                breaker=Breaker(BREAKER_THRESHOLD, BREAKER_COOLDOWN_S),
            )
            if isinstance(provider, ProviderError):
                self._stop(state, str(provider))
            self.states[name] = state

    def _stop(self, state: _EndpointState, reason: str) -> None:
        if state.stopped is None:
            state.stopped = reason
            self.stop_messages[state.endpoint.name] = reason

    async def run(self, tasks: list[Task], render: Render) -> list[Failure]:
        flusher = asyncio.create_task(self._flush_every(FLUSH_S))
        try:
            results = await asyncio.gather(*(self._run_one(task, render) for task in tasks))
        finally:
            flusher.cancel()
            self._flush()
        return [r for r in results if r is not None]

    async def _flush_every(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            self._flush()

    def _flush(self) -> None:
        if self._unwritten:
            batch, self._unwritten = self._unwritten, []
            self.cache.put_many(batch)

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
                probe = await state.breaker.admit(lambda: state.stopped is not None)
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
                    # a 400 after the endpoint has answered is this request's own fault: not retried, not counted
                    indicts = (exc.endpoint_fatal and (exc.status != 400 or state.successes == 0)) or exc.unreachable
                    exhausted = attempt > limits.max_retries
                    if state.successes == 0 and (exc.endpoint_fatal or (exhausted and exc.status is None)):
                        self._stop(state, str(exc))  # it has never answered: nothing suggests it will
                    elif indicts and state.breaker.failure(probe):
                        self._stop(state, f"circuit breaker: {state.breaker.in_a_row} failures in a row that point at "
                                          f"the endpoint, and the probe after a {state.breaker.cooldown_s:g} s pause "
                                          f"failed too; last: {exc}")
                    elif probe:
                        state.breaker.inconclusive()
                    if state.stopped or exhausted or not (exc.retryable or indicts):
                        self.on_result(task, None)
                        return Failure(task.id, task.stage, task.endpoint, str(exc), attempt)
                    await asyncio.sleep(backoff_delay(attempt - 1, exc.retry_after, self.rng))
                    continue
                break
        state.successes += 1
        state.breaker.success()
        result = completed(task, state.endpoint, completion, attempt, structured=schema is not None)
        self._unwritten.append(result)
        if len(self._unwritten) >= FLUSH_AT:
            self._flush()
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
