"""The learned judge (`kind: learned`): it recovers a verdict people give by a known rule of the features, its
reported agreement on test labels is a hand count of verdicts it was never fitted to, and a spec that gives
it nothing to learn from is refused where it names it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.api.judging import PairToFit
from engine.builtin_plugins.judges.learned.pairs import LearnedSettings, fit
from engine.spec.load import SpecError, load_spec

TOPICS = ("rivers", "bread", "chess", "comets", "bees", "glaciers", "violins", "tides", "lichens", "kites")
SENTENCES = ("{t} are older than most people think.", "Nobody agrees on how {t} began.",
             "The study of {t} needs patience.", "Some say {t} shaped whole towns.", "Few guides explain {t} well.",
             "Children often ask about {t}.", "Old books on {t} still sell.", "A museum of {t} opened last year.")


def _answer(rng: np.random.Generator, topic: str, sentences: int) -> str:
    return " ".join(SENTENCES[k].format(t=topic).capitalize() for k in rng.integers(0, len(SENTENCES), sentences))


def _people(rng: np.random.Generator, a: str, b: str, noise: float) -> tuple[int, int]:
    """The rule people follow (the longer answer sits higher, by more than a tenth of the two in words; else
    neither), and their label: the rule's verdict, or with probability `noise` any of the three at random."""
    wa, wb = len(a.split()), len(b.split())
    strength = (wa - wb) / (wa + wb)
    truth = int(np.sign(strength)) if abs(strength) > 0.1 else 0
    return truth, (int(rng.integers(-1, 2)) if rng.random() < noise else truth)


def test_it_recovers_a_rule_people_follow_within_three_points_of_the_rule_itself() -> None:
    """1,000 prompts, 600 of them development-labelled, 400 test-labelled; labels follow the rule with 15% noise.
    The rule's own agreement with the test labels is the ceiling; the judge, fitted to the development labels
    alone, comes within 3 points of it on the test labels."""
    rng = np.random.default_rng(7)
    # answers drawn from a pool of 24 per topic (four of each length), so that 1,000 pairs embed 240 texts
    pool = {t: [_answer(rng, t, 1 + k % 6) for k in range(24)] for t in TOPICS}
    pairs, test_truth, test_labels = [], {}, {}
    for n in range(1000):
        topic = TOPICS[n % len(TOPICS)]
        a, b = (pool[topic][k] for k in rng.choice(24, 2, replace=False))
        truth, label = _people(rng, a, b, 0.15)
        dev = n < 600
        pairs.append(PairToFit(f"Tell me about {topic}.", a, b, None, f"u{n}", (label,) if dev else ()))
        if not dev:
            test_truth[n], test_labels[n] = truth, label
    fitted = fit(pairs, seed=0, settings=LearnedSettings())
    ceiling = np.mean([test_truth[n] == test_labels[n] for n in test_labels])
    learned = np.mean([fitted.scores[n] == test_labels[n] for n in test_labels])
    assert ceiling > 0.8 and learned >= ceiling - 0.03, (learned, ceiling)
    assert fitted.crossfitted == [n < 600 for n in range(1000)]
    assert fitted.units == 600 and fitted.labels == 600 and fitted.strength is not None


def test_too_few_labels_give_no_verdicts_and_say_why() -> None:
    pairs = [PairToFit("q", "a b", "a", None, f"u{n}", (1,) if n < 10 else ()) for n in range(40)]
    fitted = fit(pairs, seed=0, settings=LearnedSettings(min_labels=30))
    assert fitted.scores == [None] * 40 and "10 development-labelled prompts" in fitted.why_none


SPEC = """\
name: learned
models: {a: {provider: recorded}, b: {provider: recorded}}
judges: {taught: {kind: learned, min_labels: 20}}
vibes:
  - {name: fuller, low: a brief answer, high: a fuller answer}
datasets:
  d:
    source: {path: d.jsonl}
    fields: {id: id, prompt: q, outputs: {a: a, b: b}}
analyses:
  vc:
    method: vibecheck
    dataset: d
    models: [a, b]
    judges: [taught]
    validation: {files: [labels.csv]}
"""


