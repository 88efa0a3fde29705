"""Checks the JSON Schema cannot express: names that must refer to declared entries, files that must exist,
and combinations of settings that only make sense together."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.formats import column_owners, dataset_format, format_names
from engine.judges.kinds import COMMON_FIELDS, judge_kind, scores, settings_of
from engine.judges.metrics import METRICS, is_metric
from engine.names import did_you_mean
from engine.provider_table import (
    PROVIDERS,
    batch_providers,
    in_cluster_providers,
    is_recorded,
    provider_settings,
    setting_owners,
)
from engine.registry import get_method, method_names
from engine.spec.checker import SpecChecker
from engine.spec.model import REPORT_FOLDERS, Judge, Vibe
from engine.spec.problems import Problem
from engine.spec.profiles import JUDGED_DIMENSIONS, ProfileError, read_profile
from engine.spec.yaml_source import PathKey, SourceMap


def check_semantics(document: dict[str, Any], source: SourceMap, spec_path: Path) -> list[Problem]:
    checker = SpecChecker(document, source, spec_path)
    _check_models(checker)
    _check_judges(checker)
    _check_datasets(checker)
    _check_vibes(checker)
    _check_personas(checker)
    _check_analyses(checker)
    _check_execution(checker)
    _check_gates(checker)
    return checker.problems


def _check_endpoint(c: SpecChecker, path: PathKey, entry: dict[str, Any]) -> None:
    provider = entry.get("provider")
    info = PROVIDERS.get(provider) if isinstance(provider, str) else None
    if info is None:
        return
    if info.bundled and entry["model"] not in info.bundled:
        model = entry["model"]
        if not c.file_path((*path, "model"), model).is_file():
            c.report((*path, "model"), f"{provider} model {model!r} is neither bundled "
                     f"({', '.join(info.bundled)}) nor an existing weights file")
    for refused, why in info.refuses.items():
        if refused in entry:
            c.report((*path, refused), why)
    if not info.takes_key and "api_key_env" in entry:
        c.report((*path, "api_key_env"), f"provider {provider!r} takes no API key")
    for key, owners in setting_owners().items():  # another provider's own setting: the schema lists it for all
        if key in entry and provider not in owners:
            c.report((*path, key), f"provider {provider!r} takes no {key!r} (a setting of {', '.join(owners)})")
    if entry.get("batch") not in (None, False) and provider not in batch_providers():
        c.report((*path, "batch"), f"provider {provider!r} has no batch API (batches: {', '.join(batch_providers())}); "
                 "recorded and local models never batch")


def _check_models(c: SpecChecker) -> None:
    for name, model in c.section("models").items():
        _check_endpoint(c, ("models", name), model)


def _check_judges(c: SpecChecker) -> None:
    """Each judge against its kind: the fields it takes, its kind's own checks, an endpoint where a model answers."""
    for name, judge in c.section("judges").items():
        path = ("judges", name)
        kind = judge_kind(judge["kind"])  # the schema holds the kind to the registered names
        if not kind.offline:
            _check_endpoint(c, path, judge)
        allowed = (*COMMON_FIELDS, *kind.fields, *(() if kind.offline else provider_settings(judge.get("provider"))))
        for key in judge:
            if key not in allowed:
                takes = ", ".join(kind.fields) or "nothing else"
                c.report((*path, key), f"{kind.label} (kind: {judge['kind']}) takes no {key!r} (it takes: {takes})")
        for key, message in kind.check(judge):
            c.report((*path, key), message)
        if judge.get("optional") and "api_key_env" not in judge:
            c.report((*path, "optional"), "optional judges are skipped when api_key_env is unset; give api_key_env")


def _check_execution(c: SpecChecker) -> None:
    """`execution.resources` names the weights of local models (the `model:` of a local or vllm entry)."""
    weights = {entry.get("model", name) for section in ("models", "judges")
               for name, entry in c.section(section).items() if entry.get("provider") in in_cluster_providers()}
    for name in (c.section("execution").get("resources") or {}):
        if name not in weights:
            held = ", ".join(sorted(weights)) or "none: no model has provider local or vllm"
            c.report(("execution", "resources", name), f"no local model has weights {name!r}"
                     f"{did_you_mean(name, weights)} (key resources by a local model's `model:` value: {held})")


