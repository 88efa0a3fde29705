"""Calibration and power of the claims a VibeCheck page makes, at a size the test suite cannot afford: the
seeded simulations of tests/test_selection_calibration.py (which go through the analysis' own keep/drop, the
headline's one-sided sign tests and Holm correction, least-angle top-k, held-out regressions, preference
admission and the vibe profile's pooled regression), each repeated many times, with Wilson 95% intervals and
the exact one-sided binomial test of each error rate against its 5% target.

- fwer: share of analyses (30 noise vibes, 200 training and 200 test pairs) that make any claim about a vibe
  that survived selection: the headline names it, or it has a Holm-significant held-out coefficient in either
  regression. Target ≤ 0.05.
- fwer_given_tested: the same among the analyses where selection kept at least one vibe (the others have
  nothing to test, and would dilute the rate). Target ≤ 0.05.
- pref_noise_admitted: share of analyses (length truly predictive, ten noise vibes) whose preference model
  keeps a noise vibe. Target ≤ 0.05.
- pooled_fwer: share of vibe profiles (three models that win at different rates and sit at different levels
  of a vibe that is independent of winning within each model) where the pooled regression calls the vibe
  significant. Target ≤ 0.05.
- power_sepXX_n200: share of analyses whose headline names a planted vibe of test separability 0.XX (a third
  of verdicts ties, the rest leaning its way), among 29 noise vibes, with 200 training and 200 test pairs. The
  curve over 100, 200, 400 and 1,000 test pairs and separabilities 0.05 to 0.25 is printed above, with the
  power of the held-out model-matching coefficient beside it.
- mde_n200: the smallest test separability that the headline's one-sided sign test detects with 80% power on
  200 test pairs with a third of them tied, at 5% before correction (`stats.sign_test_mde`). The page prints
  it at the level the Holm-corrected test faces, 5%/m over its m claims; the value at ten claims is printed
  beside it.

Also printed: the coin-flip simulation on real Arena answers (two "models" that differ in nothing, through
statistical discovery): how often its headline names a vibe, and how often against its training direction.

The conversation arm (`tests/conversation_sims.py`): conversations of 2–6 turns whose verdicts, values and
lengths are correlated within a conversation, one label per conversation, 600 analyses per rate:
- conv_headline_fwer: null analyses (30 noise vibes, 60 training and 60 test conversations) that claim
  anything (headline or a Holm-significant coefficient). Target ≤ 0.05.
- conv_pref_noise_admitted: analyses (length truly predictive, ten noise vibes) whose preference model keeps a
  noise vibe. Target ≤ 0.05.
- conv_refit_fwer: the same analyses with a Holm-significant vibe coefficient in either held-out refit.
  Target ≤ 0.05.
- conv_lc_coverage: the length-controlled win rate's 95% interval covers the win rate at equal length (80
  conversations, 300 bootstrap rounds). Target ≥ 0.93.
- conv_rank_coverage: Bradley–Terry 95% intervals (240 battles, each a conversation; the rankings method's
  default 1,000 bootstrap rounds) cover their model's true rating, over the four models' intervals.
  Target ≥ 0.93.
- conv_compare_false_fail: `vibe compare` gates that fail a shift exactly at the margin (60 conversations;
  4,000 comparisons, milliseconds each). Target ≤ 0.05.
`--conversations` runs this arm alone and prints only its figures.

Last line: fwer=<f> fwer_given_tested=<f> pref_noise_admitted=<f> pooled_fwer=<f> power_sep05_n200=<f>
  power_sep10_n200=<f> power_sep15_n200=<f> power_sep25_n200=<f> mde_n200=<f> conv_headline_fwer=<f>
  conv_pref_noise_admitted=<f> conv_refit_fwer=<f> conv_lc_coverage=<f> conv_rank_coverage=<f>
  conv_compare_false_fail=<f>
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import binomtest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import conversation_sims  # noqa: E402
import test_selection_calibration as sims  # noqa: E402
from sizes import pick  # noqa: E402

from engine import stats  # noqa: E402
from engine.stats import wilson  # noqa: E402

RUNS = pick(600, 3)
CONVERSATION_RUNS = pick(600, 2)
COMPARE_RUNS = pick(4000, 2)  # milliseconds each: enough to tell a test at its level from one 2 points above
POWER_RUNS = pick(200, 2)
COIN_FLIPS = pick(200, 3)  # each runs statistical discovery on real answers: about a second apiece
SEPARABILITIES = (0.05, 0.10, 0.15, 0.25)
TEST_PAIRS = pick((100, 200, 400, 1000), (200,))
TIES = 1 / 3


def report(name: str, hits: int, runs: int, target: float | None = None) -> float:
    low, high = wilson(hits, runs)
    bound = "" if target is None else (
        f"; above {target:.0%}? exact one-sided p = {binomtest(hits, runs, target, alternative='greater').pvalue:.3f}")
    print(f"{name}: {hits} of {runs} = {hits / max(runs, 1):.3f} (95% {low:.3f}–{high:.3f}){bound}", flush=True)
    return hits / max(runs, 1)


def planted(rng: np.random.Generator, separability: float, n_test: int) -> np.ndarray:
    """Verdicts of 2·n_test pairs on 30 vibes: v0 leans to model A by `separability` (ties a third of the time),
    the rest are noise."""
    nu = rng.choice([-1, 0, 1], size=(2 * n_test, 30))
    lean = (1 - TIES) / 2
    nu[:, 0] = rng.choice([-1, 0, 1], size=2 * n_test, p=[lean - separability / 2, TIES, lean + separability / 2])
    return nu


def null_analyses() -> tuple[float, float]:
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    claims = tested = claims_tested = 0
    for run in range(RUNS):
        nu = rng.choice([-1, 0, 1], size=(400, 30))
        chars = rng.integers(200, 2000, size=(400, 2))
        labels = ["a" if rng.random() < 0.5 else "b" for _ in range(400)]
        sim = sims._vibecheck_analysis(nu, chars, labels, run)
        claimed = bool(sim.named) or sims._significant(sim.mm, set(sim.kept)) or sims._significant(sim.pp,
                                                                                                   set(sim.kept))
        claims += claimed
        tested += bool(sim.kept)
        claims_tested += claimed and bool(sim.kept)
    print(f"noise analyses: {time.perf_counter() - start:.0f} s")
    return (report("any claim about a noise vibe (family-wise)", claims, RUNS, 0.05),
            report("  among analyses that kept a vibe", claims_tested, tested, 0.05))


def power_curve() -> dict[tuple[float, int], float]:
    rng = np.random.default_rng(4)
    out = {}
    for separability in SEPARABILITIES:
        cells = []
        for n_test in TEST_PAIRS:
            named = matched = 0
            for run in range(POWER_RUNS):
                nu = planted(rng, separability, n_test)
                chars = rng.integers(200, 2000, size=(len(nu), 2))
                sim = sims._vibecheck_analysis(nu, chars, [None] * len(nu), run)
                named += any(v.name == "v0" for v in sim.named)
                matched += sims._significant(sim.mm, {"v0"})
            out[separability, n_test] = named / POWER_RUNS
            cells.append(f"n={n_test}: {named / POWER_RUNS:.3f} (coefficient {matched / POWER_RUNS:.3f})")
        print(f"power at separability {separability:.2f}: " + "; ".join(cells), flush=True)
    return out


def coin_flips() -> None:
    from engine.pipeline import prepare

    items = prepare(ROOT / "specs" / "llama-vs-gpt.yaml").items["arena"]
    texts = [(item.outputs["llama-3-70b-instruct"], item.outputs["opponent"]) for item in items]
    named = against = kept = reversed_ = 0
    for seed in range(COIN_FLIPS):
        scores = sims.coin_flipped(texts, seed)
        claims = sims.named(scores)
        named += bool(claims)
        against += sum((s.separability or 0) * s.direction < 0 for s in claims)
        kept += sum(s.kept for s in scores)
        reversed_ += sum(s.kept and (s.separability or 0) * s.direction < 0 for s in scores)
    print(f"coin-flipped Arena answers: {kept} vibes kept over {COIN_FLIPS} analyses, {reversed_} of them leaning "
          f"the other way on the test pairs; claims against the training direction: {against}")
    report("  headline names a vibe", named, COIN_FLIPS, 0.05)


def conversation_arm() -> str:
    """The conversation arm's figures, as its part of the last line."""
    runs = CONVERSATION_RUNS
    start = time.perf_counter()
    rng = np.random.default_rng(5)
    headline = report("conversations: any claim in a null analysis", sum(
        conversation_sims.headline_claims(rng, run) for run in range(runs)), runs, 0.05)
    rng = np.random.default_rng(6)
    admitted, refit = zip(*(conversation_sims.preference_null(rng, run) for run in range(runs)), strict=True)
    pref = report("conversations: noise vibe kept in the preference model", sum(admitted), runs, 0.05)
    refits = report("conversations: Holm-significant refit coefficient", sum(refit), runs, 0.05)
    rng = np.random.default_rng(7)
    lc = report("conversations: LC interval covers", sum(conversation_sims.lc_covers(rng, run) for run in range(runs)),
                runs)
    rng = np.random.default_rng(8)
    covered, intervals = np.sum([conversation_sims.rank_coverage(rng, run) for run in range(runs)], axis=0)
    ranks = report("conversations: Bradley–Terry intervals cover", int(covered), int(intervals))
    rng = np.random.default_rng(9)
    fails = report("conversations: compare fails a shift at the margin", sum(
        conversation_sims.compare_fails_at_margin(rng) for _ in range(COMPARE_RUNS)), COMPARE_RUNS, 0.05)
    print(f"conversation arm: {time.perf_counter() - start:.0f} s", flush=True)
    return (f"conv_headline_fwer={headline:.4f} conv_pref_noise_admitted={pref:.4f} conv_refit_fwer={refits:.4f} "
            f"conv_lc_coverage={lc:.4f} conv_rank_coverage={ranks:.4f} conv_compare_false_fail={fails:.4f}")