def _run(tmp_path: Path, flip_test: bool) -> tuple[Any, dict[str, int], dict[str, int]]:
    """A run of 120 prompts: the first 80 labelled on dev, the last 40 on test (flipped when asked): the judge's
    verdicts, the test labels as written."""
    from engine.pipeline import run_spec

    rng = np.random.default_rng(3)
    rows, labels = [], {}
    for n in range(120):
        topic = TOPICS[n % len(TOPICS)]
        a, b = _answer(rng, topic, int(rng.integers(1, 7))), _answer(rng, topic, int(rng.integers(1, 7)))
        rows.append({"id": f"p{n}", "q": f"Tell me about {topic}.", "a": a, "b": b})
        labels[f"p{n}"] = _people(rng, a, b, 0.1)[1]
    test = {p: (-y if flip_test else y) for p, y in labels.items() if int(p[1:]) >= 80}
    word = {1: "a", -1: "b", 0: "neither"}
    tmp_path.mkdir()
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "labels.csv").write_text("id,label_fuller,split,labeller\n" + "".join(
        f"{p},{word[test.get(p, y)]},{'test' if p in test else 'dev'},ann\n" for p, y in labels.items()))
    (tmp_path / "spec.yaml").write_text(SPEC)
    _, results, _ = run_spec(tmp_path / "spec.yaml", tmp_path / "run", tmp_path / "c.sqlite", quiet=True,
                             report=not flip_test)
    (vc,) = results.of("vibecheck")
    verdicts = {p.item_id: p.by_judge["fuller"]["taught"] for p in vc.pairs}
    return vc, verdicts, test


def test_a_run_reports_its_agreement_on_test_labels_it_never_learned_from(tmp_path: Path) -> None:
    """Through `vibe run`: the plan asks the learned judge nothing, its verdicts are on every pair, the test
    agreement the run reports is the hand count of verdict == label over the 40 test labels, and a run whose
    test labels are all turned round gives the very same verdicts (it never saw them)."""
    vc, verdicts, test = _run(tmp_path / "one", flip_test=False)
    assert None not in verdicts.values() and len(verdicts) == 120
    (row,) = [a for a in vc.validation.agreements if a.split == "test"]
    assert row.labels == 40
    assert row.agreement == pytest.approx(sum(verdicts[p] == y for p, y in test.items()) / 40)
    assert any("taught on fuller (learned from people's labels): fitted to 80 development labels" in note
               for note in vc.notes)
    page = (tmp_path / "one" / "run" / "index.html").read_text()
    assert "dev (cross-fitted)" in page and "its test rows are labels it never saw" in page
    assert "rule: longer answer wins" in page and "rule: majority class (dev)" in page
    # it asks the plan nothing, yet it is in the list of judges with its agreement with people
    judges = page[page.index("<h2>Judges</h2>"):]
    assert "<b>taught</b>" in judges and "agrees with people on fuller" in judges
    vibe_page = (tmp_path / "one" / "run" / "vibes" / "vc-fuller.html").read_text()
    assert "dev (cross-fitted)" in vibe_page and "rule: longer answer wins" in vibe_page
    _, turned, flipped = _run(tmp_path / "two", flip_test=True)
    assert turned == verdicts and all(flipped[p] == -y for p, y in test.items())


