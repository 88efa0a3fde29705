"""A validated spec document read into the typed records of `engine.spec.model`: defaults filled in, paths
resolved against the spec's folder (once), each judge's own settings and each analysis' options read through
its kind and its method. Only validated documents reach `spec_from_document`, so nothing here checks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from engine.judges.kinds import judge_kind, settings_of
from engine.provider_table import PROVIDERS, batch_providers, provider_settings
from engine.registry import get_method
from engine.spec.dataset_entries import dataset_from, recorded_models
from engine.spec.model import (
    ANALYSIS_FIELDS,
    JUDGE_MAX_TOKENS,
    Analysis,
    BatchMode,
    Discovery,
    Endpoint,
    Execution,
    Judge,
    Limits,
    Params,
    Price,
    Resources,
    Spec,
    Vibe,
    vibe_examples,
)
from engine.spec.paths import resolve_path
from engine.spec.profiles import Persona, read_profile


def _execution(raw: dict[str, Any] | None) -> Execution:
    raw = raw or {}
    return Execution(backend=raw.get("backend", "local"), address=raw.get("address"),
                     batch_size=raw.get("batch_size"),
                     resources={name: dict(r) for name, r in (raw.get("resources") or {}).items()},
                     embeddings=Resources(**(raw.get("embeddings") or {})))


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
        settings=tuple((key, raw[key]) for key in provider_settings(raw["provider"]) if key in raw),
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
            settings=settings_of(kind, raw),
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
