"""False alarms and detection of `vibe monitor`, through its own functions (`unit_batch`, `watch`), on seeded
ternary verdicts, beside the fixed-sample gate of `vibe compare` (`shift_of`, `gate`) looked at after every
batch on the same draws.

The setting: five gated vibes, margin 0.1, thirty daily looks of 50 prompts each, verdicts with 70% of prompts
tied as a panel gives them. Each simulated monitor starts from its baseline and reads one batch a day.

- A false alarm is any "moved beyond ±0.1" claim, on any vibe at any of the 30 looks, when no vibe moved beyond
  its margin. It is measured at no shift (P(+1) = P(−1) = 0.15) and at the least favourable point of the null,
  every vibe exactly on the margin (P(+1) = 0.2, P(−1) = 0.1); the figure on the last line is the larger. The
  fixed-sample gate is the same comparison's Holm-adjusted score test (FAIL at p < 0.05) on every batch so far,
  looked at daily: what a team gets by running `vibe compare --gate` every morning.
- Detection: one vibe moves to twice the margin (P(+1) = 0.25, P(−1) = 0.05) from day 10 on, the others stay
  still. Days to detect count day 10 as the first day; a monitor that has not detected by day 30 counts as
  never, so the median is over every monitor.
- The always-valid interval's coverage: the share of monitors at no shift whose confidence sequence covers the
  true shift (0) at all 30 looks at once.

Last line: false_alarm_30_looks=<f> fixed_test_false_alarm=<f> median_days_to_detect=<f> power_30_days=<f>
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sizes import pick

from engine.drift.monitor import State, unit_batch, watch
from engine.drift.shift import ALPHA, gate, shift_of
from engine.stats import wilson

MARGIN, VIBES, CHANGE = 0.1, 5, 10
LOOKS, BATCH = pick(30, 12), pick(50, 10)  # smoke: small batches, whose exact tables build in a moment
DRAWS = pick(2000, 20)
FIXED_DRAWS = pick(500, 5)
COVERAGE_DRAWS = pick(300, 5)
NAMES = [f"vibe{j}" for j in range(VIBES)]


def verdicts(rng: np.random.Generator, up: float, down: float, n: int) -> np.ndarray:
    """n units' shifts (head minus base): +1 with probability `up`, −1 with `down`, else tied."""
    u = rng.random(n)
    return np.where(u < up, 1.0, np.where(u < up + down, -1.0, 0.0))


def stream(rng: np.random.Generator, shapes: list[tuple[float, float]],
           change: tuple[int, int, tuple[float, float]] | None = None) -> np.ndarray:
    """shifts[look, prompt, vibe]; `change`: (vibe, first look, shape) where one vibe moves."""
    out = np.stack([verdicts(rng, up, down, LOOKS * BATCH) for up, down in shapes], axis=-1)
    if change is not None:
        vibe, first, (up, down) = change
        out[first * BATCH:, vibe] = verdicts(rng, up, down, (LOOKS - first) * BATCH)
    return out.reshape(LOOKS, BATCH, VIBES)


def monitored(shifts: np.ndarray) -> tuple[State, list]:
    """The monitor's state after every look of `shifts`, and its watches (through `unit_batch` and `watch`)."""
    state = State("baseline", "model", NAMES, dict.fromkeys(NAMES, MARGIN))
    for k, look in enumerate(shifts):
        ids = [f"d{k}-p{i:03d}" for i in range(BATCH)]
        state.looks.append(unit_batch(f"day{k + 1}", "sim", ids, -look, None, NAMES))  # ν: + when base higher
    return state, watch(state)


def fixed_gate_alarms(draws: list[np.ndarray]) -> int:
    """How many of the monitors `draws` (shifts[look, prompt, vibe] each) `vibe compare --gate` on all batches so
    far fails on some vibe on some day (day by day, so that each size's exact tables are built once)."""
    alarmed = [False] * len(draws)
    for day in range(1, LOOKS + 1):
        for k, shifts in enumerate(draws):
            so_far = shifts[:day].reshape(-1, VIBES)
            checked = gate([[shift_of(name, -so_far[:, j], MARGIN) for j, name in enumerate(NAMES)]])[0]
            alarmed[k] = alarmed[k] or any(s.verdict == "fail" for s in checked)
    return sum(alarmed)


def rate(hits: int, n: int) -> str:
    low, high = wilson(hits, n)
    return f"{hits / n:.4f} [{low:.4f}, {high:.4f}] ({hits}/{n})"


def main() -> None:
    rng = np.random.default_rng(20261128)
    nulls = {"no shift": [(0.15, 0.15)] * VIBES,
             "on the margin": [(0.2, 0.1) if j % 2 == 0 else (0.1, 0.2) for j in range(VIBES)]}
    monitor_rates, fixed_rates = [], []
    for label, shapes in nulls.items():
        alarms = sum(any(w.crossed is not None for w in monitored(stream(rng, shapes))[1]) for _ in range(DRAWS))
        fixed = fixed_gate_alarms([stream(rng, shapes) for _ in range(FIXED_DRAWS)])
        print(f"{label}: monitor false alarm over {LOOKS} looks {rate(alarms, DRAWS)}; fixed-sample gate looked "
              f"at daily {rate(fixed, FIXED_DRAWS)}")
        monitor_rates.append(alarms / DRAWS)
        fixed_rates.append(fixed / FIXED_DRAWS)
    days = []
    for _ in range(DRAWS):
        shifts = stream(rng, nulls["no shift"], (0, CHANGE - 1, (0.25, 0.05)))
        crossed = monitored(shifts)[1][0].crossed
        # a crossing before the change is a false alarm (counted above), not a detection
        days.append(np.inf if crossed is None or crossed < CHANGE - 1 else crossed - (CHANGE - 1) + 1)
    detected = np.isfinite(days)
    print(f"detection of a shift of {2 * MARGIN} from day {CHANGE}: median {np.median(days)} days, quartiles "
          f"{np.percentile(days, 25)}-{np.percentile(days, 75)}; detected by day {LOOKS} "
          f"{rate(int(detected.sum()), DRAWS)}")
    covered = 0
    for _ in range(COVERAGE_DRAWS):
        _, watches = monitored(stream(rng, nulls["no shift"]))
        covered += all(look.low <= 0 <= look.high for look in watches[0].looks)
    print(f"always-valid interval at no shift covers 0 at all {LOOKS} looks: {rate(covered, COVERAGE_DRAWS)} "
          f"(family level {1 - ALPHA})")
    print(f"false_alarm_30_looks={max(monitor_rates):.4f} fixed_test_false_alarm={max(fixed_rates):.4f} "
          f"median_days_to_detect={np.median(days):.1f} power_30_days={detected.mean():.4f}")


if __name__ == "__main__":
    main()
