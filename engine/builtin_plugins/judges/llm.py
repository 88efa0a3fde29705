"""The LLM judge kind: a model that reads the question and the answers and writes what it thinks, called
through a provider; `engine.judges.reading` reads what it writes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.api.judging import JudgeKind, is_recorded, judge_kind_class

if TYPE_CHECKING:
    from engine.api.spec import Judge


@judge_kind_class("llm")
class LLMJudge(JudgeKind):
    """A model that reads the question and the answers and says what it thinks, in both answer orders."""

    label = "an LLM judge"
    badge_colour = "#8250df"
    roles = frozenset({"vibe", "dimension", "reference", "text"})
    fields = ("provider", "model", "base_url", "api_key_env", "system_prompt", "params", "price", "limits",
              "structured", "batch")
    offline = False

    def describe(self, judge: Judge, role: str) -> str:
        if role == "reference":
            return f"LLM judge {judge.name}: 1–5 rating against the reference"
        return f"LLM judge {judge.name}"

    def check(self, entry: dict[str, Any]) -> list[tuple[str, str]]:
        if is_recorded(entry.get("provider")):
            return [("provider", "an LLM judge needs a provider that can be called, not 'recorded'")]
        return []
