"""What a personas analysis produces: per-dimension verdicts, each prompt's sample, the cells of the
persona × prompt-type table, and each persona's summary."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.api.analysis import JudgeAgreement, JudgeReliability, Ranking


@dataclass(frozen=True)
class DimensionVerdict:
    dimension: str
    judge: str
    kind: str
    score: int  # +1: A's answer better for this persona, −1: B's, 0: neither
    valid: bool = True
    detail: str = ""


@dataclass
class PersonaSample:
    persona: str
    item_id: str
    variant: str  # original | persona0 | persona1 | control0 | …
    prompt_type: str
    similar: bool | None  # similar to the original (cosine, verifier); None: not a rewrite, or not checked
    cosine: float | None
    gate: int | None  # +1 / −1 when the correctness gate decided, else None
    same_task: bool | None = None  # the LLM verifier's "same task?" answer, when one ran
    passes: list[bool | None] = field(default_factory=list)  # [A, B]: the gate's pass/fail, when a gate runs
    votes: dict[str, int] = field(default_factory=dict)  # judge -> sample verdict
    weighted: dict[str, float] = field(default_factory=dict)  # judge -> S
    dimensions: list[DimensionVerdict] = field(default_factory=list)


@dataclass(frozen=True)
class Cell:
    prompt_type: str
    votes: int  # every judge's vote on every variant: descriptive tallies
    a_wins: int
    b_wins: int
    ties: int
    win_rate_a: float
    tie_rate: float
    p_value: float | None  # two-sided sign test over prompts (a_items vs b_items); None without a decided one
    items: int = 0  # prompts, each counted once by the sign of its votes' sum: the tested unit
    a_items: int = 0
    b_items: int = 0
    p_adjusted: float | None = None  # Holm over every cell of the analysis
    kappa: float | None = None  # Fleiss' κ across the judges on this cell's samples (None with one judge)


@dataclass(frozen=True)
class DimensionRate:
    dimension: str
    judge: str
    kind: str
    weight: int
    measure: str | None  # metric judges: the property measured, and the end this persona prefers
    prefers: str | None
    a_wins: int
    b_wins: int
    ties: int


@dataclass(frozen=True)
class PreservationRate:
    """Paper 004's preservation rate for one model: the share of personalized rewrites whose answer passes the
    unit tests under both the original prompt and the rewrite, over `n` rewrites with results under both."""

    model: str
    rate: float
    of_solved: float | None  # of the rewrites whose original the model solved, the share still solved
    n: int


@dataclass
class PersonaSummary:
    persona: str
    description: str
    weights: dict[str, int]
    weights_source: str
    prefers: dict[str, str]
    cells: list[Cell]
    dimensions: list[DimensionRate]
    rejected: int  # rewrites not similar to the original: left out
    gate_decided: int  # samples (a prompt or one rewrite of it, both models' answers) the correctness gate decided
    preferred: str | None  # on personalized prompts: the model more prompts lean to, the sign test's unit
    ranking: Ranking | None = None  # Bradley–Terry on the personalized votes: the gap on the Elo scale, with CIs
    rewrites: int = 0  # personalized rewrites checked for similarity to their original
    similar_rate: float | None = None  # share of them similar (kept)
    gate_prompts: int = 0  # the prompts those samples belong to
    preservation: list[PreservationRate] = field(default_factory=list)  # per model, where the gate runs unit tests


@dataclass
class PersonaResult:
    analysis: str
    model_a: str
    model_b: str
    judges: dict[str, str]  # name -> kind
    swap: str
    personas: list[PersonaSummary]
    samples: list[PersonaSample]
    invalid: int = 0  # LLM judge answers that could not be parsed
    gate: str | None = None  # "<judge> rating ≥ <threshold>" when the correctness gate is on
    notes: list[str] = field(default_factory=list)
    reliability: list[JudgeReliability] = field(default_factory=list)  # one row per LLM judge
    agreements: list[JudgeAgreement] = field(default_factory=list)  # κ between every two judges, per dimension
