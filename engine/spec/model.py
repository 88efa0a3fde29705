"""Typed view of a validated spec: the data contract between the spec stage and the planner.

The records hold what a spec says; `engine.spec.build` reads a validated document into them (the kinds and
methods it needs sit above these records, which name none of them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.options import Options, PairOptions
from engine.provider_table import PROVIDERS
from engine.spec.data_model import Dataset
from engine.spec.profiles import Persona

# Folders the report writes beside an analysis' own output folder (run_dir/<analysis>/): an analysis may not
# take one of these names, or re-rendering the report would replace its results. Each method adds the folders
# its own pages live in (`AnalysisMethod.report_folders`).
REPORT_FOLDERS = ("charts", "assets")
# What every analysis block may hold, whatever its method; the rest are the method's options.
ANALYSIS_FIELDS = {
    "dataset": {"type": "string", "description": "The dataset whose prompts the analysis uses."},
    "models": {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": True,
               "description": "The models compared, in order (the first is model A)."},
    "description": {"type": "string", "description": "What the analysis asks, shown above its results."},
    "method": {"type": "string", "description": "The analysis method; an entry named after a method (vibecheck, "
                                                "rankings, ...) uses that method when this is left out."}}


@dataclass(frozen=True)
class Params:
    temperature: float = 0.0
    top_p: float | None = None
    max_tokens: int = 512
    seed: int | None = None
    stop: tuple[str, ...] = ()

    def request_fields(self) -> dict[str, Any]:
        """Only what is set, so that adding a default later does not change every content hash."""
        out: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.top_p is not None:
            out["top_p"] = self.top_p
        if self.seed is not None:
            out["seed"] = self.seed
        if self.stop:
            out["stop"] = list(self.stop)
        return out


@dataclass(frozen=True)
class Price:
    input: float = 0.0  # $ per million input tokens
    output: float = 0.0

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1e6


@dataclass(frozen=True)
class Limits:
    concurrency: int = 8
    rpm: float | None = None
    tpm: float | None = None
    timeout_s: float = 120.0
    max_retries: int = 5


@dataclass(frozen=True)
class BatchMode:
    """The endpoint's calls go as provider batches (`engine.execute.batches`) at the providers' batch price,
    half the live one. Like `limits`, never part of a task's hash: a batch answer and a live one share a cache
    entry."""

    poll_s: float = 30.0
    max_requests: int | None = None  # per batch; None: the provider's own limit
    retry: str = "batch"  # requests that errored, expired or were cancelled: asked again in a new batch, or "live"


BATCH_DISCOUNT = 0.5  # OpenAI's Batch API and Anthropic's Message Batches both charge half


@dataclass(frozen=True)
class Endpoint:
    """A callable model: what a provider needs to send one request. Shared by models and LLM judges."""

    name: str
    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    system_prompt: str | None = None
    params: Params = Params()
    price: Price = Price()
    limits: Limits = Limits()
    batch: BatchMode | None = None
    settings: tuple[tuple[str, Any], ...] = ()  # its provider's own fields as the spec gives them (ProviderSettings)

    def cost(self, input_tokens: int, output_tokens: int, batched: bool | None = None) -> float:
        """$ for one call's tokens: at the batch rate when it went (or, by default, will go) in a batch."""
        live = self.price.cost(input_tokens, output_tokens)
        return live * BATCH_DISCOUNT if (self.batch is not None if batched is None else batched) else live

    def identity(self) -> dict[str, Any]:
        """The fields that change what the endpoint answers; the cache key is built from these."""
        out: dict[str, Any] = {"provider": self.provider, "model": self.model}
        if self.base_url:
            out["base_url"] = self.base_url
        if self.settings:  # a provider's own settings (an API version, a region) may change the answers
            out["settings"] = dict(self.settings)
        return out


@dataclass(frozen=True)
class Judge:
    """A judge of the spec: its kind, its endpoint where it makes calls, and the settings its kind reads."""

    name: str
    kind: str  # a registered judge kind (`engine.judges.kinds`), as the spec spells it
    endpoint: Endpoint | None = None
    # the fields its kind declares (`JudgeKind.fields`) as the spec gives them, each kind reading its own with
    # its own defaults through its typed record (`KindSettings`: a metric judge's `metric` and `tolerance`, an
    # embedding judge's `margin`, an LLM judge's `structured`); no kind's setting sits on every judge
    settings: Mapping[str, Any] = field(default_factory=dict, hash=False)

