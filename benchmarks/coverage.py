"""Coverage of every kind of interval a page prints, through the project's own functions, exact where the outcome
space allows and seeded simulation elsewhere; and the size of `vibe compare`'s gate at the margin.

Kinds (each figure is the smallest coverage over the true values and sizes listed, at the sizes the docs say the
interval is given for):
- separability: `stats.verdict_interval` on −1/0/+1 verdicts (Tango's continuity-corrected score interval), the
  interval of the two-model separability, of every profile and turn cell and of `vibe compare`'s shift over
  prompts (all call it). Exact: every outcome's trinomial probability, n = 10, 20, 50, 100 prompts, true
  (P(+1), P(−1)) on a grid of step 0.05.
- winrate: the win rate of the two-model page and the profiles (`profiles.win_interval`: Tango's interval on
  the 2y − 1 scale), exact over wins, ties and losses of 10 and 20 labelled prompts on a grid of step 0.05.
- turn_change: the turn table's change from turn 1 (`stats.change_interval`, the betting interval on
  [−2, 2]), by simulation: 10 and 20 conversations, a rare shift, changes both ways, and one way.
- agents: the agents method's shift of a measure (`rank_shift`: Hodges–Lehmann with the interval that inverts
  Wilcoxon's signed-rank test, paired, or the rank-sum test, two samples), by simulation: 6, 10 and 20
  conversations (a side), tool calls per turn (negative binomial means over 1–6 turns, each conversation's own
  difficulty shared by the two agents when paired) where one agent calls more and where they are alike, and the
  share of failed calls (binomial, 5% against 15%: two spreads, where the two-sample interval falls short). Truth:
  the estimate's own target, the median of (D₁ + D₂)/2 (paired) or of X − Y, from 200,000 draws.
- conversation_means: the same function on conversation means (the betting interval), 5–40 conversations of 2–6
  turns, three shapes: a shift in a tenth of the conversations only, turns that share their conversation's
  lean (each conversation's own P(+1), P(−1)), and every conversation leaning one way.
- conversation_shift: `drift.shift.shift_of` over turns grouped by conversation (`vibe compare` on
  conversations), the same shapes.
- agreement: the share of labels a judge's verdict equals (`people.agreement_with_people`: Wilson's interval,
  continuity-corrected): exact over every outcome for 10–50 labels, true agreement 0.02–0.98; and by simulation
  where each prompt holds two labels (the betting interval), 10–50 prompts.
- kappa: Cohen's κ from the same function (a bootstrap over prompts, given from 50 prompts: at 30 it covered
  89% on the mostly tied vibe), 50 and 80 prompts of a mostly tied vibe and of a balanced one.
- ppi: `people.corrected_separability` (PPI++, t quantiles, the labelled part's variance steadied by two
  pseudo-values), 20–100 labelled pairs of 400 the panel judged: a vibe with a lean, the panel agreeing with
  people 40–80% of the time, and a mostly tied one (92% ties) at 80% and 95%, where 20 labels often all agree.
- monitor: `vibe monitor`'s always-valid interval (`anytime.running_interval`, through `anytime.track`) over 30
  looks of 50 prompts whose true shift moves from 0 to +0.2 at look 10 (and one that never moves): the share of
  monitors whose interval holds the average of the units' true means at every look at once, at the level of a
  family of 10 claims (α = 0.05 / 10, as the monitor of five gated vibes uses), and how many intervals were empty.
- rankings: Bradley–Terry percentile intervals (`rankings.rank`, 200 bootstrap rounds by battle), four models of
  known strength, 240 battles, mean-anchored truth, 300 runs (1,200 intervals).

Gate: the largest chance, over the nuisance share of −1 verdicts (a grid five times finer than the p-values'
own) and a true shift on ±margin, that `vibe compare`'s gate FAILs (both sides tested, the smaller p doubled)
or PASSes (TOST) at α = 0.05, exact over every outcome for n = 10…800 prompts (its rejection regions found
through `ternary.p_above` / `p_below` themselves), and by 20,000 seeded comparisons through `shift_of` and
`gate` at 2,000 prompts.

The line before the last: max_gate_fail_size=<f> max_gate_pass_size=<f> sim_gate_fail_2000=<f> sim_gate_pass_2000=<f>
Last line: min_coverage_separability=<f> min_coverage_winrate=<f> min_coverage_turn_change=<f> min_coverage_agents=<f>
  min_coverage_conversation_means=<f> min_coverage_conversation_shift=<f>
  min_coverage_agreement=<f> min_coverage_kappa=<f> min_coverage_ppi=<f> min_coverage_ppi20=<f>
  min_coverage_rankings=<f> min_coverage_monitor=<f> monitor_interval_empty=<n>
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import sizes
from scipy import stats as scipy_stats
from scipy.special import gammaln, xlogy

from engine import stats, ternary
from engine.analyze.people import agreement_with_people, corrected_separability
from engine.analyze.people_labels import HumanLabel
from engine.analyze.rankings import Outcome, rank
from engine.builtin_plugins.methods.agents import rank_shift
from engine.builtin_plugins.methods.vibecheck.profiles import win_interval
from engine.drift.anytime import track
from engine.drift.shift import gate, shift_of

ALPHA = 0.05
SIMS = sizes.pick(1000, 30)


def _trinomial(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every outcome (n₊, n₋) of n verdicts, and each one's log multinomial coefficient."""
    ups, downs = (a.ravel() for a in np.indices((n + 1, n + 1)))
    possible = ups + downs <= n
    ups, downs = ups[possible], downs[possible]
    return ups, downs, gammaln(n + 1) - gammaln(ups + 1) - gammaln(downs + 1) - gammaln(n - ups - downs + 1)


