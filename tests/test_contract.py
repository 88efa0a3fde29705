"""The plug-in contract suite (`engine.contract`) over everything registered, and proof that it speaks: plug-ins
that break a promise each fail the check that promise belongs to."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from engine import contract, plugin_tables
from engine.datasets.shapes import WideRows
from engine.judges.kinds import JudgeKind, _Either, judge_kind
from engine.judges.verdicts import PairVerdict
from engine.requests import PairJudgment

CHECKS = contract.checks()


@pytest.mark.parametrize("check", CHECKS, ids=[c.id for c in CHECKS])
def test_every_registered_plug_in_keeps_its_contract(check: contract.Check) -> None:
    assert contract.run_check(check) == []


def test_the_suite_covers_every_kind_of_plug_in() -> None:
    assert {c.kind for c in CHECKS} == {"analysis method", "judge kind", "dataset format", "provider", "exporter"}
    assert {c.id for c in CHECKS} >= {"judge kind:metric:vibe", "judge kind:llm:reference", "dataset format:inspect",
                                      "analysis method:vibecheck", "provider:anthropic"}


class _Shouting(JudgeKind):
    """Breaks three promises: a verdict of 2, a field the schema does not know, settings that are no JSON."""

    name = "shouting"
    label = "a broken judge"
    roles = frozenset({"vibe"})
    fields = ("volume",)

    def pair_config(self, judge: object) -> dict[str, object]:
        return {"tolerance": 0}

    def judge_pairs(self, requests: Sequence[PairJudgment], texts: dict[str, str]) -> list[PairVerdict]:
        return [PairVerdict(self.name, 2, 0.0, 0.0) for _ in requests]


def test_a_judge_kind_that_breaks_its_promises_fails() -> None:
    problems = contract.kind_problems(_Shouting(), "vibe")
    assert "field 'volume' is not in the spec schema (declare it in field_schemas)" in problems
    assert any(p.startswith("judge_pairs() gave") for p in problems)


def test_an_alias_must_forward_every_hook() -> None:
    class Lazy(_Either):
        rate = JudgeKind.rate  # as if the forwarding had been left out

    lazy = Lazy("embedding", [judge_kind("embedding_axis"), judge_kind("reference_similarity")])
    assert "older spelling does not forward rate()" in contract.kind_problems(lazy, "text")


class _Greedy(WideRows):
    """Claims every file, and reads winners as a model nobody declared."""

    name = "greedy"
    description = "claims everything"
    winners: ClassVar[dict[str, str] | str] = {"1": "left"}

    def sniff(self, path: object, rows: object) -> object:
        return object()


def test_a_dataset_format_that_breaks_its_promises_fails() -> None:
    problems = contract.format_problems(_Greedy())  # type: ignore[arg-type]
    assert "its sniff() claims a plain file of prompts" in problems
    assert "winners {'1': 'left'} is neither 'sign' nor a mapping to a, b or tie" in problems


class _Pattern(JudgeKind):
    """An offline kind with a field it cannot do without (`pattern`, its own) and one whose name another kind
    uses with another schema (`tolerance` as a string, where the metric kind's is a number)."""

    name = "pattern"
    label = "a pattern-count judge"
    roles = frozenset({"vibe"})
    fields = ("pattern", "tolerance")
    field_schemas: ClassVar[dict[str, dict[str, object]]] = {"pattern": {"type": "string"},
                                                              "tolerance": {"type": "string"}}
    sample_settings: ClassVar[dict[str, object]] = {"pattern": "!"}

    def can_score(self, judge: object, vibe: object) -> bool:
        return bool(judge.settings["pattern"])  # type: ignore[attr-defined]

    def pair_config(self, judge: object) -> dict[str, object]:
        return {"pattern": judge.settings["pattern"]}  # type: ignore[attr-defined]

    def judge_pairs(self, requests: Sequence[PairJudgment], texts: dict[str, str]) -> list[PairVerdict]:
        out = []
        for request in requests:
            a, b = (texts[task].count(str(request.config["pattern"])) for task in request.outputs)  # type: ignore[index]
            out.append(PairVerdict(self.name, (a > b) - (a < b), float(a), float(b)))
        return out


def test_a_kind_is_checked_with_its_own_sample_settings_and_its_own_field_schemas(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite gives a judge of the kind its `sample_settings` (before, a kind that reads a required field
    raised a KeyError that stopped the suite). Each kind's field schemas are its own block of the spec schema,
    not one namespace where the first writer won: `tolerance` is a string on a pattern judge and a number on a
    metric judge, each checked on its own judges; an unregistered kind's are in no block, which the suite says."""
    from engine.judges import kinds
    from engine.spec.load import load_spec
    from engine.spec.problems import SpecError

    assert "its field_schemas are not the spec schema's rule for its judges" in contract.kind_problems(
        _Pattern(), "vibe")
    monkeypatch.setitem(plugin_tables.JUDGE_KINDS, "pattern", __name__)
    monkeypatch.setitem(kinds._KINDS.loaded, "pattern", _Pattern())
    problems = contract.kind_problems(_Pattern(), "vibe")
    assert problems == [], problems
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: s\nmodels: {a: {provider: recorded}, b: {provider: recorded}}\n"
                    "judges: {p: {kind: pattern, pattern: '!', tolerance: some}, m: {kind: metric, tolerance: 0.1}}\n"
                    "vibes: [{name: length, low: short, high: long, metric: length_words}]\n"
                    "datasets: {d: {source: {path: d.jsonl}, fields: {prompt: prompt, outputs: {a: a, b: b}}}}\n"
                    "analyses: {vibecheck: {dataset: d, models: [a, b], judges: [p, m], vibes: [length]}}\n")
    (tmp_path / "d.jsonl").write_text('{"prompt": "q", "a": "x", "b": "y"}\n')
    load_spec(spec)
    spec.write_text(spec.read_text().replace("tolerance: 0.1", "tolerance: some"))
    with pytest.raises(SpecError) as refused:
        load_spec(spec)
    assert str(refused.value).count("tolerance") == 1 and "judges.m.tolerance: 'some' is not of type 'number'" \
        in str(refused.value)


def test_one_broken_plug_in_hides_no_other_and_the_suite_can_select(monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A kind whose module cannot be imported is a failing check of its own and every other check is still
    listed; a check that raises is reported, not a crash; `--plugin NAME` runs only that plug-in's checks."""

    monkeypatch.setitem(plugin_tables.JUDGE_KINDS, "broken", "no_such_module_for_vibe")
    listed = contract.checks()
    (broken,) = [c for c in listed if c.name == "broken"]
    assert contract.run_check(broken) == ["its module cannot be imported: ModuleNotFoundError(\"No module named "
                                          "'no_such_module_for_vibe'\")"]
    assert len(listed) == len(CHECKS) + 1
    assert contract.run_check(contract.Check("judge kind", "x", lambda: [][0])) == [
        "the check raised IndexError('list index out of range')"]
    assert contract.main(["--plugin", "metric"]) == 0
    out = capsys.readouterr().out
    assert "ok   judge kind:metric:vibe" in out and "0 of 2 plug-in checks failed" in out and "llm" not in out


def test_a_published_plug_in_named_like_a_built_in_is_said_not_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    """A package publishing a judge kind under a built-in's name: the built-in is used, and a warning names
    the package, the entry point and what to do (before, nothing was said)."""
    from importlib import metadata

    from engine import plugins
    from engine.judges.kinds import ENTRY_POINTS, kind_names

    shadow = metadata.EntryPoint("metric", "their_package.judges:Metric", ENTRY_POINTS)
    monkeypatch.setattr(plugins, "_entry_points", lambda group: {"metric": shadow} if group == ENTRY_POINTS else {})
    plugins._warn_shadowed.cache_clear()
    with pytest.warns(UserWarning, match=r"publishes 'metric' under vibe\.judge_kinds \(their_package\.judges:"
                                         r"Metric\), a name vibe's built-in holds: the built-in is used"):
        names = kind_names()
    assert names.count("metric") == 1
