"""Batched BERTScore vs the naive per-pair `bert_score.score` loop, on all-MiniLM-L6-v2 (num_layers=6).

Workload: 500 prompts × K=5 samples × 2 models = 5,000 texts and 22,500 self and cross pairs (per prompt:
10 + 10 unique self pairs, 25 cross pairs). No public multi-sample generations exist, so the texts are real
AlpacaEval answers: model A's five "samples" for prompt i are five models' answers to instruction i; model
B's are the three GPT-3.5 variants' answers to instruction i + 300 and two of them to instruction i + 301
(so, as with real samples, no text of A recurs in B; neighbouring items share a few texts, which the
batched path encodes once per chunk of 16 items) — real lengths and vocabulary.

The batched path (engine.builtin_plugins.methods.separability.similarity) scores all 22,500 pairs. The naive loop (one
`bert_score.score` call per pair, as research code does) is timed on a seeded random sample of 500 of those pairs and
extrapolated; both must agree to 1e-4 on that sample. The batched path runs its chunks on one thread each (for
scores that do not depend on the thread count), side by side on a thread per core. Peak memory is the summed
RSS of this process and any below it, sampled while the batched path runs (that is, before the naive loop,
which reloads the model on every call).

Last line: speedup=<float> max_abs_diff=<float> peak_rss_mb=<float>
"""

from __future__ import annotations

import json
import os
import resource
import threading
import time
import warnings
from pathlib import Path

import numpy as np
from scale import tree_rss_mb
from sizes import pick

from engine.builtin_plugins.methods.separability.similarity import grouped_bertscore
from engine.embeddings import default_encoder, model_path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "alpaca_eval"
MODELS_A = ["gpt4_1106_preview", "Meta-Llama-3-70B-Instruct", "claude-3-opus-20240229", "Mixtral-8x7B-Instruct-v0.1",
            "Qwen1.5-72B-Chat"]
MODELS_B = ["gpt-3.5-turbo-1106", "gpt-3.5-turbo-1106_concise", "gpt-3.5-turbo-1106_verbose"]
PROMPTS, K, NAIVE_SAMPLE = pick(500, 3), 5, pick(500, 4)


def load() -> list[tuple[list[str], list[str]]]:
    outputs = {m: [r["output"] for r in json.loads((DATA / m / "model_outputs.json").read_text())]
               for m in set(MODELS_A + MODELS_B)}
    return [([outputs[m][i] for m in MODELS_A],
             [outputs[m][(i + 300) % 805] for m in MODELS_B] + [outputs[m][(i + 301) % 805] for m in MODELS_B[:2]])
            for i in range(PROMPTS)]


def pairs_of(groups: list[tuple[list[str], list[str]]]) -> list[tuple[str, str]]:
    out = []
    for a, b in groups:
        for side in (a, b):
            out += [(side[i], side[j]) for i in range(K) for j in range(i + 1, K)]
        out += [(x, y) for x in a for y in b]
    return out


class TreePeak:
    """The largest resident memory of this process and every process below it together (`scale.tree_rss_mb`:
    work spread over worker processes counts whole, which getrusage's own peak does not), sampled every 0.2 s."""

    def __init__(self) -> None:
        self.peak = 0.0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while not self.done.wait(0.2):
            self.peak = max(self.peak, tree_rss_mb(os.getpid()))

    def stop(self) -> float:
        self.done.set()
        self.thread.join()
        return max(self.peak, tree_rss_mb(os.getpid()))


def main() -> None:
    warnings.filterwarnings("ignore")
    groups = load()
    pairs = pairs_of(groups)
    assert len(pairs) == 45 * PROMPTS, len(pairs)  # 10 + 10 self pairs, 25 cross

    sampler = TreePeak()
    start = time.perf_counter()
    texts_per_group = [a + b for a, b in groups]
    batched: dict[tuple[str, str], float] = {}
    for texts, matrix in zip(texts_per_group, grouped_bertscore(texts_per_group, default_encoder()), strict=True):
        for i in range(2 * K):
            for j in range(2 * K):
                batched[(texts[i], texts[j])] = float(matrix[i, j])
    batched_s = time.perf_counter() - start
    batched_peak_mb = sampler.stop()  # before the naive loop runs: this process and its workers together
    distinct = len({t for texts in texts_per_group for t in texts})
    print(f"batched: {len(pairs):,} pairs in {batched_s:.1f} s ({len(pairs) / batched_s:,.0f} pairs/s), "
          f"{distinct:,} distinct texts, each encoded once per chunk of 16 items that holds it")

    import bert_score

    rng = np.random.default_rng(0)
    sample = [pairs[i] for i in rng.choice(len(pairs), NAIVE_SAMPLE, replace=False)]
    start = time.perf_counter()
    naive = [float(bert_score.score([x], [y], model_type=model_path(), num_layers=6)[2][0]) for x, y in sample]
    naive_s = time.perf_counter() - start
    naive_rate = NAIVE_SAMPLE / naive_s
    naive_total_s = len(pairs) / naive_rate
    diff = max(abs(n - batched[pair]) for n, pair in zip(naive, sample, strict=True))
    speedup = naive_total_s / batched_s
    overall_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"naive per-pair bert_score.score: {naive_rate:.1f} pairs/s on {NAIVE_SAMPLE} sampled pairs -> "
          f"{naive_total_s / 60:.1f} min extrapolated for all {len(pairs):,}")
    print(f"speed-up {speedup:.1f}x, max |difference| on the sample {diff:.2e}; peak RSS of the batched path "
          f"{batched_peak_mb:.0f} MB (process peak after the naive loop, which reloads the model per call: "
          f"{overall_mb:.0f} MB)")
    print(f"speedup={speedup:.2f} max_abs_diff={diff:.6f} peak_rss_mb={batched_peak_mb:.1f}")


if __name__ == "__main__":
    main()
