"""OpenAI's Batch API: the requests go up as one JSONL file (`/files`, purpose `batch`), a batch runs it within
24 hours at half the price, and its answers come back as an output file (and an error file) of
`{custom_id, response: {status_code, body}, error}` lines. A line's body is the live call's body, so a
batch answer is the answer the same live call would have cached."""

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
    completion_from,
    register_batches,
)
from engine.api.spec import Endpoint
from engine.builtin_plugins.providers.openai.client import live_client

CHAT = "/v1/chat/completions"
ENDED = ("completed", "failed", "expired", "cancelled")
OUTCOMES = {"batch_expired": "expired", "batch_cancelled": "cancelled"}  # an error line's code -> its outcome


@register_batches("openai", "openai-compatible")
class OpenAIBatches:
    max_requests = 50_000
    max_bytes = 200 * 1024 * 1024

    def __init__(self, endpoint: Endpoint):
        self.endpoint = endpoint
        self.live = live_client(endpoint)  # the request body, the key and the base URL, as live calls have them
        self.http = BatchHTTP(endpoint, self.live.base_url, {"Authorization": self.live.headers["Authorization"]})

    def line(self, custom_id: str, messages: Messages, params: dict[str, Any],
             schema: ResponseSchema | None) -> dict[str, Any]:
        return {"custom_id": custom_id, "method": "POST", "url": CHAT,
                "body": self.live.body(messages, params, schema)}

    async def submit(self, lines: list[bytes]) -> BatchState:
        upload = await self.http.json("POST", "/files", data={"purpose": "batch"},
                                      files={"file": ("vibe-batch.jsonl", b"".join(lines), "application/jsonl")})
        created = await self.http.json("POST", "/batches", json={"input_file_id": upload["id"], "endpoint": CHAT,
                                                                 "completion_window": "24h"})
        return _state(created)

    async def state(self, batch_id: str) -> BatchState:
        return _state(await self.http.json("GET", f"/batches/{batch_id}"))

    async def cancel(self, batch_id: str) -> BatchState:
        return _state(await self.http.json("POST", f"/batches/{batch_id}/cancel"))

    async def results(self, state: BatchState,
                      schemas: dict[str, ResponseSchema | None]) -> dict[str, Completion | BatchFailure]:
        return {line["custom_id"]: self._outcome(line) for file_id in state.results
                for line in await self.http.jsonl(f"/files/{file_id}/content")}

    def _outcome(self, line: dict[str, Any]) -> Completion | BatchFailure:
        response = line.get("response") or {}
        if response.get("status_code") == 200:
            try:
                return completion_from(response.get("body") or {}, self.endpoint, 0.0)
            except ProviderError as exc:
                return BatchFailure("errored", str(exc))
        error = line.get("error") or ((response.get("body") or {}).get("error")) or {}
        code = error.get("code") or response.get("status_code") or "error"
        return BatchFailure(OUTCOMES.get(str(code), "errored"),
                            f"{self.endpoint.name}: batch request {code}: {error.get('message') or 'no answer'}")

    async def aclose(self) -> None:
        await self.http.aclose()
        await self.live.aclose()


def _state(data: dict[str, Any]) -> BatchState:
    counts = {k: int(v) for k, v in (data.get("request_counts") or {}).items()}
    files = tuple(f for f in (data.get("output_file_id"), data.get("error_file_id")) if f)
    return BatchState(str(data["id"]), str(data.get("status")), data.get("status") in ENDED, counts, files)