def _probabilities(ups: np.ndarray, downs: np.ndarray, log_ways: np.ndarray, n: int, p_up: float,
                   p_down: float) -> np.ndarray:
    return np.exp(log_ways + xlogy(ups, p_up) + xlogy(downs, p_down)
                  + xlogy(n - ups - downs, max(1 - p_up - p_down, 0.0)))


def separability() -> float:
    worst = 1.0
    step = sizes.pick(0.05, 0.25)
    for n in sizes.pick((10, 20, 50, 100), (10,)):
        ups, downs, log_ways = _trinomial(n)
        ends = np.array([stats.verdict_interval(np.r_[np.ones(u), -np.ones(d), np.zeros(n - u - d)])
                         for u, d in zip(ups, downs, strict=True)])
        here = 1.0
        for p_up in np.arange(0, 1 + 1e-9, step):
            for p_down in np.arange(0, 1 - p_up + 1e-9, step):
                truth = p_up - p_down
                inside = (ends[:, 0] <= truth + 1e-9) & (truth - 1e-9 <= ends[:, 1])
                here = min(here, float(_probabilities(ups, downs, log_ways, n, p_up, p_down)[inside].sum()))
        print(f"  separability n={n}: {here:.4f}")
        worst = min(worst, here)
    return worst


def winrate() -> float:
    """The two-model page's and the profile's win rate (`profiles.win_interval`) over prompts: exact over
    every outcome (wins, losses, ties) of 10 and 20 labelled prompts, true (P(win), P(loss)) on a grid of step
    0.05 (A winning 95% of 20 is on it), the truth P(win) + P(tie) / 2."""
    worst = 1.0
    step = sizes.pick(0.05, 0.25)
    for n in sizes.pick((10, 20), (10,)):
        ups, downs, log_ways = _trinomial(n)
        ends = np.array([win_interval(np.r_[np.ones(u), np.zeros(d), np.full(n - u - d, 0.5)], [], "prompts", 0,
                                      0)[:2] for u, d in zip(ups, downs, strict=True)])
        here = 1.0
        for p_up in np.arange(0, 1 + 1e-9, step):
            for p_down in np.arange(0, 1 - p_up + 1e-9, step):
                truth = p_up + (1 - p_up - p_down) / 2
                inside = (ends[:, 0] <= truth + 1e-9) & (truth - 1e-9 <= ends[:, 1])
                here = min(here, float(_probabilities(ups, downs, log_ways, n, p_up, p_down)[inside].sum()))
        print(f"  winrate n={n}: {here:.4f}")
        worst = min(worst, here)
    return worst


