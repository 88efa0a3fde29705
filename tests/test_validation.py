"""People check the judges: labels files read right or refused where they are wrong, agreement and κ equal to a
hand count, people's leave-one-out agreement, and the prediction-powered separability against hand arithmetic
and in seeded simulations."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine import stats
from engine.analyze import people, people_labels
from engine.analyze.people_labels import HumanLabel
from engine.builtin_plugins.methods.vibecheck import validation
from engine.builtin_plugins.methods.vibecheck.between_people import human_human
from engine.builtin_plugins.methods.vibecheck.records import PairVerdicts
from engine.datasets import DatasetError


def _pairs(panel: list[int], judge: list[int] | None = None) -> list[PairVerdicts]:
    judge = judge or panel
    return [PairVerdicts(f"p{i}", "test", None, f"a{i}", f"b{i}", {"tone": nu}, {"tone": {"m": s}})
            for i, (nu, s) in enumerate(zip(panel, judge, strict=True))]


def _labels(values: list[int], labeller: str = "ann", split: str = "test") -> list[HumanLabel]:
    return [HumanLabel(f"p{i}", "tone", v, labeller, split) for i, v in enumerate(values)]


def test_agreement_and_kappa_equal_a_hand_count() -> None:
    """Ten pairs. The panel and a person agree on 7 (p_o = 0.7). The panel says +1 five times, 0 twice, −1
    three times; the person +1 four times, 0 three times, −1 three times; chance agreement
    p_e = (5·4 + 2·3 + 3·3) / 100 = 0.35, so κ = (0.7 − 0.35) / 0.65. The share's interval is Wilson's for 7 of
    10; κ has no interval below 50 prompts, where the bootstrap's covered 63–89% on a mostly tied vibe."""
    panel = [1, 1, 1, 1, 1, 0, 0, -1, -1, -1]
    person = [1, 1, 1, 0, -1, 0, 0, -1, -1, 1]
    assert sum(a == b for a, b in zip(panel, person, strict=True)) == 7
    row = people.agreement_with_people(_labels(person), validation.judge_verdicts(_pairs(panel), "tone", "panel"), {},
                               "tone", "panel", "test", seed=0)
    assert row.labels == 10 and row.agreement == pytest.approx(0.7)
    assert row.kappa == pytest.approx((0.7 - 0.35) / 0.65)
    assert (row.agreement_low, row.agreement_high) == stats.wilson(7, 10)
    assert row.kappa_low is None and row.kappa_high is None
    more = people.agreement_with_people(_labels(person * 5), validation.judge_verdicts(_pairs(panel * 5), "tone",
                                                                                        "panel"), {}, "tone",
                                        "panel", "test", seed=0)
    assert more.kappa == pytest.approx(row.kappa) and more.kappa_low < more.kappa < more.kappa_high


def test_people_agree_with_each_other_leave_one_out() -> None:
    """Two people on three pairs: they agree on p0 and p1 and not on p2, so each label matches the other's on 2
    of 3: 4/6. The panel, in each person's place: on p0 it matches both, on p1 neither, on p2 one of the two:
    3/6, below the people, but three pairs cannot tell a panel behind people from one as good: per pair the
    panel's shortfall is 0, −1 and +½, and its interval reaches both sides, so the labels are not enough."""
    labels = _labels([1, 0, 1]) + _labels([1, 0, -1], labeller="bob")
    pairs = _pairs([1, 1, 1])
    between = human_human(labels, validation.judge_verdicts(pairs, "tone", "panel"), "tone", "panel")
    assert between is not None and between.pairs == 3
    assert between.human == pytest.approx(4 / 6) and between.judge_agreement == pytest.approx(3 / 6)
    out = validation.validate(labels, pairs, {"tone": ["m"]}, {}, 0, ["f.csv"])
    assert "the panel agrees with people 50% of the time, people with each other 67%" in out.undecided["tone"]
    assert "tone" not in out.flagged and between.low < -0.1 and between.high > 0
    assert out.labellers == ["ann", "bob"]


