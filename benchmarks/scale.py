"""Arena-scale: `vibe run` on 10k, 30k and 100k synthetic pairs built from the shared Arena CSVs, against the
floor of one plain pass of every metric over every answer, answer by answer.

Each pair set draws its answers with replacement from the Arena files' two answer columns (model A from
Llama-3-70B's, model B from its opponents'), its prompts from their questions (each pair its own id), and a
label tilted by length: A wins with probability 1 / (1 + exp(−(words A − words B) / 100)). The spec is a
metric-only panel: the offline panel's metric vibes, statistical discovery, one VibeCheck with a 50/50 split and
the Bradley–Terry/Elo rankings of the labels. Each size runs `vibe run` in a child process of its own, whose
wall time and peak memory are read back (the larger of its own peak RSS and the sampled peak of its process
tree's summed RSS, since the measure pass runs on worker processes); the floor (every function of
`engine.judges.metrics.METRICS` on every answer, once, answer by answer so that the metrics share an answer's
words, as the measure pass does) is timed in this process on the same answers. The run's SQLite cache is weighed
against the data file it was read from.

A size whose predicted peak RSS (from the largest size that ran, per pair) exceeds 80% of this machine's
memory is not started: the line says so rather than bringing the machine down.

Last line: pairs=<n> wall_over_floor=<f> peak_rss_mb=<f> run_mb_over_data_mb=<f> cache_mb_over_data_mb=<f>
  growth_exponent=<f>
(the largest size that ran; growth_exponent is the slope of log wall against log pairs between the smallest
and that size).
"""

from __future__ import annotations

import csv
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from sizes import pick

from engine.judges.metrics import METRICS

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("VIBE_DATA", ROOT.parent / "shared" / "data")) / "arena"
SIZES = pick([10_000, 30_000, 100_000], [300, 900])
MEASURED = ("length_words", "list_density", "bold_density", "warmth", "exclamations", "questions_to_user",
            "personal_pronouns", "hedging")
CHILD = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)")
SPEC = """\
name: scale-{n}
extends: vibe:offline-panel
models: {{a: {{provider: recorded}}, b: {{provider: recorded}}}}
datasets:
  pairs:
    source: {{path: pairs.csv}}
    fields: {{id: id, prompt: prompt, preference: preference, outputs: {{a: a, b: b}}}}
    labels: {{source: metric, description: "synthetic: the longer answer tends to win"}}
vibes:
  - discover: {{method: statistical, max_vibes: 6}}
analyses:
  vibecheck:
    dataset: pairs
    models: [a, b]
    judges: [metrics]
    vibes: [{vibes}]
    split: {{train: 0.5, seed: 0}}
  rankings:
    dataset: pairs
    models: [a, b]
    methods: [bradley_terry, elo]
    outcomes: labels
    bootstrap: 200
"""


def arena_pool() -> tuple[list[str], list[str], list[str]]:
    questions, a, b = [], [], []
    for path in sorted(DATA.glob("vibecheck_*.csv")):
        with path.open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                questions.append(row["question"])
                a.append(row["llama-3-70b-instruct"])
                b.append(row["not_llama"])
    return questions, a, b


def drawn_pairs(n: int, pool: tuple[list[str], list[str], list[str]]) -> Iterator[tuple[str, str, str, bool]]:
    """n pairs (prompt, answer A, answer B, whether A wins), drawn with the seed n: the answers with replacement
    from the pool's two columns, the prompt from its questions, the label tilted by length."""
    rng = random.Random(n)
    questions, a, b = pool
    for _ in range(n):
        x, y = rng.choice(a), rng.choice(b)
        tilt = (len(x.split()) - len(y.split())) / 100
        yield rng.choice(questions), x, y, rng.random() < 1 / (1 + math.exp(-tilt))


def write_pairs(folder: Path, n: int, pool: tuple[list[str], list[str], list[str]]) -> Path:
    path = folder / "pairs.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "prompt", "a", "b", "preference"])
        for i, (prompt, x, y, a_wins) in enumerate(drawn_pairs(n, pool)):
            writer.writerow([f"p{i}", prompt, x, y, "a" if a_wins else "b"])
    (folder / "spec.yaml").write_text(SPEC.format(n=n, vibes=", ".join(vibe_names())), encoding="utf-8")
    return path


def vibe_names() -> list[str]:
    import yaml

    base = yaml.safe_load((ROOT / "engine" / "builtin" / "offline-panel.yaml").read_text(encoding="utf-8"))
    return [v["name"] for v in base["vibes"] if v.get("metric") in MEASURED]


def floor_s(folder: Path) -> float:
    """One plain pass, the fastest the project's own metric code allows in one process: answer by answer, every
    metric on each answer before the next, so the metrics share the answer's words and tokens (the metrics keep
    the last few texts' words; looping metric by metric over every answer shares nothing and took 1.8–2.6× as
    long)."""
    with (folder / "pairs.csv").open(newline="", encoding="utf-8") as fh:
        answers = [text for row in csv.DictReader(fh) for text in (row["a"], row["b"])]
    computes = [compute for compute, _, _ in METRICS.values()]
    start = time.perf_counter()
    for text in answers:
        for compute in computes:
            compute(text)
    return time.perf_counter() - start


