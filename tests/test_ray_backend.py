"""The ray backend on a real two-node Ray cluster started on this machine (a head and a second node, each its
own raylet process with one CPU; torn down after): the SmolLM2 generations of a subset of
specs/separability.yaml (6 prompts, K = 2, two replicas) are the local backend's, under the same task
hashes; encoders on a Ray Data actor pool give the local numbers; a node lost mid-run costs nothing; bad
addresses and impossible resource requests are refused before any task runs."""

from __future__ import annotations

import gc
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("llama_cpp")

from ray.cluster_utils import Cluster  # noqa: E402

from engine.execute.ray_cluster import ClusterError, connect, disconnect  # noqa: E402
from engine.pipeline import prepare, run_spec  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]  # one cluster at a time on this machine
SPEC = Path(__file__).parent / "specs" / "separability-subset.yaml"
TASKS = 6 * 2 * 2  # the subset's generations: prompts × models × samples


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    try:
        yield cluster
    finally:
        cluster.shutdown()


@pytest.fixture(scope="session")
def local_outputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], list[float]]:
    """The local backend's run of the subset: cached outputs by task hash, and its separability deltas."""
    tmp = tmp_path_factory.mktemp("local")
    _, results, _ = run_spec(SPEC, tmp / "run", tmp / "cache.sqlite", quiet=True, report=False)
    return outputs(tmp / "cache.sqlite"), [s.delta for r in results.of("separability") for s in r.items]


def outputs(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        try:
            return dict(conn.execute("SELECT task_id, output FROM results"))
        except sqlite3.OperationalError:  # another process has created the file but not yet its table
            return {}


def manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


def write_spec(tmp_path: Path, execution: str) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"name: subset-variant\nextends: {SPEC}\nexecution:\n{execution}")
    return spec


def test_ray_generations_and_similarity_match_local_and_rerun_makes_no_calls(
        cluster: Cluster, local_outputs: tuple[dict[str, str], list[float]], tmp_path: Path) -> None:
    expected, deltas = local_outputs
    db = tmp_path / "cache.sqlite"
    summary, results, run_dir = run_spec(SPEC, tmp_path / "run", db, quiet=True, report=False, backend="ray",
                                         address=cluster.address)
    assert summary.ran_now == TASKS and not summary.failed
    assert outputs(db) == expected  # same task hashes, same texts (fixed seeds)
    assert [s.delta for r in results.of("separability") for s in r.items] == deltas  # BERTScore on Ray Data
    execution = manifest(run_dir)["execution"]
    assert execution["backend"] == "ray" and execution["address"] == cluster.address
    replicas = execution["replicas"]
    assert len(replicas) == 2 and sum(r["tasks"] for r in replicas) == TASKS
    assert len({r["ran_on"].split(" pid")[0] for r in replicas}) == 2  # one replica on each node

    again, _, run_dir = run_spec(SPEC, tmp_path / "run", db, quiet=True, report=False, backend="ray",
                                 address=cluster.address)
    assert again.ran_now == 0 and manifest(run_dir)["execution"]["replicas"] == []  # no replica even started