def _check_datasets(c: SpecChecker) -> None:
    for name, ds in c.section("datasets").items():
        path = ("datasets", name)
        src = ds["source"]
        raw_paths = [src["path"]] if "path" in src else list(src.get("paths", []))
        remote = "urls" in src or "hub" in src
        if not raw_paths:
            c.report((*path, "source"), "give a local 'path' or 'paths' (where the data is, or is cached to)")
        if "urls" in src and len(src["urls"]) != len(raw_paths):
            c.report((*path, "source", "urls"), f"{len(src['urls'])} urls for {len(raw_paths)} local paths")
        if "hub" in src and len(src.get("hub_files", [])) != len(raw_paths):
            c.report((*path, "source", "hub"), "hub needs hub_files, one per local path")
        for i, raw_path in enumerate(raw_paths):
            key: PathKey = (*path, "source", "path") if "path" in src else (*path, "source", "paths", i)
            c.file_problem(key, raw_path, missing_ok=remote, folder_ok=dataset_format(ds.get("format")).reads_folders)
        for column, entry in src.get("join", {}).items():
            c.file_problem((*path, "source", "join", column, "path"), entry["path"])
        for mapping in ("outputs", "scores"):
            for model in ds.get("fields", {}).get(mapping, {}):
                c.must_exist((*path, "fields", mapping, model), model, "models")
        for raw, model in ds.get("preference_values", {}).items():
            if model not in ("tie", None):  # null: a value that gives no label
                c.must_exist((*path, "preference_values", raw), model, "models")
        for model, entry in ds.get("fields", {}).get("preferences", {}).items():
            c.must_exist((*path, "fields", "preferences", model), model, "models")
            for raw, named in entry["values"].items():
                if named != "tie":
                    c.must_exist((*path, "fields", "preferences", model, "values", raw), named, "models")
        _check_format(c, path, ds)
        if "preference_values" in ds and "preference" not in ds.get("fields", {}):
            c.report((*path, "preference_values"), "preference_values needs fields.preference")


def _check_format(c: SpecChecker, path: PathKey, ds: dict[str, Any]) -> None:
    """The columns a dataset maps fit its format, and the format's own options name real models."""
    fmt = dataset_format(ds.get("format"))
    form = fmt.name
    given = ds.get("fields", {})
    fields = {**fmt.fields, **given}
    for key in ("prompt", *fmt.needs):
        if key not in fields:
            c.report((*path, "fields"), f"format: {form} needs fields.{key}")
    for key, allowed in fmt.choices.items():
        if key in given and given[key] not in allowed:
            c.report((*path, "fields", key), f"fields.{key} is {given[key]!r}; format: {form} reads "
                     f"{' or '.join(allowed)}")
    owners = column_owners()
    for key in given:
        owner = owners.get(key, [])
        if owner and form not in owner:
            c.report((*path, "fields", key), f"fields.{key} is read by format: {' | '.join(owner)}, not {form}")
    if "winner_values" in ds:
        if not fmt.battles:
            c.report((*path, "winner_values"), f"winner_values reads a battle log's winner column; format: {form} "
                     "has none")
        elif isinstance(ds["winner_values"], dict):
            for raw, side in ds["winner_values"].items():
                if side not in ("a", "b", "tie"):
                    c.must_exist((*path, "winner_values", raw), side, "models")
    conversational = [n for n in format_names() if dataset_format(n).conversations]
    for key in ("unit", "context_tokens"):
        if key in ds and not fmt.conversations:
            c.report((*path, key), f"{key} chooses what is judged of a conversation; format: {form} reads single "
                     f"answers (conversation formats: {', '.join(conversational)})")
    if "model_names" in ds:
        if not fmt.tidy:
            c.report((*path, "model_names"), "model_names renames the models a tidy source names in its rows; a "
                     "wide table names them in fields.outputs")
        for raw, model in ds["model_names"].items():
            c.must_exist((*path, "model_names", raw), model, "models")


