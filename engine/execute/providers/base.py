"""What every provider returns and raises, and the registry that maps a spec's `provider:` to a class.

Providers only translate: one request in, one `Completion` or one `ProviderError` out. Retrying, pacing
and bookkeeping belong to the scheduler, so every provider gets them the same way.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import email.utils
import mimetypes
import os
import re
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from engine.plugins import Plugins
from engine.provider_table import PROVIDERS
from engine.spec.model import Endpoint

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

Messages = list[dict[str, Any]]  # a chat: {"role", "content"} dicts, content text or a list of parts


@dataclass(frozen=True)
class Completion:
    """A model's answer to one call: its text, tokens in and out, the model that answered and why it stopped."""

    text: str
    input_tokens: int
    output_tokens: int
    model: str = ""
    finish_reason: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ResponseSchema:
    """A JSON schema the answer must follow, sent in each provider's own form; `name` is letters, digits,
    '_' and '-' only, as every provider requires."""

    name: str
    schema: dict[str, Any]


class ProviderError(Exception):
    """A failed call. `retryable` errors are retried with backoff; `endpoint_fatal` ones (bad key, unknown
    model, unreachable server) stop every remaining task of that endpoint with this one message."""

    def __init__(self, message: str, *, retryable: bool = False, endpoint_fatal: bool = False,
                 status: int | None = None, retry_after: float | None = None, body: str = "",
                 unreachable: bool = False):
        super().__init__(message)
        self.body = body
        self.unreachable = unreachable  # no connection could be made: says something of the endpoint, not the call
        self.retryable = retryable
        self.endpoint_fatal = endpoint_fatal
        self.status = status
        self.retry_after = retry_after


class Provider(Protocol):
    """What a registered provider client does: answer one chat (held to a schema where given) and close."""

    endpoint: Endpoint

    async def complete(self, messages: Messages, params: dict[str, Any], timeout: float,
                       schema: ResponseSchema | None = None) -> Completion: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class BatchState:
    """A provider batch as last seen: its status in the provider's words, whether it has ended (no more answers
    will come), request counts by outcome, and where its results are (`results`: the provider's file ids or
    URL)."""

    id: str
    status: str
    ended: bool
    counts: dict[str, int] = field(default_factory=dict)
    results: tuple[str, ...] = ()


@dataclass(frozen=True)
class BatchFailure:
    """A batch request that got no answer: its outcome in one word (errored, expired, cancelled), and why."""

    outcome: str
    reason: str


class BatchClient(Protocol):
    """A provider's batch API: requests rendered exactly as the live call's body, `custom_id` = task id."""

    endpoint: Endpoint
    max_requests: int
    max_bytes: int

    def line(self, custom_id: str, messages: Messages, params: dict[str, Any],
             schema: ResponseSchema | None) -> dict[str, Any]: ...

    async def submit(self, lines: list[bytes]) -> BatchState: ...

    async def state(self, batch_id: str) -> BatchState: ...

    async def results(self, state: BatchState,
                      schemas: dict[str, ResponseSchema | None]) -> dict[str, Completion | BatchFailure]:
        """custom_id -> its answer, or why it has none."""
        ...

    async def cancel(self, batch_id: str) -> BatchState: ...

    async def aclose(self) -> None: ...


ProviderFactory = Callable[[Endpoint], Provider]


class UnknownProvider(KeyError):
    pass


def _client_module(provider: str) -> str | None:
    return PROVIDERS[provider].client if provider in PROVIDERS else None


def _batch_module(provider: str) -> str | None:
    return PROVIDERS[provider].batches if provider in PROVIDERS else None


_CLIENTS: Plugins[ProviderFactory] = Plugins("provider", _client_module, UnknownProvider)
_BATCH_CLIENTS: Plugins[Callable[[Endpoint], BatchClient]] = Plugins("batch client", _batch_module, UnknownProvider)


def _registrar(plugins: Plugins[F]) -> Callable[..., Callable[[F], F]]:
    """A class decorator that registers a factory under each name it is given."""
    def register(*names: str) -> Callable[[F], F]:
        def decorate(factory: F) -> F:
            for name in names:
                plugins.add(name, factory)
            return factory

        return decorate

    return register


register = _registrar(_CLIENTS)  # @register("name"): the class (or factory) a provider's calls are made with
register_batches = _registrar(_BATCH_CLIENTS)  # @register_batches("name"): its client for batch jobs


def create_provider(endpoint: Endpoint) -> Provider:
    try:
        factory = _CLIENTS.get(endpoint.provider)
    except UnknownProvider:
        raise ProviderError(f"no provider named {endpoint.provider!r}", endpoint_fatal=True) from None
    return factory(endpoint)


