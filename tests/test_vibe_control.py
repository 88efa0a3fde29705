"""Rankings controlled for vibes, on battle logs whose outcomes are planted: when only a vibe decides who wins,
control levels the models and recovers the vibe's coefficient; when only the models' strengths decide, control
moves no rank. Then the spec's `control:` block, checked, and the page a run writes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from engine.analyze.outcomes import human_outcomes
from engine.builtin_plugins.methods.rankings import vibe_control
from engine.builtin_plugins.methods.rankings.options import ControlOptions
from engine.datasets import Item
from engine.datasets.items import Battle
from engine.spec.problems import SpecError

MODELS = ["w", "x", "y", "z"]
WORDS = "the plan works because each part checks the one before it and nothing is left to chance".split()


def _answer(rng: np.random.Generator, exclamations: int) -> str:
    """Thirty to fifty plain words, then one closing word ended by the exclamation marks (or a full stop): the
    marks change the exclamation rate and nothing else a metric reads, sentence counts included."""
    words = " ".join(rng.choice(WORDS, int(rng.integers(30, 51))))
    return f"{words.capitalize()}. Done{'!' * exclamations or '.'}"


def _battle_log(seed: int, prompts: int, exclamation_rate: list[float], strength: list[float],
                vibe_weight: float) -> list[Item]:
    """Every pair of MODELS on every prompt; model i ends its answers with Poisson(exclamation_rate[i]) marks.
    P(first wins) = σ(strength difference + vibe_weight × the exclamation covariate / its SD over all battles)."""
    rng = np.random.default_rng(seed)
    answers = [{m: _answer(rng, int(rng.poisson(rate))) for m, rate in zip(MODELS, exclamation_rate, strict=True)}
               for _ in range(prompts)]
    features = vibe_control.feature_function([vibe_control.Covariate("exclamations", "exclamations")])
    pairs = [(a, b) for i, a in enumerate(MODELS) for b in MODELS[i + 1:]]
    x = np.array([[features(out[a], out[b])[-1] for a, b in pairs] for out in answers])
    x = x / x.std()
    power = dict(zip(MODELS, strength, strict=True))
    items = []
    for p, out in enumerate(answers):
        battles = []
        for (a, b), covariate in zip(pairs, x[p], strict=True):
            win = rng.random() < 1 / (1 + math.exp(-(power[a] - power[b] + vibe_weight * covariate)))
            battles.append(Battle(a, b, a if win else b))
        items.append(Item(f"p{p}", f"prompt {p}", outputs=out, battles=tuple(battles)))
    return items


def _control(items: list[Item], seed: int = 0) -> vibe_control.VibeControl:
    candidates = vibe_control.covariates("discover", {})
    outcomes = human_outcomes(items, MODELS, vibe_control.feature_function(candidates))
    return vibe_control.control(outcomes, MODELS, candidates, ControlOptions(), ties="half", rounds=100, seed=seed,
                                unit="prompt")


def test_outcomes_decided_by_a_vibe_alone_level_the_models_and_recover_its_coefficient() -> None:
    """Equal models; the one that writes more exclamation marks wins more, only because of them. Plain
    Bradley–Terry ranks w above z with intervals apart; controlled for the vibe chosen on the training prompts,
    every model's interval holds the mean, and the exclamation coefficient's interval holds the planted 1.0."""
    control = _control(_battle_log(1, 500, [0.3, 1.0, 2.0, 4.0], [0.0] * 4, 1.0))
    assert control.chosen[0] == "exclamations" and control.chosen_how == "selected on the training prompts"
    scores = {s.model: s for s in control.scores}
    assert scores["z"].plain_low > scores["w"].plain_high  # the vibe makes z look stronger ...
    assert all(s.low < 1000 < s.high for s in control.scores)  # ... and control takes that away
    (coefficient,) = [c for c in control.coefficients if c.vibe == "exclamations"]
    assert coefficient.ci_low < 1.0 < coefficient.ci_high and coefficient.p_holm < 1e-6
    assert coefficient.win_probability == pytest.approx(1 / (1 + math.exp(-coefficient.coefficient)))
    assert control.variance_removed > 0.8
    heldout = {h.model: h for h in control.heldout}
    assert heldout["vibes"].log_likelihood > heldout["plain"].log_likelihood + 0.02
    assert heldout["vibes"].battles == control.test_battles == 6 * control.test_units
    assert control.train_units + control.test_units == 500


def test_outcomes_decided_by_strength_alone_keep_every_rank() -> None:
    """Strengths 1, 0.5, 0, −0.5 and exclamation marks that differ by model but decide nothing: whatever the
    selection keeps, no model's rank moves, and no leave-one-model-out refit moves a score by its half-width."""
    control = _control(_battle_log(2, 300, [0.3, 1.0, 2.0, 4.0], [1.0, 0.5, 0.0, -0.5], 0.0))
    assert [s.model for s in control.scores] == MODELS
    assert all(s.rank_shift == 0 and s.rank == s.plain_rank for s in control.scores)
    assert control.max_shift_over_halfwidth is not None and control.max_shift_over_halfwidth < 1