def _check_gates(c: SpecChecker) -> None:
    """A gate names a declared vibe, with discovery on or off: what discovery will find has no name yet, so a
    gate on a name nobody declared is a misspelling."""
    vibes = c.doc.get("vibes") or []
    declared = [v["name"] for v in vibes if "name" in v]
    for name in c.doc.get("gates") or {}:
        if name not in declared:
            c.report(("gates", name), f"gate names no declared vibe {name!r}{did_you_mean(name, declared)}")


def _check_vibes(c: SpecChecker) -> None:
    seen: dict[str, int] = {}
    discover_blocks = 0
    for i, vibe in enumerate(c.doc.get("vibes") or []):
        path = ("vibes", i)
        if "discover" in vibe:
            discover_blocks += 1
            if discover_blocks > 1:
                c.report(path, "only one discover block per spec")
            block = vibe["discover"]
            method = block.get("method", "statistical")
            if method == "llm":
                if "proposer" not in block:
                    c.report((*path, "discover"), "LLM discovery needs a 'proposer' judge")
                else:
                    c.judge_for((*path, "discover", "proposer"), block["proposer"], "text")
            elif "proposer" in block:
                c.report((*path, "discover", "proposer"), "statistical discovery takes no proposer")
            if block.get("sentences") and block.get("method", "statistical") != "statistical":
                c.report((*path, "discover", "sentences"), "measures of sentences' meaning are statistical "
                         "discovery's; an LLM proposer reads the answers themselves")
            if "namer" in block:
                if not block.get("sentences") or method != "statistical":
                    c.report((*path, "discover", "namer"), "a namer names statistical discovery's measures of "
                             "meaning: it needs 'sentences: true'")
                else:
                    c.judge_for((*path, "discover", "namer"), block["namer"], "text")
            continue
        name = vibe["name"]
        if "metric" in vibe and not is_metric(vibe["metric"]):
            c.report((*path, "metric"), f"unknown metric {vibe['metric']!r}{did_you_mean(vibe['metric'], METRICS)} "
                     f"(known: {', '.join(sorted(METRICS))}, or phrases:<n-gram>|<n-gram>..., or "
                     "sentences:<threshold>|<example sentence>|...)")
        if "metric" in vibe and "examples" in vibe:
            c.report((*path, "examples"), "a vibe with a 'metric' is measured, not placed between examples: "
                     "give one or the other")
        if name in seen:
            c.report((*path, "name"), f"duplicate vibe {name!r} (also vibes[{seen[name]}])")
        seen[name] = i
        c.each_ref((*path, "judges"), vibe.get("judges", []), "judges")


def _check_personas(c: SpecChecker) -> None:
    for name, persona in c.section("personas").items():
        path = ("personas", name)
        profile = c.file_path((*path, "profile"), persona["profile"]) if "profile" in persona else None
        if profile is not None and not profile.is_file():
            c.report((*path, "profile"), f"profile not found: {profile}")
        elif profile is not None:
            try:
                read = read_profile(profile)
            except ProfileError as exc:
                c.report((*path, "profile"), str(exc))
            else:
                if not persona.get("description") and not read.description:
                    c.report(path, f"no description here or in {profile}")
        elif not persona.get("description"):
            c.report(path, "a persona needs a 'description' (or a 'profile' that has one)")
        for metric in persona.get("prefers", {}):
            if not is_metric(metric):
                c.report((*path, "prefers", metric), f"unknown metric {metric!r}{did_you_mean(metric, METRICS)} "
                         f"(known: {', '.join(sorted(METRICS))})")
        for dimension in persona.get("dimensions", {}):
            if dimension not in JUDGED_DIMENSIONS:
                c.report((*path, "dimensions", dimension), f"unknown dimension {dimension!r}"
                         f"{did_you_mean(dimension, JUDGED_DIMENSIONS)} (known: {', '.join(JUDGED_DIMENSIONS)})")
        if "derive_with" in persona:
            c.judge_for((*path, "derive_with"), persona["derive_with"], "text")
        if not any(k in persona for k in ("profile", "dimensions", "derive_with")):
            c.report(path, "give 'dimensions' (weights), a 'profile' file, or 'derive_with' an LLM judge")


