"""The options a spec gives a reference analysis, typed, with their defaults. In a module of their own so that
the method, its analysis and its pages all read them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass

from engine.api.methods import Options


@dataclass(frozen=True)
class ReferenceOptions(Options):
    judge: str = ""
    repeats: int = 3
    tie_gap: float = 2.0
    ties: str = "drop"
    seed: int = 0
    bootstrap: int = 1000
