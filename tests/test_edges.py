"""Numbers at their edges: p-values at extreme outcomes against a high-precision computation, never 0 from finite
data, and intervals inside the range of what they estimate."""

from __future__ import annotations

from pathlib import Path

import mpmath
import numpy as np
import pytest
from scipy.stats import binomtest

from engine import stats, ternary


def _exact_upper_tail(plus: int, minus: int, n: int, delta0: float) -> mpmath.mpf:
    """sup over the nuisance grid of P(Z ≥ z observed), every outcome's trinomial probability in 50 digits."""
    mpmath.mp.dps = 50
    grid = np.indices((n + 1, n + 1)).reshape(2, -1)
    possible = grid.sum(axis=0) <= n
    ups, downs = grid[0][possible], grid[1][possible]
    z = np.round(ternary.score(ups, downs, n, delta0), 10)
    observed = np.round(ternary.score(plus, minus, n, delta0), 10)
    extreme = [(int(u), int(d)) for u, d, zz in zip(ups, downs, z, strict=True) if zz >= observed]
    best = mpmath.mpf(0)
    for q in np.linspace(max(0.0, -delta0), (1 - delta0) / 2, ternary.NUISANCE_GRID):
        p_up, p_down = mpmath.mpf(q) + mpmath.mpf(delta0), mpmath.mpf(q)
        p_rest = 1 - p_up - p_down
        total = mpmath.fsum(mpmath.factorial(n) / (mpmath.factorial(u) * mpmath.factorial(d)
                                                   * mpmath.factorial(n - u - d))
                            * p_up**u * p_down**d * p_rest ** (n - u - d) for u, d in extreme)
        best = max(best, total)
    return best


def test_the_exact_upper_tail_at_an_extreme_outcome_is_not_zero() -> None:
    """150 of 160 prompts moved up, margin 0.1: the upper tail was 1 − cdf, which cancelled to 0.0 (and printed
    p_beyond = 0); summed from the top it equals a 50-digit computation of the same supremum, and the mirror
    case's lower tail."""
    p = ternary.p_above(150, 0, 160, 0.1)
    assert p == pytest.approx(float(_exact_upper_tail(150, 0, 160, 0.1)), rel=1e-9)
    assert 0 < p < 1e-30
    assert p == pytest.approx(ternary.p_below(0, 150, 160, -0.1), rel=1e-9)
    assert ternary.p_above(400, 100, 800, 0.1) == pytest.approx(ternary.p_below(100, 400, 800, -0.1), rel=1e-9)
    assert 0 < ternary.p_above(400, 100, 800, 0.1) < 1e-20


