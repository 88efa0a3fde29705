"""VibeCheck statistics against hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import stats
from engine.builtin_plugins.methods.vibecheck import heldout
from engine.judges.reading import parse_rating, parse_verdict, verdict_to_score
from engine.judges.verdicts import combine_orders, compare


def test_cohen_kappa_hand_computed() -> None:
    # 10 items, 3 classes. Agreement on 7 -> p_o = 0.7.
    a = [1, 1, 1, 0, 0, -1, -1, 1, 0, -1]
    b = [1, 1, 0, 0, 0, -1, 1, 1, -1, -1]
    # marginals: a: {1:4, 0:3, -1:3}; b: {1:4, 0:3, -1:3} -> p_e = (16 + 9 + 9) / 100 = 0.34
    assert stats.cohen_kappa(a, b) == pytest.approx((0.7 - 0.34) / (1 - 0.34))


def test_cohen_kappa_perfect_and_constant() -> None:
    assert stats.cohen_kappa([1, 0, -1], [1, 0, -1]) == 1.0
    assert stats.cohen_kappa([1, 1], [1, 1]) == 1.0


def test_fleiss_kappa_hand_computed() -> None:
    # 4 items, 3 raters, categories {0, 1}
    ratings = [[1, 1, 1], [1, 1, 0], [0, 0, 0], [0, 1, 0]]
    # P_i: 1, 1/3, 1, 1/3 -> mean 2/3; p_1 = 6/12 = 0.5 -> P_e = 0.5
    assert stats.fleiss_kappa(ratings) == pytest.approx((2 / 3 - 0.5) / 0.5)


def test_agreement_dispatch() -> None:
    assert stats.agreement([[1, 0]]) is None
    assert stats.agreement([[1, 0, 1], [1, 0, 1]]) == 1.0
    assert stats.agreement([[1, 0], [1, 0], [1, 0]]) == 1.0


def test_ensemble_rounds_half_away_from_zero() -> None:
    assert stats.ensemble([1, 0]) == 1 and stats.ensemble([-1, 0]) == -1
    assert stats.ensemble([1, -1]) == 0 and stats.ensemble([1, 1, -1]) == 0  # 1/3 rounds to 0
    assert stats.ensemble([1, 1, 0]) == 1 and stats.ensemble([]) == 0


def test_separability() -> None:
    assert stats.separability([1, 1, 0, -1]) == 0.25


def test_swap_logic() -> None:
    # judge says "answer 1" in both orders: position bias -> 0
    first = verdict_to_score("1", "ab")
    second = verdict_to_score("1", "ba")
    assert (first, second) == (1, -1) and combine_orders(first, second) == 0
    # consistent: A higher in both orders
    assert combine_orders(verdict_to_score("1", "ab"), verdict_to_score("2", "ba")) == 1
    assert combine_orders(verdict_to_score("2", "ab"), verdict_to_score("1", "ba")) == -1
    # N/A or invalid in either run -> 0
    assert combine_orders(verdict_to_score("0", "ab"), verdict_to_score("2", "ba")) == 0
    assert combine_orders(None, 1) is None  # unreadable: missing, not a tie


@pytest.mark.parametrize(("text", "expected"), [
    ("A is longer.\nVerdict: 1", "1"),
    ("**Verdict:** 2", "2"),
    ("verdict - Answer 2", "2"),
    ("Verdict: N/A", "0"),
    ("VERDICT: tie", "0"),
    ("Verdict: 1 ... on reflection, Verdict: 2", "2"),
    ("I think the first one.", None),
    ("", None),
])
def test_parse_verdict(text: str, expected: str | None) -> None:
    assert parse_verdict(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Explanation: close.\nRating: 4", 4), ("rating: 5/5", 5), ("Rating: 7", None), ("Rating: 10", None),
    ("no score here", None), ("**Rating**: 2", 2),
])
def test_parse_rating(text: str, expected: int | None) -> None:
    assert parse_rating(text) == expected


def test_metric_comparison_with_tolerance() -> None:
    assert compare(100, 96, 0.05, relative=True) == 0  # 4% apart: a tie
    assert compare(100, 90, 0.05, relative=True) == 1
    assert compare(0.10, 0.13, 0.02, relative=False) == -1


def test_model_matching_is_fitted_on_pairs_with_firth_by_hand() -> None:
    """One vibe, 30 training pairs: 18 say +1 (A higher), 6 say −1, 6 are 0. Model matching has no intercept,
    so Firth's estimate has a closed form: the cells get half a count each, w = log((18 + ½) / (6 + ½)). Its
    standard error is 1 / √((N + 1) p (1 − p)), the curvature of the penalized log-likelihood
    N·p(1 − p) + p(1 − p) over the N = 24 informative pairs, p = σ(w). Fitting both display orders as
    60 rows would give the same w and a standard error about √2 smaller. That training fit predicts the test
    pairs and is kept as descriptive; what the page reads is the same model refitted on the 12 test pairs
    (9 say +1, 3 say −1): w' = log(9.5 / 3.5), with its own standard error."""
    x_train = np.array([1.0] * 18 + [-1.0] * 6 + [0.0] * 6)[:, None]
    x_test = np.array([1.0] * 9 + [-1.0] * 3)[:, None]
    fit = heldout.model_matching(["v"], x_train, x_test, np.zeros(30), np.zeros(12), seed=3)
    w = math.log(18.5 / 6.5)
    assert fit.n_train == 30 and fit.n_test == 12  # pairs, not pairs × orders
    assert fit.train_coefficients[0] == pytest.approx(w, abs=1e-4)
    w_test = math.log(9.5 / 3.5)
    p = 1 / (1 + math.exp(-w_test))
    assert fit.inference == "held-out refit"
    assert fit.coefficients[0] == pytest.approx(w_test, abs=1e-4)
    assert fit.std_errors[0] == pytest.approx(1 / math.sqrt(13 * p * (1 - p)), rel=1e-3)
    assert fit.intercept is None and fit.p_values[0] is not None
    # test pairs: 9 right, 3 wrong
    assert fit.test_accuracy == pytest.approx(9 / 12)
    assert fit.baseline("majority class").accuracy == 0.5
    # equal lengths everywhere: the longer-answer rule never decides, a coin flip on every pair
    assert fit.baseline(heldout.RULE).accuracy == 0.5
    # the same fits whatever display orders the seed drew
    again = heldout.model_matching(["v"], x_train, x_test, np.zeros(30), np.zeros(12), seed=11)
    assert again.coefficients[0] == pytest.approx(fit.coefficients[0], abs=1e-6)
    assert again.train_coefficients[0] == pytest.approx(fit.train_coefficients[0], abs=1e-6)


