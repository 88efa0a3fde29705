"""Local models on a Ray cluster: one actor per model replica, fed batches of calls by the driver.

- A replica is an actor that holds one engine (`engines`: llama.cpp in process, or vLLM on a GPU node) and
  reserves the `num_cpus`/`num_gpus` the spec gives its weights; Ray places it on a node with room.
- The driver renders every call exactly as the local backend does, cuts the calls of each model's weights
  into batches, and keeps two batches in flight per replica so that none waits for the driver. Each returned
  batch goes into the cache at once, under the tasks' own hashes: a run can change backend and keep its cache,
  and a driver killed mid-run resumes from what is stored, as on the local backend.
- A replica lost mid-batch (its worker process or its whole node died): the batch goes back to the front of
  the queue for the replicas still alive, and a replacement actor is asked of Ray, which starts it wherever
  there is room (a node that comes back). Only returned batches are stored, so nothing is stored twice; a
  batch that loses its replica `MAX_ATTEMPTS` times fails (it may be what kills the replica).
- A replica that cannot start (a missing GGUF, vLLM absent on the node) fails its model's remaining tasks
  with that reason, once a second attempt fails the same way.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.execute.cache import Cache
from engine.execute.engines import Call, Completion, make_engine
from engine.execute.ray_cluster import cluster_capacity
from engine.execute.scheduler import Failure, OnResult, completed
from engine.provider_table import PROVIDERS
from engine.records import Task
from engine.spec.model import Endpoint, Execution, Resources

Render = Callable[[Task], Call]
IN_FLIGHT = 2  # batches queued at each replica: the next one is there when the current one ends
MAX_ATTEMPTS = 3
START_ATTEMPTS = 2  # replicas of one model that may fail to start before its tasks fail
PLACEMENT_TIMEOUT_S = 600.0  # a model with work left and no live replica for this long fails its tasks


class ReplicaHost:
    """The body of a replica actor (wrapped with `ray.remote` when a run needs it)."""

    def __init__(self, provider: str, weights: str, num_cpus: float, num_gpus: float):
        self.engine = make_engine(provider, weights, num_cpus, num_gpus)

    def where(self) -> str:
        import ray

        node = ray.get_runtime_context().get_node_id()
        return f"{ray.util.get_node_ip_address()} node {node[:8]} pid {os.getpid()}"

    def generate(self, calls: list[Call]) -> list[Completion | str]:
        return self.engine.generate(calls)


@dataclass
class _Batch:
    items: list[tuple[Task, Call]]
    attempts: int = 0


@dataclass
class Replica:
    """One actor of one model's weights, as the progress display and the manifest show it."""

    weights: str
    index: int
    actor: Any = None
    where: str = ""  # node address, node id and process, once the actor is up
    ready: bool = False
    lost: bool = False
    in_flight: int = 0
    tasks: int = 0

    @property
    def label(self) -> str:
        return f"{self.weights} #{self.index}"


OnReplica = Callable[[Replica], None]