# the change of a verdict from turn 1 to turn k within a conversation (−2 … 2): its distribution in three shapes
CHANGES = {"rare shift": ([0, 1], [0.95, 0.05]), "both ways": ([-2, -1, 0, 1, 2], [0.05, 0.15, 0.5, 0.2, 0.1]),
           "one way": ([0, 1, 2], [0.2, 0.3, 0.5])}


def turn_change() -> float:
    """The turn table's change from turn 1 (`stats.change_interval`, what `turns` prints), by seeded simulation:
    10 and 20 conversations, each shape of `CHANGES`."""
    worst = 1.0
    rng = np.random.default_rng(29)
    for shape, (values, weights) in CHANGES.items():
        truth = float(np.dot(values, weights))
        for n in sizes.pick((10, 20), (10,)):
            covered = 0
            for _ in range(SIMS):
                low, high = stats.change_interval(rng.choice(values, size=n, p=weights))
                covered += low <= truth <= high
            print(f"  turn change ({shape}) n={n}: {covered / SIMS:.4f}")
            worst = min(worst, covered / SIMS)
    return worst


def _calls(rng: np.random.Generator, mean: float, difficulty: np.ndarray) -> np.ndarray:
    """Each conversation's mean tool calls per turn: 1–6 turns (1 + Poisson(2), capped), negative binomial calls
    around `mean` times the conversation's difficulty."""
    turns = np.minimum(1 + rng.poisson(2, len(difficulty)), 6)
    return np.array([rng.negative_binomial(2, 2 / (2 + mean * d), t).mean()
                     for t, d in zip(turns, difficulty, strict=True)])


def _failed(rng: np.random.Generator, n: int, p: float) -> np.ndarray:
    calls = 1 + rng.poisson(5, n)
    return rng.binomial(calls, p) / calls


# an agents measure per conversation for agent a and agent b (a conversation's difficulty shared when paired)
AGENT_SHAPES: dict[str, Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]]] = {
    "calls, a busier": lambda rng, n: (lambda d: (_calls(rng, 3, d), _calls(rng, 2, d)))(rng.lognormal(0, 0.5, n)),
    "calls alike": lambda rng, n: (lambda d: (_calls(rng, 2, d), _calls(rng, 2, d)))(rng.lognormal(0, 0.5, n)),
    "failed share, two spreads": lambda rng, n: (_failed(rng, n, 0.05), _failed(rng, n, 0.15)),
}


def agents() -> float:
    """The agents method's shift and interval (`rank_shift.paired` / `two_sample`, what the page prints), by
    seeded simulation over `AGENT_SHAPES` at 6, 10 and 20 conversations a side."""
    worst = 1.0
    rng = np.random.default_rng(41)
    for design, interval in (("paired", rank_shift.paired), ("two samples", rank_shift.two_sample)):
        for shape, draw in AGENT_SHAPES.items():
            a, b = draw(np.random.default_rng(99), sizes.pick(400_000, 4_000))
            if design == "paired":
                truth = float(np.median((a[::2] - b[::2] + a[1::2] - b[1::2]) / 2))
            else:
                truth = float(np.median(a[::2] - b[1::2]))
            for n in sizes.pick((6, 10, 20), (10,)):
                covered = 0
                for _ in range(SIMS):
                    x, y = draw(rng, n)
                    if design == "two samples":
                        y = draw(rng, n)[1]
                    _, low, high = interval(x, y)
                    covered += low <= truth <= high
                print(f"  agents {design} ({shape}) n={n}: {covered / SIMS:.4f}")
                worst = min(worst, covered / SIMS)
    return worst


