"""Executor throughput, side by side in one run, against local asyncio servers with fixed latency, each in its
own process (so the client's CPU is measured alone).

1. The server alone (raw keep-alive sockets): it must answer well above the ideal rate, or the figures below
   would measure it.
2. vibe's scheduler on planned generation calls: at 16 in flight with 50 ms latency (ideal 320 req/s) and at
   256 in flight with 500 ms latency (ideal 512 req/s, where the limit is the client's CPU per call). Targets:
   ratio_c16 >= 0.9, ratio_c256 >= 0.9. cpu_ms_per_call is this process's CPU time over the c256 run per call.
3. The whole `vibe run` (a fresh process: imports, plan, calls, analysis, no report) of a spec that is all
   calls, as a judge stage is: two API models answer RUN_PROMPTS prompts and an API judge scores two vibes in
   both orders (6 calls a prompt), every endpoint at 16 in flight / 50 ms: run_ratio_c16 = the calls' ideal
   seconds (a stage's calls at 16 / 0.05 s, stage after stage) / wall seconds. Target >= 0.85.
4. promptfoo `eval -j 16` on the c16 prompts, where installed (benchmarks/.promptfoo: npm install --prefix
   benchmarks/.promptfoo node@22 promptfoo), and a fully cached re-run of a 10,000-task plan (< 3 s, zero
   requests): printed, not in the last line.

Last line: ratio_c16=<float> ratio_c256=<float> run_ratio_c16=<float> cpu_ms_per_call=<float>
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from llm_server import LLMServer, serve_forever  # noqa: E402
from sizes import SMOKE, pick  # noqa: E402

from engine.execute.cache import Cache  # noqa: E402
from engine.execute.messages import render  # noqa: E402
from engine.execute.providers import create_provider  # noqa: E402
from engine.execute.scheduler import Scheduler  # noqa: E402
from engine.pipeline import prepare  # noqa: E402
from engine.records import Result  # noqa: E402

LATENCY_S = 0.05
CALLS = pick(2000, 48)
WIDE, WIDE_LATENCY_S, WIDE_CALLS = 256, 0.5, pick(4096, 512)
RUN_PROMPTS = pick(1000, 12)
CACHED_PROMPTS = pick(1000, 10)  # 10 tasks each
CONNECTIONS, PER_CONNECTION = pick((128, 25), (4, 3))  # the server-alone measurement
CONCURRENCY = 16


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(port: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("benchmark server did not start")


async def _raw_client(port: int, requests: int) -> None:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for _ in range(requests):
        writer.write(head + body)
        await writer.drain()
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        await reader.readexactly(length)
    writer.close()


def server_capacity(port: int, connections: int = CONNECTIONS, per_connection: int = PER_CONNECTION) -> float:
    start = time.perf_counter()

    async def main() -> None:
        await asyncio.gather(*(_raw_client(port, per_connection) for _ in range(connections)))

    asyncio.run(main())
    return connections * per_connection / (time.perf_counter() - start)


def write_dataset(root: Path, n: int) -> None:
    with (root / "prompts.jsonl").open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"p{i}", "q": f"Prompt number {i}: say something."}) + "\n")


def write_spec(root: Path, port: int, calls: int, concurrency: int) -> Path:
    write_dataset(root, calls)
    (root / "gen.yaml").write_text(f"""\
name: bench-executor
models:
  a:
    provider: openai-compatible
    model: m
    base_url: http://127.0.0.1:{port}/v1
    params: {{max_tokens: 16}}
    limits: {{concurrency: {concurrency}, max_retries: 0, timeout_s: 60}}
  b: {{provider: recorded}}
datasets:
  d: {{source: {{path: prompts.jsonl}}, fields: {{id: id, prompt: q, outputs: {{b: q}}}}}}
vibes: [{{name: verbosity, low: short, high: long, metric: length_words}}]
judges: {{m: {{kind: metric}}}}
analyses:
  vibecheck: {{dataset: d, models: [a, b], judges: [m]}}