def test_model_matching_under_separation_stays_finite() -> None:
    """Every informative pair says +1: the likelihood grows without bound, so plain maximum likelihood has no
    estimate. Firth's stays finite: w = log((12 + ½) / ½) = log 25, with a likelihood-ratio p-value."""
    x_train = np.array([1.0] * 12 + [0.0] * 4)[:, None]
    fit = heldout.model_matching(["v"], x_train, x_train, np.zeros(16), np.zeros(16))
    assert fit.coefficients[0] == pytest.approx(math.log(25), abs=1e-4)
    assert fit.p_values[0] is not None and fit.p_values[0] < 0.01
    assert fit.test_accuracy == pytest.approx((12 + 0.5 * 4) / 16)


def test_model_matching_rule_is_the_longer_writer() -> None:
    """The rule baseline: model A wrote the longer answer on 3 of 4 training pairs, so on test pairs the longer
    answer is taken for A's: right where A's is longer (2), wrong where B's is (1), a coin flip on a tie."""
    x = np.array([[1.0], [1.0], [-1.0], [1.0]])
    length_train = np.array([0.5, 0.2, -0.1, 0.3])
    length_test = np.array([0.4, 0.1, -0.2, 0.0])
    fit = heldout.model_matching(["v"], x, x, length_train, length_test)
    assert fit.baseline(heldout.RULE).accuracy == pytest.approx((2 + 0.5) / 4)