def _conversations(rng: np.random.Generator, n: int, shape: str) -> tuple[np.ndarray, list[str], float]:
    """Turn verdicts of n conversations of 2–6 turns, each turn's conversation, and the true mean of the
    conversations' mean verdicts."""
    counts = rng.integers(2, 7, size=n)
    row = np.repeat(np.arange(n), counts)
    if shape == "sparse":  # a tenth of the conversations at +2/3 (two turns in three up), the rest all tied
        shifted = rng.random(n) < 0.1
        up = np.where(shifted[row], 2 / 3, 0.0)
        down = np.zeros(len(row))
        truth = 0.1 * 2 / 3
    elif shape == "lean":  # each conversation its own (P(+1), P(−1)) from a Dirichlet(2, 1, 3): mean (1/3, 1/6)
        own = rng.dirichlet([2.0, 1.0, 3.0], size=n)
        up, down = own[row, 0], own[row, 1]
        truth = 1 / 3 - 1 / 6
    else:  # "one way": every turn up with probability 0.9
        up, down = np.full(len(row), 0.9), np.zeros(len(row))
        truth = 0.9
    draw = rng.random(len(row))
    verdicts = np.where(draw < up, 1.0, np.where(draw < up + down, -1.0, 0.0))
    return verdicts, [f"c{r}" for r in row], truth


def _conversation_coverage(interval: Callable[[np.ndarray, list[str]], tuple[float, float]], name: str) -> float:
    worst = 1.0
    rng = np.random.default_rng(7)
    for shape in ("sparse", "lean", "one way"):
        for n in sizes.pick((5, 10, 20, 40), (5,)):
            covered = 0
            for _ in range(SIMS):
                verdicts, clusters, truth = _conversations(rng, n, shape)
                low, high = interval(verdicts, clusters)
                covered += low <= truth <= high
            print(f"  {name} {shape} n={n}: {covered / SIMS:.4f}")
            worst = min(worst, covered / SIMS)
    return worst


def conversation_means() -> float:
    def interval(verdicts: np.ndarray, clusters: list[str]) -> tuple[float, float]:
        return stats.verdict_interval(np.array(stats.cluster_means(verdicts.tolist(), clusters)))
    return _conversation_coverage(interval, "conversation_means")


def conversation_shift() -> float:
    def interval(verdicts: np.ndarray, clusters: list[str]) -> tuple[float, float]:
        s = shift_of("v", -verdicts, None, clusters)  # ν is base minus head: its negation is the head's move
        return s.low, s.high
    return _conversation_coverage(interval, "conversation_shift")


def _labels(people: np.ndarray, prompts: list[str]) -> list[HumanLabel]:
    return [HumanLabel(p, "v", int(v), f"person{k % 2}", "test") for k, (p, v) in enumerate(zip(prompts, people,
                                                                                               strict=True))]


# joint distributions of (person's verdict, judge's verdict) over −1, 0, +1 (rows: person)
MOSTLY_TIED = np.array([[0.04, 0.03, 0.01], [0.04, 0.70, 0.06], [0.01, 0.03, 0.08]])
BALANCED = np.array([[0.22, 0.06, 0.05], [0.06, 0.20, 0.07], [0.05, 0.07, 0.22]])


def _kappa(joint: np.ndarray) -> float:
    observed = np.trace(joint)
    chance = float(joint.sum(axis=1) @ joint.sum(axis=0))
    return (observed - chance) / (1 - chance)


