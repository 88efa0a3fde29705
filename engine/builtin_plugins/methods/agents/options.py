"""The typed options of an agents analysis, with their defaults."""

from __future__ import annotations

from dataclasses import dataclass

from engine.api.methods import Options


@dataclass(frozen=True)
class AgentOptions(Options):
    tools: int = 8  # at most this many tools, the most called, get measures of their own
    min_calls: int = 5  # a tool called fewer times than this (both agents together) gets none
    bootstrap: int = 2000  # resamples of conversations for each difference's interval
    seed: int = 0
