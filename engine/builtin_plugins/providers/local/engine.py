"""The local provider's model held in process, as a Ray replica holds it: a GGUF loaded exactly as
llama-cpp-python's OpenAI-compatible server loads it, each call turned into the server's own request record
before the model is called, so a generation on the Ray backend is the generation the local backend gets through
that server: same defaults, same grammar for a JSON answer, same seed handling, and (as there) a fresh context
for every call, so an answer does not depend on which replica served which requests before it."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from engine.api.providers import (
    Call,
    Completion,
    Messages,
    Outcome,
    ResponseSchema,
    to_openai_messages,
)
from engine.builtin_plugins.providers.local.client import N_CTX, bundled_gguf, json_object_format
from engine.builtin_plugins.providers.local.server import from_fresh_context


class LlamaCppEngine:
    """One GGUF in this process, `n_threads` threads for generation and for prompt processing."""

    @classmethod
    def of(cls, model: str, num_cpus: float, num_gpus: float) -> LlamaCppEngine:
        """As a replica of `num_cpus` CPUs holds it: that many threads."""
        return cls(model, n_threads=max(1, int(num_cpus)))

    def __init__(self, model: str, n_threads: int):
        from llama_cpp.server.model import LlamaProxy
        from llama_cpp.server.settings import ModelSettings

        self.model = model
        settings = ModelSettings(model=str(bundled_gguf(model)), model_alias=model, n_threads=n_threads,
                                 n_threads_batch=n_threads, n_ctx=N_CTX, verbose=False)
        self.llama = LlamaProxy.load_llama_from_model_settings(settings)

    def generate(self, calls: Sequence[Call]) -> list[Outcome]:
        return [self._one(*call) for call in calls]

    def _one(self, messages: Messages, params: dict[str, Any], schema: ResponseSchema | None) -> Outcome:
        from llama_cpp.server.app import prepare_request_resources
        from llama_cpp.server.types import CreateChatCompletionRequest

        start = time.perf_counter()
        body = CreateChatCompletionRequest.model_validate({
            "model": self.model, "messages": to_openai_messages(messages), **params,
            **({"response_format": json_object_format(schema)} if schema is not None else {})})
        # the server's own steps: the body's fields as keyword arguments, minus those it handles itself
        kwargs = body.model_dump(exclude={"n", "logit_bias_type", "user", "min_tokens"})
        # the server passes its model pool; anything that maps a model name to a Llama will do
        llama = prepare_request_resources(body, lambda _name: self.llama, body.model, kwargs)  # type: ignore[arg-type]
        try:
            response: Any = from_fresh_context(type(llama).create_chat_completion)(llama, **kwargs)
        except ValueError as exc:  # e.g. the prompt does not fit the context
            return f"{self.model}: {exc}"
        choice, usage = response["choices"][0], response["usage"]
        return Completion(text=choice["message"]["content"] or "", input_tokens=usage["prompt_tokens"],
                          output_tokens=usage["completion_tokens"], model=response["model"],
                          finish_reason=choice["finish_reason"],
                          meta={"id": response["id"], "latency_s": round(time.perf_counter() - start, 4)})
