"""Typed view of a validated spec: the data contract between the spec stage and the planner.

Only validated documents reach `spec_from_document`, so these constructors fill defaults but do not check.
Relative file paths are resolved against the spec's folder here, once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.judges.kinds import JudgeKind, judge_kind
from engine.provider_table import PROVIDERS, batch_providers
from engine.registry import Options, PairOptions, get_method
from engine.spec.data_model import Dataset
from engine.spec.dataset_entries import dataset_from, recorded_models
from engine.spec.paths import resolve_path
from engine.spec.profiles import read_profile

# Folders the report writes beside an analysis' own output folder (run_dir/<analysis>/): an analysis may not
# take one of these names, or re-rendering the report would replace its results.
REPORT_FOLDERS = ("vibes", "explore", "charts", "answers", "profiles", "assets")
# What every analysis block may hold, whatever its method; the rest are the method's options.
ANALYSIS_FIELDS = {"dataset": {"type": "string"}, "description": {"type": "string"}, "method": {"type": "string"},
                   "models": {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": True}}


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

    def cost(self, input_tokens: int, output_tokens: int, batched: bool | None = None) -> float:
        """$ for one call's tokens: at the batch rate when it went (or, by default, will go) in a batch."""
        live = self.price.cost(input_tokens, output_tokens)
        return live * BATCH_DISCOUNT if (self.batch is not None if batched is None else batched) else live

    def identity(self) -> dict[str, Any]:
        """The fields that change what the endpoint answers; the cache key is built from these."""
        out: dict[str, Any] = {"provider": self.provider, "model": self.model}
        if self.base_url:
            out["base_url"] = self.base_url
        return out


@dataclass(frozen=True)
class Judge:
    name: str
    kind: str  # a registered judge kind (`engine.judges.kinds`), as the spec spells it
    endpoint: Endpoint | None = None
    metric: str = "auto"
    tolerance: float = 0.05
    margin: float = 0.02
    structured: str = "auto"  # LLM judges: answer in the prompt's JSON schema (auto) or in free text (off)
    # the fields its kind declares (`JudgeKind.fields`) as the spec gives them: a kind added later reads its own here
    settings: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def kind_of(self) -> JudgeKind:
        return judge_kind(self.kind)

    @property
    def offline(self) -> bool:
        """Computed here from the answers; otherwise a model is called (the judge has an endpoint)."""
        return self.kind_of.offline

    @property
    def answers_in_schema(self) -> bool:
        return self.endpoint is not None and self.structured == "auto"

    def can_score(self, vibe: Vibe) -> bool:
        """Whether a panel sends `vibe` to this judge: its kind decides (`JudgeKind.can_score`)."""
        return self.kind_of.can_score(self, vibe)


@dataclass(frozen=True)
class VibeExamples:
    """Answers that sit at each end of a vibe. An embedding judge then places outputs between the mean
    embeddings of these examples instead of between the one-line definitions: a vibe found as a cluster of
    answers is defined by answers, and a sentence describing it embeds far from them."""

    low: tuple[str, ...]
    high: tuple[str, ...]


@dataclass(frozen=True)
class Vibe:
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
    method: str = "statistical"
    proposer: str | None = None
    max_vibes: int = 10
    pairs_per_round: int = 20
    batch: int = 5
    iterations: int = 3
    kappa_min: float = 0.2
    separability_min: float = 0.05


@dataclass(frozen=True)
class Persona:
    name: str
    description: str
    dimensions: dict[str, int] = field(default_factory=dict)  # judged dimension -> weight 1..5
    asks_for: str | None = None  # what they ask for and how (the profile's input dimensions)
    profile: Path | None = None
    derive_with: str | None = None
    style: str | None = None  # how the persona wants answers written (the profile's expressive_style)
    prefers: dict[str, str] = field(default_factory=dict)  # metric -> "high" | "low", for offline judges


@dataclass(frozen=True)
class Analysis:
    name: str
    method: str
    dataset: str
    models: tuple[str, ...] = ()
    options: Options = field(default_factory=Options)  # the method's own class; read with `ThatClass.of(analysis)`

    def __post_init__(self) -> None:
        """An analysis built without options has its method's defaults, as one whose spec block sets none."""
        if type(self.options) is Options:
            object.__setattr__(self, "options", get_method(self.method).options())

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


def _execution(raw: dict[str, Any] | None) -> Execution:
    raw = raw or {}
    return Execution(backend=raw.get("backend", "local"), address=raw.get("address"),
                     batch_size=raw.get("batch_size"),
                     resources={name: dict(r) for name, r in (raw.get("resources") or {}).items()},
                     embeddings=Resources(**(raw.get("embeddings") or {})))


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


