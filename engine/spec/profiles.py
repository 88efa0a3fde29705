"""Persona profiles in the vibe-testing format (`user_profiles/*.yaml`): who the user is and how much each
output dimension matters to them (weights 1–5).

The profile format names broader dimensions than the seven that vibe-testing's coding experiments judge;
`PROFILE_FIELDS` says which profile weight each judged dimension takes. Tone fit and cognitive load have no
field of their own, and the paper weighs both 1 for every persona, so that is their default here too.
With these rules the shipped novice and advanced-developer profiles give exactly the paper's Table 4 weights
(5/1/2/1/4/4/5 and 3/1/5/1/4/4/1).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

JUDGED_DIMENSIONS = {  # vibe-testing's seven judged dimensions, in our words; a closed set
    "clarity": "how easy the answer is to follow for this user",
    "tone_fit": "whether the tone and style suit this user",
    "workflow_fit": "whether the answer fits how this user works",
    "cognitive_load": "how little effort the answer demands of this user",
    "context_awareness": "whether the answer respects the request's context and constraints",
    "persona_consistency": "whether the answer suits this user's role and expertise",
    "anthropomorphism": "how human-like and personable the answer feels, as this user would want it",
}
PROFILE_FIELDS = {
    "clarity": "clarity_and_comprehensibility",
    "workflow_fit": "workflow_fit",
    "context_awareness": "persona_consistency_and_context_awareness",
    "persona_consistency": "persona_consistency_and_context_awareness",
    "anthropomorphism": "anthropomorphism",
}
UNPROFILED_WEIGHT = 1


@dataclass(frozen=True)
class Persona:
    """A user the personas method writes for: who they are and how much each judged dimension matters to them."""

    name: str
    description: str
    dimensions: dict[str, int] = field(default_factory=dict)  # judged dimension -> weight 1..5
    asks_for: str | None = None  # what they ask for and how (the profile's input dimensions)
    profile: Path | None = None
    derive_with: str | None = None
    style: str | None = None  # how the persona wants answers written (the profile's expressive_style)
    prefers: dict[str, str] = field(default_factory=dict)  # metric -> "high" | "low", for offline judges


class ProfileError(ValueError):
    def __init__(self, path: Path, field: str, message: str):
        self.path, self.field = path, field
        super().__init__(f"{path}: {field}: {message}")


@dataclass(frozen=True)
class Profile:
    description: str | None
    summary: str | None
    style: str | None
    asks_for: str | None = None  # what they ask for and how: the profile's input dimensions, in one line
    weights: dict[str, int] = field(default_factory=dict)  # judged dimension -> 1..5


def read_profile(path: Path) -> Profile:
    import yaml  # here, not at the top: a kept plan holds profiles already read, and reading it back needs no YAML

    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ProfileError(path, "<file>", f"cannot be read as YAML ({exc})") from None
    if not isinstance(doc, dict):
        raise ProfileError(path, "<root>", "a profile is a mapping")
    try:
        json.dumps(doc, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        raise ProfileError(path, "<file>", "holds a lone UTF-16 surrogate escape (such as \\ud800 without its "
                           "pair), which is not text") from None
    outputs = doc.get("output_dimensions")
    if not isinstance(outputs, dict):
        raise ProfileError(path, "output_dimensions", "missing: a mapping of dimension -> weight 1-5")
    weights = {}
    for dimension in JUDGED_DIMENSIONS:
        source = PROFILE_FIELDS.get(dimension)
        if source is None:
            weights[dimension] = UNPROFILED_WEIGHT
            continue
        value = outputs.get(source)
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 5:
            raise ProfileError(path, f"output_dimensions.{source}", f"must be an integer weight 1-5, got {value!r}")
        weights[dimension] = value
    text = {key: doc.get(key) if isinstance(doc.get(key), str) else None
            for key in ("description", "persona_description")}
    style = outputs.get("expressive_style")
    return Profile(text["description"], text["persona_description"], style if isinstance(style, str) else None,
                   _asks_for(doc.get("input_dimensions")), weights)


def _asks_for(inputs: object) -> str | None:
    """The input dimensions that say what the user asks for, as one line for rewriters and judges."""
    if not isinstance(inputs, dict):
        return None
    handling = inputs.get("preference_and_underspecification_handling")
    parts = [f"context: {inputs['real_world_context_embedding']}" if inputs.get("real_world_context_embedding")
             else "", f"wants the assistant as a {inputs['persona_based_task_framing']}"
             if inputs.get("persona_based_task_framing") else "",
             f"when a request is vague: {handling['default_behavior']}"
             if isinstance(handling, dict) and handling.get("default_behavior") else ""]
    return "; ".join(p for p in parts if p) or None