def test_prediction_powered_separability_by_hand() -> None:
    """Eight pairs; people labelled p0–p3 (1, 0, 0, −1: mean 0) where the panel said 1, 1, 0, −1 (mean 1/4); on
    the four nobody labelled the panel says 1, 1, 1, 0 (mean 3/4). The panel's eight verdicts have variance 4/7
    and covary with the people's by 2/3 on the labelled four, so PPI++'s λ = (2/3) / ((1 + 4/4) · 4/7) = 7/12,
    and the estimate is 0 + 7/12 · (3/4 − 1/4) = 7/24."""
    pairs = _pairs([1, 1, 0, -1, 1, 1, 1, 0])
    panel = validation.judge_verdicts(pairs, "tone", "panel")
    labels = _labels([1, 0, 0, -1])
    corrected = people.corrected_separability(labels, panel, {}, "tone")
    assert corrected is not None and (corrected.pairs, corrected.labelled) == (8, 4)
    assert corrected.weight == pytest.approx(7 / 12) and corrected.estimate == pytest.approx(7 / 24)
    # the labelled part's variance is counted with two pseudo-values one step either side of its mean
    residual = np.array([1, 0, 0, -1]) - 7 / 12 * np.array([1, 1, 0, -1])  # 5/12, −7/12, 0, −5/12: mean −7/48
    steadied = np.r_[residual, -7 / 48 - 1, -7 / 48 + 1]
    variance = np.var(steadied, ddof=1) / 4 + (7 / 12) ** 2 * np.var([1, 1, 1, 0], ddof=1) / 4
    t = 3.182446  # the t quantile at 97.5% on 3 degrees of freedom (four labelled pairs)
    assert corrected.estimate - corrected.low == pytest.approx(t * math.sqrt(variance))  # 1.238: low −0.946
    assert corrected.high == 1  # 7/24 + 1.238 is past the verdicts' range
    assert corrected.labels_only == 0 and corrected.panel == pytest.approx(4 / 8)
    # the labels alone: t · √(Var(1, 0, 0, −1, −1, 1) / 4) = 1.42 either side, past the range both ways
    assert t * math.sqrt(np.var([1, 0, 0, -1, -1, 1], ddof=1) / 4) > 1
    assert (corrected.labels_low, corrected.labels_high) == (-1, 1)


def test_labels_that_all_agree_give_an_interval_of_some_width() -> None:
    """20 labels that all say 'tied', where the panel said 'tied' too: a plain variance of 0 made the interval
    [0, 0] (a mostly tied vibe draws such a sample one time in five); the steadied one keeps it open, and within
    the verdicts' range."""
    pairs = _pairs([0] * 20 + [0, 1] * 50)
    panel = validation.judge_verdicts(pairs, "tone", "panel")
    corrected = people.corrected_separability(_labels([0] * 20), panel, {}, "tone")
    assert corrected is not None and corrected.low < 0 < corrected.high and corrected.labels_low < 0
    assert corrected.low >= -1 and corrected.high <= 1


def test_prediction_powered_interval_covers_and_is_narrower_than_the_labels_alone() -> None:
    """300 seeded simulations through the real function: 400 pairs judged, a random 60 of them labelled; people
    agree with the panel 75% of the time. The 95% interval covers the people's true mean at least 90% of the
    time (the benchmark runs 1,000 on real labels), and is narrower than the labels-only interval on average;
    with a panel that predicts nothing it is no wider than the labels alone by more than a few percent."""
    covered, ratios, useless = 0, [], []
    for seed in range(300):
        rng = np.random.default_rng(seed)
        truth = rng.choice([-1, 0, 1], size=400, p=[0.2, 0.3, 0.5])
        chosen = rng.choice(400, 60, replace=False)
        labels = [HumanLabel(f"p{i}", "tone", int(truth[i]), "ann", "test") for i in chosen]
        for agree, out in ((0.75, ratios), (0.0, useless)):
            panel_values = np.where(rng.random(400) < agree, truth, rng.choice([-1, 0, 1], size=400))
            corrected = people.corrected_separability(
                labels, validation.judge_verdicts(_pairs(panel_values.tolist()), "tone", "panel"), {}, "tone")
            assert corrected is not None
            out.append(corrected.width_ratio)
            if agree:
                covered += corrected.low <= 0.3 <= corrected.high  # the true mean, 0.5 − 0.2
    assert covered >= 0.9 * 300, covered
    assert np.mean(ratios) < 0.85 and np.mean(useless) < 1.03, (np.mean(ratios), np.mean(useless))


