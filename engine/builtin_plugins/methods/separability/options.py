"""The options a spec gives a separability analysis, typed, with their defaults. In a module of their own so that
the method, its analysis and its pages all read them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.api.methods import Options


@dataclass(frozen=True)
class Encoder:
    """A local model for BERTScore, and the layer whose token embeddings it compares."""

    path: str
    num_layers: int = 6


@dataclass(frozen=True)
class SepElo:
    """sep-Elo's K and its multiplier K·alpha / (1 + exp(-beta (delta - threshold))); the defaults are the
    paper's K = 4, T = 0.4, alpha = 2, beta = 6."""

    k: float = 4.0
    threshold: float = 0.4
    alpha: float = 2.0
    beta: float = 6.0


@dataclass(frozen=True)
class SeparabilityOptions(Options):
    samples: int = 5
    temperature: float = 0.5
    similarity: str = "bertscore_length_adjusted"
    encoder: Encoder | None = None  # None: MiniLM, which ships with vibe
    preference_judge: str | None = None
    seed: int = 0
    elo: SepElo = field(default_factory=SepElo)