""")
    return root / "gen.yaml"


def vibe_throughput(root: Path, port: int, calls: int, concurrency: int) -> tuple[float, float]:
    """(requests per second, this process's CPU seconds) of the scheduler alone on `calls` generation calls."""
    root.mkdir(parents=True, exist_ok=True)
    prepared = prepare(write_spec(root, port, calls, concurrency))
    tasks = [t for t in prepared.plan.tasks if t.provider == "openai-compatible"]
    assert len(tasks) == calls
    endpoint = prepared.spec.models["a"]
    with Cache(root / "gen-cache.sqlite") as cache:

        async def measure() -> tuple[float, float]:
            provider = create_provider(endpoint)
            scheduler = Scheduler(cache, {"a": endpoint}, {"a": provider})
            start, cpu = time.perf_counter(), time.process_time()
            failures = await scheduler.run(tasks, lambda t: render(t, {}))
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
            await provider.aclose()
            assert not failures, failures[:3]
            return elapsed, cpu

        elapsed, cpu = asyncio.run(measure())
    return calls / elapsed, cpu


def whole_run(root: Path, port: int) -> tuple[float, float]:
    """(wall seconds, ideal seconds) of `vibe run` in a fresh process on an all-API spec (no report): the
    generation stage's calls, then the judge stage's, each at 16 in flight."""
    folder = root / "whole"
    folder.mkdir()
    write_dataset(folder, RUN_PROMPTS)
    url, limits = f"http://127.0.0.1:{port}/v1", f"{{concurrency: {CONCURRENCY}, max_retries: 0, timeout_s: 60}}"
    spec = folder / "run.yaml"
    spec.write_text(f"""\
name: bench-run
models:
  a: {{provider: openai-compatible, model: a, base_url: {url}, params: {{max_tokens: 16}}, limits: {limits}}}
  b: {{provider: openai-compatible, model: b, base_url: {url}, params: {{max_tokens: 16}}, limits: {limits}}}
judges:
  j: {{kind: llm, provider: openai-compatible, model: j, base_url: {url}, limits: {limits}, structured: off}}
datasets:
  d: {{source: {{path: prompts.jsonl}}, fields: {{id: id, prompt: q}}}}
vibes:
  - {{name: verbosity, low: brief answers, high: long answers}}
  - {{name: formality, low: casual wording, high: formal wording}}
analyses:
  vibecheck: {{dataset: d, models: [a, b], judges: [j]}}
""")
    # models a and b share the server but not a limit: 32 in flight while both generate, then the judge's 16
    ideal = 2 * RUN_PROMPTS / (2 * CONCURRENCY / LATENCY_S) + 4 * RUN_PROMPTS / (CONCURRENCY / LATENCY_S)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "engine", "run", str(spec), "--cache", str(folder / "c.sqlite"), "--out",
                    str(folder / "run"), "--quiet", "--no-report"], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start, ideal


def promptfoo_bin() -> tuple[str, dict[str, str]] | None:
    local = ROOT / "benchmarks" / ".promptfoo" / "node_modules" / ".bin"
    env = dict(os.environ, PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1",
               OPENAI_API_KEY="not-needed", PROMPTFOO_CACHE_ENABLED="false")
    if (local / "promptfoo").exists():
        env["PATH"] = f"{local}:{env['PATH']}"  # the node@22 binary from npm comes first
        return str(local / "promptfoo"), env
    found = shutil.which("promptfoo")
    return (found, env) if found else None


def promptfoo_run(binary: str, env: dict[str, str], root: Path, port: int, n: int) -> float:
    config = {
        "providers": [{"id": "openai:chat:m", "config": {"apiBaseUrl": f"http://127.0.0.1:{port}/v1",
                                                          "max_tokens": 16}}],
        "prompts": ["{{q}}"],
        "tests": [{"vars": {"q": f"Prompt number {i}: say something."}} for i in range(n)],
    }
    path = root / f"promptfoo-{n}.json"
    path.write_text(json.dumps(config))
    env = dict(env, PROMPTFOO_CONFIG_DIR=str(root / "promptfoo-home"))
    start = time.perf_counter()
    subprocess.run([binary, "eval", "-c", str(path), "-j", str(CONCURRENCY), "--no-cache", "--no-progress-bar",
                    "--no-table", "-o", str(root / f"promptfoo-out-{n}.json")], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    results = json.loads((root / f"promptfoo-out-{n}.json").read_text())["results"]["results"]
    assert len(results) == n and all(not r.get("error") for r in results), "promptfoo calls failed"
    return elapsed


def cached_rerun(root: Path) -> tuple[float, int]:
    with LLMServer() as server:
        (root / "judge.jsonl").write_text("".join(json.dumps({"id": f"p{i}", "q": f"Question {i}?"}) + "\n"
                                                  for i in range(CACHED_PROMPTS)))
        (root / "cached.yaml").write_text(f"""\
name: bench-cached
models:
  a: {{provider: openai-compatible, model: m, base_url: {server.base_url}}}
  b: {{provider: openai-compatible, model: n, base_url: {server.base_url}}}
judges:
  j: {{kind: llm, provider: openai-compatible, model: j, base_url: {server.base_url}}}
datasets:
  d: {{source: {{path: judge.jsonl}}, fields: {{id: id, prompt: q}}}}
vibes:
  - {{name: verbosity, low: brief answers, high: long answers}}
  - {{name: formality, low: casual wording, high: formal wording}}
  - {{name: humor, low: serious, high: playful}}
  - {{name: caution, low: confident, high: hedged}}
analyses:
  vibecheck: {{dataset: d, models: [a, b], judges: [j]}}
""")
        prepared = prepare(root / "cached.yaml")
        assert len(prepared.plan.tasks) == 10 * CACHED_PROMPTS
        with Cache(root / "cached.sqlite") as cache:
            cache.put_many(Result(t.id, t.stage, t.endpoint, t.provider, "Verdict: 1", 10, 5)
                           for t in prepared.plan.tasks)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "engine", "run", str(root / "cached.yaml"), "--cache",
                        str(root / "cached.sqlite"), "--out", str(root / "cached-run"), "--quiet"], check=True,
                       stdout=subprocess.DEVNULL)
        elapsed = time.perf_counter() - start
        return elapsed, len(server.state.log)


