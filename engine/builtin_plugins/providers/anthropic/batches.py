"""Anthropic's Message Batches: one POST of `{requests: [{custom_id, params}]}`, processed within 24 hours at
half the price; once `processing_status` is `ended`, `results_url` gives a JSONL line per request whose result
is `succeeded` (with the message), `errored`, `canceled` or `expired`. A request's `params` are the live
call's, forced answer tool included."""

from __future__ import annotations

from typing import Any

from engine.api.providers import (
    BatchFailure,
    BatchHTTP,
    BatchState,
    Completion,
    Messages,
    ProviderError,
    ResponseSchema,
    api_key,
    register_batches,
)
from engine.api.spec import Endpoint
from engine.builtin_plugins.providers.anthropic.client import completion_from, message_params

ANTHROPIC_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"


@register_batches("anthropic")
class AnthropicBatches:
    max_requests = 100_000
    max_bytes = 256 * 1024 * 1024

    def __init__(self, endpoint: Endpoint):
        self.endpoint = endpoint
        self.http = BatchHTTP(endpoint, (endpoint.base_url or ANTHROPIC_URL).rstrip("/"), {
            "x-api-key": api_key(endpoint, "ANTHROPIC_API_KEY") or "", "anthropic-version": API_VERSION})

    def line(self, custom_id: str, messages: Messages, params: dict[str, Any],
             schema: ResponseSchema | None) -> dict[str, Any]:
        return {"custom_id": custom_id, "params": message_params(self.endpoint, messages, params, schema)}

    async def submit(self, lines: list[bytes]) -> BatchState:
        body = b'{"requests":[' + b",".join(line.rstrip(b"\n") for line in lines) + b"]}"
        return _state(await self.http.json("POST", "/v1/messages/batches", content=body,
                                           headers={"content-type": "application/json"}))

    async def state(self, batch_id: str) -> BatchState:
        return _state(await self.http.json("GET", f"/v1/messages/batches/{batch_id}"))

    async def cancel(self, batch_id: str) -> BatchState:
        return _state(await self.http.json("POST", f"/v1/messages/batches/{batch_id}/cancel"))

    async def results(self, state: BatchState,
                      schemas: dict[str, ResponseSchema | None]) -> dict[str, Completion | BatchFailure]:
        return {line["custom_id"]: self._outcome(line, schemas.get(line["custom_id"])) for url in state.results
                for line in await self.http.jsonl(url)}

    def _outcome(self, line: dict[str, Any], schema: ResponseSchema | None) -> Completion | BatchFailure:
        result = line.get("result") or {}
        if result.get("type") == "succeeded":
            try:
                return completion_from(result.get("message") or {}, schema, self.endpoint, 0.0)
            except ProviderError as exc:
                return BatchFailure("errored", str(exc))
        kind = result.get("type") or "without a result"
        error = ((result.get("error") or {}).get("error") or {}).get("message") or ""
        return BatchFailure({"expired": "expired", "canceled": "cancelled"}.get(kind, "errored"),
                            f"{self.endpoint.name}: batch request {kind}" + (f": {error}" if error else ""))

    async def aclose(self) -> None:
        await self.http.aclose()


def _state(data: dict[str, Any]) -> BatchState:
    counts = {k: int(v) for k, v in (data.get("request_counts") or {}).items()}
    url = data.get("results_url")
    return BatchState(str(data["id"]), str(data.get("processing_status")), data.get("processing_status") == "ended",
                      counts, (url,) if url else ())