@pytest.mark.parametrize("n", [1, 7, 40])
@pytest.mark.parametrize("delta0", [-0.6, 0.0, 0.1])
def test_the_exact_tails_equal_a_sum_over_every_outcome(n: int, delta0: float) -> None:
    """Each tail is computed row by row (the outcomes at least as extreme as the one observed, at each count of −1
    verdicts, found by bisection, then a binomial tail): it equals the sum of the trinomial probabilities of every
    such outcome, taken one outcome at a time, at the same nuisance values."""
    from scipy.special import gammaln, xlogy

    ups, downs = (a.ravel() for a in np.indices((n + 1, n + 1)))
    possible = ups + downs <= n
    ups, downs = ups[possible], downs[possible]
    z = np.round(ternary.score(ups, downs, n, delta0), 10)
    log_ways = gammaln(n + 1) - gammaln(ups + 1) - gammaln(downs + 1) - gammaln(n - ups - downs + 1)
    grid = np.linspace(max(0.0, -delta0), (1 - delta0) / 2, ternary.NUISANCE_GRID)
    probs = [np.exp(log_ways + xlogy(ups, q + delta0) + xlogy(downs, q)
                    + xlogy(n - ups - downs, max(1 - 2 * q - delta0, 0.0)))
             for q in grid]
    for up, down, observed in zip(ups, downs, z, strict=True):
        above = max(float(p[z >= observed].sum()) for p in probs)
        below = max(float(p[z <= observed].sum()) for p in probs)
        assert ternary.p_above(int(up), int(down), n, delta0) == pytest.approx(min(above, 1.0), rel=1e-9, abs=1e-300)
        assert ternary.p_below(int(up), int(down), n, delta0) == pytest.approx(min(below, 1.0), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("n", [10, 20, 30])
def test_the_ternary_interval_covers_at_least_93_percent_over_every_outcome(n: int) -> None:
    """Tango's interval uncorrected covered 88% at 10 prompts and 91% at 20 where nearly every prompt moved one way;
    continuity-corrected, its exact coverage (every outcome's trinomial probability) is at least 93% over a grid of
    true (P(+1), P(−1)) from 10 prompts on (92.9% at 5)."""
    from scipy.special import gammaln, xlogy

    ups, downs = (a.ravel() for a in np.indices((n + 1, n + 1)))
    possible = ups + downs <= n
    ups, downs = ups[possible], downs[possible]
    ends = np.array([ternary.interval(int(u), int(d), n) for u, d in zip(ups, downs, strict=True)])
    log_ways = gammaln(n + 1) - gammaln(ups + 1) - gammaln(downs + 1) - gammaln(n - ups - downs + 1)
    for p_up in np.linspace(0, 1, 41):
        for p_down in np.linspace(0, 1 - p_up, 41):
            prob = np.exp(log_ways + xlogy(ups, p_up) + xlogy(downs, p_down)
                          + xlogy(n - ups - downs, max(1 - p_up - p_down, 0.0)))
            truth = p_up - p_down
            assert prob[(ends[:, 0] <= truth + 1e-9) & (truth - 1e-9 <= ends[:, 1])].sum() >= 0.93


def test_no_p_value_is_zero_from_finite_data() -> None:
    """The sign test's exact p of 2,000 pairs all one way is 2⁻²⁰⁰⁰, below the smallest double: it is reported at
    that bound (a valid, larger p-value), as is the normal tail of the score test above 800 prompts. Where the
    double holds the exact value it is unchanged."""
    assert stats.sign_test([1.0] * 2000) == ternary.P_FLOOR > 0
    assert stats.sign_test([1.0] * 2000, 1) == ternary.P_FLOOR
    assert stats.sign_test([1.0] * 30 + [-1.0] * 5) == binomtest(30, 35, 0.5).pvalue
    assert ternary.p_above(100_000, 0, 100_000, 0.1) == ternary.P_FLOOR
    assert ternary.p_below(0, 100_000, 100_000, -0.1) == ternary.P_FLOOR
    assert 0 < ternary.p_above(1600, 0, 1600, 0.1) < 1e-280


def test_a_ternary_cell_s_interval_is_tango_s_not_a_collapsed_bootstrap() -> None:
    """Twenty prompts none of which moved: a percentile bootstrap gives [0, 0], which covers a true P(+1) of 0.05
    only when some prompt moves (1 − 0.95²⁰ = 64% of the time); Tango's interval at 0 of 20 reaches past ±0.1."""
    low, high = stats.verdict_interval(np.zeros(20))
    assert low < -0.1 and high > 0.1 and (low, high) == ternary.interval(0, 0, 20)
    assert stats.verdict_interval([1.0]) == ternary.interval(1, 0, 1)  # one verdict still has an interval
    assert stats.verdict_interval([0.5]) == (-1.0, 1.0)  # one conversation's mean: the whole range
    assert all(np.isnan(stats.verdict_interval([])))


@pytest.mark.slow
def test_every_separability_interval_of_a_trial_run_is_inside_its_range(tmp_path) -> None:
    """A `--limit 10` trial of a user's two-model CSV (5 training and 5 test pairs): the training separability's
    interval was a t-interval (0.600 [−0.51, 1.71]); every interval the run writes and its vibe pages print for a
    separability now lies inside [−1, 1]."""
    import csv
    import json
    import re
    import subprocess
    import sys

    rng = np.random.default_rng(1)
    words = "the model writes about many things including cats dogs code and weather in detail".split()
    with (tmp_path / "answers.csv").open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "prompt", "alpha", "beta"])
        for i in range(40):
            writer.writerow([f"q{i}", f"Question {i} about {rng.choice(words)}?",
                             " ".join(rng.choice(words, rng.integers(5, 60))) + "!",
                             " ".join(rng.choice(words, rng.integers(3, 20))) + "."])
    for args in (["init", "answers.csv"], ["run", "vibe.yaml", "--limit", "10", "--quiet"]):
        done = subprocess.run([sys.executable, "-m", "engine", *args], cwd=tmp_path, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr
    run = tmp_path / "runs" / "answers-limit10"
    scores = [json.loads(line) for line in (run / "vibecheck" / "vibes.jsonl").read_text().splitlines()]
    intervals = [s[key] for s in scores for key in ("separability_ci", "separability_train_ci") if s.get(key)]
    assert len(intervals) >= 2 * 8
    assert all(-1 <= low <= high <= 1 for low, high in intervals), intervals
    printed = [(float(a), float(b)) for page in (run / "vibes").glob("*.html")
               for a, b in re.findall(r"training pairs -?[\d.]+ \[(-?[\d.]+), (-?[\d.]+)\]", page.read_text())]
    assert printed and all(-1 <= a <= b <= 1 for a, b in printed), printed


def test_an_accuracy_no_better_than_the_majority_class_says_so_wherever_it_is_shown() -> None:
    """CNN/DM's preference card read 73.1% beside a majority class of 73.1% and "+11.4 points" over the
    shorter-answer rule, with no note: the card, the regressions page and the profile page share one note."""
    from types import SimpleNamespace

    from engine.report.render import environment

    note = environment().get_template("baselines.html.j2").module.majority_note
    rules = [SimpleNamespace(rule="majority class", accuracy=0.731), SimpleNamespace(rule="longer answer wins",
                                                                                     accuracy=0.617)]
    equal = SimpleNamespace(test_accuracy=0.731, unit="pairs", baselines=rules)
    assert "No better than always predicting the training majority (73.1% on the same pairs)." in str(note(equal))
    worse = SimpleNamespace(test_accuracy=0.70, unit="conversations", baselines=rules)
    assert "(73.1% on the same conversations; it does worse)" in str(note(worse))
    assert str(note(SimpleNamespace(test_accuracy=0.75, unit="pairs", baselines=rules))) == ""
    root = Path(__file__).resolve().parent.parent / "engine" / "builtin_plugins" / "methods" / "vibecheck"
    for page in ("sections/vibecheck.html.j2", "regressions.html.j2", "profile.html.j2"):
        assert "majority_note(" in (root / "templates" / page).read_text(), page


def test_a_conversation_headline_counts_conversations_and_gives_no_detectable_size() -> None:
    """60 MT-Bench turns of 30 test conversations read "Its 60 test pairs detect a separability of 0.45 … needs
    about 136 test pairs": the unit is the conversation, whose mean verdict the sign test's formula does not fit."""
    from types import SimpleNamespace

    from engine.builtin_plugins.methods.vibecheck.headline import could_show

    turns = [SimpleNamespace(split="test", conversation=f"c{k // 2}", cluster=f"c{k // 2}") for k in range(60)]
    turns += [SimpleNamespace(split="train", conversation=f"t{k}", cluster=f"t{k}") for k in range(10)]
    said = could_show(SimpleNamespace(pairs=turns, vibes=[], model_matching=None, preference=None))
    assert said.startswith("Its 30 test conversations (60 turns) give no detectable separability")
    assert "test pairs" not in said
    prompts = [SimpleNamespace(split="test", conversation=None, cluster=f"p{k}") for k in range(60)]
    assert could_show(SimpleNamespace(pairs=prompts, vibes=[], model_matching=None, preference=None,
                                      claims=0)).startswith("Its 60 test pairs detect a separability of")


def _gate_size(n: int, margin: float, verdict: str) -> float:
    """The largest chance, at a true shift exactly on ±margin (over the nuisance share of −1 verdicts), that the
    compare gate's verdict is `verdict`: every outcome of n prompts judged through `shift_of` and `gate`."""
    from scipy.special import gammaln, xlogy

    from engine.drift.shift import gate, shift_of

    ups, downs = (a.ravel() for a in np.indices((n + 1, n + 1)))
    possible = ups + downs <= n
    ups, downs = ups[possible], downs[possible]
    hits = np.array([gate([[shift_of("v", -np.r_[np.ones(u), -np.ones(d), np.zeros(n - u - d)], margin)]])[0][0]
                     .verdict == verdict for u, d in zip(ups, downs, strict=True)])
    log_ways = gammaln(n + 1) - gammaln(ups + 1) - gammaln(downs + 1) - gammaln(n - ups - downs + 1)
    worst = 0.0
    for delta in (margin, -margin):
        for q in np.linspace(max(0.0, -delta), (1 - delta) / 2, 101):
            p = np.exp(log_ways + xlogy(ups, q + delta) + xlogy(downs, q)
                       + xlogy(n - ups - downs, max(1 - 2 * q - delta, 0.0)))
            worst = max(worst, float(p[hits].sum()))
    return worst


@pytest.mark.parametrize("n", [10, 12, 20, 30])
@pytest.mark.parametrize("margin", [0.05, 0.1])
def test_the_gate_holds_its_level_at_the_margin_by_exact_enumeration(n: int, margin: float) -> None:
    """FAIL tested only the side the shift lay on, at the full level: at a shift exactly on the margin it failed
    5.89% of gates at 12 prompts (margin 0.05). Both sides tested, the smaller p doubled, it stays under 5%, and
    so does PASS (TOST), summed exactly over every outcome."""
    assert _gate_size(n, margin, "fail") <= 0.05
    assert _gate_size(n, margin, "pass") <= 0.05


def test_the_betting_interval_holds_where_conversations_all_agree() -> None:
    """A shift that sits in a tenth of the conversations (each of those at 2/3, every other at 0): most samples of 5
    or 10 conversations hold none of them, and the t-interval then shrinks to [0, 0]. Seeded samples through
    `stats.verdict_interval` (the betting interval for means): coverage ≥ 0.95 at every size, where the
    t-interval's is below 0.7; and at 40 conversations of noisy turns its width is within twice the t's."""
    from scipy import stats as scipy_stats

    rng = np.random.default_rng(11)
    truth = 0.1 * 2 / 3
    for n in (5, 10, 20):
        covered, t_covered = 0, 0
        for _ in range(300):
            x = np.where(rng.random(n) < 0.1, 2 / 3, 0.0)
            low, high = stats.verdict_interval(x)
            covered += low <= truth <= high
            half = scipy_stats.t.ppf(0.975, n - 1) * x.std(ddof=1) / np.sqrt(n)
            t_covered += x.mean() - half <= truth <= x.mean() + half
            assert -1 <= low < high <= 1
        assert covered / 300 >= 0.95
        if n <= 10:
            assert t_covered / 300 < 0.7
    widths = []
    for _ in range(100):
        x = rng.choice([-1.0, 0.0, 1.0], size=(40, 3), p=[0.2, 0.5, 0.3]).mean(axis=1)
        low, high = stats.verdict_interval(x)
        widths.append((high - low) / (2 * scipy_stats.t.ppf(0.975, 39) * x.std(ddof=1) / np.sqrt(40)))
    assert 1 < np.median(widths) < 2


def test_kappa_from_confusion_counts_is_scikit_learn_s() -> None:
    """The agreement interval's rounds read κ from summed confusion counts: on 200 seeded label sets (3 categories,
    some with one category missing on a side) it is scikit-learn's κ and the share agreeing, to 1e-12."""
    from engine.analyze.people import confusion_scores

    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(2, 40))
        people = rng.choice([-1, 0, 1], n, p=rng.dirichlet([1, 1, 1]))
        judge = np.where(rng.random(n) < 0.6, people, rng.choice([-1, 0, 1], n))
        codes = {c: k for k, c in enumerate(sorted(set(people) | set(judge)))}
        table = np.zeros((len(codes), len(codes)))
        np.add.at(table, ([codes[v] for v in people], [codes[v] for v in judge]), 1)
        share, kappa = confusion_scores(table[None])
        assert share[0] == pytest.approx(np.mean(people == judge), abs=1e-12)
        if len(codes) > 1:
            assert kappa[0] == pytest.approx(stats.cohen_kappa(people.tolist(), judge.tolist()), abs=1e-12)
        else:
            assert np.isnan(kappa[0])


def test_a_mined_lexicon_is_named_by_its_phrases_in_the_headline() -> None:
    """A phrase lexicon discovery mined is named in the headline by its two strongest phrases (its name says only
    whose phrasing it is: `phrasing_llama_3_70b_instruct`); a declared vibe keeps its own name."""
    from dataclasses import replace

    from engine.builtin_plugins.methods.vibecheck.headline import words
    from engine.builtin_plugins.methods.vibecheck.records import VibeScore

    mined = VibeScore("phrasing_llama_3_70b_instruct", "low", "high",
                      "discovered (phrases:llama-3-70b-instruct, 80 training pairs)", "phrases:what a|can be a|move",
                      [], [], 0.3, 0.3, (0.1, 0.5), None, None, True, "", 10, 0)
    assert words(mined) == "phrasing such as ‘what a’ and ‘can be a’"
    assert words(replace(mined, name="my_phrases", origin="declared")) == "my phrases"