@pytest.mark.parametrize(("row", "message"), [
    ({"label_tone": "a"}, r"labels\.jsonl:1: field 'id' is missing"),
    ({"id": "p0", "split": "<script>", "label_tone": "a"}, r"labels\.jsonl:1: field 'split' holds '<script>'"),
    ({"id": "p0", "label_tone": "maybe"}, r"labels\.jsonl:1: field 'label_tone' holds 'maybe': a, b or neither"),
    ({"id": "p0", "label_humour": "a"}, r"labels\.jsonl:1: field 'label_humour' names no vibe this analysis "
                                        r"measures \(tone\)"),
])
def test_a_bad_labels_file_is_refused_at_its_line_and_field(tmp_path: Path, row: dict, message: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(DatasetError, match=message):
        people_labels.read_labels(path, ["tone"], "a-model", "b-model")


def test_a_labels_file_reads_words_model_names_and_who_labelled(tmp_path: Path) -> None:
    path = tmp_path / "scout.csv"
    path.write_text("id,label_tone,split,labeller\np0,a,dev,ann\np1,B-Model,,\np2,neither,test,ann\np3,,test,ann\n")
    labels = people_labels.read_labels(path, ["tone"], "a-model", "b-model")
    assert [(x.pair, x.verdict, x.split, x.labeller) for x in labels] == [
        ("p0", 1, "dev", "ann"), ("p1", -1, "", "scout"), ("p2", 0, "test", "ann")]  # an empty value: no label
    assigned = people_labels.assign_splits(labels, {}, 0.5, 0)
    assert {x.split for x in assigned} <= {"dev", "test"} and assigned[0].split == "dev"


def test_a_labels_row_says_which_comparison_its_a_and_b_are(tmp_path: Path) -> None:
    """The label view writes each row's two models. A row of this comparison is read; one with its models the
    other way round is turned round (a word, not a model's name, which needs no turning); one of another
    comparison is skipped. Where the analysis makes several comparisons, a row that names none is refused:
    its a and b would otherwise be read against every comparison."""
    path = tmp_path / "labels.csv"
    path.write_text("id,label_tone,model_a,model_b\np0,a,x,y\np1,a,y,x\np2,x,y,x\np3,a,x,z\n")
    labels = people_labels.read_labels(path, ["tone"], "x", "y", several=True)
    assert [(label.pair, label.verdict) for label in labels] == [("p0", 1), ("p1", -1), ("p2", 1)]
    path.write_text("id,label_tone\np0,a\n")
    assert [label.verdict for label in people_labels.read_labels(path, ["tone"], "x", "y")] == [1]
    with pytest.raises(DatasetError, match=r"labels\.csv: row 1: fields 'model_a' and 'model_b' are missing: this "
                                           "analysis compares several pairs of models"):
        people_labels.read_labels(path, ["tone"], "x", "y", several=True)


SPEC = """\
name: people
models: {a: {provider: recorded}, b: {provider: recorded}}
judges: {m: {kind: metric, tolerance: 0.05}}
vibes:
  - {name: enthusiasm, low: calm, high: excited, metric: exclamations}
datasets:
  d:
    source: {path: d.jsonl}
    fields: {id: id, prompt: q, outputs: {a: a, b: b}}
analyses:
  vc:
    method: vibecheck
    dataset: d
    models: [a, b]
    judges: [m]
    validation: {files: [labels.csv]}
"""


def test_a_run_reads_the_labels_and_shows_the_judges_against_people(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Twenty prompts: A exclaims on the even ones, B on the odd ones. A person labels all twenty and gets four
    wrong; three labels name a prompt the run does not have. The page shows 16/20 agreement and the
    unmatched count, and the list of judges κ = (0.8 − 0.5) / 0.5 (each side says a and b ten times each); the
    JSON holds the same numbers."""
    from engine.pipeline import run_spec

    rows = [{"id": f"p{i}", "q": f"Say something {i}", "a": "Great news!" if i % 2 == 0 else "Fine news.",
             "b": "Fine news." if i % 2 == 0 else "Great news!"} for i in range(20)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    lines = ["id,label_enthusiasm,split,labeller"]
    lines += [f"p{i},{('b' if i % 2 == 0 else 'a') if i < 4 else ('a' if i % 2 == 0 else 'b')},test,ann"
              for i in range(20)]
    lines += ["ghost-1,a,test,ann", "ghost-2,b,test,ann", "<img src=x onerror=alert(1)>,a,test,ann"]
    (tmp_path / "labels.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "spec.yaml").write_text(SPEC)
    _, results, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
    (vc,) = results.of("vibecheck")
    (row,) = [a for a in vc.validation.agreements if a.judge == "panel"]
    assert (row.split, row.labels, row.agreement) == ("test", 20, pytest.approx(16 / 20))
    assert vc.validation.unmatched == 3
    said = capsys.readouterr().err  # on the console too, each with where it is and its id
    assert "vc, a vs b: 3 label(s) name a pair this comparison does not have and are left out: " in said
    assert "labels.csv: row 21: 'ghost-1'" in said and "'ghost-2'" in said
    page = (run_dir / "index.html").read_text()
    assert "People check the judges" in page and "3 label(s) name a pair this comparison does not have" in page
    assert "80.0%" in page and "<img src=x" not in page
    assert "Against 1 labeller(s)' labels:" in page  # the one-line reading, near the top of the section
    # all 20 labels are test labels: 30 more pairs reach the 50 prompts κ's interval is given from
    assert "label at least 30 more pairs for κ between the panel and people to have an interval at all" in page
    # the judge list; "Great news!" is the longer answer, so the rule "the longer answer wins" agrees as often
    assert ("agrees with people on enthusiasm: 80% of 20 test labels, κ 0.60; no better than a trivial rule on "
            "the same labels, vc, a vs b") in page
    written = json.loads((run_dir / "vc" / "validation.json").read_text())
    assert written["unmatched"] == 3 and written["agreements"][0]["agreement"] == pytest.approx(0.8)
    vibe_page = (run_dir / "vibes" / "vc-enthusiasm.html").read_text()
    assert "Against people" in vibe_page and "80.0%" in vibe_page


def test_the_pairs_to_label_for_a_kappa_of_plus_or_minus_a_tenth_by_hand() -> None:
    """κ [0.30, 0.70] (±0.20) on 40 test labels, with 40 dev labels beside them: the interval narrows as 1/√n, so
    ±0.10 takes 4 × 40 = 160 test labels, 120 more, and half of newly labelled pairs are test pairs: 240 pairs. The
    widest vibe decides; one already within ±0.1 adds nothing."""
    from engine.analyze.people import PeopleAgreement
    from engine.builtin_plugins.methods.vibecheck.records import Validation
    from engine.builtin_plugins.methods.vibecheck.validation import pairs_to_narrow

    def row(vibe: str, split: str, low: float, high: float) -> PeopleAgreement:
        return PeopleAgreement(vibe, "panel", split, 40, 0.8, 0.7, 0.9, (low + high) / 2, low, high)

    out = Validation(labellers=["ann"], judges={"tone": ["m"], "warmth": ["m"]},
                     agreements=[row("tone", "dev", 0.3, 0.7), row("tone", "test", 0.3, 0.7),
                                 row("warmth", "dev", 0.5, 0.6), row("warmth", "test", 0.55, 0.65)])
    assert pairs_to_narrow(out).startswith("label about 240 more pairs to narrow κ between the panel and people to "
                                           "±0.1 (now ±0.20 on tone, the widest")
    out.agreements = out.agreements[2:]
    assert pairs_to_narrow(out) == ""


def test_a_run_against_a_reference_reads_each_comparisons_labels(tmp_path: Path) -> None:
    """Three models compared with `a` on twenty prompts: b exclaims where a does not, c never does. One labels
    file holds a person's labels for both comparisons, rows naming their two models (c's the other way round:
    "a" there is model a, not c). Each comparison reads only its own rows: b–a agrees on all 20, c–a on the 10
    where a exclaims (the person says neither on the other 10, where the panel does too: 20 of 20) and the
    model profile pages show each one's table."""
    from engine.pipeline import run_spec

    rows = [{"id": f"p{i}", "q": f"Say something {i}", "a": "Great news!" if i % 2 == 0 else "Fine news.",
             "b": "Fine news." if i % 2 == 0 else "Great news!", "c": "Fine news."} for i in range(20)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    lines = ["id,label_enthusiasm,split,labeller,model_a,model_b"]
    lines += [f"p{i},{'b' if i % 2 == 0 else 'a'},test,ann,b,a" for i in range(20)]
    lines += [f"p{i},{'a' if i % 2 == 0 else 'neither'},test,ann,a,c" for i in range(20)]
    (tmp_path / "labels.csv").write_text("\n".join(lines) + "\n")
    spec = (SPEC.replace("b: {provider: recorded}}", "b: {provider: recorded}, c: {provider: recorded}}")
            .replace("outputs: {a: a, b: b}", "outputs: {a: a, b: b, c: c}")
            .replace("models: [a, b]", "models: [a, b, c]\n    reference: a"))
    (tmp_path / "spec.yaml").write_text(spec)
    _, results, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
    (profile,) = results.of("profiles")
    for vc in profile.comparisons:
        (row,) = [a for a in vc.validation.agreements if a.judge == "panel"]
        assert (vc.model_a, row.labels, row.agreement, vc.validation.unmatched) == (vc.model_a, 20, 1.0, 0)
        page = (run_dir / "profiles" / f"vc-{vc.model_a}.html").read_text()
        assert "People check the judges" in page and "100.0%" in page


def open_label_view(p: Any, run_dir: Path, labeller: str, size: int, seed: int | None = None) -> tuple[Any, Any]:
    """Headless Chromium on the run's label view (its `vc` analysis), a sample of `size` pairs begun by
    `labeller` (with `seed`, where given): the browser and the page."""
    from test_report import BROWSER_ARGS, CHROMIUM

    browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
    page = browser.new_page(accept_downloads=True)
    page.goto((run_dir / "explore" / "vc-label.html").as_uri())
    page.wait_for_selector("body[data-ready='1']")
    page.fill("input[name=labeller]", labeller)
    page.fill("input[name=size]", str(size))
    if seed is not None:
        page.fill("input[name=seed]", str(seed))
    page.click("#begin")
    return browser, page


def download_labels(page: Any, size: int, path: Path) -> None:
    """Once all `size` pairs are labelled, the labels file the view downloads, saved at `path`."""
    page.wait_for_function(f"document.getElementById('label-status').textContent.startsWith('All {size}')")
    with page.expect_download() as download:
        page.click("#download")
    download.value.save_as(path)


def test_twenty_pairs_labelled_by_keyboard_in_the_label_view_are_read_back_by_a_run(tmp_path: Path) -> None:
    """In headless Chromium, from disk: the label view draws 20 of a run's 40 pairs, shows them blind, takes a
    label per pair from the keyboard (1, 2 or 0 for neither), reveals the panel only after it (and takes it off
    the screen again when ← undoes a label, which left the undone pair's verdict showing), and downloads
    the labels; a run whose spec reads that file reports agreement and κ equal to a hand count of the file
    against the panel's verdicts, split by split."""
    from test_report import CHROMIUM

    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed (make install-test installs it)")
    from playwright.sync_api import sync_playwright

    from engine.pipeline import run_spec

    rows = [{"id": f"p{i}", "q": f"Say something {i}", "a": "Great news!" if i % 3 else "Fine news.",
             "b": "Fine news." if i % 2 else "Good news!!"} for i in range(40)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "spec.yaml").write_text(SPEC.replace("    validation: {files: [labels.csv]}\n", ""))
    _, results, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
    (vc,) = results.of("vibecheck")
    panel = {p.item_id: p.nu["enthusiasm"] for p in vc.pairs}
    with sync_playwright() as p:
        browser, page = open_label_view(p, run_dir, "ann", 20, 3)
        seen = []
        for k in range(20):
            card = page.wait_for_selector(f"article.labelling[data-k='{k}']")
            seen.append(card.get_attribute("data-id"))
            assert "panel said" not in page.inner_text("#label-card")  # nothing of the panel before the label
            page.keyboard.press("120"[k % 3])
            assert f"Pair {k + 1}, enthusiasm: you said" in page.inner_text("#reveal")
            if k == 0:  # ← undoes it: the pair comes back blind, its panel verdict off the screen
                page.keyboard.press("ArrowLeft")
                page.wait_for_function("document.getElementById('reveal').textContent.includes('undone')")
                page.wait_for_selector("article.labelling[data-k='0']")
                assert "panel said" not in page.inner_text("#reveal") + page.inner_text("#label-card")
                page.keyboard.press("1")
                assert "Pair 1, enthusiasm: you said" in page.inner_text("#reveal")
        download_labels(page, 20, tmp_path / "labels.csv")
        browser.close()
    assert len(set(seen)) == 20 and set(seen) <= set(panel)
    header = (tmp_path / "labels.csv").read_text().splitlines()[0]
    assert header == "id,label_enthusiasm,split,labeller,labelled_at,run,model_a,model_b,stratum"  # which comparison
    labels = people_labels.read_labels(tmp_path / "labels.csv", ["enthusiasm"], "a", "b", several=True)
    assert len(labels) == 20 and {x.labeller for x in labels} == {"ann"}
    assert {x.split for x in labels} == {"dev", "test"}
    (tmp_path / "spec.yaml").write_text(SPEC)
    _, results, _ = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True,
                             report=False)
    (vc,) = results.of("vibecheck")
    for split in ("dev", "test"):
        mine = [(x.verdict, panel[x.pair]) for x in labels if x.split == split]
        observed = sum(h == j for h, j in mine) / len(mine)
        chance = sum(sum(h == v for h, _ in mine) * sum(j == v for _, j in mine) for v in (-1, 0, 1)) / len(mine) ** 2
        (row,) = [a for a in vc.validation.agreements if a.split == split]
        assert row.labels == len(mine) and row.agreement == pytest.approx(observed)
        assert row.kappa == pytest.approx((observed - chance) / (1 - chance))


def test_labels_a_dataset_ships_in_its_columns_are_read_as_people(tmp_path: Path) -> None:
    """Two people's verdicts in the dataset's own columns, as VibeCheck's CNN/DM files write them (scores
    [A's, B's]): read with `validation: columns:`, each column its labeller, so people's leave-one-out agreement
    is there beside the panel's; a value that is none of the forms is refused at its line."""
    from engine.pipeline import run_spec

    rows = [{"id": f"p{i}", "q": f"Say something {i}", "a": "Great news!" if i % 2 == 0 else "Fine news.",
             "b": "Fine news." if i % 2 == 0 else "Great news!",
             "ann": "[1.0, -1.0]" if i % 2 == 0 else "[-1.0, 1.0]",
             "bob": "[1.0, -1.0]" if i % 4 == 0 else "[0.0, 0.0]"} for i in range(12)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    columns = "validation: {columns: [{vibe: enthusiasm, column: ann}, {vibe: enthusiasm, column: bob, labeller: b}]}"
    (tmp_path / "spec.yaml").write_text(SPEC.replace("validation: {files: [labels.csv]}", columns))
    _, results, _ = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True,
                             report=False)
    (vc,) = results.of("vibecheck")
    assert vc.validation.labellers == ["ann", "b"]
    (between,) = vc.validation.human_human
    # ann matches the panel everywhere; bob on p0, p4, p8 (3 of 12) and says neither elsewhere: people agree on
    # 3 of 12 pairs (6 of 24 labels), the panel in a person's place: against bob's label 3/12, against ann's 12/12
    assert between.human == pytest.approx(6 / 24) and between.judge_agreement == pytest.approx(15 / 24)
    rows[5]["bob"] = "[1.0; -1.0]"
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DatasetError, match=r"d\.jsonl:6: field 'bob' holds '\[1\.0; -1\.0\]'"):
        run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True, report=False)