def test_preference_is_the_longer_answer_rule_when_a_vibe_adds_nothing() -> None:
    """Labels follow length on 80% of pairs; the vibe is noise. Nothing is admitted, so the model is the
    literal rule: its predictions are the rule's on every test pair, and its gain over the rule is exactly 0."""
    rng = np.random.default_rng(0)
    n = 400
    length = rng.normal(0, 1, n)
    y = ((length > 0) ^ (rng.random(n) < 0.2)).astype(float)
    noise = rng.choice([-1.0, 0.0, 1.0], size=(n, 1))
    fit = heldout.preference(["noise"], noise[:200], y[:200], noise[200:], y[200:], length[:200], length[200:])
    assert fit.features == [heldout.RULE_TERM]
    assert fit.gain_over_rule == 0 and fit.test_accuracy == fit.baseline(heldout.RULE).accuracy
    assert fit.baseline(heldout.RULE).accuracy == pytest.approx(float(np.mean((length[200:] > 0) == y[200:])))
    assert fit.n_train == 200 and fit.n_test == 200
    majority = float(y[:200].mean() >= 0.5)
    assert fit.baseline("majority class").accuracy == pytest.approx(float(np.mean(y[200:] == majority)))
    assert "No vibe was admitted" in fit.selection


def test_preference_rule_gives_equal_lengths_to_the_training_majority() -> None:
    """Equal lengths (log ratio 0) go to the training pairs' majority label: 3 of 4 training labels are A's
    (and the longer answer won both pairs where lengths differ)."""
    y_train = np.array([1.0, 1.0, 1.0, 0.0])
    length_train = np.array([0.5, 0.5, 0.0, -0.2])
    fit = heldout.preference(["v"], np.zeros((4, 1)), y_train, np.zeros((3, 1)), np.array([1.0, 0.0, 1.0]),
                             length_train, np.array([0.0, 0.0, -1.0]))
    # test: tie → A (right), tie → A (wrong), B longer → B (wrong)
    assert fit.baseline(heldout.RULE).accuracy == pytest.approx(1 / 3)


def test_preference_rule_points_where_the_training_pairs_do() -> None:
    """Where shorter answers win on the training pairs, the rule the model has to beat is "the shorter answer
    wins": scored against the longer-answer rule, right on none of these test pairs, any model would gain."""
    y_train = np.array([1.0, 1.0, 0.0, 0.0, 1.0])  # the shorter answer wins the first four, the longer the fifth
    length_train = np.array([-0.5, -0.3, 0.4, 0.2, 0.1])
    y_test, length_test = np.array([1.0, 0.0, 1.0, 0.0]), np.array([-1.0, 1.0, -1.0, 0.5])
    fit = heldout.preference(["v"], np.zeros((5, 1)), y_train, np.zeros((4, 1)), y_test, length_train, length_test)
    assert fit.rule == heldout.SHORTER_RULE and fit.baseline(heldout.RULE) is None
    assert fit.baseline(heldout.SHORTER_RULE).accuracy == 1.0  # the shorter answer won every test pair
    assert fit.gain_over_rule == fit.test_accuracy - 1.0 and "“shorter answer wins”" in fit.selection


def test_the_rule_stays_unless_what_was_admitted_predicts_better_cross_fitted() -> None:
    """A vibe with a real but tiny effect can pass the admission test on the training pairs and still predict
    new pairs worse than the rule. Cross-fitted on the training pairs, the procedure is scored against the rule,
    and the rule stays unless beaten, with both accuracies stated."""
    from engine.builtin_plugins.methods.vibecheck.admission import transfers

    rng = np.random.default_rng(5)
    n = 300
    length = rng.normal(0, 1, n)
    vibe = rng.choice([-1.0, 1.0], size=n)
    y = (2.0 * vibe + 0.5 * length + rng.logistic(size=n) > 0).astype(float)
    rule = heldout.longer_rule(length, 1.0)
    stages = [{heldout.INTERCEPT: np.ones(n), heldout.LENGTH: length}, {"vibe": vibe}]
    cv = transfers(rule, stages, y, 0, heldout.INTERCEPT)
    assert cv.rule == pytest.approx(float(np.mean((length > 0) == (y > 0.5))))
    assert cv.model > cv.rule + 0.1 and cv.kept  # a strong vibe transfers
    # the standard error of the mean paired difference, by hand: the 300 pairs' differences are what it reads
    assert 0 < cv.error < 0.05
    fit = heldout.preference(["vibe"], vibe[:150, None], y[:150], vibe[150:, None], y[150:], length[:150],
                             length[150:])
    assert "Cross-fitted on the training pairs (10 folds" in fit.selection
    assert "the admitted terms stay" in fit.selection
    # labels that follow the rule exactly: whatever is admitted cannot beat a rule that is right everywhere
    y_rule = (length > 0).astype(float)
    fit = heldout.preference(["vibe"], vibe[:150, None], y_rule[:150], vibe[150:, None], y_rule[150:],
                             length[:150], length[150:])
    assert fit.features == [heldout.RULE_TERM] and fit.gain_over_rule == 0


