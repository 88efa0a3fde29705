"""Every built-in plug-in, by kind: the one place a built-in is listed. Each line maps the name a spec (or
`vibe export --to`) uses to the module whose import registers it, so generic code lists and validates names
without importing a plug-in; a plug-in's module is imported the first time its name is looked up.

Adding a built-in: write its module (a package for a method or a provider) under `engine/builtin_plugins/<kind>/`,
importing only the public API (`engine.api`) and itself, then add its line here. A plug-in in a package of its
own adds no line: it publishes the same under its kind's entry-point group (`vibe.analysis_methods`,
`vibe.judge_kinds`, `vibe.dataset_formats`, `vibe.providers`, `vibe.exporters`)."""

from __future__ import annotations

from engine.provider_info import ProviderInfo

_B = "engine.builtin_plugins"

METHODS: dict[str, str] = {
    "vibecheck": f"{_B}.methods.vibecheck.method",
    "separability": f"{_B}.methods.separability.method",
    "reference": f"{_B}.methods.reference.method",
    "personas": f"{_B}.methods.personas.method",
    "rankings": f"{_B}.methods.rankings.method",
    "agents": f"{_B}.methods.agents.method",
}

JUDGE_KINDS: dict[str, str] = {
    "llm": f"{_B}.judges.llm",
    "metric": f"{_B}.judges.metric",
    "embedding_axis": f"{_B}.judges.embedding_axis",
    "reference_similarity": f"{_B}.judges.reference_similarity",
    "unit_tests": f"{_B}.judges.unit_tests",
    "learned": f"{_B}.judges.learned.kind",
}

DATASET_FORMATS: dict[str, str] = {
    "wide": f"{_B}.formats.wide",
    "long": f"{_B}.formats.long",
    "battles": f"{_B}.formats.battles",
    "alpaca-eval": f"{_B}.formats.alpaca_eval",
    "llm-comparator": f"{_B}.formats.llm_comparator",
    "inspect-messages": f"{_B}.formats.inspect_messages",
    "inspect": f"{_B}.formats.inspect",
    "openai-messages": f"{_B}.formats.openai_messages",
    "mt-bench": f"{_B}.formats.mt_bench",
    "arena-conversations": f"{_B}.formats.arena_conversations",
    "agent-logs": f"{_B}.formats.agent_logs",
    "claude-code": f"{_B}.formats.claude_code",
    "codex": f"{_B}.formats.codex",
    "atif": f"{_B}.formats.atif",
    "otel-genai": f"{_B}.formats.otel_genai",
    "langfuse": f"{_B}.formats.langfuse",
    "langsmith": f"{_B}.formats.langsmith",
}

EXPORTERS: dict[str, str] = {
    "llm-comparator": f"{_B}.exporters.llm_comparator",
    "alpaca-eval": f"{_B}.exporters.alpaca_eval",
    "parquet": f"{_B}.exporters.parquet",
}

_OPENAI = f"{_B}.providers.openai.client"
PROVIDERS: dict[str, ProviderInfo] = {
    "openai": ProviderInfo(_OPENAI, f"{_B}.providers.openai.batches",
                           "OpenAI structured outputs (response_format json_schema, strict)"),
    "anthropic": ProviderInfo(f"{_B}.providers.anthropic.client", f"{_B}.providers.anthropic.batches",
                              "a forced tool whose input is the answer"),
    "openai-compatible": ProviderInfo(_OPENAI, f"{_B}.providers.openai.batches",
                                      "response_format json_schema (free text for the run if the server refuses it)",
                                      needs=("base_url", "model")),
    # llama.cpp's server answers one request at a time: more in flight only queue there and run into the client's
    # timeout (then the retry repeats the work). One at a time per model, with room for a long generation.
    "local": ProviderInfo(f"{_B}.providers.local.client", None, "a llama.cpp grammar built from the schema",
                          in_cluster=True, takes_key=False, limits={"concurrency": 1, "timeout_s": 600.0},
                          engine="llama.cpp", bundled=("smollm2-135m-instruct",), extra="local",
                          replica=f"{_B}.providers.local.engine:LlamaCppEngine",
                          serves=f"{_B}.providers.local.client:local_server"),
    # vLLM batches continuously: a replica is handed many calls at once
    "vllm": ProviderInfo(None, needs=(), judges=False, in_cluster=True, takes_key=False, engine="vllm",
                         cluster_only=True, gpus=1.0, replica=f"{_B}.providers.vllm.engine:VllmEngine",
                         replica_batch=256, requires={"vllm": "pip install vllm, here and on the GPU nodes"},
                         refuses={"base_url": "a vllm model runs in the cluster's own vLLM engines; for a vLLM "
                                              "server you started, use provider: openai-compatible with its base_url"}),
    "recorded": ProviderInfo(None, needs=(), takes_key=False, recorded=True,
                             refuses={field: "a recorded model makes no calls: params and price do not apply"
                                      for field in ("params", "price")}),
}