def _paired_labels(rng: np.random.Generator, n: int, kappa: float, labellers: int = 1) -> tuple[list, list]:
    """n pairs whose panel verdict is each labeller's label with probability `kappa`, else a fresh draw from the
    same marginals (0.3, 0.4, 0.3): Cohen's κ between the panel and a labeller is exactly `kappa`, and people
    agree with each other as the panel agrees with them."""
    truth = rng.choice([-1, 0, 1], n, p=[0.3, 0.4, 0.3])

    def copy(of: np.ndarray) -> np.ndarray:
        return np.where(rng.random(n) < kappa, of, rng.choice([-1, 0, 1], n, p=[0.3, 0.4, 0.3]))

    panel = copy(truth)
    labels = [HumanLabel(f"p{i}", "tone", int(v), f"l{k}", "test") for k in range(labellers)
              for i, v in enumerate(copy(truth) if labellers > 1 else truth)]
    return labels, _pairs([int(v) for v in panel])


def _states(rng: np.random.Generator, draws: int, n: int, kappa: float, labellers: int = 1) -> dict[str, int]:
    out = {"flagged": 0, "as_people": 0, "undecided": 0}
    for _ in range(draws):
        done = validation.validate(*_paired_labels(rng, n, kappa, labellers), {"tone": ["m"]}, {}, 0, ["f.csv"])
        out[next(k for k in out if "tone" in getattr(done, k))] += 1
    return out