def test_preference_takes_a_vibe_that_adds_to_length() -> None:
    rng = np.random.default_rng(1)
    n = 600
    length = rng.normal(0, 1, n)
    vibe = rng.choice([-1.0, 1.0], size=n)
    y = (1.5 * vibe + 0.5 * length + rng.logistic(size=n) > 0).astype(float)
    fit = heldout.preference(["vibe"], vibe[:300, None], y[:300], vibe[300:, None], y[300:], length[:300],
                             length[300:])
    assert "vibe" in fit.features and fit.features[0] == heldout.RULE_TERM
    assert fit.tested == [name == "vibe" for name in fit.features]
    assert fit.gain_over_rule is not None and fit.gain_ci_low is not None
    assert fit.gain_over_rule > 0 and fit.gain_ci_low > 0


def test_wilson_interval_by_hand() -> None:
    """Wilson's interval with a continuity correction (Newcombe 1998, method 4). 8 of 10 by hand: low
    (16 + z² − 1 − z√(z² − 2 − 1/10 + 4·0.8·(2 + 1))) / (2(10 + z²)) = 0.4422, high (16 + z² + 1
    + z√(z² + 2 − 1/10 + 4·0.8·(2 − 1))) / (2(10 + z²)) = 0.9646; and the paper's own examples in its Table I."""
    low, high = stats.wilson(8, 10)
    assert low == pytest.approx(0.4422, abs=1e-4) and high == pytest.approx(0.9646, abs=1e-4)
    for (successes, n), published in [((81, 263), (0.2535, 0.3682)), ((15, 148), (0.0598, 0.1644)),
                                      ((0, 20), (0.0, 0.2005)), ((1, 29), (0.0018, 0.1963))]:
        assert stats.wilson(successes, n) == pytest.approx(published, abs=1e-4)


def test_holm_adjustment_by_hand() -> None:
    # sorted 0.005, 0.01, 0.03, 0.04 → ×4, ×3, ×2, ×1 = 0.02, 0.03, 0.06, 0.04 → running max 0.02, 0.03, 0.06, 0.06
    assert stats.holm([0.01, 0.04, None, 0.03, 0.005]) == pytest.approx([0.03, 0.06, None, 0.06, 0.02])


