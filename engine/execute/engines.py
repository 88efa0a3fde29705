"""Model engines held in process: what a Ray actor (one model replica) runs. A provider whose weights the
cluster holds names its engine in the provider table (`ProviderInfo.replica`: the local provider's llama.cpp
engine, the vllm provider's vLLM engine), and the replica builds it from there.

A call is (messages, params, answer schema or None); an outcome is a `Completion`, or the error message of a
call the engine refused (a prompt longer than the context, say), which is that task's failure, not the
replica's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from engine.execute.providers.base import Completion, Messages, ResponseSchema
from engine.plugins import load_named
from engine.provider_table import PROVIDERS

Call = tuple[Messages, dict[str, Any], ResponseSchema | None]  # one call an engine makes: messages, params, schema
Outcome = Completion | str  # what an engine returns for a call: its completion, or why it failed


class Engine(Protocol):
    def generate(self, calls: Sequence[Call]) -> list[Outcome]: ...


def make_engine(provider: str, model: str, num_cpus: float, num_gpus: float) -> Engine:
    """The engine `provider`'s table entry names (`module:Class`), holding `model` with the replica's CPUs and
    GPUs."""
    replica = PROVIDERS[provider].replica
    if replica is None:
        raise ValueError(f"provider {provider!r} names no engine a replica can hold")
    held: Engine = load_named(replica).of(model, num_cpus, num_gpus)
    return held