def agreement() -> float:
    worst = 1.0
    for n in sizes.pick((10, 20, 30, 50), (10,)):  # one label a prompt: exact over the binomial outcomes
        ends = np.array([agreement_with_people(_labels(np.r_[np.zeros(k), np.ones(n - k)], [f"p{i}" for i in range(n)]),
                                               {f"p{i}": 0 for i in range(n)}, {}, "v", "panel", "test", 0)
                         for k in range(n + 1)], dtype=object)
        low = np.array([e.agreement_low for e in ends], dtype=float)
        high = np.array([e.agreement_high for e in ends], dtype=float)
        here = min(float(scipy_stats.binom.pmf(np.arange(n + 1), n, p)[(low <= p) & (p <= high)].sum())
                   for p in np.linspace(0.02, 0.98, sizes.pick(97, 5)))
        print(f"  agreement (one label a prompt) n={n}: {here:.4f}")
        worst = min(worst, here)
    rng = np.random.default_rng(5)
    for joint, name in ((MOSTLY_TIED, "mostly tied"), (BALANCED, "balanced")):
        for n in sizes.pick((10, 20, 50), (10,)):  # two labels a prompt: the betting interval
            judges = joint.sum(axis=0)  # the judge's verdicts' distribution
            given = joint / judges  # P(person | judge), a column per judge verdict
            truth = float(np.trace(joint))  # the chance that a person's label equals the judge's verdict
            covered = 0
            for _ in range(SIMS):
                judge = rng.choice(3, size=n, p=judges)
                people = np.array([rng.choice(3, p=given[:, j]) for j in np.repeat(judge, 2)]) - 1
                prompts = [f"p{i // 2}" for i in range(2 * n)]
                row = agreement_with_people(_labels(people, prompts), {f"p{i}": int(judge[i] - 1) for i in range(n)},
                                            {}, "v", "panel", "test", 0)
                covered += row.agreement_low <= truth <= row.agreement_high
            print(f"  agreement (two labels a prompt, {name}) n={n}: {covered / SIMS:.4f}")
            worst = min(worst, covered / SIMS)
    return worst