def run(folder: Path) -> tuple[float, float, int]:
    """`vibe run` in a child of its own: wall seconds, its peak memory in MB, its exit status. The peak is the
    larger of the child's own peak RSS (ru_maxrss, exact but one process: the run and its measure workers each
    count alone) and the highest sum of RSS over the run's process tree, sampled every 0.2 s."""
    cmd = [sys.executable, "-c", CHILD, sys.executable, "-m", "engine", "run", str(folder / "spec.yaml"), "--out",
           str(folder / "run"), "--cache", str(folder / "cache.sqlite"), "--quiet"]
    start = time.perf_counter()
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    tree_peak = 0.0
    while child.poll() is None:
        tree_peak = max(tree_peak, tree_rss_mb(child.pid))
        time.sleep(0.2)
    out, err = child.communicate()
    wall = time.perf_counter() - start
    rss_kb, code = out.split()[-2:]
    if int(code):
        print(err[-2000:], file=sys.stderr)
    return wall, max(int(rss_kb) / 1024, tree_peak), int(code)


def tree_rss_mb(root: int) -> float:
    """The resident memory of `root` and every process below it, in MB (0 where /proc is not there). It walks
    down from `root` through each thread's list of children, reading only the tree's own files: scanning all of
    /proc five times a second took 5% of a core from the run it measures."""
    total, todo, seen = 0.0, [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
            for task in Path(f"/proc/{pid}/task").iterdir():
                todo += [int(child) for child in (task / "children").read_text().split()]
        except (OSError, IndexError, ValueError):  # gone meanwhile
            continue
    return total


def size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def main() -> None:
    pool = arena_pool()
    memory_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20
    rows = []
    for n in SIZES:
        if rows and rows[-1]["rss_mb"] / rows[-1]["pairs"] * n > 0.8 * memory_mb:
            print(f"pairs={n}: not started, predicted peak RSS {rows[-1]['rss_mb'] / rows[-1]['pairs'] * n:,.0f} MB "
                  f"of {memory_mb:,.0f} MB on this machine")
            continue
        with tempfile.TemporaryDirectory(prefix=f"vibe-scale-{n}-") as tmp:
            folder = Path(tmp)
            data = write_pairs(folder, n, pool)
            floor = floor_s(folder)
            wall, rss, code = run(folder)
            if code:
                print(f"pairs={n}: vibe run exited {code} after {wall:.0f} s (peak RSS {rss:,.0f} MB)")
                break
            manifest = json.loads((folder / "run" / "manifest.json").read_text(encoding="utf-8"))
            row = {"pairs": n, "wall_s": wall, "floor_s": floor, "rss_mb": rss, "run_mb": size_mb(folder / "run"),
                   "cache_mb": (folder / "cache.sqlite").stat().st_size / 2**20,
                   "data_mb": data.stat().st_size / 2**20, "tasks": manifest["tasks"]["total"],
                   "phases": {k: round(v, 1) for k, v in manifest.get("phases_s", {}).items()},
                   "peaks": {k: round(v) for k, v in manifest.get("peak_rss_mb", {}).items()}}
            measured = manifest.get("measured", {})
            rate = measured.get("computed", 0) / max(measured.get("seconds", 0.0), 1e-9)
            rows.append(row)
            print(f"pairs={n} wall_s={wall:.1f} floor_s={floor:.1f} wall_over_floor={wall / floor:.2f} "
                  f"peak_rss_mb={rss:.0f} kb_per_pair={rss * 1024 / n:.1f} run_mb={row['run_mb']:.1f} "
                  f"cache_mb={row['cache_mb']:.1f} data_mb={row['data_mb']:.1f} tasks={row['tasks']} "
                  f"measured_verdicts={measured.get('pairs', 0)} "
                  f"measure_values_per_s={rate:,.0f} phases={row['phases']} peak_mb_by_phase={row['peaks']}",
                  flush=True)
    if not rows:
        sys.exit("no size ran to its end")
    last, first = rows[-1], rows[0]
    growth = (math.log(last["wall_s"] / first["wall_s"]) / math.log(last["pairs"] / first["pairs"])
              if len(rows) > 1 else float("nan"))
    print(f"pairs={last['pairs']} wall_over_floor={last['wall_s'] / last['floor_s']:.2f} "
          f"peak_rss_mb={last['rss_mb']:.0f} run_mb_over_data_mb={last['run_mb'] / last['data_mb']:.2f} "
          f"cache_mb_over_data_mb={last['cache_mb'] / last['data_mb']:.2f} growth_exponent={growth:.3f}")


if __name__ == "__main__":
    main()
