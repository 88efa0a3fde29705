"""Model engines held in process: what a Ray actor (one model replica) runs.

`LlamaCppEngine` loads a GGUF exactly as llama-cpp-python's OpenAI-compatible server loads it, and turns each
call into the server's own request record before calling the model, so a generation on the Ray backend is
the generation the local backend gets through that server: same defaults, same grammar for a JSON answer,
same seed handling, and (as there) a fresh context for every call, so an answer does not depend on which
replica served which requests before it. `VllmEngine` holds a vLLM engine on a GPU node and generates a whole
batch in one call.

A call is (messages, params, answer schema or None); an outcome is a `Completion`, or the error message of a
call the engine refused (a prompt longer than the context, say), which is that task's failure, not the
replica's.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

from engine.execute.providers.base import Completion, Messages, ResponseSchema
from engine.execute.providers.llama_server import from_fresh_context
from engine.execute.providers.local import N_CTX, bundled_gguf
from engine.execute.providers.openai_api import json_object_format, to_openai_messages
from engine.execute.ray_cluster import VLLM_HINT
from engine.provider_table import engine_of

Call = tuple[Messages, dict[str, Any], ResponseSchema | None]
Outcome = Completion | str


class Engine(Protocol):
    def generate(self, calls: Sequence[Call]) -> list[Outcome]: ...


class LlamaCppEngine:
    """One GGUF in this process, `n_threads` threads for generation and for prompt processing."""

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


class VllmEngine:
    """A vLLM engine over `num_gpus` GPUs (tensor parallel); a batch of calls is one `LLM.chat` call, which
    vLLM schedules with continuous batching."""

    def __init__(self, model: str, num_gpus: float):
        try:
            from vllm import LLM
        except ImportError:
            raise RuntimeError(VLLM_HINT) from None
        self.model = model
        self.llm = LLM(model=model, tensor_parallel_size=max(1, int(num_gpus)))

    def generate(self, calls: Sequence[Call]) -> list[Outcome]:
        start = time.perf_counter()
        outputs = self.llm.chat([to_openai_messages(m) for m, _, _ in calls],
                                [self._sampling(p, s) for _, p, s in calls], use_tqdm=False)
        latency = round((time.perf_counter() - start) / max(1, len(calls)), 4)
        return [Completion(text=out.outputs[0].text, input_tokens=len(out.prompt_token_ids or ()),
                           output_tokens=len(out.outputs[0].token_ids), model=self.model,
                           finish_reason=out.outputs[0].finish_reason,
                           meta={"id": f"vllm-{out.request_id}", "latency_s": latency}) for out in outputs]

    @staticmethod
    def _sampling(params: dict[str, Any], schema: ResponseSchema | None) -> Any:
        import vllm

        extra: dict[str, Any] = {}
        if schema is not None:  # the answer held to its JSON schema by vLLM's structured decoding
            if hasattr(vllm.sampling_params, "StructuredOutputsParams"):
                extra["structured_outputs"] = vllm.sampling_params.StructuredOutputsParams(json=schema.schema)
            else:
                extra["guided_decoding"] = vllm.sampling_params.GuidedDecodingParams(json=schema.schema)
        known = ("temperature", "top_p", "max_tokens", "seed", "stop")
        return vllm.SamplingParams(**{k: params[k] for k in known if k in params}, **extra)


def make_engine(provider: str, model: str, num_cpus: float, num_gpus: float) -> Engine:
    if engine_of(provider) == "vllm":
        return VllmEngine(model, num_gpus)
    return LlamaCppEngine(model, n_threads=max(1, int(num_cpus)))
