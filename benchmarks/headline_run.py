"""The headline command, timed the way a user meets it: `vibe run specs/llama-vs-gpt.yaml` twice in a fresh
temporary folder, as subprocesses: first with an empty cache (every recorded output read, every offline
judgment, embedding, discovery, analysis and page computed), then again with nothing changed (everything in the
cache, and the folder's last run finished from the same inputs: nothing to do, `engine.run_memo`), and beside
it into a second folder (every figure and page worked out again from the cache). Also the size of the run folder
(the shared cache aside).

Before the derived-work cache (embeddings, discovery, cross-fitted lexicons, bootstrap rankings and chart
images kept by content hash) a cached re-run redid all of that: 79 s on this 2-core machine.

Last line: cold_s=<f> cached_s=<f> run_dir_mb=<f>
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import sizes

ROOT = Path(__file__).resolve().parent.parent


def run(spec: Path, out: Path, cache: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "engine", "run", str(spec), "--out", str(out), "--cache", str(cache),
                           "--quiet"], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"vibe run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    print(done.stdout.strip(), flush=True)
    return elapsed


def main() -> None:
    spec = sizes.spec(ROOT / "specs" / "llama-vs-gpt.yaml", "datasets: {arena: {limit: 40}}\n")
    with tempfile.TemporaryDirectory() as folder:
        out, cache = Path(folder) / "runs" / "llama-vs-gpt", Path(folder) / "runs" / "cache.sqlite"
        cold = run(spec, out, cache)
        phases = json.loads((out / "manifest.json").read_text())["phases_s"]
        print(f"cold: {cold:.1f} s; phases: {phases}")
        cached = run(spec, out, cache)
        print(f"cached, nothing to do: {cached:.2f} s")
        again = out.with_name("llama-vs-gpt-again")
        fresh = run(spec, again, cache)
        phases = json.loads((again / "manifest.json").read_text())["phases_s"]
        print(f"cached, into a second folder: {fresh:.1f} s; phases: {phases}")
        size_mb = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 1e6
        print(f"run folder {size_mb:.1f} MB; cache {cache.stat().st_size / 1e6:.1f} MB")
    print(f"cold_s={cold:.2f} cached_s={cached:.2f} run_dir_mb={size_mb:.2f}")


if __name__ == "__main__":
    main()