def test_holm_leaves_the_garbage_collector_frozen_or_not_as_it_found_it() -> None:
    """Holm freezes the heap around statsmodels' own full collection and thaws it again. Inside a run, whose
    phases froze what they keep, it leaves the heap as it is: it must not thaw that (the run does, when it
    ends), nor freeze more. A frozen object that dies meanwhile (another thread of the process lets it go)
    leaves the frozen count, so the count may only have fallen by a few, never risen, never to zero."""
    import gc

    assert gc.get_freeze_count() == 0
    stats.holm([0.01, 0.2])
    assert gc.get_freeze_count() == 0
    kept = [[n] for n in range(100)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        stats.holm([0.01, 0.2])
        assert frozen - 100 <= gc.get_freeze_count() <= frozen and kept
    finally:
        gc.unfreeze()


def test_separability_interval_excludes_zero_only_when_it_should() -> None:
    # mean 0.8, sd √(10·0.16/9) = 0.4216, t(9) = 2.2622: 0.8 ± 0.3016
    low, high = stats.mean_interval([1] * 8 + [0] * 2)
    assert low == pytest.approx(0.4984, abs=1e-4) and high == pytest.approx(1.1016, abs=1e-4)
    # mean 0.5 with sd 0.756 over 8 pairs: −0.13 to 1.13, which does not exclude 0
    assert stats.mean_interval([1, 1, 0, 1, -1, 1, 0, 1])[0] < 0
    assert stats.mean_interval([1, -1] * 10)[0] < 0 < stats.mean_interval([1, -1] * 10)[1]


def test_split_is_seeded_and_order_free() -> None:
    ids = [f"i{n}" for n in range(10)]
    assert stats.split(ids, 0.5, 3) == stats.split(list(reversed(ids)), 0.5, 3)
    train, test = stats.split(ids, 0.5, 3)
    assert len(train) == 5 and not set(train) & set(test)


def test_collinear_and_constant_vibes_are_named_not_fatal() -> None:
    """Two vibes with the same verdicts on every pair cannot both be estimated, nor can one that never
    varies: the fit keeps the first, and says why the others have no coefficient."""
    rng = np.random.default_rng(2)
    a = rng.choice([-1.0, 0.0, 1.0], size=40)
    x = np.column_stack([a, a, np.zeros(40)])
    fit = heldout.model_matching(["a", "copy", "flat"], x, x, np.zeros(40), np.zeros(40))
    assert fit.coefficients[1] == fit.coefficients[2] == 0 and fit.p_values[1] is fit.p_values[2] is None
    assert "linear combination" in fit.p_notes[1] and "constant" in fit.p_notes[2]
    assert fit.p_notes[0] == ""
    # the notes are the test refit's: they name the test pairs (they said "training pairs")
    assert fit.p_notes[2] == "constant on the test pairs: not estimable"
    assert fit.p_notes[1].endswith("on the test pairs: not estimable")


def test_sign_test_by_hand() -> None:
    """[+1, +1]: two-sided 2·(½)² = 0.5, one-sided toward A (½)² = 0.25, toward B 1; ties carry no direction:
    [+1, +1, 0, 0, 0] is the same test. Seven of eight toward A: one-sided P(X ≥ 7) = 9/256."""
    assert stats.sign_test([1, 1]) == 0.5 and stats.sign_test([1, 1], 1) == 0.25 and stats.sign_test([1, 1], -1) == 1
    assert stats.sign_test([1, 1, 0, 0, 0], 1) == 0.25 and stats.sign_test([0, 0]) == 1.0
    assert stats.sign_test([1] * 7 + [-1], 1) == pytest.approx(9 / 256)


def test_skew_corrected_t_by_hand() -> None:
    """Symmetric data has no skew to correct: [1, 2, 3] against 1 is the plain t, √3·(2 − 1)/1. Skewed data
    moves it: [0, 0, 0, 3] against 0 has x̄ = 3/4, s = 3/2, γ = (3·(−3/4)³ + (9/4)³)/4 / (3/2)³ = 0.75, S = 1/2,
    so T = 2·(1/2 + 0.75/12 + 0.5625/216 + 0.75/24) = 1.19271 against the plain t's 1. Under a skew to the
    right the plain t rejects too rarely in its upper tail (a high mean comes with a large s) and too often in
    its lower one; the correction draws the statistic up."""
    assert stats.skew_corrected_t([1, 2, 3], 1) == pytest.approx(math.sqrt(3))
    assert stats.skew_corrected_t([0, 0, 0, 3], 0) == pytest.approx(2 * (0.5 + 0.75 / 12 + 0.5625 / 216 + 0.75 / 24))


def test_the_detectable_size_is_at_the_level_the_corrected_test_faces() -> None:
    """Beside a Holm p the page printed the size the uncorrected 5% test detects: at 200 test pairs (a third
    tied) 0.147, where a test corrected over ten claims needs 0.196, and power at 0.147 is 45%. Each kept vibe's
    detectable separability is now at Holm's bound 5%/m over the comparison's m claims: here three kept vibes
    and no regression, so 5%/3 (the first two's 133 non-zero verdicts of 200; the third's 20 of 30)."""
    from test_selection_calibration import scored

    from engine.builtin_plugins.methods.vibecheck.analysis import adjust_claims

    lean = [1.0] * 70 + [-1.0] * 63 + [0.0] * 67
    scores = [scored("a", [1.0] * 30, lean), scored("b", [-1.0] * 30, lean),
              scored("c", [1.0] * 30, [1.0] * 12 + [-1.0] * 8 + [0.0] * 10)]
    assert all(s.kept for s in scores)
    adjusted, _, _, family = adjust_claims(scores, None, None)
    assert family == 3 and [s.power_alpha for s in adjusted] == [pytest.approx(0.05 / 3)] * 3
    assert adjusted[0].separability_mde == pytest.approx(stats.sign_test_mde(133, 200, alpha=0.05 / 3))
    assert adjusted[2].separability_mde == pytest.approx(stats.sign_test_mde(20, 30, alpha=0.05 / 3))
    assert adjusted[0].separability_mde > scores[0].separability_mde  # the uncorrected size promised too much
    assert stats.sign_test_mde(133, 200) == pytest.approx(0.1472, abs=1e-4)
    assert stats.sign_test_mde(133, 200, alpha=0.005) == pytest.approx(0.1962, abs=1e-4)
    # a regression's vibe coefficient joins the family: m = 4, and its detectable size is (z at 1 − 5%/8 + z₀.₈)·SE
    from scipy.stats import norm

    rng = np.random.default_rng(4)
    x = rng.choice([-1.0, 0.0, 1.0], size=(60, 1))
    mm = heldout.model_matching(["a"], x, x, np.zeros(60), np.zeros(60))
    adjusted, mm, _, family = adjust_claims(scores, mm, None)
    assert family == 4 and mm is not None and mm.power_alphas == [pytest.approx(0.05 / 4)]
    assert adjusted[0].power_alpha == pytest.approx(0.05 / 4)  # equal weights: every vibe capped at e⁸
    assert mm.detectable[0] == pytest.approx((norm.ppf(1 - 0.05 / 8) + norm.ppf(0.8)) * mm.std_errors[0])


def test_weighted_holm_by_hand() -> None:
    """p = 0.01, 0.04, 0.03 with weights 1, 4, 1 (W = 6): taken in order of p/w (0.01, 0.01, 0.03), the first
    needs p ≤ 5%·1/6 (adjusted 0.01·6/1 = 0.06), the second 0.04·5/4 = 0.05, the third 0.03·1/1, each raised to
    the running maximum: 0.06 for all three, nothing rejected at 5%. Equal weights give Holm's (statsmodels')."""
    assert stats.weighted_holm([0.01, 0.04, 0.03], [1, 4, 1]) == pytest.approx([0.06, 0.06, 0.06])
    # the heavy one alone first: 0.004·6/4 = 0.006, then 0.01·2/1 = 0.02, then 0.03
    assert stats.weighted_holm([0.01, 0.004, 0.03], [1, 4, 1]) == pytest.approx([0.02, 0.006, 0.03])
    p = [0.01, 0.04, None, 0.03, 0.2]
    assert stats.weighted_holm(p, [1.0] * 5) == pytest.approx(stats.holm(p))
    with pytest.raises(ValueError):
        stats.weighted_holm([0.1], [0.0])


def test_a_kept_vibe_weighs_by_its_training_z_and_states_its_own_level() -> None:
    """The screen keeps a training lean more than one standard error from 0 (24 of 90 pairs +1, 15 −1: mean 0.1,
    sd √(38.1/89) = 0.6543, se 0.0690, z 1.450), which a 95% interval (−0.037 to 0.237) would have dropped; its
    weight is exp(2·1.450). Beside a vibe capped at e⁸ (every training pair +1) in a family of the two, each test
    faces 5%·w/W, and the adjusted p-values follow p/w's order (`test_weighted_holm_by_hand`)."""
    from test_selection_calibration import scored

    from engine.builtin_plugins.methods.vibecheck import keep
    from engine.builtin_plugins.methods.vibecheck.analysis import adjust_claims

    train = [1.0] * 24 + [-1.0] * 15 + [0.0] * 51
    assert keep.training_z(train) == pytest.approx(0.1 / (math.sqrt(38.1 / 89) / math.sqrt(90)))
    weak, strong = scored("weak", train, [1.0] * 10), scored("strong", [1.0] * 30, [1.0] * 5 + [0.0] * 5)
    assert weak.kept and not stats.excludes_zero(stats.mean_interval(train))
    assert weak.holm_weight == pytest.approx(math.exp(2 * keep.training_z(train)))
    assert strong.holm_weight == pytest.approx(math.exp(8))
    assert keep.decide([1.0] * 10 + [-1.0] * 8 + [0.0] * 12, [], kappa_train=None, kappa_min=0.2, sep_min=0.05,
                       origin="declared", sides=("a", "b")).reasons[0].startswith("separation within one standard")
    (w, s), _, _, _ = adjust_claims([weak, strong], None, None)
    total = weak.holm_weight + strong.holm_weight
    assert w.power_alpha == pytest.approx(0.05 * weak.holm_weight / total)
    assert s.power_alpha == pytest.approx(0.05 * strong.holm_weight / total)
    # p/w orders them: weak's 2⁻¹⁰ over e^2.9 against strong's 2⁻⁵ over e⁸; strong comes first here
    p_weak, p_strong = 0.5 ** 10, 0.5 ** 5
    first = p_strong * total / strong.holm_weight
    assert s.separability_p_adjusted == pytest.approx(first)
    assert w.separability_p_adjusted == pytest.approx(max(first, p_weak))
    # a coefficient of the weak vibe weighs as the vibe does: W = 2·w_weak + w_strong
    rng = np.random.default_rng(4)
    x = rng.choice([-1.0, 0.0, 1.0], size=(60, 1))
    mm = heldout.model_matching(["weak"], x, x, np.zeros(60), np.zeros(60))
    (w, s), mm, _, _ = adjust_claims([weak, strong], mm, None)
    total = 2 * weak.holm_weight + strong.holm_weight
    assert mm is not None and mm.power_alphas == [pytest.approx(0.05 * weak.holm_weight / total)]
    assert w.power_alpha == pytest.approx(0.05 * weak.holm_weight / total)
    assert "weighted Holm over the 3 claims" in mm.correction


def test_sign_test_mde_by_hand() -> None:
    """Ten non-zero verdicts of ten: the one-sided exact test at 5% needs 9 or more +1s (P(X ≥ 9) = 11/1024
    under the null; 8 or more would be 56/1024 > 5%), and P(X ≥ 9 | q) reaches 80% at q = 0.917, a
    separability 2q − 1 = 0.833. Half the verdicts tied halves the separability that share of +1s gives."""
    from scipy.stats import binom

    mde = stats.sign_test_mde(10, 10)
    assert mde is not None
    q = (mde + 1) / 2
    assert binom.sf(8, 10, q) == pytest.approx(0.8, abs=1e-6) and mde == pytest.approx(0.8335, abs=1e-4)
    assert stats.sign_test_mde(10, 20) == pytest.approx(mde / 2)
    assert stats.sign_test_mde(4, 4) is None  # (½)⁴ = 1/16 > 5%: four pairs can never be significant
    assert stats.sign_test_mde(200, 200) < stats.sign_test_mde(100, 100) < mde  # more pairs, smaller effects


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([-1, 0, 1]), min_size=1, max_size=14), st.sampled_from([-1, 0, 1]))
def test_sign_test_properties(verdicts: list[int], direction: int) -> None:
    """Over random small samples: a p-value is never 0 and never above 1; one-sided in the direction the
    verdicts lean is at most the two-sided value, and the two one-sided values cover every outcome (sum ≥ 1);
    flipping every verdict and the direction gives the same p."""
    from scipy.stats import binomtest

    p = stats.sign_test(verdicts, direction)
    assert 0 < p <= 1
    higher, lower = verdicts.count(1), verdicts.count(-1)
    if higher + lower:
        alternative = {1: "greater", -1: "less", 0: "two-sided"}[direction]
        assert p == pytest.approx(binomtest(higher, higher + lower, 0.5, alternative=alternative).pvalue)
        assert stats.sign_test(verdicts, 1) + stats.sign_test(verdicts, -1) >= 1
        lean = 1 if higher >= lower else -1
        assert stats.sign_test(verdicts, lean) <= stats.sign_test(verdicts) + 1e-12
    assert stats.sign_test([-v for v in verdicts], -direction) == pytest.approx(p)


