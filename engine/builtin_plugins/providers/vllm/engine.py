"""The vllm provider's engine on a GPU node of the Ray cluster: a vLLM engine over the replica's GPUs that
generates a whole batch of calls in one call."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from engine.api.providers import Call, Completion, Outcome, ResponseSchema, to_openai_messages

VLLM_HINT = "the vllm provider needs vLLM on the GPU nodes and on this machine: pip install vllm"


class VllmEngine:
    """A vLLM engine over `num_gpus` GPUs (tensor parallel); a batch of calls is one `LLM.chat` call, which
    vLLM schedules with continuous batching."""

    @classmethod
    def of(cls, model: str, num_cpus: float, num_gpus: float) -> VllmEngine:
        """As a replica of `num_gpus` GPUs holds it."""
        return cls(model, num_gpus)

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
