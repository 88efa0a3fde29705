"""The options a spec gives a separability analysis, typed, with their defaults. In a module of their own so that
the method, its analysis and its pages all read them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from engine.api.methods import Options, Setting


@dataclass(frozen=True)
class Encoder:
    """A local model for BERTScore, and the layer whose token embeddings it compares."""

    path: Annotated[str, Setting("A local Hugging Face model folder (e.g. roberta-large, the separability paper's).")]
    num_layers: Annotated[int, Setting("Which layer's token embeddings BERTScore compares (bert-score uses 17 for "
                                       "roberta-large).", minimum=1)] = 6


POSITIVE = {"exclusiveMinimum": 0}


@dataclass(frozen=True)
class SepElo:
    """sep-Elo's K and its multiplier K·alpha / (1 + exp(-beta (delta - threshold))); the defaults are the
    paper's K = 4, T = 0.4, alpha = 2, beta = 6."""

    k: Annotated[float, Setting("Elo's K factor.", constraints=POSITIVE)] = 4.0
    threshold: Annotated[float, Setting("sep-Elo: the separability T around which a comparison's weight "
                                        "rises.")] = 0.4
    alpha: Annotated[float, Setting("sep-Elo: the most a comparison's weight is scaled by.",
                                    constraints=POSITIVE)] = 2.0
    beta: Annotated[float, Setting("sep-Elo: how sharply the weight rises around T.", constraints=POSITIVE)] = 6.0


@dataclass(frozen=True)
class SeparabilityOptions(Options):
    samples: Annotated[int, Setting("Answers drawn per model and prompt (K).", minimum=2, maximum=50)] = 5
    temperature: Annotated[float, Setting("Sampling temperature of those answers.", minimum=0, maximum=2)] = 0.5
    similarity: Annotated[str, Setting("How two samples' similarity is measured.", constraints={"enum": [
        "bertscore_length_adjusted", "bertscore", "rouge1", "bleu", "embedding_cosine"]})] = (
        "bertscore_length_adjusted")
    encoder: Annotated[Encoder | None, Setting(  # None: MiniLM, which ships with vibe
        "The model BERTScore runs on (default all-MiniLM-L6-v2, 6 layers, offline).")] = None
    preference_judge: Annotated[str | None, Setting(
        "An LLM judge that compares the two models' j-th samples on every prompt (both orders); its outcomes are "
        "ranked by Bradley-Terry, Elo and separability-weighted Elo.")] = None
    seed: Annotated[int, Setting("Seed of the analysis' random choices (bootstrap, sampling).")] = 0
    elo: Annotated[SepElo, Setting(
        "sep-Elo's K and its multiplier K_sep = K·alpha / (1 + exp(-beta (delta - threshold))); defaults are the "
        "paper's K = 4, T = 0.4, alpha = 2, beta = 6.")] = field(default_factory=SepElo)