def test_bootstrap_draws_a_block_at_a_time_are_the_whole_matrix() -> None:
    """The bootstrap's index matrix is drawn a block of rounds at a time (bounded memory at any number of
    pairs), and is the very matrix one call would draw, for odd and even sizes."""
    from engine.stats import resampled_rows

    for n in (1, 7, 50_001):
        for rounds in (1, 33, 200):
            whole = np.random.default_rng(11).integers(0, n, size=(rounds, n))
            blocks = list(resampled_rows(np.random.default_rng(11), n, rounds))
            assert max(len(b) for b in blocks) <= 32 and np.array_equal(np.concatenate(blocks), whole)


def test_a_separability_interval_stays_inside_the_verdicts_range() -> None:
    """Three test pairs at +1, +1, 0: the t-interval was 0.667 ± 4.30 × 0.577 / √3 = [−0.768, 2.101], past the
    +1 every verdict is bounded by. Tango's continuity-corrected score interval for P(+1) − P(−1) is
    [−0.404, 0.982]: each end is where the score statistic, its numerator 2 − 3δ shrunk by ½ toward 0, reaches
    ±1.96. Conversation means get the betting interval, inside the range too."""
    from engine import stats, ternary

    low, high = stats.verdict_interval([1, 1, 0])
    assert (low, high) == pytest.approx((-0.4040, 0.9823), abs=1e-4)
    for end, z in ((low, 1.959964), (high, -1.959964)):
        numerator = 2 - 3 * end
        shrunk = numerator - np.sign(numerator) * 0.5
        assert shrunk / np.sqrt(3 * (2 * float(ternary.restricted_minus(2, 0, 3, end)) + end * (1 - end))) \
            == pytest.approx(z, abs=1e-6)
    low, high = stats.verdict_interval([0.5, 1.0, 1.0, 0.25])
    assert -1 <= low <= high <= 1