def kappa() -> float:
    worst = 1.0
    rng = np.random.default_rng(9)
    for joint, name in ((MOSTLY_TIED, "mostly tied"), (BALANCED, "balanced")):
        truth = _kappa(joint)
        for n in sizes.pick((50, 80), (50,)):
            covered = given = 0
            for _ in range(sizes.pick(500, 20)):
                cells = rng.choice(9, size=n, p=joint.ravel())
                prompts = [f"p{i}" for i in range(n)]
                row = agreement_with_people(_labels(cells // 3 - 1, prompts),
                                            {p: int(c % 3 - 1) for p, c in zip(prompts, cells, strict=True)},
                                            {}, "v", "panel", "test", int(rng.integers(1 << 30)))
                if row.kappa_low is not None and row.kappa_high is not None:
                    given += 1
                    covered += row.kappa_low <= truth <= row.kappa_high
            print(f"  kappa ({name}, κ = {truth:.3f}) n={n}: {covered / max(given, 1):.4f} of {given}")
            worst = min(worst, covered / max(given, 1))
    return worst


def ppi() -> dict[str, float]:
    """PPI++'s worst coverage over every cell, and over the cells of 20 labels (the fewest the docs give it for)."""
    worst = worst_at_20 = 1.0
    rng = np.random.default_rng(13)
    pairs = 400
    # people's verdicts in the population (P(−1), P(0), P(+1)): a vibe with a lean, and a mostly tied one; the
    # panel copies a person's verdict with probability `agree`, else guesses uniformly
    for vibe, shares, agreements in (("leaning", [0.2, 0.45, 0.35], (0.4, 0.6, 0.8)),
                                     ("mostly tied", [0.03, 0.92, 0.05], (0.8, 0.95))):
        truth = float(np.dot([-1, 0, 1], shares))  # the population's mean verdict
        for agree in agreements:
            for n in sizes.pick((20, 50, 100), (20,)):
                covered = zero_width = 0
                for _ in range(SIMS):
                    people = rng.choice([-1, 0, 1], size=pairs, p=shares)
                    panel = np.where(rng.random(pairs) < agree, people, rng.choice([-1, 0, 1], size=pairs))
                    labelled = rng.choice(pairs, size=n, replace=False)
                    labels = [HumanLabel(f"p{i}", "v", int(people[i]), "person", "test") for i in labelled]
                    result = corrected_separability(labels, {f"p{i}": int(v) for i, v in enumerate(panel)}, {},
                                                    "v")
                    assert result is not None
                    covered += result.low <= truth <= result.high
                    zero_width += result.low == result.high
                print(f"  ppi ({vibe}, panel agrees {agree:.0%}) n={n}: {covered / SIMS:.4f}, "
                      f"{zero_width} of zero width")
                worst = min(worst, covered / SIMS)
                worst_at_20 = min(worst_at_20, covered / SIMS) if n == 20 else worst_at_20
    return {"ppi": worst, "ppi20": worst_at_20}


def monitor() -> dict[str, float]:
    """The monitor's interval over time, by seeded simulation: a shift that moves at look 10, and none."""
    rng = np.random.default_rng(53)
    looks, batch, threshold = 30, 50, 10 / ALPHA
    worst, empty = 1.0, 0
    for name, after in (("moves 0 → +0.2 at look 10", (0.3, 0.1)), ("never moves", (0.1, 0.1))):
        covered = 0
        for _ in range(SIMS):
            ups = np.r_[np.full(10 * batch, 0.1), np.full((looks - 10) * batch, after[0])]
            downs = np.r_[np.full(10 * batch, 0.1), np.full((looks - 10) * batch, after[1])]
            u = rng.random(looks * batch)
            x = np.where(u < ups, 1.0, np.where(u < ups + downs, -1.0, 0.0))
            truth = np.cumsum(ups - downs) / np.arange(1, looks * batch + 1)  # the average of the units' means
            found = track([x[k * batch:(k + 1) * batch] for k in range(looks)], 0.1, threshold)
            ends = [(k + 1) * batch - 1 for k in range(looks)]
            covered += all(f.low <= truth[e] + 1e-12 and truth[e] - 1e-12 <= f.high
                           for f, e in zip(found, ends, strict=True))
            empty += sum(not f.low <= f.high for f in found)
        print(f"  monitor ({name}): {covered / SIMS:.4f} covered at every look")
        worst = min(worst, covered / SIMS)
    print(f"  monitor: {empty} empty intervals")
    return {"monitor": worst, "monitor_interval_empty": float(empty)}


def rankings() -> float:
    truth = {"m1": 1150.0, "m2": 1050.0, "m3": 950.0, "m4": 850.0}
    models = list(truth)
    rng = np.random.default_rng(123)
    covered = total = 0
    for run in range(sizes.pick(300, 3)):
        outcomes = []
        for _ in range(240):
            i, j = rng.choice(4, 2, replace=False)
            a, b = models[i], models[j]
            outcomes.append(Outcome(a, b, float(rng.random() < 1 / (1 + 10 ** ((truth[b] - truth[a]) / 400)))))
        for r in rank("bradley_terry", outcomes, models, rounds=sizes.pick(200, 20), seed=run).ratings:
            covered += r.ci_low <= truth[r.model] <= r.ci_high
            total += 1
    print(f"  rankings: {covered / total:.4f} of {total} intervals")
    return covered / total


def gate_regions(n: int, margin: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every outcome (n₊, n₋) of n prompts, its log multinomial coefficient, and whether `vibe compare`'s gate
    FAILs it and PASSes it at ±margin. Each test's rejection region is found from the p-values themselves: as
    Z(δ₀) grows the upper p-value falls, so a bisection over the outcomes ranked by Z finds where it crosses its
    level."""
    ups, downs, log_ways = _trinomial(n)

    def region(delta0: float, upper: bool, level: float) -> np.ndarray:
        z = np.round(ternary.score(ups, downs, n, delta0), 10)
        values = np.unique(z)
        p = ternary.p_above if upper else ternary.p_below
        at = {float(v): i for i, v in enumerate(values)}
        example = {float(v): (int(ups[k]), int(downs[k])) for k, v in enumerate(z)}

        def rejects(i: int) -> bool:
            return p(*example[float(values[i])], n, delta0) < level  # `gate` compares p < α

        # upper: rejection for z ≥ some cut; lower: for z ≤ some cut
        low, high = 0, len(values)
        if upper:
            while low < high:
                mid = (low + high) // 2
                low, high = (low, mid) if rejects(mid) else (mid + 1, high)
            return np.array([at[float(v)] >= low for v in z])
        while low < high:
            mid = (low + high) // 2
            low, high = (mid + 1, high) if rejects(mid) else (low, mid)
        return np.array([at[float(v)] < low for v in z])

    fail = region(margin, True, ALPHA / 2) | region(-margin, False, ALPHA / 2)
    return ups, downs, log_ways, fail, region(margin, False, ALPHA) & region(-margin, True, ALPHA) & ~fail


def _gate_size(n: int, margin: float) -> tuple[float, float]:
    """The largest FAIL and PASS probabilities at a true shift of ±margin, exact over every outcome of n prompts
    (`gate_regions`), over a nuisance grid five times finer than the p-values' own."""
    ups, downs, log_ways, fail, passes = gate_regions(n, margin)
    worst_fail = worst_pass = 0.0
    for delta in (margin, -margin):
        for q in np.linspace(max(0.0, -delta), (1 - delta) / 2, 5 * ternary.NUISANCE_GRID):
            prob = _probabilities(ups, downs, log_ways, n, q + delta, q)
            worst_fail = max(worst_fail, float(prob[fail].sum()))
            worst_pass = max(worst_pass, float(prob[passes].sum()))
    return worst_fail, worst_pass


def gate_sizes() -> tuple[float, float]:
    worst_fail = worst_pass = 0.0
    for margin in (0.05, 0.1):
        for n in sizes.pick((10, 12, 20, 30, 50, 100, 200, 400, 800), (10, 12)):
            fail, passes = _gate_size(n, margin)
            print(f"  gate margin {margin} n={n}: FAIL {fail:.4f} PASS {passes:.4f}")
            worst_fail, worst_pass = max(worst_fail, fail), max(worst_pass, passes)
    return worst_fail, worst_pass


def simulated_gate(n: int) -> tuple[float, float]:
    """FAIL and PASS rates at a shift of exactly +0.1 made one way (P(+1) = 0.1, P(−1) = 0), the shape where the
    normal approximation was most liberal, through `shift_of` and `gate`."""
    rng = np.random.default_rng(17)
    runs = sizes.pick(20_000, 50)
    fails = passes = 0
    for _ in range(runs):
        up = rng.binomial(n, 0.1)
        verdict = gate([[shift_of("v", -np.r_[np.ones(up), np.zeros(n - up)], 0.1)]])[0][0].verdict
        fails += verdict == "fail"
        passes += verdict == "pass"
    return fails / runs, passes / runs


def main() -> None:
    start = time.perf_counter()
    print("gate sizes at the margin (exact):")
    fail, passes = gate_sizes()
    sim_fail, sim_pass = simulated_gate(sizes.pick(2000, 900))
    print(f"  simulated at 2,000 prompts: FAIL {sim_fail:.4f} PASS {sim_pass:.4f}")
    found = {}
    for name, kind in (("separability", separability), ("winrate", winrate), ("turn_change", turn_change),
                       ("agents", agents),
                       ("conversation_means", conversation_means),
                       ("conversation_shift", conversation_shift), ("agreement", agreement), ("kappa", kappa),
                       ("ppi", ppi), ("rankings", rankings), ("monitor", monitor)):
        print(f"{name}:")
        value = kind()
        found.update(value if isinstance(value, dict) else {name: value})
    print(f"{time.perf_counter() - start:.0f} s; targets: gate sizes ≤ 0.05, every coverage ≥ 0.93")
    print(f"max_gate_fail_size={fail:.4f} max_gate_pass_size={passes:.4f} sim_gate_fail_2000={sim_fail:.4f} "
          f"sim_gate_pass_2000={sim_pass:.4f}")
    empty = found.pop("monitor_interval_empty")
    print(" ".join(f"min_coverage_{name}={value:.4f}" for name, value in found.items())
          + f" monitor_interval_empty={empty:.0f}")


if __name__ == "__main__":
    main()
