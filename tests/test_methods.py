"""The analysis-method registry: a sixth method added as one package plus one registry line, planned, run,
analyzed and shown on the leaderboard; a second registration under a taken name is refused."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from engine import plugin_tables, registry
from engine.options import Split
from engine.pipeline import run_spec
from engine.spec.load import load_spec
from engine.spec.problems import SpecError

SPEC = """\
name: words
models:
  a: {provider: recorded}
  b: {provider: recorded}
datasets:
  d:
    source: {path: data.jsonl}
    fields: {prompt: q, outputs: {a: out_a, b: out_b}}
analyses:
  words:
    method: word_count
    dataset: d
    models: [a, b]
    min_words: MIN
"""
ROWS = [{"id": "1", "q": "hi", "out_a": "one two three", "out_b": "one"},
        {"id": "2", "q": "yo", "out_a": "one two three four five", "out_b": "one two three"}]


@pytest.fixture
def word_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(plugin_tables.METHODS, "word_count", "word_count.method")  # the one registry line


def _write(tmp_path: Path, min_words: str) -> Path:
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    spec = tmp_path / "words.yaml"
    spec.write_text(SPEC.replace("MIN", min_words), encoding="utf-8")
    return spec


def test_a_sixth_method_runs_end_to_end(tmp_path: Path, word_count: None) -> None:
    _, results, run_dir = run_spec(_write(tmp_path, "2"), tmp_path / "run", tmp_path / "cache.sqlite", quiet=True)
    (found,) = results.of("word_count")
    assert found == {"analysis": "words", "means": {"a": 4.0, "b": 3.0}}  # b's one-word answer is under 2
    page = (run_dir / "index.html").read_text(encoding="utf-8")
    assert "words: words per answer</h2><p>a: 4.0</p><p>b: 3.0</p>" in page
    plan = json.loads(gzip.decompress((run_dir / "plan.json.gz").read_bytes()))
    assert [t["request"]["kind"] for t in plan["tasks"]] == ["recorded"] * 4


def test_the_method_s_options_are_typed_and_validated(tmp_path: Path, word_count: None) -> None:
    from word_count.method import WordCountOptions

    analysis = load_spec(_write(tmp_path, "2")).analyses["words"]
    assert WordCountOptions.of(analysis) == WordCountOptions(min_words=2)
    with pytest.raises(TypeError, match="analysis 'words' \\(method word_count\\) has WordCountOptions, not "
                                        "PairOptions"):
        registry.PairOptions.of(analysis)
    with pytest.raises(SpecError) as error:
        load_spec(_write(tmp_path, "-1"))
    assert "analyses.words.min_words" in str(error.value) and "minimum of 0" in str(error.value)


def test_a_method_that_discovers_must_take_what_discovery_reads() -> None:
    """Discovery reads the panel, the split and the reference of every analysis whose method discovers."""
    with pytest.raises(TypeError, match="'finder' discovers vibes, so its options must extend PairOptions"):
        registry.analysis_method("finder")(type("Finder", (registry.AnalysisMethod,), {"discovers": True}))
    with pytest.raises(registry.UnknownMethod):
        registry.get_method("finder")  # nothing was registered


def test_a_taken_name_is_refused() -> None:
    registry.get_method("vibecheck")
    with pytest.raises(ValueError, match="analysis method 'vibecheck' is registered twice"):
        registry.analysis_method("vibecheck")(type("Again", (registry.AnalysisMethod,), {}))


def test_nested_option_blocks_are_typed_with_their_defaults_filled_in() -> None:
    """A block the spec gives in part (a split, the regression's selection, sep-Elo) keeps the other defaults."""
    from engine.builtin_plugins.methods.separability.options import Encoder, SeparabilityOptions, SepElo
    from engine.builtin_plugins.methods.vibecheck.options import Regression, VibeCheckOptions

    vibecheck = VibeCheckOptions.from_spec({"judges": ["j"], "split": {"train": 0.6}, "regression": {"top": 3}})
    assert vibecheck.split == Split(train=0.6, seed=0)
    assert vibecheck.regression == Regression(select="lars", top=3)
    separability = SeparabilityOptions.from_spec({"encoder": {"path": "/m"}, "elo": {"threshold": 0.3}})
    assert separability.encoder == Encoder("/m", num_layers=6)
    assert separability.elo == SepElo(k=4.0, threshold=0.3, alpha=2.0, beta=6.0)
    assert SeparabilityOptions.from_spec({}).encoder is None


def test_a_task_of_a_stage_vibe_does_not_run_is_refused_when_planned(tmp_path: Path, word_count: None) -> None:
    """The executor runs only the stages the spec's methods declare, in order; a method's task of another would
    never run."""
    from engine.plan import Builder, PlanError
    from engine.requests import Recorded

    builder = Builder(load_spec(_write(tmp_path, "0")), {}, registry.stage_order(["word_count"]))
    with pytest.raises(PlanError, match="analysis 'words': its method planned a task of stage 'scoring', which no "
                                        "method of the spec declares in its `stages` \\(this spec runs: "
                                        "generation, judge\\)"):
        builder.add("scoring", "words", "a", "recorded", "1", Recorded("d", "1", "a", "sha"))
    assert builder.tasks == {}


def test_the_stages_a_run_executes_are_its_methods_in_the_phases_they_declare() -> None:
    """Each method declares its own stages and their phases; a run executes the generic two and those of its
    spec's methods, in phase order (the order the executor always had for the five built-ins together)."""
    assert registry.stage_order(["rankings"]) == ("generation", "judge")
    assert registry.stage_order(["personas", "vibecheck"]) == (
        "persona_rewrite", "persona_check", "generation", "preference", "discovery", "judge", "persona_judge")
    assert registry.stage_order(registry.method_names()) == (
        "persona_rewrite", "persona_check", "generation", "preference", "discovery", "judge", "reference",
        "persona_judge")
