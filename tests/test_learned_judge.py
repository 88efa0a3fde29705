"""The learned judge (`kind: learned`): it recovers a verdict people give by a known rule of the features, its
reported agreement on test labels is a hand count of verdicts it was never fitted to, and a spec that gives
it nothing to learn from is refused where it names it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engine.api.judging import PairToFit
from engine.builtin_plugins.judges.learned import LearnedSettings, fit
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
    pairs, test_truth, test_labels = [], {}, {}
    for n in range(1000):
        topic = TOPICS[n % len(TOPICS)]
        a, b = _answer(rng, topic, int(rng.integers(1, 7))), _answer(rng, topic, int(rng.integers(1, 7)))
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


def _run(tmp_path: Path, flip_test: bool) -> tuple[object, dict[str, int], dict[str, int]]:
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
                             report=False)
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
    _, turned, flipped = _run(tmp_path / "two", flip_test=True)
    assert turned == verdicts and all(flipped[p] == -y for p, y in test.items())


def test_a_learned_judge_without_labels_is_refused_at_validate(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text(json.dumps({"id": "p0", "q": "q", "a": "x", "b": "y"}) + "\n")
    (tmp_path / "spec.yaml").write_text(SPEC.replace("    validation: {files: [labels.csv]}\n", ""))
    with pytest.raises(SpecError, match=r"analyses\.vc\.judges\[0\].*learns from people's labels"):
        load_spec(tmp_path / "spec.yaml")
