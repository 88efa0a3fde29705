"""Calibration and power of the p-values and selection rules a VibeCheck page shows, at a size the test suite
cannot afford: the seeded simulations of tests/test_selection_calibration.py (which go through the analysis'
own keep/drop, least-angle top-k, held-out regressions, Holm correction, preference admission and the vibe
profile's pooled regression), each repeated many times, with Wilson 95% intervals.

- mm_noise_fwer: share of analyses (30 noise vibes, 200 training and 200 test pairs) where any vibe that
  survived selection has a Holm-significant held-out coefficient in either regression. Target ≤ 0.05.
- pp_noise_admitted: share of analyses (length truly predictive, ten noise vibes) whose preference model
  admits a noise vibe. Target ≤ 0.10.
- pooled_null_rate: share of vibe profiles (three models that win at different rates and sit at different
  levels of a vibe that is independent of winning within each model) where the pooled regression calls the
  vibe significant. Target ≤ 0.05.
- mm_power, pp_power, pooled_power: the same designs with a planted effect, found. Target ≥ 0.8.

Last line: mm_noise_fwer=<f> pp_noise_admitted=<f> pooled_null_rate=<f> mm_power=<f> pp_power=<f>
  pooled_power=<f>
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import test_selection_calibration as sims  # noqa: E402
from sizes import pick  # noqa: E402

from engine.analyze.heldout import wilson  # noqa: E402

RUNS = pick(600, 3)


def rate(name: str, trial: Callable[[np.random.Generator, int], bool], seed: int) -> float:
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    hits = sum(trial(rng, run) for run in range(RUNS))
    low, high = wilson(hits, RUNS)
    print(f"{name}: {hits} of {RUNS} = {hits / RUNS:.3f} (95% {low:.3f}–{high:.3f}), "
          f"{time.perf_counter() - start:.0f} s", flush=True)
    return hits / RUNS


def vibecheck_trial(planted: bool) -> Callable[[np.random.Generator, int], bool]:
    def trial(rng: np.random.Generator, run: int) -> bool:
        nu = rng.choice([-1, 0, 1], size=(400, 30))
        if planted:
            nu[:, 0] = rng.choice([-1, 0, 1], size=400, p=[0.2, 0.35, 0.45])
        chars = rng.integers(200, 2000, size=(400, 2))
        labels = ["a" if rng.random() < 0.5 else "b" for _ in range(400)]
        kept, mm, pp = sims._vibecheck_analysis(nu, chars, labels, run)
        if planted:
            return sims._significant(mm, {"v0"})
        return sims._significant(mm, set(kept)) or sims._significant(pp, set(kept))
    return trial


def preference_trial(planted: float) -> Callable[[np.random.Generator, int], bool]:
    def trial(rng: np.random.Generator, run: int) -> bool:
        features = sims._preference_analysis(rng, planted, run).features
        return "v0" in features if planted else any(name.startswith("v") for name in features)
    return trial


def pooled_trial(within: float) -> Callable[[np.random.Generator, int], bool]:
    def trial(rng: np.random.Generator, run: int) -> bool:
        term = next(t for t in sims._profile(rng, within).pooled if t.feature == "vibe")
        significant = term.p_adjusted is not None and term.p_adjusted < sims.ALPHA
        return significant and (not within or (term.coefficient or 0) > 0)
    return trial


def main() -> None:
    results = {
        "mm_noise_fwer": rate("noise vibes significant held out (family-wise)", vibecheck_trial(False), 1),
        "pp_noise_admitted": rate("noise vibe admitted to the preference model", preference_trial(0.0), 2),
        "pooled_null_rate": rate("pooled regression: vibe independent within models", pooled_trial(0.0), 3),
        "mm_power": rate("planted vibe found held out", vibecheck_trial(True), 4),
        "pp_power": rate("planted vibe admitted to the preference model", preference_trial(1.0), 5),
        "pooled_power": rate("pooled regression: planted within-model effect", pooled_trial(1.0), 6),
    }
    print(" ".join(f"{key}={value:.4f}" for key, value in results.items()))


if __name__ == "__main__":
    main()
