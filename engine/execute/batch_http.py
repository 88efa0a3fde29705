"""The HTTP both providers' batch clients speak: one httpx client per endpoint, every answer checked (a 2xx, JSON,
not a proxy's web page), a lost connection retryable, and JSONL result files read line by line."""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from engine.execute.providers.base import ProviderError, error_from_status, html_instead_of_json
from engine.spec.model import Endpoint


class BatchHTTP:
    """The HTTP a batch client speaks (upload, create, poll, download), with every failure a `ProviderError`."""

    def __init__(self, endpoint: Endpoint, base_url: str, headers: dict[str, str]):
        self.endpoint, self.base_url = endpoint, base_url
        self.client = httpx.AsyncClient(base_url=base_url, timeout=endpoint.limits.timeout_s, headers=headers)

    async def response(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """A 2xx answer; else the ProviderError its status (or the lost connection) says."""
        try:
            response = await self.client.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise ProviderError(f"{self.endpoint.name}: batch API at {self.base_url} unreachable ({exc})",
                                retryable=True, unreachable=True) from None
        if response.status_code // 100 != 2:
            raise error_from_status(response.status_code, response.text, response.headers, self.endpoint)
        if (page := html_instead_of_json(self.endpoint, response.url, response.text)) is not None:
            raise page
        return response

    async def json(self, method: str, url: str, **kwargs: Any) -> dict[str, Any]:
        response = await self.response(method, url, **kwargs)
        try:
            return dict(response.json())
        except ValueError as exc:
            raise ProviderError(f"{self.endpoint.name}: malformed batch API answer ({exc})", retryable=True) from None

    async def jsonl(self, url: str) -> list[dict[str, Any]]:
        """The lines of a results file."""
        content = (await self.response("GET", url)).content
        return [orjson.loads(raw) for raw in content.splitlines() if raw.strip()]

    async def aclose(self) -> None:
        await self.client.aclose()