def main() -> None:
    if "--conversations" in sys.argv[1:]:
        print(conversation_arm())
        return
    fwer, fwer_tested = null_analyses()
    rng = np.random.default_rng(2)
    admitted = sum(any(name.startswith("v") for name in sims._preference_analysis(rng, 0.0, run).features)
                   for run in range(RUNS))
    pref = report("noise vibe kept in the preference model", admitted, RUNS, 0.05)
    rng = np.random.default_rng(3)
    pooled_hits = 0
    for _ in range(RUNS):
        term = next(t for t in sims._profile(rng, 0.0).pooled if t.feature == "vibe")
        pooled_hits += term.p_adjusted is not None and term.p_adjusted < sims.ALPHA
    pooled = report("pooled regression: vibe independent within models", pooled_hits, RUNS, 0.05)
    curve = power_curve()
    coin_flips()
    mde = stats.sign_test_mde(round(200 * (1 - TIES)), 200)
    corrected = stats.sign_test_mde(round(200 * (1 - TIES)), 200, alpha=0.05 / 10)
    print(f"detectable separability at 200 test pairs, a third tied: {mde:.3f} at 5% before correction, "
          f"{corrected:.3f} at Holm's 5%/10 over ten claims (what the page prints beside such a test)")
    power = {f"power_sep{round(100 * s):02d}_n200": curve.get((s, 200), float("nan"))
             for s in (0.05, 0.10, 0.15, 0.25)}
    conversations = conversation_arm()
    print(f"fwer={fwer:.4f} fwer_given_tested={fwer_tested:.4f} pref_noise_admitted={pref:.4f} "
          f"pooled_fwer={pooled:.4f} " + " ".join(f"{key}={value:.4f}" for key, value in power.items())
          + f" mde_n200={mde:.4f} {conversations}")


if __name__ == "__main__":
    main()
