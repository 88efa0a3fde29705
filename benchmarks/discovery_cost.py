"""What measures of sentences' meaning add to statistical discovery's cost at scale: discovery alone, as a
`vibe run` of `benchmarks/scale.py`'s metric panel calls it, with and without `discover: {sentences: true}`.

The training pairs are drawn as `scale.py` draws its pairs (Arena answers: A from Llama-3-70B's, B from its
opponents', a label tilted by length), and discovery is called on them as the run calls it (the panel's declared
metrics excluded, six vibes at most, no embedding clusters: the metric panel has no embedding judge, and no run
cache). At 10,000 pairs the analysis' 50/50 split gives discovery 5,000 training pairs; at 100,000 pairs discovery
reads a seeded sample of 10,000 training units (`splits.DISCOVERY_UNITS`), so its figure there is discovery on
10,000 pairs. Each measurement runs in a fresh child process (MiniLM loaded there, as a run loads it), whose wall
time and peak memory (the highest sum of RSS over its process tree, sampled every 0.2 s, as `scale.py` samples
it: the metrics are measured on worker processes) are read back.

Last line: sentences_cost_ratio_n10000=<f> sentences_peak_rss_mb_n100000=<f>
(discovery's wall time with the measures of meaning over its time without them at 10,000 pairs, and its peak
memory with them at 100,000 pairs)
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import time
from pathlib import Path

from scale import MEASURED, arena_pool, drawn_pairs, tree_rss_mb
from sizes import pick

ROOT = Path(__file__).resolve().parents[1]
TRAINING = pick({10_000: 5_000, 100_000: 10_000}, {10_000: 12, 100_000: 12})  # pairs of the spec -> training pairs


def training_pairs(n: int) -> list:
    """n pairs drawn as `scale.py` draws a spec's pairs, as discovery reads them."""
    from engine.builtin_plugins.methods.vibecheck.discovery.pairs import TrainingPair

    return [TrainingPair(x, y, a_wins) for _, x, y, a_wins in drawn_pairs(n, arena_pool())]


def child(n: int, sentences: bool) -> None:
    """Discovery on n training pairs, timed from the call (the pairs drawn beforehand); prints one JSON line."""
    from engine.builtin_plugins.methods.vibecheck.discovery import statistical
    from engine.judges.metrics import METRICS

    pairs = training_pairs(n)
    excluded = frozenset(m for m in METRICS if m in MEASURED)
    start = time.perf_counter()
    chosen = statistical.discover(pairs, "a", "b", 6, exclude_metrics=excluded, sentences=sentences, seed=0)
    print(json.dumps({"seconds": time.perf_counter() - start, "chosen": [c.origin for c in chosen]}))


@functools.cache
def measure(n: int, sentences: bool) -> tuple[float, float, list[str]]:
    """`child` in a process of its own: (wall seconds of discovery, peak MB of its process tree, origins chosen);
    once per size (the smoke run reads as many pairs for both spec sizes)."""
    code = f"import sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); import discovery_cost; " \
           f"discovery_cost.child({n}, {sentences})"
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=ROOT)
    peak = 0.0
    while process.poll() is None:
        peak = max(peak, tree_rss_mb(process.pid))
        time.sleep(0.2)
    out, err = process.communicate()
    if process.returncode:
        sys.exit(f"discovery on {n} pairs (sentences={sentences}) exited {process.returncode}:\n{err[-3000:]}")
    found = json.loads(out.strip().splitlines()[-1])
    return found["seconds"], peak, found["chosen"]


def main() -> None:
    figures = {}
    for spec_pairs, n in TRAINING.items():
        for sentences in (False, True):
            if spec_pairs == 100_000 and not sentences:
                continue
            seconds, peak, chosen = measure(n, sentences)
            figures[(spec_pairs, sentences)] = (seconds, peak)
            meaning = sum(origin.startswith("sentence meaning") for origin in chosen)
            print(f"pairs={spec_pairs} training_pairs={n} sentences={sentences} discovery_s={seconds:.1f} "
                  f"peak_rss_mb={peak:.0f} chosen={len(chosen)} of_meaning={meaning}", flush=True)
    ratio = figures[(10_000, True)][0] / figures[(10_000, False)][0]
    print(f"sentences_cost_ratio_n10000={ratio:.3f} sentences_peak_rss_mb_n100000={figures[(100_000, True)][1]:.0f}")


if __name__ == "__main__":
    main()
