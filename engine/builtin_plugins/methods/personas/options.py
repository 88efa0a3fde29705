"""The options a spec gives a personas analysis, typed, with their defaults. In a module of their own so that
the method, its analysis and its pages all read them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from engine.api.methods import UNIQUE_LIST, Options, Setting


@dataclass(frozen=True)
class PersonasOptions(Options):
    personas: Annotated[list[str], Setting("The personas whose view the answers are judged from.",
                                           constraints=UNIQUE_LIST)]
    judges: Annotated[list[str], Setting("The judges on its panel.", constraints=UNIQUE_LIST)]
    rewriter: Annotated[str | None, Setting(
        "LLM judge that rewrites prompts in each persona's voice; without one, the persona's description is put "
        "before the unchanged prompt.")] = None
    verifier: Annotated[str | None, Setting(
        "LLM judge that also checks each rewrite asks for the same task (beside the embedding check).")] = None
    variants: Annotated[int, Setting("Personalized rewrites per prompt and persona (default 2).", minimum=0,
                                     maximum=10)] = 2
    controls: Annotated[int, Setting("Neutral rewrites per prompt (no persona content), judged beside the "
                                     "personalized ones (default 2).", minimum=0, maximum=4)] = 2
    preservation_min: Annotated[float, Setting(
        "Minimum embedding cosine between a rewrite's request and the original; rewrites below it are rejected "
        "(default 0.6).", minimum=0, maximum=1)] = 0.6
    gate_judge: Annotated[str | None, Setting(
        "Reference judge for the correctness gate: when exactly one answer passes, it wins the sample whatever "
        "the dimensions say.")] = None
    gate_threshold: Annotated[float, Setting("Rating (1-5) an answer needs to pass the gate (default 4).", minimum=1,
                                             maximum=5)] = 4
    swap: Annotated[str, Setting(
        "LLM judges: when the two orders disagree, keep the more confident verdict (default, as vibe-testing does) "
        "or call a tie.", constraints={"enum": ["confidence", "tie"]})] = "confidence"
    seed: Annotated[int, Setting("Seed of the analysis' random choices (bootstrap, sampling).")] = 0
