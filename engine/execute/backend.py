"""The execution backend a run uses, settled before any task runs.

`local` (the default) changes nothing: calls go through the driver's scheduler, local models through a
llama.cpp server on this machine, encoders run in this process. `ray` joins a cluster, checks that it can
hold the spec's replicas, sends the calls of local (and vllm) models to replica actors, and sends the
encoders' chunked work to a Ray Data actor pool. API endpoints stay on the driver's scheduler either way:
their concurrency and rate limits belong to the endpoint and its account, not to a node, so spreading them
over nodes would only multiply the 429s.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator
from dataclasses import replace

from engine import chunk_map
from engine.execute.ray_cluster import ClusterError, check_capacity, connect, disconnect, resolve_address
from engine.provider_table import PROVIDERS, in_cluster_providers
from engine.records import Prepared, call_endpoints
from engine.spec.model import Execution


def settle(prepared: Prepared, backend: str | None = None, address: str | None = None) -> Execution:
    """The spec's `execution:` with the command line's overrides, refused when it cannot run here."""
    execution = prepared.spec.execution
    if backend is not None:
        execution = replace(execution, backend=backend)
    if address is not None:
        execution = replace(execution, address=address)
    endpoints = call_endpoints(prepared)
    cluster_only = sorted(name for name, e in endpoints.items() if PROVIDERS[e.provider].cluster_only)
    if cluster_only and execution.backend != "ray":
        providers = sorted({endpoints[name].provider for name in cluster_only})
        raise ClusterError(f"{', '.join(cluster_only)}: provider {' and '.join(providers)} runs on the ray backend "
                           "(execution.backend: ray, or --backend ray)")
    for provider in sorted({e.provider for e in endpoints.values()}):  # what the provider needs installed here
        for module, install in PROVIDERS[provider].requires.items():
            if importlib.util.find_spec(module) is None:
                names = sorted(name for name, e in endpoints.items() if e.provider == provider)
                raise ClusterError(f"{', '.join(names)}: provider {provider} needs {module}, which is not installed "
                                   f"here ({install})")
    if execution.backend == "ray":
        execution = replace(execution, address=resolve_address(execution.address))
    return execution


@contextlib.contextmanager
def joined(prepared: Prepared, execution: Execution) -> Iterator[None]:
    """For the ray backend: on the cluster, its capacity checked, encoders sent to it; for local: nothing. It
    keeps no reference to `prepared` while the run goes on: discovery compiles a second plan, and holding the
    first through the analysis cost hundreds of megabytes at Arena scale."""
    if execution.backend != "ray":
        del prepared
        yield
        return
    assert execution.address is not None
    joined_now = connect(execution.address)
    try:
        _check_capacity(prepared, execution)
        del prepared
        from engine.execute.ray_chunks import RayChunkMapper

        chunk_map.use(RayChunkMapper(execution.embeddings))
        yield
    finally:
        chunk_map.use(None)
        if joined_now:
            disconnect()


def _check_capacity(prepared: Prepared, execution: Execution) -> None:
    """Each model's replicas must fit the cluster together (models that do not fit beside each other run one
    after another: see `ray_generation.waves`); the encoder pool runs on its own."""
    endpoints = call_endpoints(prepared)
    used = {endpoints[t.endpoint].model: endpoints[t.endpoint].provider for t in prepared.plan.tasks
            if t.endpoint in endpoints and endpoints[t.endpoint].provider in in_cluster_providers()}
    for weights, provider in used.items():
        check_capacity(f"execution.resources.{weights}", execution.replica_resources(weights, provider))
    check_capacity("execution.embeddings", execution.embeddings)
