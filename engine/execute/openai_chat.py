"""OpenAI chat completions over plain HTTP (aiohttp, orjson): OpenAI itself and any OpenAI-compatible server (vLLM,
SGLang, llama.cpp's server, Ollama) via `base_url`. Part of the public API (`engine.api.providers`): a provider
whose server speaks this wire format (the built-in `openai`, `local`) reuses the client and its message and
schema converters rather than writing its own.

The wire format is small and stable, and at hundreds of calls in flight the client's CPU per call is what
limits a judge stage. The official SDK built typed request and response objects for every call, and httpx's
connection pool does work that grows with the square of its connections on every request (19 ms of CPU per
call at 256 in flight; 1.3 ms with the pool split in sixteen). aiohttp, which vLLM's and SGLang's own
serving benchmarks drive their servers with, keeps one connection pool per endpoint at a fraction of that, and
this provider sends the JSON body itself and reads the few fields it needs. Retrying, pacing and bookkeeping
stay in the scheduler, as for every provider.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import aiohttp
import orjson

from engine.execute.providers.base import (
    Completion,
    Messages,
    ProviderError,
    ResponseSchema,
    api_key,
    error_from_status,
    html_instead_of_json,
    read_image,
    within,
)
from engine.spec.model import Endpoint

OPENAI_URL = "https://api.openai.com/v1"


def image_url(source: str) -> str:
    """An image part's URL: http(s) and data: URLs pass through; a local file is inlined as base64."""
    if source.startswith(("http://", "https://", "data:")):
        return source
    mime, data = read_image(source)
    return f"data:{mime};base64,{data}"


def to_openai_messages(messages: Messages) -> list[dict[str, Any]]:
    """vibe's messages in OpenAI's chat format (an image part as an `image_url`)."""
    out = []
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            content = [{"type": "image_url", "image_url": {"url": image_url(part["source"])}}
                       if part["type"] == "image" else part for part in content]
        out.append({"role": message["role"], "content": content})
    return out


def json_schema_format(schema: ResponseSchema) -> dict[str, Any]:
    """OpenAI structured outputs (strict), as OpenAI-compatible servers (vLLM, llama.cpp's own server) also
    read them."""
    return {"type": "json_schema", "json_schema": {"name": schema.name, "strict": True, "schema": schema.schema}}


def _loads(content: bytes) -> Any:
    """orjson, or the standard library's parser for the JSON orjson refuses but the standard allows: an escaped
    lone surrogate (\\ud83d without its pair), which a model cut mid-emoji produces; the scheduler replaces it."""
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        return json.loads(content)


def completion_from(data: Any, endpoint: Endpoint, latency_s: float) -> Completion:
    """A chat completion's answer, usage and identity (a live response, or one line of a batch's output)."""
    try:
        choice = data["choices"][0] if data.get("choices") else None
    except (AttributeError, TypeError, KeyError) as exc:
        raise ProviderError(f"{endpoint.name}: malformed response ({exc})", retryable=True) from None
    if choice is None:
        raise ProviderError(f"{endpoint.name}: response has no choices", retryable=True)
    usage = data.get("usage") or {}
    return Completion(
        text=(choice.get("message") or {}).get("content") or "",
        input_tokens=usage.get("prompt_tokens") or 0,
        output_tokens=usage.get("completion_tokens") or 0,
        model=data.get("model") or endpoint.model,
        finish_reason=choice.get("finish_reason"),
        meta={"id": data.get("id"), "latency_s": round(latency_s, 4)},
    )


class OpenAIProvider:
    """A client for any server that speaks OpenAI's chat completions (OpenAI, vLLM, llama.cpp, a gateway).

    `key_env`: the variable the key is read from where the endpoint names no `api_key_env` (None: a server that
    needs no key); `response_format`: how a judge's answer schema is sent, for servers that take another form."""

    def __init__(self, endpoint: Endpoint, base_url: str | None = None,
                 response_format: Callable[[ResponseSchema], dict[str, Any]] = json_schema_format,
                 key_env: str | None = None):
        self.endpoint = endpoint
        self.response_format = response_format
        key = api_key(endpoint, key_env)
        self.base_url = (base_url or endpoint.base_url or OPENAI_URL).rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self.headers = {"Authorization": f"Bearer {key or 'not-needed'}", "Content-Type": "application/json"}
        self.session: aiohttp.ClientSession | None = None  # made in the event loop that uses it

    def _session(self) -> aiohttp.ClientSession:
        """One connection pool per endpoint, as many connections as its concurrency. The whole-call bound is
        `within`, so aiohttp's own timeouts are off."""
        if self.session is None:
            connector = aiohttp.TCPConnector(limit=self.endpoint.limits.concurrency, limit_per_host=0)
            self.session = aiohttp.ClientSession(connector=connector, headers=self.headers,
                                                 timeout=aiohttp.ClientTimeout(total=None))
        return self.session

    def body(self, messages: Messages, params: dict[str, Any], schema: ResponseSchema | None = None) -> dict[str, Any]:
        """The request body of one call, as sent live and as a batch line carries it."""
        body = {"model": self.endpoint.model, "messages": to_openai_messages(messages), **params}
        if schema is not None:
            body["response_format"] = self.response_format(schema)
        return body

    async def complete(self, messages: Messages, params: dict[str, Any], timeout: float,
                       schema: ResponseSchema | None = None) -> Completion:
        start = time.perf_counter()
        status, headers, content = await within(self._post(orjson.dumps(self.body(messages, params, schema))),
                                                self.endpoint, timeout)
        if status != 200:
            raise error_from_status(status, content.decode("utf-8", "replace"), headers, self.endpoint)
        page = (html_instead_of_json(self.endpoint, self.base_url, content.decode("utf-8", "replace"))
                if content.lstrip()[:1] == b"<" else None)
        if page is not None:
            raise page
        try:
            data = _loads(content)
        except ValueError as exc:
            raise ProviderError(f"{self.endpoint.name}: malformed response ({exc})", retryable=True) from None
        return completion_from(data, self.endpoint, time.perf_counter() - start)

    async def _post(self, payload: bytes) -> tuple[int, Any, bytes]:
        """(status, headers, body) of one POST, the body read whole."""
        try:
            async with self._session().post(self.url, data=payload) as response:
                return response.status, response.headers, await response.read()
        except aiohttp.ClientConnectorError as exc:
            raise ProviderError(f"{self.endpoint.name}: cannot reach {self.base_url} ({exc})", retryable=True,
                                unreachable=True) from None
        except aiohttp.ClientError as exc:  # the connection dropped mid-exchange (a reset, a closed socket)
            raise ProviderError(f"{self.endpoint.name}: connection to {self.base_url} dropped "
                                f"({type(exc).__name__}: {exc})", retryable=True) from None

    async def aclose(self) -> None:
        if self.session is not None:
            await self.session.close()