class RayGenerator:
    """Runs the calls of local (and vllm) models on the cluster this process has joined."""

    def __init__(self, execution: Execution, endpoints: dict[str, Endpoint], cache: Cache,
                 on_result: OnResult | None = None, on_replica: OnReplica | None = None):
        self.execution = execution
        self.endpoints = endpoints
        self.cache = cache
        self.on_result = on_result or (lambda task, result: None)
        self.on_replica = on_replica or (lambda replica: None)
        self.replicas: list[Replica] = []  # every replica started, for the manifest
        self._stopping = threading.Event()

    def stop(self) -> None:
        """Ask a running `run` to give up at its next wake-up (Ctrl-C on the driver)."""
        self._stopping.set()

    def run(self, tasks: list[Task], render: Render) -> list[Failure]:
        """Run `tasks` (their inputs already in the cache) and return those that failed. Models whose replicas
        the cluster cannot hold together run in waves, one after another; every replica is released at the end
        of its wave, so the next wave, the next stage and the encoders have the cluster's room."""
        if not tasks:
            return []
        import ray

        host = ray.remote(ReplicaHost)
        queues: dict[str, deque[_Batch]] = {}
        for task in tasks:
            endpoint = self.endpoints[task.endpoint]
            queue = queues.setdefault(endpoint.model, deque())
            size = self.execution.batch_size or PROVIDERS[endpoint.provider].replica_batch
            if not queue or len(queue[-1].items) >= size:
                queue.append(_Batch([]))
            queue[-1].items.append((task, render(task)))
        provider = {self.endpoints[t.endpoint].model: self.endpoints[t.endpoint].provider for t in tasks}
        failures: list[Failure] = []
        for wave in waves(list(queues), lambda w: self.execution.replica_resources(w, provider[w]),
                          cluster_capacity()):
            if not self._stopping.is_set():
                failures += self._run_wave({w: queues[w] for w in wave}, provider, host)
        return failures

    def _run_wave(self, queues: dict[str, deque[_Batch]], provider: dict[str, str], host: Any) -> list[Failure]:
        """The calls of models whose replicas the cluster holds together; their replicas are killed at the end."""
        import ray

        refs: dict[Any, tuple[Replica, _Batch | None]] = {}
        failures: list[Failure] = []
        start_failures: dict[str, int] = {}
        waiting_since = {weights: time.monotonic() for weights in queues}
        mine: list[Replica] = []

        def start(weights: str, index: int) -> None:
            res = self.execution.replica_resources(weights, provider[weights])
            replica = Replica(weights, index)
            replica.actor = host.options(num_cpus=res.num_cpus, num_gpus=res.num_gpus, max_restarts=0).remote(
                provider[weights], weights, res.num_cpus, res.num_gpus)
            refs[replica.actor.where.remote()] = (replica, None)
            mine.append(replica)
            self.replicas.append(replica)

        def feed(replica: Replica) -> None:
            queue = queues[replica.weights]
            while replica.ready and not replica.lost and replica.in_flight < IN_FLIGHT and queue:
                batch = queue.popleft()
                batch.attempts += 1
                refs[replica.actor.generate.remote([call for _, call in batch.items])] = (replica, batch)
                replica.in_flight += 1

        def fail(batch: _Batch, reason: str) -> None:
            for task, _ in batch.items:
                failures.append(Failure(task.id, task.stage, task.endpoint, reason, batch.attempts))
                self.on_result(task, None)

        def fail_model(weights: str, reason: str) -> None:
            while queues[weights]:
                fail(queues[weights].popleft(), reason)

        for weights in queues:
            for index in range(self.execution.replica_resources(weights, provider[weights]).replicas):
                start(weights, index)
        try:
            while any(queues.values()) or any(batch is not None for _, batch in refs.values()):
                if self._stopping.is_set():
                    break
                done, _ = ray.wait(list(refs), num_returns=1, timeout=1.0)
                now = time.monotonic()
                for weights, queue in queues.items():
                    if any(r.ready and not r.lost and r.weights == weights for r in mine) or not queue:
                        waiting_since[weights] = now
                    elif now - waiting_since[weights] > PLACEMENT_TIMEOUT_S:
                        fail_model(weights, f"no replica of {weights} has been up for {PLACEMENT_TIMEOUT_S:g} s "
                                   "(the cluster lost the room for it?)")
                if not done:
                    continue
                replica, batch = refs.pop(done[0])
                try:
                    value = ray.get(done[0])
                except ray.exceptions.RayTaskError as exc:  # the engine raised: these calls fail, the replica lives
                    replica.in_flight -= 1
                    assert batch is not None
                    fail(batch, f"{replica.label}: {exc.cause if exc.cause is not None else exc}")
                    feed(replica)
                    continue
                except ray.exceptions.RayError as exc:  # its process or node died
                    first_notice = not replica.lost
                    self._lost(replica, batch, exc, queues, fail, start_failures, fail_model)
                    again = replica.ready or start_failures.get(replica.weights, 0) < START_ATTEMPTS
                    if first_notice and again and queues[replica.weights]:
                        start(replica.weights, sum(r.weights == replica.weights for r in mine))  # where Ray finds room
                    for other in mine:
                        feed(other)
                    continue
                if batch is None:
                    replica.ready, replica.where = True, value
                    self.on_replica(replica)
                else:
                    replica.in_flight -= 1
                    self._store(replica, batch, value, failures)
                feed(replica)
        finally:
            for replica in mine:
                ray.kill(replica.actor)
        return failures

    def _lost(self, replica: Replica, batch: _Batch | None, exc: Exception, queues: dict[str, deque[_Batch]],
              fail: Callable[[_Batch, str], None], start_failures: dict[str, int],
              fail_model: Callable[[str, str], None]) -> None:
        """A replica died: its batch goes back to the front of the queue (or fails, past MAX_ATTEMPTS)."""
        if not replica.lost:
            replica.lost = True
            if replica.ready:
                self.on_replica(replica)
        if batch is None:  # it never came up
            start_failures[replica.weights] = start_failures.get(replica.weights, 0) + 1
            if start_failures[replica.weights] >= START_ATTEMPTS:
                fail_model(replica.weights, f"{replica.label} could not start: {_last_line(exc)}")
            return
        replica.in_flight -= 1
        if batch.attempts >= MAX_ATTEMPTS:
            fail(batch, f"{replica.label} was lost {batch.attempts} times running this batch: {_last_line(exc)}")
        else:
            queues[replica.weights].appendleft(batch)

    def _store(self, replica: Replica, batch: _Batch, outcomes: list[Completion | str],
               failures: list[Failure]) -> None:
        for (task, (_, _, schema)), outcome in zip(batch.items, outcomes, strict=True):
            if isinstance(outcome, str):
                failures.append(Failure(task.id, task.stage, task.endpoint, outcome, batch.attempts))
                self.on_result(task, None)
                continue
            result = completed(task, self.endpoints[task.endpoint], outcome, batch.attempts,
                               structured=schema is not None, ran_on=f"ray: {replica.label} on {replica.where}")
            self.cache.put(result)
            replica.tasks += 1
            self.on_result(task, result)
        self.on_replica(replica)


def waves(weights: list[str], resources: Callable[[str], Resources],
          capacity: tuple[float, float]) -> list[list[str]]:
    """Models grouped, in order, so that each group's replicas fit the cluster's (CPUs, GPUs) together."""
    out: list[list[str]] = []
    used = (0.0, 0.0)
    for name in weights:
        res = resources(name)
        need = (res.num_cpus * res.replicas, res.num_gpus * res.replicas)
        if out and used[0] + need[0] <= capacity[0] and used[1] + need[1] <= capacity[1]:
            out[-1].append(name)
            used = (used[0] + need[0], used[1] + need[1])
        else:
            out.append([name])
            used = need
    return out


def _last_line(exc: Exception) -> str:
    """The last line of a Ray error: the original exception, after Ray's traceback."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__
