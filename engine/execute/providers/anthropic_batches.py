"""Anthropic's Message Batches: one POST of `{requests: [{custom_id, params}]}`, processed within 24 hours at
half the price; once `processing_status` is `ended`, `results_url` gives a JSONL line per request whose result
is `succeeded` (with the message), `errored`, `canceled` or `expired`. A request's `params` are the live
call's, forced answer tool included."""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from engine.execute.providers.anthropic_api import completion_from, message_params
from engine.execute.providers.base import (
    BatchState,
    Completion,
    Messages,
    ProviderError,
    ResponseSchema,
    api_key,
    check_http,
    register_batches,
)
from engine.spec.model import Endpoint

ANTHROPIC_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"


@register_batches("anthropic")
class AnthropicBatches:
    max_requests = 100_000
    max_bytes = 256 * 1024 * 1024

    def __init__(self, endpoint: Endpoint):
        self.endpoint = endpoint
        self.base_url = (endpoint.base_url or ANTHROPIC_URL).rstrip("/")
        self.http = httpx.AsyncClient(base_url=self.base_url, timeout=endpoint.limits.timeout_s, headers={
            "x-api-key": api_key(endpoint, "ANTHROPIC_API_KEY") or "", "anthropic-version": API_VERSION})

    def line(self, custom_id: str, messages: Messages, params: dict[str, Any],
             schema: ResponseSchema | None) -> dict[str, Any]:
        return {"custom_id": custom_id, "params": message_params(self.endpoint, messages, params, schema)}

    async def submit(self, lines: list[bytes]) -> BatchState:
        body = b'{"requests":[' + b",".join(line.rstrip(b"\n") for line in lines) + b"]}"
        return _state(await self._send("POST", "/v1/messages/batches", content=body,
                                       headers={"content-type": "application/json"}))

    async def state(self, batch_id: str) -> BatchState:
        return _state(await self._send("GET", f"/v1/messages/batches/{batch_id}"))

    async def cancel(self, batch_id: str) -> BatchState:
        return _state(await self._send("POST", f"/v1/messages/batches/{batch_id}/cancel"))

    async def results(self, state: BatchState,
                      schemas: dict[str, ResponseSchema | None]) -> dict[str, Completion | str]:
        out: dict[str, Completion | str] = {}
        for url in state.results:
            response = check_http(await self._request("GET", url), self.endpoint)
            for raw in response.content.splitlines():
                if raw.strip():
                    line = orjson.loads(raw)
                    out[line["custom_id"]] = self._outcome(line, schemas.get(line["custom_id"]))
        return out

    def _outcome(self, line: dict[str, Any], schema: ResponseSchema | None) -> Completion | str:
        result = line.get("result") or {}
        if result.get("type") == "succeeded":
            try:
                return completion_from(result.get("message") or {}, schema, self.endpoint, 0.0)
            except ProviderError as exc:
                return str(exc)
        error = ((result.get("error") or {}).get("error") or {}).get("message") or ""
        return f"{self.endpoint.name}: batch request {result.get('type') or 'without a result'}" + (
            f": {error}" if error else "")

    async def _request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            return await self.http.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise ProviderError(f"{self.endpoint.name}: batch API at {self.base_url} unreachable ({exc})",
                                retryable=True, unreachable=True) from None

    async def _send(self, method: str, url: str, **kwargs: Any) -> dict[str, Any]:
        response = check_http(await self._request(method, url, **kwargs), self.endpoint)
        try:
            return dict(response.json())
        except ValueError as exc:
            raise ProviderError(f"{self.endpoint.name}: malformed batch API answer ({exc})", retryable=True) from None

    async def aclose(self) -> None:
        await self.http.aclose()


def _state(data: dict[str, Any]) -> BatchState:
    counts = {k: int(v) for k, v in (data.get("request_counts") or {}).items()}
    url = data.get("results_url")
    return BatchState(str(data["id"]), str(data.get("processing_status")), data.get("processing_status") == "ended",
                      counts, (url,) if url else ())