def test_the_panel_is_read_against_people_on_evidence_in_three_states() -> None:
    """Seeded label sets. One labeller, 20 labels, a panel of κ = 0.5 with them (above the 0.4 floor): the point
    estimate below 0.4 flagged it 29% of the time; now it is flagged only when κ's interval lies below 0.4, and
    κ has no interval below 50 prompts, so every set says there are not enough labels to tell; at 50, most still
    do, and at most 5% are flagged. 200 labels tell: κ = 0.1 reads unlike people and κ = 0.8 as people read it.
    Two labellers with a panel exactly as good as either (200 pairs): comparing point estimates flagged about half
    of such panels; on the interval of the difference, at most 5%."""
    rng = np.random.default_rng(21)
    assert _states(rng, 50, 20, 0.5)["undecided"] == 50
    fifty = _states(rng, 200, 50, 0.5)
    assert fifty["flagged"] <= 10 and fifty["undecided"] > 100
    assert _states(rng, 40, 200, 0.1)["flagged"] >= 38
    assert _states(rng, 40, 200, 0.8)["as_people"] >= 38
    parity = _states(rng, 100, 200, 0.6, labellers=2)
    assert parity["flagged"] <= 5 and parity["as_people"] > 0


def test_labels_needed_by_hand() -> None:
    """κ 0.5 [0.3, 0.7] on 100 labels against the line at 0.4: the lower half-width 0.2 is twice the distance 0.1,
    so the interval stops reaching the line at 100 · 2² = 400 labels: 300 more."""
    assert "about 300 more labels" in validation.labels_needed(100, 0.5, 0.3, 0.7, 0.4)
    assert "about 300 more labels" in validation.labels_needed(100, 0.3, 0.1, 0.5, 0.4)
    assert "sits on the line" in validation.labels_needed(100, 0.4, 0.2, 0.6, 0.4)


