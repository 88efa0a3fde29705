"""The everyday commands as a user meets them: each a fresh `python -m engine …` process, timed from start to exit,
median of five warm runs (one run first, untimed, so the disk cache holds the code and the data), side by side in
one run on the headline spec (`specs/llama-vs-gpt.yaml`) and a 10,000-task spec (benchmarks/plan.py's: 1,000
prompts, two API models, an LLM judge on four vibes in both orders).

- help_s: `vibe --help`.
- validate_s: `vibe validate` of the headline spec (its data read and checked).
- plan_s, diff_s: `vibe plan` and `vibe diff BASE NEW` (one vibe reworded) of the 10,000-task spec, as a user
  meets them: the plan kept from the last command (`engine.prepared_memo`) read back; beside them, the same
  commands compiling the plan every time (`VIBE_NO_PLAN_CACHE=1`).
- cached_rerun_s: `vibe run` of the headline spec again, every answer and measure in the cache (after one cold
  run, untimed here: `benchmarks/headline_run.py` times it): nothing changed, so it has nothing to do
  (`engine.run_memo`). Beside it, the same run into a fresh folder, every figure and page worked out again from
  the cache.

Targets (issue #82): help_s ≤ 0.3, validate_s ≤ 0.5, plan_s ≤ 0.2, diff_s ≤ 0.3, cached_rerun_s ≤ 3.
Last line: help_s=<f> validate_s=<f> plan_s=<f> diff_s=<f> cached_rerun_s=<f>
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import sizes
from plan import SPEC

ROOT = Path(__file__).resolve().parent.parent
RUNS = sizes.pick(5, 1)
WARM_UP = sizes.pick(1, 0)  # the smoke run times each command once, cold: its figures measure nothing


# as a user's install runs: Python keeps each module's compiled bytecode (pip writes it on install). A machine
# that sets PYTHONDONTWRITEBYTECODE (this sandbox does) would otherwise recompile vibe's modules on every command.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(*args: str, env: dict[str, str] = ENV) -> float:
    """Median seconds of RUNS runs of `python -m engine ARGS`, after WARM_UP untimed runs."""
    seconds = [once(*args, env=env) for _ in range(RUNS + WARM_UP)]
    return statistics.median(seconds[WARM_UP:])


def once(*args: str, env: dict[str, str] = ENV) -> float:
    """Seconds of one run of `python -m engine ARGS`."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True, text=True, cwd=ROOT, env=env)
    if done.returncode != 0:
        sys.exit(f"vibe {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return time.perf_counter() - start


def main() -> None:
    headline = sizes.spec(ROOT / "specs" / "llama-vs-gpt.yaml", "datasets: {arena: {limit: 40}}\n")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        with (root / "prompts.jsonl").open("w") as fh:
            for i in range(sizes.pick(1000, 20)):
                row = {"id": f"p{i}", "prompt": f"Question {i}: explain topic number {i} briefly."}
                fh.write(json.dumps(row) + "\n")
        (root / "base.yaml").write_text(SPEC)
        (root / "new.yaml").write_text(SPEC.replace("playful and joking", "witty and full of jokes"))
        cache = root / "cache.sqlite"
        figures = {
            "help_s": timed("--help"),
            "validate_s": timed("validate", str(headline)),
            "plan_s": timed("plan", str(root / "base.yaml"), "--cache", str(cache)),
            "diff_s": timed("diff", str(root / "base.yaml"), str(root / "new.yaml")),
        }
        print(f"headline spec: plan {timed('plan', str(headline), '--cache', str(cache)):.3f} s; "
              f"10,000-task spec: validate {timed('validate', str(root / 'base.yaml')):.3f} s")
        compiled = {**ENV, "VIBE_NO_PLAN_CACHE": "1"}  # side by side: the plan compiled by every command
        print(f"10,000-task spec compiled by every command (VIBE_NO_PLAN_CACHE=1): plan "
              f"{timed('plan', str(root / 'base.yaml'), '--cache', str(cache), env=compiled):.3f} s, diff "
              f"{timed('diff', str(root / 'base.yaml'), str(root / 'new.yaml'), env=compiled):.3f} s")
        out = root / "run"
        subprocess.run([sys.executable, "-m", "engine", "run", str(headline), "--out", str(out), "--cache", str(cache),
                        "--quiet"], capture_output=True, cwd=ROOT, check=True, env=ENV)  # cold: fills the cache
        figures["cached_rerun_s"] = timed("run", str(headline), "--out", str(out), "--cache", str(cache), "--quiet")
        fresh = [once("run", str(headline), "--out", str(root / f"fresh{k}"), "--cache", str(cache), "--quiet")
                 for k in range(sizes.pick(3, 1))]  # a new folder each time: nothing kept to stand on
        print(f"headline spec, cached, into a fresh folder (every figure and page worked out again), median of "
              f"{len(fresh)}: {statistics.median(fresh):.3f} s")
    print("targets: help_s ≤ 0.3, validate_s ≤ 0.5, plan_s ≤ 0.2, diff_s ≤ 0.3, cached_rerun_s ≤ 3")
    print(" ".join(f"{key}={value:.3f}" for key, value in figures.items()))


if __name__ == "__main__":
    main()
