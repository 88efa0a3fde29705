"""Calibration and power of `vibe compare`'s gate, through its own functions (`shift_of`, `gate`), on seeded
ternary verdicts: one gated vibe, margin 0.1, thousands of comparisons per cell.

A gate can go wrong two ways. It can *pass* (certify "within ±0.1") when the true shift is the margin itself,
the least favourable point of the equivalence test's null; and it can *fail* (call the shift beyond ±0.1) when
the true shift is within the margin, least favourably at the margin itself. Each rate is measured on two shapes
of a shift of exactly the margin:
- one-directional: the head adds a habit on some prompts (P(+1) = 0.10, P(−1) = 0, the rest tied), the shape
  on which a t statistic's sample spread is smallest;
- mixed: prompts move both ways (P(+1) = 0.25, P(−1) = 0.15).
Power is the pass rate with no shift at all (P(+1) = P(−1) = 0.15, 70% tied).

- pass_at_margin_nN: the larger pass rate of the two shapes at N prompts. Target ≤ 0.05.
- fail_at_null_nN: the larger fail rate over no shift and both shapes at the margin. Target ≤ 0.05.
- pass_no_shift_nN: power, the pass rate at no shift.
Each rate has its Wilson 95% interval above, beside the rates of the t-test gate this replaced (a t statistic
with the sample spread, TOST and a one-sided beyond test) on the same draws, and the score test's exact
probability (every outcome of the trinomial summed, no Monte Carlo error).

Last line: pass_at_margin_n10=<f> pass_at_margin_n30=<f> pass_at_margin_n100=<f> pass_at_margin_n200=<f>
  fail_at_null_n30=<f> fail_at_null_n100=<f> pass_no_shift_n100=<f> pass_no_shift_n700=<f>
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy import stats as scipy_stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sizes import pick

from engine.drift.shift import ALPHA, gate, shift_of
from engine.stats import wilson

MARGIN = 0.1
DRAWS = pick(2000, 40)
SHAPES = {  # P(head higher), P(base higher)
    "one-directional": (MARGIN, 0.0),
    "mixed": (0.25, 0.25 - MARGIN),
    "no shift": (0.15, 0.15),
}


def t_test_verdict(d: np.ndarray) -> str:
    """The gate this benchmark's tests replaced: t statistics with the sample spread (p = 0 without spread)."""
    n, mean = len(d), float(d.mean())
    se = float(d.std(ddof=1)) / np.sqrt(n)
    t = scipy_stats.t(df=n - 1)
    if se == 0:
        beyond, equivalent = float(abs(mean) <= MARGIN), float(abs(mean) >= MARGIN)
    else:
        beyond = float(t.sf((abs(mean) - MARGIN) / se))
        equivalent = max(float(t.sf((mean + MARGIN) / se)), float(t.cdf((mean - MARGIN) / se)))
    return "fail" if beyond < ALPHA else "pass" if equivalent < ALPHA else "inconclusive"


def rates(shape: str, n: int) -> tuple[dict[str, int], dict[str, int]]:
    """Verdict counts of DRAWS comparisons at `n` prompts: the gate's, and the t-test gate's on the same draws."""
    p_plus, p_minus = SHAPES[shape]
    rng = np.random.default_rng([n, list(SHAPES).index(shape)])
    ours = {"fail": 0, "pass": 0, "inconclusive": 0}
    old = dict(ours)
    for _ in range(DRAWS):
        head_minus_base = rng.choice([1.0, -1.0, 0.0], size=n, p=[p_plus, p_minus, 1 - p_plus - p_minus])
        ((checked,),) = gate([[shift_of("v", -head_minus_base, MARGIN)]])  # ν is base minus head
        ours[checked.verdict] += 1
        old[t_test_verdict(head_minus_base)] += 1
    return ours, old


def exact_rates(shape: str, n: int) -> tuple[float, float]:
    """The gate's pass and fail probabilities for one shape, summed exactly over every outcome (n₊, n₋) of n
    prompts under its trinomial law, each outcome's verdict from the gate's own p-values (`coverage.gate_regions`):
    the figures without Monte Carlo error that the simulated rates estimate."""
    from coverage import gate_regions
    from scipy.special import xlogy

    p_plus, p_minus = SHAPES[shape]
    plus, minus, log_ways, failed, passed = gate_regions(n, MARGIN)
    rest = n - plus - minus
    prob = np.exp(log_ways + xlogy(plus, p_plus) + xlogy(minus, p_minus) + xlogy(rest, 1 - p_plus - p_minus))
    return float(prob[passed].sum()), float(prob[failed].sum())


def share(hits: int) -> str:
    low, high = wilson(hits, DRAWS)
    return f"{hits / DRAWS:.3f} [{low:.3f}, {high:.3f}]"


def main() -> None:
    figures: dict[str, float] = {}
    print(f"{DRAWS} comparisons per cell, margin ±{MARGIN}; pass and fail rates with Wilson 95% intervals "
          "(score test, exact unconditional | t-test gate on the same draws), then the score test's exact "
          "probabilities (every outcome summed under its law)")
    for n in (10, 30, 100, 200, 700):
        for shape in SHAPES:
            ours, old = rates(shape, n)
            exact_pass, exact_fail = exact_rates(shape, n)
            print(f"n={n:4d} {shape:16s} pass {share(ours['pass'])} | {share(old['pass'])}   "
                  f"fail {share(ours['fail'])} | {share(old['fail'])}   exact: pass {exact_pass:.4f} "
                  f"fail {exact_fail:.4f}", flush=True)
            if shape != "no shift":
                key = f"pass_at_margin_n{n}"
                figures[key] = max(figures.get(key, 0.0), ours["pass"] / DRAWS)
            else:
                figures[f"pass_no_shift_n{n}"] = ours["pass"] / DRAWS
            key = f"fail_at_null_n{n}"
            figures[key] = max(figures.get(key, 0.0), ours["fail"] / DRAWS)
    keys = ["pass_at_margin_n10", "pass_at_margin_n30", "pass_at_margin_n100", "pass_at_margin_n200",
            "fail_at_null_n30", "fail_at_null_n100", "pass_no_shift_n100", "pass_no_shift_n700"]
    print(" ".join(f"{key}={figures[key]:.4f}" for key in keys))


if __name__ == "__main__":
    main()