def test_judges_stand_beside_the_trivial_rules_on_the_same_test_labels() -> None:
    """Four test labels (a, a, b, neither) and two dev labels (b, b). The longer answer (A on p0, p1 and p3, B on
    p2) matches three of four: 75%; the dev labels' majority (b) matches one: 25%. A judge that says a on every
    pair matches two (50%): no better than the longer-answer rule, and marked so."""
    pairs = [PairVerdicts(f"p{i}", "test", None, f"a{i}", f"b{i}", {"tone": 1}, {"tone": {"m": 1}},
                          chars=[20, 10] if i != 2 else [10, 20]) for i in range(6)]
    labels = _labels([1, 1, -1, 0]) + [HumanLabel(f"p{i}", "tone", -1, "ann", "dev") for i in (4, 5)]
    out = validation.validate(labels, pairs, {"tone": ["m"]}, {}, 0, ["f.csv"])
    rules = {r.judge: r.agreement for r in out.baselines}
    assert rules == {"longer answer wins": pytest.approx(0.75), "majority class (dev)": pytest.approx(0.25)}
    assert "no better than the rule 'longer answer wins' (75.0%)" in out.below_rules["tone/panel"]


def test_the_label_view_keeps_a_conversations_turns_on_one_side_of_the_split(tmp_path: Path) -> None:
    """12 conversations of three turns each (36 pairs): the 18 pairs the label view draws fall on dev or test
    by conversation, so no test label sits in a conversation whose other turns teach the learned judge (the
    view split them pair by pair: test agreement 0.451 against 0.426 on new conversations)."""
    from test_report import CHROMIUM

    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed (make install-test installs it)")
    from playwright.sync_api import sync_playwright

    from engine.pipeline import run_spec

    for model, answer in (("a", "Great news! Here it is."), ("b", "Fine news.")):
        rows = [{"id": f"c{n}", "model": model, "messages": [
            m for k in range(3) for m in ({"role": "user", "content": f"question {n}.{k}"},
                                          {"role": "assistant", "content": f"{answer} ({n}.{k})" + "!" * (n % 3)})]}
                for n in range(12)]
        (tmp_path / f"{model}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "spec.yaml").write_text("""\
name: talks
models: {a: {provider: recorded}, b: {provider: recorded}}
judges: {m: {kind: metric}}
datasets:
  t: {format: openai-messages, unit: turn, source: {paths: [a.jsonl, b.jsonl]}}
vibes: [{name: enthusiasm, low: calm, high: excited, metric: exclamations}]
analyses:
  vc: {method: vibecheck, dataset: t, models: [a, b], judges: [m]}
""")
    _, _, run_dir = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
    with sync_playwright() as p:
        browser, page = open_label_view(p, run_dir, "ann", 18, 5)
        for k in range(18):
            page.wait_for_selector(f"article.labelling[data-k='{k}']")
            page.keyboard.press("120"[k % 3])
        download_labels(page, 18, tmp_path / "labels.csv")
        browser.close()
    labels = people_labels.read_labels(tmp_path / "labels.csv", ["enthusiasm"], "a", "b", several=True)
    sides: dict[str, set[str]] = {}
    for label in labels:
        sides.setdefault(label.pair.split("#")[0], set()).add(label.split)
    assert len(labels) == 18 and {s for found in sides.values() for s in found} == {"dev", "test"}
    assert all(len(found) == 1 for found in sides.values()), sides
