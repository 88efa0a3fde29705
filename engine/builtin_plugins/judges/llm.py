"""The LLM judge kind: a model that reads the question and the answers and writes what it thinks, called
through a provider; `engine.judges.reading` reads what it writes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from engine.api.judging import JudgeKind, KindSettings, is_recorded, judge_kind_class

if TYPE_CHECKING:
    from engine.api.spec import Judge


@dataclass(frozen=True)
class LLMSettings(KindSettings):
    structured: str | bool = "auto"  # "off" (or false, as YAML reads a bare off): free text


@judge_kind_class("llm")
class LLMJudge(JudgeKind):
    """A model that reads the question and the answers and says what it thinks, in both answer orders."""

    label = "an LLM judge"
    badge_colour = "#8250df"
    roles = frozenset({"vibe", "dimension", "reference", "text"})
    fields = ("provider", "model", "base_url", "api_key_env", "system_prompt", "params", "price", "limits",
              "structured", "batch")
    settings_record = LLMSettings
    field_schemas: ClassVar[dict[str, dict[str, Any]]] = {"structured": {
        "enum": ["auto", "off", True, False],
        "description": "'auto' (default, or true) asks for each answer in its JSON schema, in the provider's own "
                       "form (OpenAI response_format, Anthropic forced tool, llama.cpp grammar), falling back to "
                       "free text for the run if the endpoint refuses it; 'off' (YAML reads a bare off as false, "
                       "which means the same) asks for free text."}}
    offline = False

    def answers_in_schema(self, judge: Judge) -> bool:
        return LLMSettings.of(judge).structured not in ("off", False)

    def describe(self, judge: Judge, role: str) -> str:
        if role == "reference":
            return f"LLM judge {judge.name}: 1–5 rating against the reference"
        return f"LLM judge {judge.name}"

    def check(self, entry: dict[str, Any]) -> list[tuple[str, str]]:
        if is_recorded(entry.get("provider")):
            return [("provider", "an LLM judge needs a provider that can be called, not 'recorded'")]
        return []
