"""Leaderboard rendering at scale: 10,000 judged pairs × 10 vibes (targets: render < 10 s, index < 2 MB; the
pair explorer's first load < 2 MB and interactive in < 2 s in headless Chromium).

The analysis records are built directly (typed `VibeCheckResult`, seeded random verdicts and measures,
outputs of realistic length with some Markdown, an LLM judge's verdicts in both orders with a reason each) so
that only the report stage is timed: charts (embedded and exported as SVG and PNG), the index, one page per
vibe and the pair explorer with every answer rendered and sanitized.

The explorer is then opened from disk in headless Chromium (Debian's, through Playwright): first-load bytes are
what the first view reads (its page, stylesheet, script, index and the one text chunk it shows); interactive is
the wall time from navigation until the first 20 pairs are on screen, median of three loads.

Last line: render_s=<float> index_mb=<float> explorer_first_load_mb=<float> explorer_interactive_s=<float>
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from sizes import pick

from engine.analyze.run_results import RunResults
from engine.builtin_plugins.methods.vibecheck.heldout import Accuracy, HeldOutFit
from engine.builtin_plugins.methods.vibecheck.records import PairVerdicts, VibeCheckResult, VibeScore
from engine.datasets import Item
from engine.records import Plan, Prepared, Result
from engine.report.render import render_report
from engine.spec.model import Analysis, Judge, Spec

PAIRS, VIBES = pick((10_000, 10), (40, 3))


def build() -> tuple[RunResults, Prepared, dict[str, Result]]:
    rng = np.random.default_rng(0)
    vibes = [f"vibe_{i}" for i in range(VIBES)]
    words = "the model answers with care and detail about many topics in a clear voice".split()
    reasons = ["Answer 1 is longer and adds context.", "The second answer uses a list.", "Both are equally plain.",
               "Answer 2 hedges more and asks a question back."]
    outputs: dict[str, Result] = {}
    pairs, items = [], []
    for n in range(PAIRS):
        item_id = f"item-{n}"
        ga, gb = f"ga{n}", f"gb{n}"
        for tid in (ga, gb):
            text = " ".join(rng.choice(words, int(rng.integers(40, 200))))
            if rng.random() < 0.3:  # some answers in Markdown, as chat models write them
                text = f"**{words[n % len(words)]}**\n\n- {text[:80]}\n- {text[80:160]}\n\n{text[160:]}"
            outputs[tid] = Result(tid, "generation", "m", "recorded", text)
        items.append(Item(item_id, f"Prompt number {n}: " + " ".join(rng.choice(words, 20))))
        nu = {v: int(rng.integers(-1, 2)) for v in vibes}
        orders = {v: {"llm": [int(rng.integers(-1, 2)), int(rng.integers(-1, 2))]} for v in vibes}
        by_judge = {v: {"metrics": nu[v], "minilm": int(rng.integers(-1, 2)), "llm": orders[v]["llm"][0]}
                    for v in vibes}
        rationales = {v: {"llm": [f"{rng.choice(reasons)}\nVerdict: 1", f"{rng.choice(reasons)}\nVerdict: 2"]}
                      for v in vibes}
        measures = {v: [float(rng.normal(1, 0.3)), float(rng.normal(1, 0.3))] for v in vibes}
        pairs.append(PairVerdicts(item_id, "train" if n % 2 else "test", None, ga, gb, nu, by_judge, rationales,
                                  measures, [len(outputs[ga].output), len(outputs[gb].output)], orders))
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
                                                      "minilm": Judge("minilm", "embedding"),
                                                      "llm": Judge("llm", "llm")},
                {}, (), None, {}, {"vibecheck": Analysis("vibecheck", "vibecheck", "d", ("model-a", "model-b"))},
                {}, {})
    return results, Prepared(spec, {"d": items}, Plan("bench", "0" * 32)), outputs


def explorer_load(run_dir: Path) -> tuple[float, float]:
    """(first-load MB, seconds until the first pairs show) of the explorer opened from disk; nan seconds
    without Chromium."""
    page = run_dir / "explore" / "vibecheck.html"
    first = [page, run_dir / "assets" / "style.css", run_dir / "assets" / "explorer.js",
             run_dir / "explore" / "vibecheck" / "index.js", run_dir / "explore" / "vibecheck" / "chunk-0.js"]
    first_mb = sum(p.stat().st_size for p in first) / 1e6
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("no chromium: the explorer's load time is not measured")
        return first_mb, float("nan")
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        for _ in range(3):
            tab = browser.new_page(viewport={"width": 1280, "height": 900})
            start = time.perf_counter()
            tab.goto(page.resolve().as_uri())
            tab.wait_for_selector("body[data-ready] article.pair", timeout=60000)
            times.append(time.perf_counter() - start)
            tab.close()
        browser.close()
    return first_mb, statistics.median(times)


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
        explorer_mb = sum(p.stat().st_size for p in (run_dir / "explore").rglob("*") if p.is_file()) / 1e6
        first_mb, interactive_s = explorer_load(run_dir)
    print(f"{PAIRS:,} pairs x {VIBES} vibes: {pages} pages, {total_mb:.1f} MB in all, rendered in {render_s:.2f} s; "
          f"index {index_mb * 1000:.0f} kB")
    print(f"pair explorer: {explorer_mb:.1f} MB of data in all; the first view reads {first_mb:.2f} MB and shows "
          f"its pairs {interactive_s:.2f} s after navigation (median of 3 loads)")
    print(f"render_s={render_s:.2f} index_mb={index_mb:.3f} explorer_first_load_mb={first_mb:.3f} "
          f"explorer_interactive_s={interactive_s:.2f}")


if __name__ == "__main__":
    main()
