"""The VibeCheck analysis end to end on real data: what it reports is held out, on pairs, beside baselines,
and says who wrote the labels; labels that name no model stop `vibe validate`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

# its runs are built once (session-scoped: a worker runs other files between this one's tests, and a module
# scope would build them again after each): every test of this file on one pytest-xdist worker
pytestmark = pytest.mark.xdist_group("vibecheck-heldout")

SPEC = """\
name: friendly-cold-heldout
models: {{friendly: {{provider: recorded}}, cold: {{provider: recorded}}}}
judges:
  strict: {{kind: metric, tolerance: 0.05}}
  lenient: {{kind: metric, tolerance: 0.5}}
datasets:
  d:
    source: {{path: {data}/vibecheck/friendly_and_cold_sample.csv}}
    fields: {{prompt: question, preference: preference, outputs: {{friendly: friendly, cold: cold}}}}
    labels: {{source: llm-judge, description: "a planted-vibe sample labelled for testing"}}
vibes:
  - {{name: warmth, low: neutral, high: warm, metric: warmth}}
  - {{name: enthusiasm, low: calm, high: excited, metric: exclamations}}
  - {{name: verbosity, low: short, high: long, metric: length_words}}
analyses:
  vibecheck: {{dataset: d, models: [friendly, cold], judges: [strict, lenient], split: {{train: 0.5, seed: 1}}}}
"""


def run(tmp_path: Path, text: str, *args: str) -> subprocess.CompletedProcess[str]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    run_dir = ["--out", str(tmp_path / "run"), "--quiet"]
    extra = ["--cache", str(tmp_path / "c.sqlite"), *run_dir] if args[0] == "run" else []
    return subprocess.run([sys.executable, "-m", "engine", *args, str(spec), *extra], capture_output=True, text=True)


@pytest.fixture(scope="session")
def finished(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    tmp_path = tmp_path_factory.mktemp("heldout")
    out = run(tmp_path, SPEC.format(data=shared_data), "run")
    assert out.returncode == 0, out.stderr
    return tmp_path / "run"


def test_separability_and_kappa_are_reported_on_the_test_split(finished: Path) -> None:
    pairs = [json.loads(line) for line in (finished / "vibecheck" / "pairs.jsonl").read_text().splitlines()]
    vibes = {v["name"]: v for v in map(json.loads, (finished / "vibecheck" / "vibes.jsonl").read_text().splitlines())}
    test = [p for p in pairs if p["split"] == "test"]
    train = [p for p in pairs if p["split"] == "train"]
    assert len(test) == len(train) == 25
    warmth = vibes["warmth"]
    assert warmth["separability"] == pytest.approx(np.mean([p["nu"]["warmth"] for p in test]))
    assert warmth["separability_train"] == pytest.approx(np.mean([p["nu"]["warmth"] for p in train]))
    assert warmth["n_test"] == 25 and warmth["n_train"] == 25
    # κ between the two metric judges on the test pairs, checked against scikit-learn's implementation
    strict = [p["by_judge"]["warmth"]["strict"] for p in test]
    lenient = [p["by_judge"]["warmth"]["lenient"] for p in test]
    assert warmth["kappa"] == pytest.approx(cohen_kappa_score(strict, lenient))
    low, high = warmth["separability_train_ci"]
    assert low <= warmth["separability_train"] <= high


def test_accuracies_stand_beside_their_baselines_on_pairs(finished: Path) -> None:
    regressions = json.loads((finished / "vibecheck" / "regressions.json").read_text())
    mm, pp = regressions["model_matching"], regressions["preference"]
    assert mm["n_test"] == 25 and mm["n_train"] == 25  # pairs, not pairs × display orders
    rules = {"longer answer wins", "length logistic fit", "majority class"}
    assert {b["rule"] for b in mm["baselines"]} == rules
    assert {b["rule"] for b in pp["baselines"]} == rules | {"vibes alone"}
    assert pp["features"][0] == "length rule (±1)"
    for fit in (mm, pp):
        assert fit["ci_low"] <= fit["test_accuracy"] <= fit["ci_high"]
        assert fit["gain_ci_low"] <= fit["gain_over_rule"] <= fit["gain_ci_high"]
        assert "Firth" in fit["estimator"]
        assert len(fit["p_adjusted"]) == len(fit["p_values"]) == len(fit["tested"]) == len(fit["features"])
        # every p-value says which pairs it was computed on and which correction applies
        assert fit["inference"] == "held-out refit" and "Holm" in fit["correction"]
        assert "claims this comparison makes about its vibes" in fit["correction"]  # the family: one comparison
        assert "25 test pairs" in fit["correction"]
        assert len(fit["train_coefficients"]) == len(fit["features"])
    assert regressions["labels"] == {"source": "llm-judge", "description": "a planted-vibe sample labelled for testing"}
    assert all(fit["train_coefficients_are"].startswith("descriptive") for fit in (mm, pp))
    box = regressions["black_box_ceiling"]
    assert (box["n_train"], box["n_test"]) == (25, 25) and box["label"].startswith("descriptive")
    assert box["ci_low"] <= box["accuracy"] <= box["ci_high"]
    if box["accuracy"] > 0.5:
        assert box["captured"] == pytest.approx((mm["test_accuracy"] - 0.5) / (box["accuracy"] - 0.5))
    # the share is a ratio of two noisy accuracies with no interval: the page calls it a point estimate
    page = (finished / "vibecheck-regressions.html").read_text()
    if box["captured"] is not None and box["captured"] <= 1:
        assert "of its accuracy above 50% (a point estimate, with no interval" in page


def test_the_black_box_ceiling_is_fitted_on_the_training_pairs_alone(shared_data: Path) -> None:
    """Friendly and cold answers: the classifier is fitted on 30 training pairs. Showing it the test pairs
    with their labels shuffled (each pair's order flipped at random) changes nothing it learned, and turns
    each flipped pair's right answer into a wrong one."""
    import csv

    from engine.builtin_plugins.methods.vibecheck.ceiling import ceiling, fit

    with (shared_data / "vibecheck" / "friendly_and_cold_sample.csv").open(encoding="utf-8") as fh:
        pairs = [(row["friendly"], row["cold"]) for row in csv.DictReader(fh)]
    train, test = pairs[:30], pairs[30:]
    first, second = fit(train), fit(list(train))
    assert first is not None and second is not None
    assert np.array_equal(first.coefficients, second.coefficients)
    assert np.array_equal(first.idf, second.idf)
    flips = np.random.default_rng(0).random(len(test)) < 0.5
    shuffled = [(b, a) if flip else (a, b) for (a, b), flip in zip(test, flips, strict=True)]
    decision = first.decision(test)
    assert np.array_equal(first.decision(shuffled), np.where(flips, -decision, decision))
    plain, mixed = ceiling(train, test, None), ceiling(train, shuffled, None)
    assert plain is not None and mixed is not None and plain.n_train == 30 and plain.n_test == len(test)
    right = np.where(decision > 0, 1.0, np.where(decision == 0, 0.5, 0.0))
    assert plain.accuracy == pytest.approx(right.mean())
    assert mixed.accuracy == pytest.approx(np.where(flips, 1 - right, right).mean())


def test_the_page_says_who_wrote_the_labels(finished: Path) -> None:
    index = (finished / "index.html").read_text()
    regressions = (finished / "vibecheck-regressions.html").read_text()
    assert "which answer an LLM judge preferred" in index and "people preferred" not in index
    assert "Preference labels: llm-judge (a planted-vibe sample labelled for testing)" in index
    assert "did an LLM judge prefer friendly" in regressions
    assert "longer answer wins" in index and "majority class" in index
    assert "held-out refit" in index and "Inference: held-out refit" in regressions
    assert "not adjusted for the" in index or "the interval is the vibe's own" in index  # beside corrected tests


def test_labels_that_name_no_model_are_a_validation_error(tmp_path: Path, shared_data: Path) -> None:
    """The labels say 'friendly'/'cold' but the models are called 'warm'/'terse' and nothing maps them."""
    text = SPEC.format(data=shared_data).replace("{friendly: {provider: recorded}, cold: {provider: recorded}}",
                                                 "{warm: {provider: recorded}, terse: {provider: recorded}}").replace(
        "outputs: {friendly: friendly, cold: cold}", "outputs: {warm: friendly, terse: cold}").replace(
        "models: [friendly, cold]", "models: [warm, terse]")
    out = run(tmp_path, text, "validate")
    assert out.returncode == 2, out.stdout
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "preference: preference" in row)
    assert f"spec.yaml:{line}:" in out.stderr and "datasets.d.fields.preference" in out.stderr
    assert "'friendly' (44 rows, the first at " in out.stderr and "'cold' (6 rows" in out.stderr
    assert "friendly_and_cold_sample.csv: row 1)" in out.stderr
    assert "preference_values: {'friendly': <model or tie>" in out.stderr
    mapped = text.replace("    labels:", "    preference_values: {friendly: warm, cold: terse}\n    labels:")
    assert run(tmp_path, mapped, "validate").returncode == 0


