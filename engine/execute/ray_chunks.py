"""Encoder work on a Ray cluster: each chunk of `chunk_map` is one row of a Ray Data dataset, mapped with
`map_batches` over a pool of actors. An actor loads its encoder on its first chunk (the encoders are cached
per process) and keeps it for every later one; the driver gets the results back in chunk order.

Chunks travel pickled, so lists of texts and numpy results come back as they went (Arrow would turn a list
of strings into an array).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from engine.spec.model import Resources


class ChunkWorker:
    """A Ray Data actor applying its class's chunk function, row by row (a subclass per function: the function
    travels with the class, not as constructor arguments that a restarted actor might no longer find)."""

    fn: Callable[[Any], Any]

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        results = [pickle.dumps(type(self).fn(pickle.loads(payload))) for payload in batch["payload"]]
        return {"index": batch["index"], "result": np.array(results, dtype=object)}


class RayChunkMapper:
    """`chunk_map.Mapper` over a Ray Data actor pool of `resources.replicas` actors."""

    def __init__(self, resources: Resources):
        self.resources = resources

    def __call__(self, fn: Callable[[Any], Any], chunks: Sequence[Any]) -> list[Any]:
        import ray.data

        rows = [{"index": i, "payload": pickle.dumps(chunk)} for i, chunk in enumerate(chunks)]
        dataset = ray.data.from_items(rows, override_num_blocks=min(len(rows), 4 * self.resources.replicas))
        worker = type(f"ChunkWorker_{fn.__name__}", (ChunkWorker,), {"fn": staticmethod(fn)})
        mapped = dataset.map_batches(worker, batch_size=1, compute=ray.data.ActorPoolStrategy(
            size=self.resources.replicas), num_cpus=self.resources.num_cpus, num_gpus=self.resources.num_gpus or None)
        out: list[Any] = [None] * len(chunks)
        for row in mapped.iter_rows():
            out[row["index"]] = pickle.loads(row["result"])
        return out
