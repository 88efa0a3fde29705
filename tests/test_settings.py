"""A plug-in's settings declared once (`engine.settings`): the schema, the required settings, their names and
the contract suite's sample are read off the one typed record, and the suite catches a kind whose own
declaration contradicts its record."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Literal

import pytest

from engine import contract, settings
from engine.api.judging import JudgeKind, KindSettings, PairVerdict, Setting
from engine.api.records import PairJudgment


@dataclass(frozen=True)
class _Record(KindSettings):
    pattern: Annotated[str, Setting("what it counts.", example="!", min_length=1)]
    level: Annotated[int, Setting("how many.", minimum=1, maximum=5)] = 3
    share: float = 0.5
    strict: bool = False
    side: Literal["a", "b"] = "a"
    words: Annotated[list[str], Setting("words it ignores.")] = field(default_factory=list)
    spans: tuple[str, ...] = ()
    seed: int | None = None


def test_each_setting_is_read_off_its_type_and_its_annotation() -> None:
    assert settings.names(_Record) == ("pattern", "level", "share", "strict", "side", "words", "spans", "seed")
    assert settings.required(_Record) == ("pattern",)
    assert settings.sample(_Record) == {"pattern": "!"}
    assert settings.schemas(_Record) == {
        "pattern": {"type": "string", "minLength": 1, "description": "what it counts."},
        "level": {"type": "integer", "minimum": 1, "maximum": 5, "description": "how many."},
        "share": {"type": "number"}, "strict": {"type": "boolean"}, "side": {"enum": ["a", "b"]},
        "words": {"type": "array", "items": {"type": "string"}, "description": "words it ignores."},
        "spans": {"type": "array", "items": {"type": "string"}},
        "seed": {"type": "integer"}}  # None is what leaving it out gives


def test_a_type_with_no_schema_is_an_error_naming_the_setting() -> None:
    @dataclass(frozen=True)
    class Odd(KindSettings):
        table: dict[str, int]

    with pytest.raises(TypeError, match=r"Odd.table: no JSON schema for dict\[str, int\]"):
        settings.schemas(Odd)

    @dataclass(frozen=True)
    class Given(KindSettings):
        table: Annotated[dict[str, int], Setting("counts by name.", schema={"type": "object"})]

    assert settings.schemas(Given) == {"table": {"type": "object", "description": "counts by name."}}


def test_a_kind_with_a_record_declares_nothing_else() -> None:
    class Counting(JudgeKind):
        name = "counting"
        label = "a counting judge"
        roles = frozenset({"vibe"})
        settings_record = _Record

    assert Counting.fields == settings.names(_Record) and Counting.required == ("pattern",)
    assert Counting.sample_settings == {"pattern": "!"} and Counting.field_schemas == settings.schemas(_Record)


def test_the_suite_finds_a_required_setting_the_kind_does_not_require() -> None:
    """The failure #79 found: with `required` left out of a hand-written declaration the suite said ok, `vibe
    validate` said valid and the run died with a TypeError."""
    class Forgetful(JudgeKind):
        name = "forgetful"
        label = "a forgetful judge"
        roles = frozenset({"vibe"})
        settings_record = _Record
        required = ()

        def judge_pairs(self, requests: Sequence[PairJudgment], texts: dict[str, str]) -> list[PairVerdict]:
            return [PairVerdict(self.name, 0, 0.0, 0.0) for _ in requests]

    assert ("its settings record's 'pattern' has no default, yet the kind does not require it (a judge without "
            "one would pass `vibe validate` and fail in the run)") in contract.kind_problems(Forgetful(), "vibe")