def test_a_cross_fitted_gain_within_one_standard_error_leaves_the_rule() -> None:
    """The preference model leaves the length rule only when its cross-fitted gain exceeds one standard error
    of that gain (before, any gain above 0 did, and on unseen pairs such models lost to the rule). The error is
    the mean paired difference's, by hand: differences 1, 0, −1, 1 have SD √(2.75/3), so SE 0.479; as two
    conversations of two turns, their sums 1 and 0 around 0.25 × 2 give √(2 × 0.5) / 4 = 0.25."""
    from engine.builtin_plugins.methods.vibecheck.admission import Transfer, _mean_error

    assert not Transfer(0.62, 0.60, 0.03).kept and Transfer(0.64, 0.60, 0.03).kept
    differences = np.array([1.0, 0.0, -1.0, 1.0])
    assert _mean_error(differences, None) == pytest.approx(math.sqrt(2.75 / 3) / 2)
    assert _mean_error(differences, np.array([0, 0, 1, 1])) == pytest.approx(0.25)


def test_strengths_of_arrays_equal_strength_pair_by_pair() -> None:
    """The vectorised signed strength gives `strength`'s number for every pair, zeros and NaN included."""
    from engine import stats

    a = np.array([3.0, 0.0, -2.0, 1.0, np.nan, 0.0])
    b = np.array([1.0, 0.0, 2.0, -1.0, 1.0, 5.0])
    expected = [stats.strength(x, y) for x, y in zip(a, b, strict=True)]
    np.testing.assert_array_equal(stats.strengths(a, b), expected)


