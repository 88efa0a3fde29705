"""Joining a Ray cluster for a run, and refusing one that cannot hold what the spec asks for.

Every refusal happens before any task runs and says what to do: Ray missing (the install hint), an address
nothing answers on (checked with a plain TCP connect first, so a wrong address fails in seconds instead of
waiting out Ray's own reconnect timeout), and replicas that no node, or not the whole cluster, could hold
(Ray would otherwise leave them pending without a word).
"""

from __future__ import annotations

import gc
import logging
import os
import socket

from engine.spec.model import Resources

RAY_HINT = "the ray backend needs Ray: pip install 'vibe-bench[ray]'"
CONNECT_TIMEOUT_S = 5.0


class ClusterError(Exception):
    """The run cannot use the cluster; nothing has run."""


def resolve_address(configured: str | None) -> str:
    """The CLI's --address or the spec's execution.address, else $RAY_ADDRESS, else `auto`."""
    return configured or os.environ.get("RAY_ADDRESS") or "auto"


def _host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of a GCS (host:port) or Ray Client (ray://host:port) address; None for `auto`."""
    if address == "auto":
        return None
    bare = address.removeprefix("ray://")
    host, _, port = bare.rpartition(":")
    if not host or not port.isdigit():
        raise ClusterError(f"Ray address {address!r} is not host:port or ray://host:port (or auto)")
    return host, int(port)


def connect(address: str) -> bool:
    """Join the cluster at `address`; False when this process was already connected (and stays so)."""
    try:
        import ray
    except ImportError:
        raise ClusterError(RAY_HINT) from None
    if ray.is_initialized():
        return False
    what_to_do = ("start the cluster (`ray start --head` on its head node, `ray start --address HEAD:6379` on the "
                  "others), or point execution.address, --address or RAY_ADDRESS at a running one")
    target = _host_port(address)
    if target is not None:
        try:
            socket.create_connection(target, timeout=CONNECT_TIMEOUT_S).close()
        except OSError as exc:
            raise ClusterError(f"no Ray cluster answers at {address} ({exc}): {what_to_do}") from None
    try:
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False,
                 configure_logging=False)
    except (ConnectionError, RuntimeError) as exc:
        raise ClusterError(f"cannot join the Ray cluster at {address} ({exc}): {what_to_do}") from None
    import ray.data

    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False  # the run's own progress display says what is happening
    context.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.ERROR)
    return True


def disconnect() -> None:
    """Leave the cluster this process joined, collecting cyclic garbage first.

    Ray's errors keep the ObjectRefs of the call that raised them alive in reference cycles (error, traceback,
    frame, error), so they outlive the code that handled them. When the collector happens to free one while
    `ray.shutdown()` is tearing down the core worker, Ray ends the whole process with status 1 and prints
    nothing (this killed a test suite midway). Collected here, they are released while the driver can still
    release them.
    """
    import ray

    gc.collect()
    ray.shutdown()


def _live_nodes() -> list[dict[str, float]]:
    """The resources of each of the cluster's live nodes."""
    import ray

    return [n["Resources"] for n in ray.nodes() if n.get("Alive")]


def cluster_capacity() -> tuple[float, float]:
    """(CPUs, GPUs) of the cluster's live nodes."""
    nodes = _live_nodes()
    return sum(n.get("CPU", 0.0) for n in nodes), sum(n.get("GPU", 0.0) for n in nodes)


def check_capacity(name: str, res: Resources) -> None:
    """Refuse replicas the cluster cannot place: one replica larger than every node, or all of them together
    (they run at the same time) more than the cluster holds. `name` is what the spec calls them."""
    nodes = _live_nodes()
    for unit, field in (("CPU", "num_cpus"), ("GPU", "num_gpus")):
        each = getattr(res, field)
        largest = max((n.get(unit, 0.0) for n in nodes), default=0.0)
        if each > largest:
            raise ClusterError(f"{name}: each replica asks for {each:g} {unit}s, but the largest of the cluster's "
                               f"{len(nodes)} node(s) has {largest:g}: lower {field} or add a larger node")
        total = sum(n.get(unit, 0.0) for n in nodes)
        if each * res.replicas > total:
            raise ClusterError(f"{name}: the replicas ask for {each * res.replicas:g} {unit}s at once "
                               f"({res.replicas}×{each:g}), but the cluster has {total:g} over {len(nodes)} "
                               f"node(s): lower replicas or {field}, or add nodes")
