"""Every provider a model or an LLM judge may name, declared once.

The spec's schema takes its provider lists from here, the spec checks and the planner read what each
provider can do, and the executor imports a provider's client module (which registers it) on first use.

Adding a provider: write its client module (`engine/execute/providers/<name>.py`, registering with
`@register("<name>")`), then add its line here; or, from a package of your own, publish its `ProviderInfo`
under the `vibe.providers` entry-point group.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field

from engine.plugins import entry_point, entry_point_names


@dataclass(frozen=True)
class ProviderInfo:
    client: str | None  # the module whose import registers its client; None: it makes no calls
    batches: str | None = None  # the module registering its batch client, where the provider has batches
    schema_form: str = "response_format json_schema"  # how it is held to a judge's answer schema (`vibe plan`)
    needs: tuple[str, ...] = ("model",)  # entry fields the schema requires with it
    judges: bool = True  # an LLM judge may name it
    in_cluster: bool = False  # its weights are held by the Ray backend's own actors
    takes_key: bool = True  # it reads an API key from api_key_env
    limits: Mapping[str, float] = field(default_factory=dict)  # its endpoints' default limits, before the spec's
    recorded: bool = False  # its answers are read from the dataset: it is never called, nothing is generated
    # The engine that holds its weights in this process or the cluster (None: it is reached over HTTP):
    # "llama.cpp" serves here (a server the run starts) or in Ray actors, "vllm" only in Ray actors.
    engine: str | None = None
    replica: str | None = None  # `module:Class` of the engine a Ray replica holds its weights in (`Class.of`)
    serves: str | None = None  # `module:function`: a context manager serving its models here while a run calls them
    cluster_only: bool = False  # it runs only on the Ray backend
    bundled: tuple[str, ...] = ()  # model names it ships weights for; any other model names a weights file
    refuses: Mapping[str, str] = field(default_factory=dict)  # entry fields it cannot take -> why (a located error)
    gpus: float = 0.0  # GPUs one replica holds by default on the Ray backend
    extra: str = ""  # the vibe-bench extra its client needs installed ("": none beyond the core)


class _Table(MutableMapping[str, ProviderInfo]):
    """The built-in providers, then those installed packages publish under ENTRY_POINTS: read on first use,
    since a package's module imports vibe's public API, which imports this module."""

    def __init__(self, builtin: dict[str, ProviderInfo]):
        self._table = builtin
        self._published = False

    def _all(self) -> dict[str, ProviderInfo]:
        if not self._published:
            self._published = True
            for name in entry_point_names(ENTRY_POINTS):
                self._table.setdefault(name, entry_point(ENTRY_POINTS, name).load())
        return self._table

    def __getitem__(self, name: str) -> ProviderInfo:
        return self._all()[name]

    def __setitem__(self, name: str, info: ProviderInfo) -> None:
        self._all()[name] = info

    def __delitem__(self, name: str) -> None:
        del self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


ENTRY_POINTS = "vibe.providers"  # a package publishes a ProviderInfo under its provider's name
OPENAI = "engine.execute.providers.openai_api"
PROVIDERS: MutableMapping[str, ProviderInfo] = _Table({
    "openai": ProviderInfo(OPENAI, "engine.execute.providers.openai_batches",
                           "OpenAI structured outputs (response_format json_schema, strict)"),
    "anthropic": ProviderInfo("engine.execute.providers.anthropic_api", "engine.execute.providers.anthropic_batches",
                              "a forced tool whose input is the answer"),
    "openai-compatible": ProviderInfo(OPENAI, "engine.execute.providers.openai_batches",
                                      "response_format json_schema (free text for the run if the server refuses it)",
                                      needs=("base_url", "model")),
    # llama.cpp's server answers one request at a time: more in flight only queue there and run into the client's
    # timeout (then the retry repeats the work). One at a time per model, with room for a long generation.
    "local": ProviderInfo("engine.execute.providers.local", None, "a llama.cpp grammar built from the schema",
                          in_cluster=True, takes_key=False, limits={"concurrency": 1, "timeout_s": 600.0},
                          engine="llama.cpp", bundled=("smollm2-135m-instruct",), extra="local",
                          replica="engine.execute.providers.llama_engine:LlamaCppEngine",
                          serves="engine.execute.providers.local:local_server"),
    "vllm": ProviderInfo(None, needs=(), judges=False, in_cluster=True, takes_key=False, engine="vllm",
                         cluster_only=True, gpus=1.0, replica="engine.execute.providers.vllm_engine:VllmEngine",
                         refuses={"base_url": "a vllm model runs in the cluster's own vLLM engines; for a vLLM "
                                              "server you started, use provider: openai-compatible with its base_url"}),
    "recorded": ProviderInfo(None, needs=(), takes_key=False, recorded=True,
                             refuses={field: "a recorded model makes no calls: params and price do not apply"
                                      for field in ("params", "price")}),
})


def is_recorded(provider: str | None) -> bool:
    """Whether a model of `provider` has its answers read from the dataset (unknown names: no)."""
    info = PROVIDERS.get(provider) if isinstance(provider, str) else None
    return info is not None and info.recorded


def engine_of(provider: str) -> str | None:
    """The engine that holds `provider`'s weights here or in the cluster (None: it is reached over HTTP)."""
    info = PROVIDERS.get(provider)
    return info.engine if info is not None else None


def batch_providers() -> tuple[str, ...]:
    """The providers with a batch API."""
    return tuple(name for name, p in PROVIDERS.items() if p.batches)


def in_cluster_providers() -> tuple[str, ...]:
    """The providers whose weights the Ray backend's own actors hold."""
    return tuple(name for name, p in PROVIDERS.items() if p.in_cluster)