def test_a_learned_judge_without_labels_is_refused_at_validate(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text(json.dumps({"id": "p0", "q": "q", "a": "x", "b": "y"}) + "\n")
    (tmp_path / "spec.yaml").write_text(SPEC.replace("    validation: {files: [labels.csv]}\n", ""))
    with pytest.raises(SpecError, match=r"analyses\.vc\.judges\[0\].*learns from people's labels"):
        load_spec(tmp_path / "spec.yaml")


RATED_SPEC = """\
name: learned-ratings
models: {m0: {provider: recorded}, m1: {provider: recorded}, m2: {provider: recorded}, m3: {provider: recorded}}
judges: {taught: {kind: learned}}
datasets:
  d:
    source: {path: d.jsonl}
    fields:
      id: id
      prompt: q
      reference: ref
      outputs: {m0: a0, m1: a1, m2: a2, m3: a3}
      scores: {m0: s0, m1: s1, m2: s2, m3: s3}
analyses:
  reference:
    method: reference
    dataset: d
    judge: taught
    models: [m0, m1, m2, m3]
    bootstrap: 50
"""


def _rated_run(folder: Path, flip: str | None) -> Any:
    """60 prompts with a reference fact each; model k states it (rated 5) with probability 0.2 + 0.2k, else says
    something off it (rated 1); `flip` turns the recorded ratings of that model upside down."""
    from engine.pipeline import run_spec

    rng = np.random.default_rng(5)
    rows = []
    for n in range(60):
        topic = TOPICS[n % len(TOPICS)]
        fact = f"The {topic} census of year {1900 + n} counted {n * 37 + 11} {topic}."
        row: dict[str, Any] = {"id": f"p{n}", "q": f"What did the {topic} census of {1900 + n} count?", "ref": fact}
        for k in range(4):
            right = rng.random() < 0.2 + 0.2 * k
            row[f"a{k}"] = fact if right else _answer(rng, topic, 2)
            rating = 5 if right else 1
            row[f"s{k}"] = 6 - rating if flip == f"m{k}" else rating
        rows.append(row)
    folder.mkdir()
    (folder / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "spec.yaml").write_text(RATED_SPEC)
    _, results, _ = run_spec(folder / "spec.yaml", folder / "run", folder / "c.sqlite", quiet=True, report=False)
    (ref,) = results.of("reference")
    return ref


def test_in_the_reference_role_each_model_is_rated_by_a_fit_that_never_saw_its_ratings(tmp_path: Path) -> None:
    """Four models whose recorded ratings follow the reference: the learned ratings order them as the records do
    (m3 best), and turning m3's own recorded ratings upside down leaves every rating of m3's answers as it was."""
    ref = _rated_run(tmp_path / "one", None)
    means = {s.model: s.subsets[0].score for s in ref.scores}
    assert sorted(means, key=means.__getitem__) == ["m0", "m1", "m2", "m3"]
    assert "other models' answers" in ref.judge_label and "learned judge" in ref.judge_label
    mine = {(r.item_id, r.model): r.rating for r in ref.ratings}
    turned = {(r.item_id, r.model): r.rating for r in _rated_run(tmp_path / "two", "m3").ratings}
    assert all(turned[key] == pytest.approx(value) for key, value in mine.items() if key[1] == "m3")
    assert any(turned[key] != pytest.approx(value) for key, value in mine.items() if key[1] != "m3")


def test_a_learned_reference_judge_without_recorded_ratings_is_refused_at_validate(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text(json.dumps({"id": "p0", "q": "q", "ref": "r", **{f"a{k}": "x" for k in range(4)}})
                                      + "\n")
    (tmp_path / "spec.yaml").write_text(RATED_SPEC.replace("      scores: {m0: s0, m1: s1, m2: s2, m3: s3}\n", ""))
    with pytest.raises(SpecError, match=r"analyses\.reference\.judge.*fields\.scores"):
        load_spec(tmp_path / "spec.yaml")


def test_the_label_view_adds_pairs_the_learned_judge_is_least_sure_of_and_they_only_teach(tmp_path: Path) -> None:
    """In headless Chromium: after a random sample of 6 pairs is labelled, the label view adds 6 more, the pairs
    whose learned-judge odds lie nearest even among those not drawn, marked in the file (stratum uncertain, split
    dev). Read back by a run, they teach the judge (its fit counts them) and no estimate reads them."""
    from test_report import CHROMIUM
    from test_validation import download_labels, open_label_view

    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed (make install-test installs it)")
    from playwright.sync_api import sync_playwright

    from engine.pipeline import run_spec

    vc, _, _ = _run(tmp_path / "one", flip_test=False)
    leans = {p.item_id: abs(p.leans["fuller"] - 0.5) for p in vc.pairs}
    run_dir = tmp_path / "one" / "run"
    with sync_playwright() as p:
        browser, page = open_label_view(p, run_dir, "bo", 6)
        seen = []
        for k in range(12):
            if k == 6:
                page.wait_for_function("document.getElementById('label-status').textContent.startsWith('All 6')")
                page.click("#teach")
            card = page.wait_for_selector(f"article.labelling[data-k='{k}']")
            seen.append(card.get_attribute("data-id"))
            assert ("chosen to teach the judge" in page.inner_text("#label-status")) == (k >= 6)
            page.keyboard.press("1")
        download_labels(page, 12, tmp_path / "taught.csv")
        browser.close()
    rows = (tmp_path / "taught.csv").read_text().splitlines()
    assert rows[0].endswith(",stratum") and len(rows) == 13
    taught = [r.split(",")[0] for r in rows[1:] if r.endswith(",uncertain")]
    assert taught == seen[6:] and all(",dev," in r for r in rows[1:] if r.endswith(",uncertain"))
    others = sorted(leans[i] for i in leans if i not in seen[:6])
    assert sorted(leans[i] for i in taught) == others[:6]
    folder = tmp_path / "two"
    folder.mkdir()
    for name in ("d.jsonl", "labels.csv", "spec.yaml"):
        (folder / name).write_text((tmp_path / "one" / name).read_text())
    (folder / "taught.csv").write_text((tmp_path / "taught.csv").read_text())
    (folder / "spec.yaml").write_text(SPEC.replace("[labels.csv]", "[labels.csv, taught.csv]"))
    _, results, _ = run_spec(folder / "spec.yaml", folder / "run", folder / "c.sqlite", quiet=True, report=False)
    (again,) = results.of("vibecheck")
    assert again.validation.teaching == 6
    dev_rows = 80 + 6 + sum(",dev," in r for r in rows[1:7])  # the first file's, the taught, the sample's dev
    assert any(f"fitted to {dev_rows} development labels" in note for note in again.notes), again.notes
    assert sum(a.labels for a in again.validation.agreements if a.split == "test") == sum(
        a.labels for a in vc.validation.agreements if a.split == "test") + sum(
        1 for r in rows[1:7] if ",test," in r)


@pytest.mark.parametrize(("labels", "validation", "message"), [
    ("id,label_fulller\np0,a\n", "{files: [labels.csv]}",
     r"analyses\.vc\.validation\.files\[0\].*labels\.csv: row 1: field 'label_fulller' names no vibe this analysis "
     r"measures \(did you mean 'fuller'\?\)"),
    ("id,label_fuller\np0,maybe\n", "{files: [labels.csv]}", r"labels\.csv: row 1: field 'label_fuller' holds 'maybe'"),
    ("", "{columns: [{vibe: fullr, column: q}]}",
     r"analyses\.vc\.validation\.columns\[0\]\.vibe.*'fullr' is not one this analysis measures \(did you mean"),
])
def test_labels_are_checked_at_validate_where_they_are_wrong(tmp_path: Path, labels: str, validation: str,
                                                              message: str) -> None:
    """A labels file's header or value, or a column's vibe, is located at `vibe validate`, before anything runs."""
    (tmp_path / "d.jsonl").write_text(json.dumps({"id": "p0", "q": "q", "a": "x", "b": "y"}) + "\n")
    (tmp_path / "labels.csv").write_text(labels)
    (tmp_path / "spec.yaml").write_text(SPEC.replace("{files: [labels.csv]}", validation))
    with pytest.raises(SpecError, match=message):
        load_spec(tmp_path / "spec.yaml")


def test_a_fold_with_nothing_but_ties_to_learn_from_leans_nowhere() -> None:
    """40 development labels, one of them decisive: the folds without it have only ties to learn from and give
    every pair even odds instead of failing."""
    pairs = [PairToFit("q", "a b c" * (n % 3 + 1), "a b", None, f"u{n}", (1 if n == 0 else 0,)) for n in range(40)]
    fitted = fit(pairs, seed=0, settings=LearnedSettings())
    assert len(fitted.scores) == 40 and set(fitted.scores) <= {-1, 0, 1}


def test_ratings_of_two_models_each_learned_from_the_other_alone() -> None:
    """Two rated models: each is rated by a fit to the other's ratings, with no folds to choose settings by."""
    from engine.api.judging import AnswerToRate
    from engine.builtin_plugins.judges.learned.ratings import fit_ratings

    answers = [AnswerToRate("What is the capital of France?", "Paris." if n % 2 else "Lyon, I think.",
                            "Paris is the capital of France.", f"u{n // 2}", f"m{n % 2}", 5.0 if n % 2 else 1.0)
               for n in range(20)]
    fitted = fit_ratings(answers, seed=0)
    assert all(r is not None and 1.0 <= r <= 5.0 for r in fitted.ratings) and "2 models have them" in fitted.description


def test_a_learned_judge_short_of_labels_runs_to_its_page_and_says_why(tmp_path: Path) -> None:
    """15 development labels against `min_labels: 20`: `vibe run` ends (no traceback from the table of judges
    beside the trivial rules, where the judge has no test agreement), and the run says why it gave no verdict."""
    rng = np.random.default_rng(5)
    rows, lines = [], []
    for n in range(60):
        topic = TOPICS[n % len(TOPICS)]
        a, b = _answer(rng, topic, int(rng.integers(1, 7))), _answer(rng, topic, int(rng.integers(1, 7)))
        rows.append({"id": f"p{n}", "q": f"Tell me about {topic}.", "a": a, "b": b})
        if n < 15 or n >= 40:
            word = {1: "a", -1: "b", 0: "neither"}[_people(rng, a, b, 0.1)[1]]
            lines.append(f"p{n},{word},{'dev' if n < 15 else 'test'},ann\n")
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "labels.csv").write_text("id,label_fuller,split,labeller\n" + "".join(lines))
    (tmp_path / "spec.yaml").write_text(SPEC)
    done = subprocess.run([sys.executable, "-m", "engine", "run", "spec.yaml", "--quiet"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    page = (tmp_path / "runs" / "learned" / "index.html").read_text()
    assert "15 development-labelled prompts" in page


def test_the_lasso_is_a_lasso_on_every_scikit_learn_the_pins_allow(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before 1.8 scikit-learn reads `l1_ratio` only beside `penalty="elasticnet"`: there the penalty is named
    (a lasso asked for by `l1_ratio` alone was a ridge on 1.4–1.7); from 1.8 on `l1_ratio` alone chooses it.
    On the installed one, the lasso zeroes a coefficient of pure noise the ridge keeps, and two fits of the
    same inputs give the same coefficients (liblinear seeded)."""
    import sklearn
    from sklearn.linear_model import LogisticRegression

    from engine.builtin_plugins.judges.learned.pairs import penalty

    for version, lasso, expected in (("1.6.1", 1.0, {"penalty": "l1"}), ("1.4.2", 0.0, {"penalty": "l2"}),
                                     ("1.8.0", 1.0, {"l1_ratio": 1.0})):
        monkeypatch.setattr(sklearn, "__version__", version)
        assert penalty(lasso) == expected
    monkeypatch.undo()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 12))
    y = (x[:, 0] + 0.3 * rng.normal(size=200) > 0).astype(int)

    def coefficients(lasso: float) -> np.ndarray:
        return LogisticRegression(C=0.05, solver="liblinear", fit_intercept=False, random_state=0,
                                  **penalty(lasso)).fit(x, y).coef_.ravel()

    assert (coefficients(1.0)[1:] == 0).sum() >= 8 and (coefficients(0.0)[1:] != 0).all()
    assert (coefficients(1.0) == coefficients(1.0)).all()


PANEL_SPEC = """\
name: learned-panel
models: {a: {provider: recorded}, b: {provider: recorded}}
judges: {words: {kind: metric}, taught: {kind: learned, min_labels: 30}}
vibes:
  - {name: verbosity, low: a brief answer, high: a fuller answer, metric: length_words}
datasets:
  d:
    source: {path: d.jsonl}
    fields: {id: id, prompt: q, outputs: {a: a, b: b}}
analyses:
  vc:
    method: vibecheck
    dataset: d
    models: [a, b]
    judges: [words, taught]
    validation: {files: [labels.csv]}
"""


@pytest.mark.slow
@pytest.mark.parametrize("dev_labels", [10, 20, 100])
def test_the_learned_judge_beside_a_metric_through_the_cli(tmp_path: Path, dev_labels: int) -> None:
    """A panel of the word count and a learned judge on verbosity, 160 prompts, `dev_labels` development labels
    (people follow the longer answer, 10% noise) and 40 test labels, run by `vibe run` in two processes with
    caches of their own. Below `min_labels` the learned judge gives no verdict and says why; at 100 it does.
    Either way the run ends without a traceback, verbosity is kept (the two judges agree on nearly every pair,
    all one way, where κ alone would have dropped it), and the two processes write the same verdicts."""
    rng = np.random.default_rng(dev_labels)
    rows, lines = [], []
    for n in range(160):
        topic = TOPICS[n % len(TOPICS)]
        a, b = _answer(rng, topic, int(rng.integers(3, 8))), _answer(rng, topic, int(rng.integers(1, 3)))
        rows.append({"id": f"p{n}", "q": f"Tell me about {topic}.", "a": a, "b": b})
        split = "dev" if n < dev_labels else "test" if n >= 120 else None
        if split:
            lines.append(f"p{n},{ {1: 'a', -1: 'b', 0: 'neither'}[_people(rng, a, b, 0.1)[1]]},{split},ann\n")
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "labels.csv").write_text("id,label_verbosity,split,labeller\n" + "".join(lines))
    (tmp_path / "spec.yaml").write_text(PANEL_SPEC)
    written = []
    for name in ("one", "two"):
        done = subprocess.run([sys.executable, "-m", "engine", "run", "spec.yaml", "--out", name, "--cache",
                               f"{name}.sqlite", "--quiet"], cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
        written.append((tmp_path / name / "vc" / "pairs.jsonl").read_text())
        vibes = [json.loads(line) for line in (tmp_path / name / "vc" / "vibes.jsonl").read_text().splitlines()]
        (verbosity,) = [v for v in vibes if v["name"] == "verbosity"]
        assert verbosity["kept"], verbosity["drop_reason"]
    assert written[0] == written[1]
    taught = [json.loads(line)["by_judge"]["verbosity"].get("taught") for line in written[0].splitlines()]
    page = (tmp_path / "one" / "index.html").read_text()
    if dev_labels < 30:
        assert set(taught) == {None} and f"{dev_labels} development-labelled prompts" in page
    else:
        assert None not in taught