def test_declared_vibes_are_fixed_in_advance() -> None:
    items = _battle_log(3, 120, [0.3, 1.0, 2.0, 4.0], [0.0] * 4, 1.0)
    candidates = vibe_control.covariates(["exclamations", "shouting"], {"shouting": "exclamations"})
    assert candidates[1] == vibe_control.Covariate("shouting", "exclamations")  # a declared vibe's metric
    outcomes = human_outcomes(items, MODELS, vibe_control.feature_function(candidates[:1]))
    control = vibe_control.control(outcomes, MODELS, candidates[:1], ControlOptions(vibes=["exclamations"]),
                                   ties="half", rounds=20, seed=0, unit="prompt")
    assert control.chosen == ["exclamations"] and control.chosen_how == "declared"


SPEC = """\
name: control
models: {w: {provider: recorded}, x: {provider: recorded}, y: {provider: recorded}, z: {provider: recorded}}
vibes:
  - {name: cheer, low: calm, high: cheerful, metric: exclamations}
  - {name: warmth-by-panel, low: cold, high: warm}
judges: {m: {kind: metric}}
datasets:
  d:
    format: battles
    source: {path: battles.jsonl}
    fields: {prompt: q, model_a: a, model_b: b, answer_a: ra, answer_b: rb, winner: w}
    labels: {source: human}
analyses:
  ranks:
    method: rankings
    dataset: d
    models: [w, x, y, z]
    outcomes: labels
    methods: [bradley_terry, vibe_controlled]
    bootstrap: 30
    control: {vibes: CONTROL}
"""


