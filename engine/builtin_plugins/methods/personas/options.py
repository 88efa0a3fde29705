"""The options a spec gives a personas analysis, typed, with their defaults. In a module of their own so that
the method, its analysis and its pages all read them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.api.methods import Options


@dataclass(frozen=True)
class PersonasOptions(Options):
    personas: list[str] = field(default_factory=list)
    judges: list[str] = field(default_factory=list)
    rewriter: str | None = None  # an LLM judge that rewrites prompts in each persona's voice
    verifier: str | None = None  # an LLM judge that checks a rewrite still asks the same thing
    variants: int = 2
    controls: int = 2
    preservation_min: float = 0.6  # least cosine between a rewrite and its original
    gate_judge: str | None = None
    gate_threshold: float = 4
    swap: str = "confidence"  # when an LLM judge's two orders disagree: confidence | tie
    seed: int = 0
