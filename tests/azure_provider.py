"""The README's example provider: Azure OpenAI's chat completions (the deployment in the path, the key in an
`api-key` header, the API version a setting of its own), added as this one module plus one line in
`engine.provider_table.PROVIDERS`
(tests/test_extensions.py adds it and runs it against the loopback server). Retries, pacing and the cache
stay in the scheduler; a provider only sends one call and reads its answer."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Annotated, Any

import httpx

from engine.api.providers import (
    Completion,
    Messages,
    ProviderError,
    ProviderSettings,
    ResponseSchema,
    Setting,
    api_key,
    error_from_status,
    register,
)
from engine.api.spec import Endpoint


@dataclass(frozen=True)
class AzureSettings(ProviderSettings):
    """Its own entry field, declared here alone (named in its `ProviderInfo` as `settings`)."""

    api_version: Annotated[str, Setting("the Azure OpenAI API version its calls ask for.")] = "2024-10-21"


@register("azure-openai")
class AzureOpenAI:
    def __init__(self, endpoint: Endpoint):
        self.endpoint = endpoint
        self.client = httpx.AsyncClient()

    async def complete(self, messages: Messages, params: dict[str, Any], timeout: float,
                       schema: ResponseSchema | None = None) -> Completion:
        url = f"{self.endpoint.base_url}/openai/deployments/{self.endpoint.model}/chat/completions"
        start = time.perf_counter()
        try:
            response = await self.client.post(url, params={"api-version": AzureSettings.of(self.endpoint).api_version},
                                              timeout=timeout, json={"messages": messages, **params},
                                              headers={"api-key": api_key(self.endpoint, "AZURE_OPENAI_API_KEY") or ""})
        except httpx.TimeoutException:
            raise ProviderError(f"{self.endpoint.name}: no answer within {timeout:g} s", retryable=True) from None
        if response.status_code != 200:
            raise error_from_status(response.status_code, response.text, response.headers, self.endpoint)
        data = response.json()
        choice, usage = data["choices"][0], data.get("usage", {})
        return Completion(choice["message"]["content"], usage.get("prompt_tokens", 0),
                          usage.get("completion_tokens", 0), data.get("model", ""), choice.get("finish_reason"),
                          meta={"latency_s": time.perf_counter() - start})

    async def aclose(self) -> None:
        await self.client.aclose()
