"""The plug-in contract suite (`engine.contract`) over everything registered, and proof that it speaks: plug-ins
that break a promise each fail the check that promise belongs to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import pytest

from engine import contract
from engine.datasets.shapes import WideRows
from engine.judges.kinds import JudgeKind, _Either, judge_kind
from engine.judges.verdicts import PairVerdict
from engine.requests import PairJudgment

CHECKS = contract.checks()


@pytest.mark.parametrize("check", CHECKS, ids=[c.id for c in CHECKS])
def test_every_registered_plug_in_keeps_its_contract(check: contract.Check) -> None:
    assert check.run() == []


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
