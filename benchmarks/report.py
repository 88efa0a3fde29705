"""Leaderboard rendering at scale: 10,000 judged pairs × 10 vibes (targets: render < 10 s, index < 2 MB).

The analysis records are built directly (typed `VibeCheckResult`, seeded random verdicts and measures,
outputs of realistic length) so that only the report stage is timed: charts (embedded and exported as SVG
and PNG), the index, one page per vibe and the paged drill-down.

Last line: render_s=<float> index_mb=<float>
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
from sizes import pick

from engine.analyze.heldout import Accuracy, HeldOutFit
from engine.analyze.run_results import RunResults
from engine.analyze.vibecheck import PairVerdicts, VibeCheckResult, VibeScore
from engine.datasets import Item
from engine.records import Plan, Prepared, Result
from engine.report.render import render_report
from engine.spec.model import Analysis, Judge, Spec

PAIRS, VIBES = pick((10_000, 10), (40, 3))


def build() -> tuple[RunResults, Prepared, dict[str, Result]]:
    rng = np.random.default_rng(0)
    vibes = [f"vibe_{i}" for i in range(VIBES)]
    words = "the model answers with care and detail about many topics in a clear voice".split()
    outputs: dict[str, Result] = {}
    pairs, items = [], []
    for n in range(PAIRS):
        item_id = f"item-{n}"
        ga, gb = f"ga{n}", f"gb{n}"
        for tid in (ga, gb):
            text = " ".join(rng.choice(words, int(rng.integers(40, 200))))
            outputs[tid] = Result(tid, "generation", "m", "recorded", text)
        items.append(Item(item_id, f"Prompt number {n}: " + " ".join(rng.choice(words, 20))))
        nu = {v: int(rng.integers(-1, 2)) for v in vibes}
        by_judge = {v: {"metrics": nu[v], "minilm": int(rng.integers(-1, 2))} for v in vibes}
        measures = {v: [float(rng.normal(1, 0.3)), float(rng.normal(1, 0.3))] for v in vibes}
        pairs.append(PairVerdicts(item_id, "train" if n % 2 else "test", None, ga, gb, nu, by_judge, {}, measures))
    scores = [VibeScore(v, f"low end of {v}", f"high end of {v}", "declared", "length_words", ["metrics", "minilm"],
                        ["embedding", "metric"], float(rng.uniform(-0.5, 0.5)), 0.1, (0.05, 0.15), 0.3, 0.3, True, "",
                        PAIRS, 0, 0.5, 0.01, 0.2, 0.3) for v in vibes]
    half = PAIRS // 2
    reg = HeldOutFit("model_matching", vibes, [0.1] * VIBES, [0.02] * VIBES, [0.05] * VIBES, [""] * VIBES, None,
                     0.8, 0.78, half, half, 0.77, 0.79, [Accuracy("longer answer wins", 0.55, 0.54, 0.56, half),
                                                          Accuracy("majority class", 0.5, 0.5, 0.5, half)],
                     0.23, 0.22, 0.24, "every kept vibe", p_adjusted=[0.5] * VIBES, tested=[True] * VIBES)
    vc = VibeCheckResult("vibecheck", "model-a", "model-b", scores, pairs, reg, None, 0, [])
    results = RunResults("bench", "Report benchmark", f"{PAIRS:,} pairs x {VIBES} vibes",
                         {"tasks": {"done": 1, "total": 1}}, {"vibecheck": [vc]})
    spec = Spec("bench", Path("bench.yaml"), "", {}, {"metrics": Judge("metrics", "metric"),
                                                      "minilm": Judge("minilm", "embedding")},
                {}, (), None, {}, {"vibecheck": Analysis("vibecheck", "vibecheck", "d", ("model-a", "model-b"))},
                {}, {})
    return results, Prepared(spec, {"d": items}, Plan("bench", "0" * 32)), outputs


def main() -> None:
    results, prepared, outputs = build()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp)
        start = time.perf_counter()
        render_report(results, prepared, run_dir, outputs)
        render_s = time.perf_counter() - start
        index_mb = (run_dir / "index.html").stat().st_size / 1e6
        pages = len(list(run_dir.rglob("*.html")))
        total_mb = sum(p.stat().st_size for p in run_dir.rglob("*") if p.is_file()) / 1e6
    print(f"{PAIRS:,} pairs x {VIBES} vibes: {pages} pages, {total_mb:.1f} MB in all, rendered in {render_s:.2f} s; "
          f"index {index_mb * 1000:.0f} kB")
    print(f"render_s={render_s:.2f} index_mb={index_mb:.3f}")


if __name__ == "__main__":
    main()