def create_batch_client(endpoint: Endpoint) -> BatchClient:
    try:
        factory = _BATCH_CLIENTS.get(endpoint.provider)
    except UnknownProvider:
        raise ProviderError(f"{endpoint.name}: provider {endpoint.provider!r} has no batch API",
                            endpoint_fatal=True) from None
    return factory(endpoint)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header, which may hold delta-seconds or an HTTP-date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
ENDPOINT_FATAL_STATUS = frozenset({400, 401, 403, 404})


def error_from_status(status: int, body: str, headers: Any, endpoint: Endpoint) -> ProviderError:
    """The `ProviderError` an HTTP status says: whether to retry (429, 5xx and a few more), when (Retry-After),
    or to stop calling the endpoint (400, 401, 403, 404)."""
    retry_after = parse_retry_after(headers.get("retry-after")) if headers is not None else None
    summary = f"{endpoint.name}: HTTP {status} from {endpoint.provider} ({endpoint.model}): {body[:300]}"
    return ProviderError(summary, retryable=status in RETRYABLE_STATUS, endpoint_fatal=status in ENDPOINT_FATAL_STATUS,
                         status=status, retry_after=retry_after, body=body[:2000])


@contextlib.contextmanager
def sdk_errors(sdk: Any, endpoint: Endpoint, base_url: object, timeout: float) -> Iterator[None]:
    """Translate the exceptions of an official SDK (openai and anthropic share their shape) into
    ProviderError, so the scheduler treats every provider alike."""
    try:
        yield
    except sdk.APIStatusError as exc:
        raise error_from_status(exc.status_code, exc.response.text, exc.response.headers, endpoint) from None
    except sdk.APITimeoutError:
        raise timed_out(endpoint, timeout) from None
    except sdk.APIConnectionError as exc:
        raise ProviderError(f"{endpoint.name}: cannot reach {base_url} ({exc.__cause__ or exc})",
                            retryable=True, unreachable=True) from None
    except (sdk.APIResponseValidationError, ValueError) as exc:
        raise ProviderError(f"{endpoint.name}: malformed response ({exc})", retryable=True) from None


async def within(call: Awaitable[T], endpoint: Endpoint, timeout: float) -> T:
    """The whole call (connect, send, and the full response body) bounded by `timeout`: an HTTP client's own
    timeout restarts with every byte read, so a body that trickles in would never time out."""
    try:
        return await asyncio.wait_for(call, timeout)
    except TimeoutError:
        raise timed_out(endpoint, timeout) from None


def timed_out(endpoint: Endpoint, timeout: float) -> ProviderError:
    return ProviderError(f"{endpoint.name}: timed out after {timeout:g}s (timeout_s bounds the whole call, "
                         "the response body included)", retryable=True)


def html_instead_of_json(endpoint: Endpoint, base_url: object, response: object) -> ProviderError | None:
    """An endpoint that answers 200 with a web page rather than JSON: a wrong base_url or a proxy's page."""
    text = response if isinstance(response, str) else None
    if text is None or not text.lstrip().startswith("<"):
        return None
    shown = " ".join(re.sub(r"<[^>]*>", " ", text).split())[:120]
    return ProviderError(f"{endpoint.name}: {base_url} answered with HTML, not JSON (usually a wrong base_url or a "
                         f"proxy's page): {shown}", retryable=False, endpoint_fatal=True)


SCHEMA_FIELDS = re.compile(r"response_format|json_schema|input_schema|tool_choice|\btools?\b|grammar", re.IGNORECASE)


def refuses_schema(error: ProviderError) -> bool:
    """An error whose message names the schema's request field: the endpoint does not take structured answers
    (an older OpenAI-compatible server, a model without tool use), as opposed to a request wrong in itself.
    llama-cpp-python's server answers OpenAI's `json_schema` form with a 500 that names `response_format`."""
    return error.status in (400, 422, 500) and bool(SCHEMA_FIELDS.search(error.body))


def limits(endpoint: Endpoint) -> Any:
    """Connection-pool limits for an SDK's httpx client: enough connections for the endpoint's concurrency."""
    import httpx

    return httpx.Limits(max_connections=endpoint.limits.concurrency * 2,
                        max_keepalive_connections=endpoint.limits.concurrency * 2)


def read_image(path: str) -> tuple[str, str]:
    """(media type, base64 data) of a local image file, for providers that take inline images."""
    mime = mimetypes.guess_type(path)[0] or "image/png"
    with open(path, "rb") as fh:
        return mime, base64.b64encode(fh.read()).decode()


def api_key(endpoint: Endpoint, default_env: str | None) -> str | None:
    """The key from the environment variable the spec names; its value is never logged or stored."""
    env = endpoint.api_key_env or default_env
    if env is None:
        return None
    key = os.environ.get(env)
    if not key:
        raise ProviderError(f"{endpoint.name}: environment variable {env} is not set (it should hold the API key "
                            f"for {endpoint.provider})", endpoint_fatal=True)
    return key