@dataclass(frozen=True)
class VibeExamples:
    """Answers that sit at each end of a vibe. An embedding judge then places outputs between the mean
    embeddings of these examples instead of between the one-line definitions: a vibe found as a cluster of
    answers is defined by answers, and a sentence describing it embeds far from them."""

    low: tuple[str, ...]
    high: tuple[str, ...]


@dataclass(frozen=True)
class Vibe:
    """A vibe: its name, its low and high poles in words, and a metric or judges that measure it."""

    name: str
    low: str
    high: str
    metric: str | None = None
    judges: tuple[str, ...] = ()
    examples: VibeExamples | None = None


def vibe_examples(raw: dict[str, list[str]] | None) -> VibeExamples | None:
    return VibeExamples(tuple(raw["low"]), tuple(raw["high"])) if raw else None


@dataclass(frozen=True)
class Discovery:
    """How vibes are discovered where a spec asks for it: the method, its proposer and how many to keep."""

    method: str = "statistical"
    proposer: str | None = None
    max_vibes: int = 10
    sentences: bool = False  # statistical: measures of sentences' meaning among the candidates
    namer: str | None = None  # with sentences: an LLM judge that names each measure of meaning from its examples
    pairs_per_round: int = 20
    batch: int = 5
    iterations: int = 3
    kappa_min: float = 0.2
    separability_min: float = 0.05


@dataclass(frozen=True)
class Analysis:
    """One analysis of the spec: its method, dataset, models and the method's typed options."""

    name: str
    method: str
    dataset: str
    models: tuple[str, ...] = ()
    options: Options = field(default_factory=Options)  # the method's own class; read with `ThatClass.of(analysis)`

    def comparisons(self) -> list[tuple[str, str]]:
        """The (model, model it is compared with) pairs of a method that compares answers in pairs: every
        model against the `reference` when one is named, else the two models as listed."""
        reference = self.options.reference if isinstance(self.options, PairOptions) else None
        if reference is None:
            return [(self.models[0], self.models[1])]
        return [(model, reference) for model in self.models if model != reference]


@dataclass(frozen=True)
class Resources:
    """What one replica of a model (or one encoder actor) reserves on a Ray cluster, and how many there are."""

    num_cpus: float = 1.0
    num_gpus: float = 0.0
    replicas: int = 1


@dataclass(frozen=True)
class Execution:
    """Where a run's work happens. Never part of a task's hash: the same task has the same result on any backend,
    so a run may move between them and keep its cache."""

    backend: str = "local"
    address: str | None = None  # None: $RAY_ADDRESS, else "auto"
    batch_size: int | None = None
    # keyed by a local model's weights: the fields the spec gives, the rest from the provider's defaults
    resources: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    embeddings: Resources = Resources()

    def replica_resources(self, weights: str, provider: str) -> Resources:
        gpus = PROVIDERS[provider].gpus if provider in PROVIDERS else 0.0
        default = Resources(num_cpus=1.0, num_gpus=gpus) if gpus else Resources()
        given: dict[str, Any] = dict(self.resources.get(weights, {}))
        return replace(default, **given)


@dataclass(frozen=True)
class Spec:
    name: str
    path: Path
    description: str
    models: dict[str, Endpoint]
    judges: dict[str, Judge]
    datasets: dict[str, Dataset]
    vibes: tuple[Vibe, ...]
    discovery: Discovery | None
    personas: dict[str, Persona]
    analyses: dict[str, Analysis]
    report: dict[str, Any]
    document: dict[str, Any]  # the merged, validated document (for hashing and diffs)
    skipped_judges: tuple[str, ...] = ()  # optional judges left out because their API key is unset
    execution: Execution = Execution()
    gates: Mapping[str, float] = field(default_factory=dict)  # vibe -> the largest shift `vibe compare` allows


JUDGE_MAX_TOKENS = 256  # a verdict with a sentence of reasoning; generations default to Params.max_tokens
