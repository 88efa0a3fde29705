"""What a provider declares about itself (`ProviderInfo`): the modules that register its clients and what it
can do, read by the spec's schema and checks, the planner and the executor without importing the client."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, Self

from engine import settings


class HasSettings(Protocol):
    """An endpoint as `ProviderSettings.of` reads it (`engine.spec.model.Endpoint`)."""

    @property
    def settings(self) -> tuple[tuple[str, Any], ...]: ...


@dataclass(frozen=True)
class ProviderSettings:
    """Base of a provider's own settings (`ProviderInfo.settings`): subclass it as a frozen dataclass with a
    field per setting, annotated with `Setting`, and read an endpoint's with `YourSettings.of(endpoint)`."""

    @classmethod
    def of(cls, endpoint: HasSettings) -> Self:
        return settings.read(cls, dict(endpoint.settings))


@dataclass(frozen=True)
class ProviderInfo:
    """What vibe knows of a provider before importing it: where its client is, what it needs and can do."""

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
    replica_batch: int = 4  # calls one Ray replica of it is handed at a time (execution.batch_size overrides)
    # what must be installed on this machine for a run to use it: importable module -> what to install
    requires: Mapping[str, str] = field(default_factory=dict)
    extra: str = ""  # the vibe-bench extra its client needs installed ("": none beyond the core)
    # `module:Class` of its own entry fields, beyond those every endpoint has: a `ProviderSettings` dataclass
    # (`engine.settings`), the one declaration of them, imported when a spec names the provider; the spec schema
    # checks them on its endpoints and its client reads them typed (`YourSettings.of(endpoint)`)
    settings: str | None = None