def _check_analyses(c: SpecChecker) -> None:
    """What every analysis needs whatever its method; then the method's own checks (`AnalysisMethod.check`)."""
    used = {a.get("method") for a in c.section("analyses").values()} & set(method_names())
    folders = (*REPORT_FOLDERS, *sorted({f for method in used for f in get_method(str(method)).report_folders}))
    for name, analysis in c.section("analyses").items():
        path = ("analyses", name)
        if name in folders:
            c.report(path, f"analysis name {name!r} is a folder of the report ({', '.join(folders)}); rename it")
        method = analysis.get("method")
        if method is None:
            c.report(path, f"missing 'method' ({', '.join(method_names())}); or name the analysis after its "
                     f"method{did_you_mean(name, method_names())}")
            continue
        dataset_ok = c.must_exist((*path, "dataset"), analysis["dataset"], "datasets")
        c.each_ref((*path, "models"), analysis.get("models", []), "models")
        get_method(method).check(c, path, analysis)
        if dataset_ok:
            _check_recorded_outputs(c, path, analysis)


def check_vibes_have_judges(c: SpecChecker, path: PathKey, analysis: dict[str, Any]) -> None:
    """Every vibe an analysis scores needs at least one judge in its panel that can score it (Judge.can_score)."""
    for i, raw in enumerate(c.doc.get("vibes") or []):
        if "name" not in raw or (analysis.get("vibes") and raw["name"] not in analysis["vibes"]):
            continue
        vibe = Vibe(raw["name"], raw["low"], raw["high"], raw.get("metric"))
        named = raw.get("judges") or analysis.get("judges", [])
        if any(j not in c.section("judges") for j in named):
            continue  # an undeclared judge is reported where it is named: the root cause, not this
        panel = [c.section("judges")[j] for j in named]
        if not any(scores(_sketch(j), vibe) for j in panel):
            kinds = sorted({j["kind"] for j in panel})
            which = "; ".join(f"{judge_kind(k).label} scores {judge_kind(k).scores_which}" for k in kinds)
            able = [v["name"] for v in c.doc.get("vibes") or [] if "name" in v and "low" in v and any(
                scores(_sketch(j), Vibe(v["name"], v["low"], v["high"], v.get("metric"))) for j in panel)]
            fix = (f"; add a judge that can score it, or name the vibes this analysis measures under analyses."
                   f"{path[-1]}.vibes (its panel scores: {', '.join(able)})" if able else "")
            c.report(("vibes", i), f"no judge of analysis {path[-1]!r} can score vibe {vibe.name!r} (its panel's "
                     f"kinds: {', '.join(kinds) or 'none'}){': ' + which if which else ''}{fix}")


def _sketch(raw: dict[str, Any]) -> Judge:
    """A spec's judge entry as far as its kind reads it to say which vibes it scores: the settings of its
    kind's own fields."""
    return Judge(name="", kind=raw["kind"], settings=settings_of(judge_kind(raw["kind"]), raw))


def _check_recorded_outputs(c: SpecChecker, path: PathKey, analysis: dict[str, Any]) -> None:
    dataset = c.section("datasets")[analysis["dataset"]]
    outputs = dataset.get("fields", {}).get("outputs", {})
    if dataset_format(dataset.get("format")).tidy:  # the rows name the models: checked when they are read
        return
    for i, model in enumerate(analysis.get("models", [])):
        entry = c.section("models").get(model)
        if entry and is_recorded(entry["provider"]) and model not in outputs:
            c.report((*path, "models", i),
                     f"model {model!r} is recorded but dataset {analysis['dataset']!r} maps no output column to it "
                     "(fields.outputs)")