def test_the_page_says_when_a_model_only_equals_the_majority_class(finished: Path) -> None:
    """Beside each regression's accuracy, the page warns when the model does no better than always naming the
    training majority on the same test pairs, and when its whole interval lies below chance."""
    regressions = json.loads((finished / "vibecheck" / "regressions.json").read_text())
    page = (finished / "vibecheck-regressions.html").read_text()
    for key in ("model_matching", "preference"):
        fit = regressions[key]
        majority = next(b for b in fit["baselines"] if b["rule"] == "majority class")
        expected = fit["test_accuracy"] <= majority["accuracy"]
        said = f"No better than always predicting the training majority ({100 * majority['accuracy']:.1f}%"
        assert (said in page) == expected, (key, fit["test_accuracy"], majority)
        assert (said in (finished / "index.html").read_text()) == expected  # on the card too
    assert ("Below chance" in page) == any(regressions[k]["ci_high"] < 0.5 for k in ("model_matching", "preference"))


def test_the_two_model_page_says_who_won_by_the_labels(finished: Path, shared_data: Path) -> None:
    """The page said what differs but never who won: it now opens with model A's share of the labelled prompts
    (a tie half) and its length-controlled twin, each with its interval, equal to a hand count of the file."""
    import csv

    rows = list(csv.DictReader((shared_data / "vibecheck" / "friendly_and_cold_sample.csv").open()))
    labelled = [r["preference"] for r in rows if r["preference"] in ("friendly", "cold", "tie")]
    share = (sum(p == "friendly" for p in labelled) + 0.5 * sum(p == "tie" for p in labelled)) / len(labelled)
    index = (finished / "index.html").read_text()
    assert f"By an LLM judge's labels, <span class=\"model-a\">friendly</span> wins\n<b>{share:.1%}</b>" in index
    assert f"of {len(labelled)} labelled prompts" in index and "length-controlled" in index