def serving(latency_s: float) -> tuple[multiprocessing.Process, int]:
    port = free_port()
    server = multiprocessing.Process(target=serve_forever, args=(port, latency_s), daemon=True)
    server.start()
    wait_for(port)
    return server, port


def main() -> None:
    servers = []
    try:
        (fast, port), (slow, wide_port) = serving(LATENCY_S), serving(WIDE_LATENCY_S)
        servers = [fast, slow]
        capacity = server_capacity(port)
        print(f"server alone: {capacity:,.0f} req/s at {CONNECTIONS} connections ({LATENCY_S * 1000:.0f} ms latency)")
        assert SMOKE or capacity >= 1000, "the test server is the bottleneck; results would be meaningless"
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            rps16, _ = vibe_throughput(root / "c16", port, CALLS, CONCURRENCY)
            ideal16 = CONCURRENCY / LATENCY_S
            print(f"scheduler, {CONCURRENCY} in flight, {LATENCY_S * 1000:.0f} ms: {rps16:,.1f} req/s over {CALLS} "
                  f"calls (ideal {ideal16:.0f}) -> {rps16 / ideal16:.3f}")
            rps256, cpu = vibe_throughput(root / "c256", wide_port, WIDE_CALLS, WIDE)
            ideal256 = WIDE / WIDE_LATENCY_S
            print(f"scheduler, {WIDE} in flight, {WIDE_LATENCY_S * 1000:.0f} ms: {rps256:,.1f} req/s over {WIDE_CALLS} "
                  f"calls (ideal {ideal256:.0f}) -> {rps256 / ideal256:.3f}; client CPU {cpu:.2f} s, "
                  f"{1000 * cpu / WIDE_CALLS:.3f} ms per call")
            wall, ideal_wall = whole_run(root, port)
            print(f"vibe run (fresh process, no report), {6 * RUN_PROMPTS} calls, each endpoint at {CONCURRENCY} in "
                  f"flight: {wall:.2f} s against {ideal_wall:.2f} s ideal -> {ideal_wall / wall:.3f}")
            found = promptfoo_bin()
            if found:
                binary, env = found
                startup = promptfoo_run(binary, env, root, port, 1)
                total = promptfoo_run(binary, env, root, port, CALLS)
                pf_rps = CALLS / max(1e-9, total - startup)
                print(f"promptfoo -j {CONCURRENCY}: {pf_rps:,.1f} req/s ({total:.2f} s for {CALLS} calls, "
                      f"{startup:.2f} s startup subtracted); vibe's scheduler is {rps16 / pf_rps:.2f}x")
            else:
                print("promptfoo not found (npm install --prefix benchmarks/.promptfoo node@22 promptfoo)")
            rerun_s, requests = cached_rerun(root)
            print(f"cached re-run of {10 * CACHED_PROMPTS:,} tasks: {rerun_s:.2f} s wall (process start included), "
                  f"{requests} HTTP requests")
            assert requests == 0
    finally:
        for server in servers:
            server.terminate()
    print(f"ratio_c16={rps16 / ideal16:.3f} ratio_c256={rps256 / ideal256:.3f} run_ratio_c16={ideal_wall / wall:.3f} "
          f"cpu_ms_per_call={1000 * cpu / WIDE_CALLS:.3f}")


if __name__ == "__main__":
    main()
