"""Who the personas method writes for, as its judges and rewriter are told: a persona's text, the dimensions it
is judged on and the text property an offline judge measures for each dimension it can."""

from __future__ import annotations

from engine.api.spec import JUDGED_DIMENSIONS, Persona

# The text property an offline metric judge measures for a dimension; the persona's `prefers` says which end
# of it that persona favours. Dimensions missing here need an LLM judge.
DIMENSION_MEASURES = {"clarity": "readability", "cognitive_load": "length_words",
                      "anthropomorphism": "warmth", "workflow_fit": "code_blocks"}


def persona_dimensions(persona: Persona) -> dict[str, int]:
    """The dimensions a persona is judged on, with weights (all seven at weight 1 when none are given)."""
    return persona.dimensions or dict.fromkeys(JUDGED_DIMENSIONS, 1)


def persona_text(persona: Persona) -> str:
    """What an LLM judge or rewriter is told about the user."""
    return " ".join([persona.description, *([f"What I ask for: {persona.asks_for}."] if persona.asks_for else []),
                     *([f"Answers I like: {persona.style}."] if persona.style else [])])
