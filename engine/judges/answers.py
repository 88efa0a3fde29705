"""The JSON shape of each LLM judge answer, for judges that answer in a schema (`structured: auto`).

Every provider can hold a model to a JSON schema (OpenAI structured outputs, Anthropic's forced tool,
llama.cpp's grammar from a schema), which removes the unparseable free-text verdict. A schema's name and
digest go into the request and so into the task hash: a schema-constrained answer and a free-text one are
never the same cache entry. Reading an answer tries the schema's fields first and the free-text patterns
second, so one parser serves both (and an endpoint that fell back to free text).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from engine.judges import prompts

# what a plug-in may use of this module, through the public API (held by tests/test_api_surface.py)
__all__ = ["AXES", "read", "request_field"]


@dataclass(frozen=True)
class AnswerSchema:
    name: str
    schema: dict[str, Any]

    @cached_property
    def digest(self) -> str:
        """The schema's hash, which every structured judge request records: worked out once, not per request."""
        return hashlib.sha256(json.dumps(self.schema, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def title(self) -> str:
        """The name as providers accept it (letters, digits, _ and - only)."""
        return re.sub(r"[^A-Za-z0-9_-]", "_", self.name)


def _object(**properties: dict[str, Any]) -> dict[str, Any]:
    """A closed object whose every property is required, in this order (OpenAI's strict mode needs both, and
    models write the properties in this order). The decision comes first and the reason after it: a small
    judge often runs out of tokens mid-reason, and with the decision first it has still committed to one,
    which `read` recovers from the cut-off object (README: measured on SmolLM2)."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _text(description: str) -> dict[str, Any]:
    """Free text. No length bound: OpenAI's strict mode refuses one, and llama.cpp's grammar for a bounded
    string slows sampling by an order of magnitude."""
    return {"type": "string", "description": description}


def _choice(*values: str, description: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values), "description": description}


def _scale(description: str) -> dict[str, Any]:
    return {"type": "integer", "enum": [1, 2, 3, 4, 5], "description": description}


REASONING = _text("One short sentence on why.")
VIBE_VERDICT = AnswerSchema("vibe_verdict/v1", _object(
    verdict=_choice("1", "2", "N/A", description="The answer higher on the axis; N/A when it does not apply or both "
                                                 "are equal."),
    reasoning=REASONING))
PREFERENCE_VERDICT = AnswerSchema("preference_verdict/v1", _object(
    verdict=_choice("1", "2", "tie", description="The answer that serves the user better."), reasoning=REASONING))
REFERENCE_RATING = AnswerSchema("reference_rating/v1", _object(
    rating=_scale("1 (wrong) to 5 (fully correct)."),
    explanation=_text("One or two sentences on how well the answer matches the ground truth.")))
PERSONA_VERDICT = AnswerSchema("persona_verdict/v1", _object(
    verdict=_choice("1", "2", "tie", description="The answer this user prefers on the dimension."),
    confidence=_scale("1 (a guess) to 5 (certain)."),
    reasoning=REASONING))
# a proposer's answer in its schema: a list of axes, each a name and its two ends
AXES = AnswerSchema("axes/v1", _object(axes={"type": "array", "items": _object(
    name=_text("A short snake_case name for the axis."),
    low=_text("What an answer low on the axis does."),
    high=_text("What an answer high on the axis does."))}))
SAME_TASK = AnswerSchema("same_task/v1", _object(
    same_task=_choice("yes", "no", description="Whether the rewrite asks for the same task."), reasoning=REASONING))

# Which schema each judge template answers in. The persona rewrite is free text by nature, and the persona
# profile already asks for a JSON object whose keys depend on the dimensions.
FOR_TEMPLATE = {
    prompts.VIBE_SCORE.name: VIBE_VERDICT,
    prompts.VIBE_SCORE_EXAMPLES.name: VIBE_VERDICT,
    prompts.PREFERENCE.name: PREFERENCE_VERDICT,
    prompts.REFERENCE_RATING.name: REFERENCE_RATING,
    prompts.PERSONA_PAIRWISE.name: PERSONA_VERDICT,
    prompts.PROPOSE_VIBES.name: AXES,
    prompts.PROPOSE_MORE_VIBES.name: AXES,
    prompts.REDUCE_VIBES.name: AXES,
    prompts.PRESERVATION_CHECK.name: SAME_TASK,
}
SCHEMAS = {schema.name: schema for schema in FOR_TEMPLATE.values()}


def request_field(schema: AnswerSchema) -> dict[str, str]:
    """What a task's request records of its answer schema (resolved by name when the call is sent)."""
    return {"schema": schema.name, "sha": schema.digest}


FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


# A decision field already closed in an object cut off later (max_tokens reached in the reason after it).
CLOSED_DECISION = re.compile(r'"(verdict|same_task|rating|confidence)"\s*:\s*(?:"([^"\\]{1,8})"|(\d))\s*,')


def read(text: str | None) -> dict[str, Any] | None:
    """The answer as a JSON object when it is one (a code fence around it allowed), else None. An object cut
    off before its end yields the decision fields it had finished writing, and nothing else."""
    body = (text or "").strip()
    fenced = FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    if not body.startswith("{"):
        return None
    try:
        doc = json.loads(body)
    except json.JSONDecodeError:
        found = {m.group(1): m.group(2) if m.group(2) is not None else int(m.group(3))
                 for m in CLOSED_DECISION.finditer(body)}
        return found or None
    return doc if isinstance(doc, dict) else None