def _persona(name: str, raw: dict[str, Any], base: Path) -> Persona:
    """Inline fields win over the profile's; semantics has already read the profile once, so it parses."""
    path = resolve_path(base, raw["profile"]) if "profile" in raw else None
    profile = read_profile(path) if path else None
    description = raw.get("description") or (profile.description if profile else None) or ""
    return Persona(name=name, description=description,
                   dimensions=dict(raw.get("dimensions") or (profile.weights if profile else {})),
                   asks_for=raw.get("asks_for") or (profile.asks_for if profile else None), profile=path,
                   derive_with=raw.get("derive_with"),
                   style=profile.style if profile else None, prefers=dict(raw.get("prefers", {})))


def _batch_mode(raw: dict[str, Any], default: bool) -> BatchMode | None:
    """`batch: true`, its options, `false`, or (unset) the execution's default where the provider has batches."""
    value = raw.get("batch", default and raw["provider"] in batch_providers())
    if value is False:
        return None
    return BatchMode(**value) if isinstance(value, dict) else BatchMode()


def _endpoint(name: str, raw: dict[str, Any], default_max_tokens: int | None = None,
              batch_default: bool = False) -> Endpoint:
    params = dict(raw.get("params", {}))
    if default_max_tokens is not None:
        params.setdefault("max_tokens", default_max_tokens)
    return Endpoint(
        name=name,
        provider=raw["provider"],
        model=raw.get("model", name),
        base_url=raw.get("base_url"),
        api_key_env=raw.get("api_key_env"),
        system_prompt=raw.get("system_prompt"),
        params=Params(**{**params, "stop": tuple(params.get("stop", ()))}),
        price=Price(**raw.get("price", {})),
        limits=Limits(**{**PROVIDERS[raw["provider"]].limits, **raw.get("limits", {})}),
        batch=_batch_mode(raw, batch_default),
    )


def spec_from_document(doc: dict[str, Any], path: Path) -> Spec:
    base = path.parent
    judges: dict[str, Judge] = {}
    skipped = {name for name, raw in (doc.get("judges") or {}).items()
               if raw.get("optional") and not os.environ.get(raw["api_key_env"])}
    for name, raw in (doc.get("judges") or {}).items():
        if name in skipped:
            continue
        kind = judge_kind(raw["kind"])
        judges[name] = Judge(
            name=name,
            kind=raw["kind"],
            endpoint=(None if kind.offline
                      else _endpoint(name, raw, JUDGE_MAX_TOKENS, bool((doc.get("execution") or {}).get("batch")))),
            metric=raw.get("metric", "auto"),
            tolerance=raw.get("tolerance", 0.05),
            margin=raw.get("margin", 0.02),
            structured="off" if raw.get("structured") in ("off", False) else "auto",  # YAML 1.1 reads off as false
            settings={key: raw[key] for key in kind.fields if key in raw},
        )
    vibes: list[Vibe] = []
    discovery: Discovery | None = None
    for raw in doc.get("vibes") or []:
        if "discover" in raw:
            discovery = Discovery(**raw["discover"])
        else:
            vibe_judges = tuple(j for j in raw.get("judges", ()) if j not in skipped)
            vibes.append(Vibe(raw["name"], raw["low"], raw["high"], raw.get("metric"), vibe_judges,
                              vibe_examples(raw.get("examples"))))
    personas = {name: _persona(name, raw, base) for name, raw in (doc.get("personas") or {}).items()}
    analyses = {
        name: Analysis(
            name=name,
            method=raw["method"],
            dataset=raw["dataset"],
            models=tuple(raw.get("models", ())),
            options=get_method(raw["method"]).options.from_spec({
                k: ([j for j in v if j not in skipped] if k in ("judges", "preference_judges") else v)
                for k, v in raw.items() if k not in ANALYSIS_FIELDS}),
        )
        for name, raw in (doc.get("analyses") or {}).items()
    }
    return Spec(
        name=doc["name"],
        path=path,
        description=doc.get("description", ""),
        models={name: _endpoint(name, raw) for name, raw in (doc.get("models") or {}).items()},
        judges=judges,
        datasets={name: dataset_from(name, raw, base, recorded_models(doc, name))
                  for name, raw in (doc.get("datasets") or {}).items()},
        vibes=tuple(vibes),
        discovery=discovery,
        personas=personas,
        analyses=analyses,
        report=dict(doc.get("report") or {}),
        document=doc,
        skipped_judges=tuple(sorted(skipped)),
        execution=_execution(doc.get("execution")),
        gates={vibe: float(gate["max_shift"]) for vibe, gate in (doc.get("gates") or {}).items()},
    )
