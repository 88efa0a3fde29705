"""The ray backend against the local one, side by side on one machine, with a real two-node Ray cluster
(`ray.cluster_utils.Cluster`: a head and a second node, each its own raylet process with 2 logical CPUs).
Every ray configuration is a spec with its own `execution:` block, read and settled as `vibe run` reads it.

1. Generation overhead: SmolLM2-135M-Instruct (llama.cpp), 20 everyday prompts × 2 system prompts, 64 tokens,
   through the real execute stage. Local backend (the llama.cpp server, os.cpu_count() threads) vs the ray
   backend with one replica of as many CPUs (as many threads). ray_vs_local = local s / ray s (throughput
   ratio; target >= 0.9). The answers of every configuration are checked identical (fixed seeds).
2. Scaling: two replicas of 1 CPU (1 thread) each vs one; two_workers_speedup = one s / two s (on a 2-core
   machine whatever the cores allow).
3. Encoders: MiniLM sentence embeddings of 20,000 distinct texts (paragraphs of AlpacaEval's model outputs
   in ../shared/data), in this process vs on a Ray Data actor pool of one actor of os.cpu_count() CPUs.
   embed_ray_vs_local = local s / ray s (target >= 0.8); the vectors are checked identical.

Each timed phase includes its start-up (server or actors, model loads), as a run pays it. The smoke run leaves
out the two one-replica configurations: the same code path as the two-replica one, with other resources.

Last line: ray_vs_local=<float> two_workers_speedup=<float> embed_ray_vs_local=<float>
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sizes import SMOKE, pick

from engine.records import Prepared
from engine.spec.model import Execution

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("VIBE_DATA", ROOT.parent / "shared" / "data"))
TEXTS = pick(20_000, 64)
PROMPTS, TOKENS = pick((20, 64), (2, 8))
CPUS = os.cpu_count() or 1

SPEC = """\
name: ray-scaling
extends: {base}
models:
  terse: {{params: {{max_tokens: {tokens}}}}}
  chatty: {{params: {{max_tokens: {tokens}}}}}
datasets:
  everyday: {{limit: {prompts}, seed: 3}}
{execution}"""

RAY_EXECUTION = """\
execution:
  backend: ray
  address: {address}
  resources:
    smollm2-135m-instruct: {{num_cpus: {num_cpus}, replicas: {replicas}}}
"""
ENCODER_EXECUTION = """\
execution:
  backend: ray
  address: {address}
  embeddings: {{num_cpus: {num_cpus}, replicas: 1}}
"""


def generate(prepared: Prepared, workdir: Path, execution: Execution | None = None) -> tuple[float, dict[str, str]]:
    from engine.execute.cache import Cache
    from engine.execute.run import execute

    db = workdir / "cache.sqlite"
    start = time.perf_counter()
    with Cache(db) as cache:
        summary = execute(prepared, workdir / "run", cache, quiet=True, stages=("generation",), write=False,
                          execution=execution)
    seconds = time.perf_counter() - start
    generations = sum(t.stage == "generation" for t in prepared.plan.tasks)
    assert summary.ran_now == generations and not summary.failed, summary.failed
    with sqlite3.connect(db) as conn:
        return seconds, dict(conn.execute("SELECT task_id, output FROM results"))


def paragraphs() -> list[str]:
    out: dict[str, None] = {}
    for path in sorted((DATA / "alpaca_eval").glob("*/model_outputs.json")):
        for row in json.loads(path.read_text()):
            for part in row["output"].split("\n\n"):
                if len(part.strip()) > 20:
                    out[part.strip()] = None
    texts = list(out)[:TEXTS]
    assert len(texts) == TEXTS, f"only {len(texts)} paragraphs in {DATA / 'alpaca_eval'}"
    return texts


def main() -> None:
    from ray.cluster_utils import Cluster

    from engine import chunk_map, embeddings
    from engine.execute.backend import joined, settle
    from engine.execute.ray_chunks import RayChunkMapper
    from engine.pipeline import prepare

    work = Path(tempfile.mkdtemp(prefix="vibe-ray-bench-"))

    def spec(name: str, execution: str = "") -> Path:
        path = work / f"{name}.yaml"
        path.write_text(SPEC.format(base="vibe:smollm2-terse-vs-chatty", tokens=TOKENS,
                                    prompts=PROMPTS, execution=execution))
        return path

    prepared = prepare(spec("local"))
    calls = sum(t.stage == "generation" for t in prepared.plan.tasks)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": CPUS})
    cluster.add_node(num_cpus=CPUS)
    try:
        local_s, expected = generate(prepared, work / "local")
        print(f"local backend: {calls} generations in {local_s:.1f} s ({calls / local_s:.2f}/s), "
              f"llama.cpp server with {CPUS} threads")

        def on_ray(name: str, num_cpus: int, replicas: int) -> float:
            on_cluster = prepare(spec(name, RAY_EXECUTION.format(address=cluster.address, num_cpus=num_cpus,
                                                                  replicas=replicas)))
            assert on_cluster.plan.tasks == prepared.plan.tasks, "execution: changed the plan"
            start = time.perf_counter()  # joining the cluster counts, as the server's start counts locally
            execution = settle(on_cluster)
            with joined(on_cluster, execution):
                _, got = generate(on_cluster, work / name, execution)
            seconds = time.perf_counter() - start
            assert got == expected, f"{name}: answers differ from the local backend's"
            print(f"ray backend, {replicas} replica(s) × {num_cpus} CPU: {seconds:.1f} s ({calls / seconds:.2f}/s), "
                  "answers identical to the local backend's")
            return seconds

        two_threads = on_ray("ray-2x1", 1, 2)
        # smoke: the two one-replica configurations take the path ray-2x1 took, with other resources
        one_full = two_threads if SMOKE else on_ray("ray-1x", CPUS, 1)
        one_thread = two_threads if SMOKE else on_ray("ray-1x1", 1, 1)

        texts = paragraphs()
        start = time.perf_counter()
        local_vectors = embeddings.embed(texts)
        embed_local_s = time.perf_counter() - start
        embeddings._memo.clear()
        print(f"MiniLM, {TEXTS:,} texts in this process: {embed_local_s:.1f} s")
        pool = prepare(spec("ray-encoders", ENCODER_EXECUTION.format(address=cluster.address, num_cpus=CPUS)))
        start = time.perf_counter()
        execution = settle(pool)
        with joined(pool, execution):
            assert isinstance(chunk_map._mapper[0], RayChunkMapper), "the encoders did not go to the cluster"
            ray_vectors = embeddings.embed(texts)
        embed_ray_s = time.perf_counter() - start
        assert np.array_equal(local_vectors, ray_vectors), "vectors differ"
        print(f"MiniLM, {TEXTS:,} texts on a Ray Data pool (1 actor × {CPUS} CPUs): {embed_ray_s:.1f} s, "
              "vectors identical")
    finally:
        cluster.shutdown()
    print(f"ray_vs_local={local_s / one_full:.3f} two_workers_speedup={one_thread / two_threads:.3f} "
          f"embed_ray_vs_local={embed_local_s / embed_ray_s:.3f}")


if __name__ == "__main__":
    sys.exit(main())