def test_gwet_ac1_by_hand_and_a_panel_that_agrees_one_way_is_not_dropped() -> None:
    """A = [+1, +1, 0, −1], B = [+1, 0, 0, −1]: pₐ = 3/4; the mean shares of −1, 0, +1 are 1/4, 3/8, 3/8, so
    pₑ = (1/4·3/4 + 2·3/8·5/8) / 2 = 21/64 and AC1 = (3/4 − 21/64) / (1 − 21/64) = 27/43. Two judges that give the
    same verdict on all but 2 of 100 pairs, 97 of them +1, have κ far below their agreement; a vibe is dropped
    for disagreeing judges only when κ and AC1 are both under the floor."""
    from engine.builtin_plugins.methods.vibecheck.keep import drop_reasons

    assert stats.gwet_ac1([[1, 1, 0, -1], [1, 0, 0, -1]]) == pytest.approx(27 / 43)
    one_way = [[1] * 97 + [0, 1, 1], [1] * 97 + [0, 0, 0]]
    kappa, ac1 = stats.agreement(one_way), stats.gwet_ac1(one_way)
    assert kappa < 0.5 < 0.97 < ac1
    assert not any("judges disagree" in r for r in drop_reasons(0.9, 9.0, 0.0, 0.2, 0.05, ac1))
    said = "judges disagree (κ 0.10, AC1 0.15 < 0.2 on training pairs)"
    assert drop_reasons(0.9, 9.0, 0.1, 0.2, 0.05, 0.15) == [said]
    assert drop_reasons(0.9, 9.0, 0.1, 0.2, 0.05) == ["judges disagree (κ 0.10 < 0.2 on training pairs)"]
