"""Anthropic messages API through the official SDK (system prompt as a top-level field, images as base64
or URL source blocks). The SDK's own retries are off: the scheduler retries every provider alike."""

from __future__ import annotations

import json
import time
from typing import Any

import anthropic

from engine.api.providers import (
    Completion,
    Messages,
    ProviderError,
    ResponseSchema,
    api_key,
    html_instead_of_json,
    limits,
    read_image,
    register,
    sdk_errors,
    within,
)
from engine.api.spec import Endpoint


def _image_block(source: str) -> dict[str, Any]:
    if source.startswith(("http://", "https://")):
        return {"type": "image", "source": {"type": "url", "url": source}}
    mime, data = read_image(source)
    return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}


def to_anthropic(messages: Messages) -> tuple[str | None, list[dict[str, Any]]]:
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system") or None
    out = []
    for message in messages:
        if message["role"] == "system":
            continue
        content = message["content"]
        if isinstance(content, list):
            content = [_image_block(part["source"]) if part["type"] == "image" else part for part in content]
        out.append({"role": message["role"], "content": content})
    return system, out


def message_params(endpoint: Endpoint, messages: Messages, params: dict[str, Any],
                   schema: ResponseSchema | None) -> dict[str, Any]:
    """The Messages API request of one call, as sent live and as a batch request's `params`. A schema-held
    answer is a forced tool whose input is the answer."""
    system, turns = to_anthropic(messages)
    wire: dict[str, Any] = {"model": endpoint.model, "messages": turns, "max_tokens": params["max_tokens"]}
    if system:
        wire["system"] = system
    wire.update({key: params[key] for key in ("temperature", "top_p") if key in params})
    if "stop" in params:
        wire["stop_sequences"] = list(params["stop"])
    if schema is not None:
        wire["tools"] = [{"name": schema.name, "description": "Record your answer in this form.",
                          "input_schema": schema.schema}]
        wire["tool_choice"] = {"type": "tool", "name": schema.name}
    return wire


def completion_from(message: dict[str, Any], schema: ResponseSchema | None, endpoint: Endpoint,
                    latency_s: float) -> Completion:
    """A message's answer: its forced tool's input when the answer is schema-held, else its text."""
    blocks = message.get("content") or []
    if schema is not None:
        texts = [json.dumps(b.get("input"), ensure_ascii=False) for b in blocks
                 if b.get("type") == "tool_use" and b.get("name") == schema.name]
    else:
        texts = [b.get("text") or "" for b in blocks if b.get("type") == "text"]
    if not texts:
        wanted = "answer tool call" if schema is not None else "text content"
        raise ProviderError(f"{endpoint.name}: response has no {wanted}", retryable=True)
    usage = message.get("usage") or {}
    return Completion(text="".join(texts), input_tokens=usage.get("input_tokens") or 0,
                      output_tokens=usage.get("output_tokens") or 0, model=message.get("model") or endpoint.model,
                      finish_reason=message.get("stop_reason"),
                      meta={"id": message.get("id"), "latency_s": round(latency_s, 4)})


@register("anthropic")
class AnthropicProvider:
    def __init__(self, endpoint: Endpoint):
        self.endpoint = endpoint
        self.client = anthropic.AsyncAnthropic(
            api_key=api_key(endpoint, "ANTHROPIC_API_KEY"),
            base_url=endpoint.base_url,
            max_retries=0,
            # the SDK's own client class (its httpx flavour differs between SDK majors), sized for our concurrency
            http_client=anthropic.DefaultAsyncHttpxClient(limits=limits(endpoint)),
        )

    async def complete(self, messages: Messages, params: dict[str, Any], timeout: float,
                       schema: ResponseSchema | None = None) -> Completion:
        wire = message_params(self.endpoint, messages, params, schema)
        # newer SDK majors no longer take the sampling fields as arguments; the API still reads them
        sampling = {key: wire.pop(key) for key in ("temperature", "top_p") if key in wire}
        start = time.perf_counter()
        with sdk_errors(anthropic, self.endpoint, self.client.base_url, timeout):
            response = await within(self.client.messages.create(  # type: ignore[call-overload]  # a built dict
                **wire, timeout=timeout, **({"extra_body": sampling} if sampling else {})), self.endpoint, timeout)
        if (page := html_instead_of_json(self.endpoint, self.client.base_url, response)) is not None:
            raise page
        return completion_from(response.model_dump(), schema, self.endpoint, time.perf_counter() - start)

    async def aclose(self) -> None:
        await self.client.close()