def _write(tmp_path: Path, control: str) -> Path:
    rows = [{"q": item.prompt, "a": b.model_a, "b": b.model_b, "ra": item.outputs[b.model_a],
             "rb": item.outputs[b.model_b], "w": "model_a" if b.winner == b.model_a else "model_b"}
            for item in _battle_log(4, 80, [0.3, 1.0, 2.0, 4.0], [0.0] * 4, 1.0) for b in item.battles]
    (tmp_path / "battles.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "spec.yaml").write_text(SPEC.replace("CONTROL", control))
    return tmp_path / "spec.yaml"


@pytest.mark.parametrize(("control", "message"), [
    ("[warmth-by-panel]", r"spec\.yaml:\d+:\d+: analyses\.ranks\.control\.vibes\[0\]: vibe 'warmth-by-panel' is "
                          r"read by a judge panel, and a rankings analysis calls no judge"),
    ("[exclamation]", r"analyses\.ranks\.control\.vibes\[0\]: unknown vibe 'exclamation' \(did you mean "
                      r"'exclamations'\?\)"),
    ("everything", r"analyses\.ranks\.control\.vibes"),
])
def test_a_control_naming_what_it_cannot_measure_is_refused_where_it_is_written(tmp_path: Path, control: str,
                                                                                message: str) -> None:
    from engine.spec.load import load_spec

    with pytest.raises(SpecError, match=message):
        load_spec(_write(tmp_path, control))


def test_a_run_writes_the_controlled_ranking_and_its_page(tmp_path: Path) -> None:
    """A battle log through `vibe run`'s path with a declared vibe: rankings.json holds the control, and the
    page shows the plain and controlled scores, the coefficient table and the held-out fit."""
    from engine.pipeline import run_spec

    spec = _write(tmp_path, "[cheer]")
    _, _, run_dir = run_spec(spec, tmp_path / "run", tmp_path / "c.sqlite", quiet=True)
    control = json.loads((run_dir / "ranks" / "rankings.json").read_text())["control"]
    assert control["chosen"] == ["cheer"] and control["test_units"] == 40
    assert [h["model"] for h in control["heldout"]] == ["plain", "style4", "arena_style4", "vibes"]
    page = (run_dir / "index.html").read_text()
    assert "ranks: controlled for vibes" in page and "Held-out fit" in page
    assert "Arena&#39;s four style features" in page or "Arena's four style features" in page
    assert "Holm" in page and "cheer" in page
    fit = {h["model"]: h["log_likelihood"] for h in control["heldout"]}
    # the page says so whenever the chosen vibes predict the test comparisons less well than Arena's own control
    assert ("predict the test comparisons less well than Arena" in page) == (fit["vibes"] < fit["arena_style4"])


def test_too_few_prompts_to_split_is_said_not_fitted() -> None:
    """One prompt cannot be split into training and test prompts: no control, and the caller says why."""
    items = _battle_log(5, 1, [0.3, 1.0, 2.0, 4.0], [0.0] * 4, 1.0)
    candidates = vibe_control.covariates("discover", {})
    outcomes = human_outcomes(items, MODELS, vibe_control.feature_function(candidates))
    assert vibe_control.control(outcomes, MODELS, candidates, ControlOptions(), ties="half", rounds=10, seed=0,
                                unit="prompt") is None


@pytest.mark.parametrize("prompts", [1, 3])
def test_a_controlled_ranking_alone_on_too_few_prompts_says_so_on_the_page_and_the_console(tmp_path: Path,
                                                                                          prompts: int) -> None:
    """`methods: [vibe_controlled]` alone on a log of 1 or 3 prompts: the "too few" warning reached only
    rankings.json (the page was empty and the console silent), and 3 prompts fitted the control on one test prompt
    with intervals of zero width. Now no controlled ranking is fitted below 20 test prompts, and the reason is on
    the page and on the console."""
    import subprocess
    import sys

    rows = [{"q": item.prompt, "a": b.model_a, "b": b.model_b, "ra": item.outputs[b.model_a],
             "rb": item.outputs[b.model_b], "w": "model_a" if b.winner == b.model_a else "model_b"}
            for item in _battle_log(4, prompts, [0.3, 1.0, 2.0, 4.0], [0.0] * 4, 1.0) for b in item.battles]
    (tmp_path / "battles.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "spec.yaml").write_text(SPEC.replace("[bradley_terry, vibe_controlled]", "[vibe_controlled]")
                                        .replace("CONTROL", "[cheer]"))
    done = subprocess.run([sys.executable, "-m", "engine", "run", "spec.yaml", "--out", "run", "--quiet"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "warning: vibe control chooses its vibes on the training prompts" in done.stdout
    assert "a controlled ranking needs at least 20" in done.stdout
    body = json.loads((tmp_path / "run" / "ranks" / "rankings.json").read_text())
    assert body["control"] is None and any("needs at least 20" in w for w in body["warnings"])
    page = (tmp_path / "run" / "index.html").read_text()
    assert "ranks: no ranking" in page and "a controlled ranking needs at least 20" in page