def test_encoders_on_ray_data_give_the_local_numbers(cluster: Cluster) -> None:
    from engine import chunk_map, embeddings
    from engine.builtin_plugins.judges.reference_similarity import rate
    from engine.execute.ray_chunks import RayChunkMapper
    from engine.requests import Rating
    from engine.spec.model import Resources

    texts = [json.loads(line)["prompt"] for line in (SPEC.parents[2] / "engine/builtin/data/everyday-prompts.jsonl")
             .read_text().splitlines()]
    texts += [t.upper() for t in texts] + [t[: len(t) // 2] for t in texts]  # 180 texts, 3 batches of 64
    requests = [Rating("reference", "similarity", {"prompt": t, "reference": texts[-i - 1]}, f"g{i}",
                       config={"corpus": "c"}) for i, t in enumerate(texts[:70])]
    answers, corpora = {f"g{i}": t.lower() for i, t in enumerate(texts[:70])}, {"c": tuple(texts[100:])}
    local = embeddings.embed(texts), rate(requests, answers, corpora)
    embeddings._memo.clear()
    connect(cluster.address)
    try:
        chunk_map.use(RayChunkMapper(Resources(num_cpus=1, replicas=2)))
        on_ray = embeddings.embed(texts), rate(requests, answers, corpora)
    finally:
        chunk_map.use(None)
        disconnect()
    assert np.array_equal(local[0], on_ray[0])  # bit for bit: the same padded batches
    assert local[1] == on_ray[1]


def test_more_than_the_cluster_holds_is_refused_before_any_task(cluster: Cluster, tmp_path: Path) -> None:
    cases = {
        "    smollm2-135m-instruct: {num_cpus: 4}": "each replica asks for 4 CPUs, but the largest",
        "    smollm2-135m-instruct: {num_cpus: 1, replicas: 3}": "ask for 3 CPUs at once",
        "    smollm2-135m-instruct: {num_cpus: 1, num_gpus: 1}": "asks for 1 GPUs, but the largest",
    }
    for resources, message in cases.items():
        spec = write_spec(tmp_path, f"  resources:\n{resources}\n")
        started = time.monotonic()
        with pytest.raises(ClusterError, match=message) as refused:
            run_spec(spec, tmp_path / "run", tmp_path / "cache.sqlite", quiet=True, backend="ray",
                     address=cluster.address)
        assert "execution.resources.smollm2-135m-instruct" in str(refused.value)
        assert time.monotonic() - started < 30
        assert outputs(tmp_path / "cache.sqlite") == {}  # nothing ran
    assert not ray.is_initialized()


def test_losing_a_node_mid_run_still_stores_every_task_once(
        cluster: Cluster, local_outputs: tuple[dict[str, str], list[float]], tmp_path: Path) -> None:
    expected, _ = local_outputs
    db, run_dir = tmp_path / "cache.sqlite", tmp_path / "run"
    second = next(node for node in cluster.list_all_nodes() if node is not cluster.head_node)
    child = subprocess.Popen([sys.executable, "-m", "engine", "run", str(SPEC), "--backend", "ray", "--address",
                              cluster.address, "--cache", str(db), "--out", str(run_dir), "--no-report"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while len(outputs(db)) < TASKS // 4 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.1)
    cluster.remove_node(second)  # its raylet and its replica's worker process die mid-batch
    stored_before = len(outputs(db))
    try:
        _, err = child.communicate(timeout=300)
    finally:
        cluster.add_node(num_cpus=1)
    assert child.returncode == 0, err
    assert TASKS // 4 <= stored_before < TASKS, "the node should be lost mid-run"
    assert outputs(db) == expected  # every task, each with the local backend's text
    replicas = manifest(run_dir)["execution"]["replicas"]
    assert any(r.get("lost") for r in replicas)
    assert sum(r["tasks"] for r in replicas) == TASKS  # each task stored once: none twice, none lost
    assert "lost" in err


def test_a_replica_that_cannot_start_fails_its_tasks_with_the_reason(cluster: Cluster, tmp_path: Path) -> None:
    """Weights missing on the nodes: two start attempts, then every task of that model fails, naming why.

    Ray's start errors hold ObjectRefs in reference cycles; `disconnect` frees them before `ray.shutdown()`,
    where the collector freeing one would end this process with status 1 and no message."""
    from engine.execute.cache import Cache
    from engine.execute.ray_generation import START_ATTEMPTS, RayGenerator
    from engine.records import Task
    from engine.spec.model import Endpoint, Execution

    endpoint = Endpoint("m", "local", "/nowhere/model.gguf")
    tasks = [Task(f"t{i}", "generation", "a", "m", "local", str(i), {"kind": "chat"}) for i in range(3)]
    connect(cluster.address)
    try:
        with Cache(tmp_path / "cache.sqlite") as cache:
            generator = RayGenerator(Execution(backend="ray"), {"m": endpoint}, cache)
            failures = generator.run(tasks, lambda task: ([{"role": "user", "content": "hi"}], {}, None))
    finally:
        disconnect()
    assert not [o for o in gc.get_objects() if type(o) is ray.ObjectRef]
    assert len(failures) == 3 and len(generator.replicas) == START_ATTEMPTS
    assert all("could not start" in f.error and "/nowhere/model.gguf" in f.error for f in failures)


def test_models_that_do_not_fit_together_run_in_waves() -> None:
    """A 5-CPU, 1-GPU cluster: a (2 CPUs × 2 replicas) and b (1 CPU) fill its CPUs, so c (1 CPU and 1 GPU)
    starts the next wave, with d (1 CPU × 2); e (4 CPUs) fits beside neither."""
    from engine.execute.ray_generation import waves
    from engine.spec.model import Resources

    resources = {"a": Resources(2, 0, 2), "b": Resources(1, 0, 1), "c": Resources(1, 1, 1),
                 "d": Resources(1, 0, 2), "e": Resources(4, 0, 1)}
    assert waves(list(resources), resources.__getitem__, (5.0, 1.0)) == [["a", "b"], ["c", "d"], ["e"]]
    assert waves(["a", "b"], resources.__getitem__, (100.0, 0.0)) == [["a", "b"]]


def test_resources_fill_in_from_the_providers_defaults() -> None:
    """A vLLM replica holds a GPU unless the spec says otherwise; a llama.cpp one one CPU."""
    from engine.spec.model import Execution, Resources

    execution = Execution(resources={"llama": {"replicas": 8}, "gguf": {"num_cpus": 2}})
    assert execution.replica_resources("llama", "vllm") == Resources(num_cpus=1, num_gpus=1, replicas=8)
    assert execution.replica_resources("gguf", "local") == Resources(num_cpus=2, num_gpus=0, replicas=1)
    assert execution.replica_resources("other", "local") == Resources()


def test_plan_says_where_a_ray_spec_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from engine.cli import main

    spec = write_spec(tmp_path, "  backend: ray\n  address: head:6379\n"
                      "  resources: {smollm2-135m-instruct: {num_cpus: 2, replicas: 3}}\n")
    assert main(["plan", str(spec)]) == 0
    assert ("runs on the ray backend (head:6379): smollm2-135m-instruct: 3 × (2 CPU, 0 GPU); encoders: 1 × 1 CPU"
            in capsys.readouterr().out)


def test_unreachable_address_fails_fast_naming_it(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once the socket closes
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "engine", "run", str(SPEC), "--backend", "ray", "--address",
                           f"127.0.0.1:{port}", "--cache", str(tmp_path / "c.sqlite")],
                          capture_output=True, text=True, timeout=60)
    assert time.monotonic() - started < 30
    assert done.returncode == 2
    assert f"no Ray cluster answers at 127.0.0.1:{port}" in done.stderr and "ray start --head" in done.stderr
    assert "Traceback" not in done.stderr


def test_without_ray_installed_the_install_hint(tmp_path: Path) -> None:
    shim = tmp_path / "shim" / "ray"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    env = {**os.environ, "PYTHONPATH": str(shim.parent)}
    done = subprocess.run([sys.executable, "-m", "engine", "run", str(SPEC), "--backend", "ray", "--cache",
                           str(tmp_path / "c.sqlite")], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert "pip install 'vibe-bench[ray]'" in done.stderr and "Traceback" not in done.stderr


def test_vllm_models_are_refused_where_they_cannot_run(tmp_path: Path) -> None:
    spec = tmp_path / "vllm.yaml"
    spec.write_text(f"name: vllm-variant\nextends: {SPEC}\nmodels:\n"
                    "  terse: {provider: vllm, model: HuggingFaceTB/SmolLM2-135M-Instruct}\n"
                    "execution: {resources: {}}\n")
    from engine.execute.backend import settle

    prepared = prepare(spec)
    with pytest.raises(ClusterError, match="terse: provider vllm runs on the ray backend"):
        settle(prepared)
    if importlib_util_missing("vllm"):
        with pytest.raises(ClusterError, match=r"terse: provider vllm needs vllm, which is not installed here "
                                               r"\(pip install vllm, here and on the GPU nodes\)"):
            settle(prepared, backend="ray")


def importlib_util_missing(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is None


@pytest.mark.skipif(importlib_util_missing("vllm") or not os.environ.get("VIBE_VLLM_MODEL"),
                    reason="needs vLLM, a GPU and VIBE_VLLM_MODEL (a model folder or Hugging Face id on disk)")
def test_vllm_replica_generates_on_a_gpu(tmp_path: Path) -> None:
    from engine.builtin_plugins.providers.vllm.engine import VllmEngine
    from engine.execute.providers.base import ResponseSchema

    engine = VllmEngine(os.environ["VIBE_VLLM_MODEL"], num_gpus=1)
    schema = ResponseSchema("verdict", {"type": "object", "properties": {"winner": {"enum": ["A", "B"]}},
                                        "required": ["winner"]})
    calls = [([{"role": "user", "content": "Say hello."}], {"temperature": 0.0, "max_tokens": 16, "seed": 1}, None),
             ([{"role": "user", "content": "A or B?"}], {"temperature": 0.0, "max_tokens": 16}, schema)]
    first, again = engine.generate(calls), engine.generate(calls)
    assert [c.text for c in first] == [c.text for c in again]  # fixed seed, greedy: reproducible
    assert json.loads(first[1].text)["winner"] in ("A", "B")


MEASURED_SPEC = """\
name: measured-{backend}
extends: vibe:offline-panel
models: {{a: {{provider: recorded}}, b: {{provider: recorded}}}}
datasets:
  pairs: {{source: {{path: {data}}}, fields: {{id: id, prompt: prompt, outputs: {{a: a, b: b}}}}}}
analyses:
  vibecheck: {{dataset: pairs, models: [a, b], judges: [metrics], split: {{train: 0.5, seed: 0}},
              vibes: [verbosity, formatting, typographic_emphasis, warmth, enthusiasm, interactivity, hedging]}}
execution: {{embeddings: {{num_cpus: 1, replicas: 2}}}}
"""


def test_the_measure_pass_of_8000_pairs_runs_on_the_workers_with_the_local_values(
        cluster: Cluster, tmp_path: Path) -> None:
    """8,000 recorded pairs on the metric panel's seven vibes (16,000 answers: four of the measure pass's chunks of
    4,000): on the Ray backend every answer's values are computed by the actor pool's workers, on both nodes, and
    each value, verdict and held-out figure is the local backend's."""
    words = ["sure", "great", "**bold**", "maybe", "- item", "thanks!", "why?", "the", "answer", "is"]
    rows = [{"id": f"p{i}", "prompt": f"question {i}",
             "a": " ".join(words[(i * k) % len(words)] for k in range(1, 4 + i % 9)),
             "b": "\n".join(words[(i + k) % len(words)] for k in range(2 + i % 5))} for i in range(8_000)]
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    runs = {}
    for backend in ("local", "ray"):
        spec = tmp_path / f"{backend}.yaml"
        spec.write_text(MEASURED_SPEC.format(backend=backend, data=data))
        runs[backend] = run_spec(spec, tmp_path / backend, tmp_path / f"{backend}.sqlite", quiet=True, report=False,
                                 backend=backend, address=cluster.address if backend == "ray" else None)
    local, ray_run = (np.load(tmp_path / name / "measures.npz") for name in ("local", "ray"))
    assert local["values"].shape == (16_000, 7) and not np.isnan(local["values"]).any()
    for column in ("answers", "keys", "values"):
        assert np.array_equal(local[column], ray_run[column])
    ran_on = manifest(tmp_path / "ray")["measured"]["ran_on"]
    assert sum(ran_on.values()) == 16_000 * 7 and "this process" not in ran_on
    assert len({where.split(" pid")[0] for where in ran_on}) == 2  # both nodes measured
    on_this_machine = manifest(tmp_path / "local")["measured"]["ran_on"]  # this machine's cores, in worker processes
    assert sum(on_this_machine.values()) == 16_000 * 7
    assert all(where.startswith("this machine pid") for where in on_this_machine)
    (_, local_results, _), (_, ray_results, _) = runs["local"], runs["ray"]
    assert [(v.name, v.separability) for v in local_results.of("vibecheck")[0].vibes] == [
        (v.name, v.separability) for v in ray_results.of("vibecheck")[0].vibes]
