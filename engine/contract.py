"""The contract every plug-in keeps, checked on everything registered: built-in, added by a line, or
installed by a package through its entry points (scikit-learn's `check_estimator` is the model).

`checks()` lists one `Check` per (kind of plug-in, name[, role]); calling it returns the broken promises
(empty: it keeps them all). `python -m engine.contract` runs them all and exits non-zero when any fails, so
a plug-in package can run the same suite in its own CI. What each promises:

- analysis method: registered under its name; its options are a dataclass of `Options` whose fields are the
  properties of its schema; every section it fills has a template; a method that discovers takes `PairOptions`.
- judge kind × role: a label; roles that exist; every field it takes is in the spec schema; its pair settings
  are plain JSON and the same every time; an offline kind in the vibe role returns a `PairVerdict` of −1, 0
  or +1 for each request, in the rating roles a `RatingScore` from 1 to 5 with an explanation; a page can
  describe it in each role; an older spelling forwards every hook of `JudgeKind`.
- dataset format: a description; the columns it needs are columns it reads or presets, each described by the
  schema; its winner reading says a, b or tie (or "sign"); it reads records; its sniffing claims no plain
  prompts file.
- provider: the fields it needs are model fields of the schema; its client module registers it (and its batch
  client module, where it has one).
- exporter: its module defines `write(run, out)`.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from engine import settings
from engine.datasets.items import Item
from engine.execute.providers.base import _BATCH_CLIENTS, _CLIENTS
from engine.export import exporter, exporter_names
from engine.formats import DatasetFormat, dataset_format, format_names
from engine.judges.fitting import AnswerToRate, PairToFit
from engine.judges.kinds import ALIASES, ROLES, JudgeKind, judge_kind, kind_names
from engine.judges.verdicts import PairVerdict, RatingScore
from engine.provider_info import ProviderSettings
from engine.provider_table import PROVIDERS, settings_record
from engine.registry import (
    GENERATION,
    JUDGE,
    PHASES,
    AnalysisMethod,
    Options,
    PairOptions,
    get_method,
    method_names,
)
from engine.requests import PairJudgment, Rating
from engine.spec.load import kind_block, schema
from engine.spec.model import ANALYSIS_FIELDS, Judge, Vibe

COMMON_COLUMNS = ("id", "prompt", "reference", "difficulty", "category", "image", "preference", "tests", "outputs",
                  "scores", "preferences")
SAMPLE_VIBES = (Vibe("length", "short answers", "long answers", metric="length_words"),
                Vibe("warmth", "cold and curt", "warm and friendly"))
SAMPLE_ITEM = Item("contract-0", "What is the capital of France?", reference="Paris is the capital of France.",
                   tests="assert True")
ANSWERS = {"a": "The capital of France is Paris, a city on the Seine.", "b": "Lyon."}


@dataclass(frozen=True)
class Check:
    kind: str  # analysis method | judge kind | dataset format | provider
    name: str
    run: Callable[[], list[str]]
    role: str = ""

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.name}" + (f":{self.role}" if self.role else "")


def checks(plugins: Sequence[str] = ()) -> list[Check]:
    """One check per registered plug-in (a judge kind once per role it has), or per plug-in named in
    `plugins`. Listing them imports nothing but the judge kinds listed (a kind's roles are its own), and a kind
    whose module cannot be imported is a failing check of its own, so one plug-in's missing dependency hides no
    other's checks."""
    out = [Check("analysis method", name, partial(_method_named, name)) for name in method_names()]
    for name in kind_names():
        if plugins and name not in plugins:
            continue  # not imported: checking one plug-in needs only what that plug-in needs
        try:
            roles = sorted(judge_kind(name).roles)
        except Exception as exc:
            out.append(Check("judge kind", name, partial(_failed, f"its module cannot be imported: {exc!r}")))
            continue
        out += [Check("judge kind", name, partial(_kind_named, name, role), role) for role in roles]
    out += [Check("dataset format", name, partial(_format_named, name)) for name in format_names()]
    out += [Check("provider", name, partial(provider_problems, name)) for name in PROVIDERS]
    out += [Check("exporter", name, partial(exporter_problems, name)) for name in exporter_names()]
    return [check for check in out if not plugins or check.name in plugins]


def run_check(check: Check) -> list[str]:
    """What `check` finds broken; a check that raises reports what it raised (and the checks after it still
    run), rather than stopping the suite."""
    try:
        return check.run()
    except Exception as exc:
        return [f"the check raised {exc!r}"]


def _failed(problem: str) -> list[str]:
    return [problem]


def _kind_named(name: str, role: str) -> list[str]:
    return kind_problems(judge_kind(name), role)


def _method_named(name: str) -> list[str]:
    return method_problems(get_method(name))


def _format_named(name: str) -> list[str]:
    return format_problems(dataset_format(name))


def method_problems(method: AnalysisMethod) -> list[str]:
    problems = []
    if get_method(method.name) is not method:
        problems.append(f"not registered under its name {method.name!r}")
    if not (dataclasses.is_dataclass(method.options) and issubclass(method.options, Options)):
        return [*problems, "its options are not a dataclass extending Options"]
    fields = {f.name for f in dataclasses.fields(method.options)}
    block = schema()["properties"]["analyses"]["additionalProperties"]
    rule = next((r["then"] for r in block["allOf"] if r["if"]["properties"]["method"]["const"] == method.name), None)
    described = set(rule["properties"]) - set(ANALYSIS_FIELDS) if rule else set()
    if described != fields:
        problems.append(f"its options {sorted(fields)} differ from its schema's properties {sorted(described)}")
    folder = method.template_folder()
    for section in method.sections:
        if section not in method.templates and not (folder and (folder / "sections" / f"{section}.html.j2").is_file()):
            problems.append(f"section {section!r} has no template")
    if method.discovers and not issubclass(method.options, PairOptions):
        problems.append("it discovers vibes, so its options must extend PairOptions")
    problems += [f"its stage {stage!r} runs at {phase!r}, not one of {list(PHASES)}" for stage, phase in
                 method.stages.items() if phase not in PHASES]
    problems += [f"it declares every run's stage {stage!r} as its own" for stage in method.stages
                 if stage in (GENERATION, JUDGE)]
    return problems


def kind_problems(kind: JudgeKind, role: str) -> list[str]:
    problems = [] if kind.label else ["no label"]
    if role not in ROLES:
        return [*problems, f"role {role!r} is not one of {sorted(ROLES)}"]
    judges = schema()["properties"]["judges"]["additionalProperties"]["properties"]
    problems += [f"field {f!r} is not in the spec schema (declare it in field_schemas)"
                 for f in kind.fields if f not in judges]
    record = kind.settings_record
    problems += [f"its settings record has {f.name!r}, which is not one of its fields" for f in
                 (dataclasses.fields(record) if record else ()) if f.name not in kind.fields]
    rules = schema()["properties"]["judges"]["additionalProperties"]["allOf"]
    problems += [f"its required field {f!r} is not one of its fields" for f in kind.required if f not in kind.fields]
    problems += [f"its settings record's {f!r} has no default, yet the kind does not require it (a judge without "
                 "one would pass `vibe validate` and fail in the run)" for f in (settings.required(record) if record
                                                                                  else ()) if f not in kind.required]
    problems += [f"sample_settings gives no value for its required field {f!r}" for f in kind.required
                 if f not in kind.sample_settings]
    if kind.field_schemas and kind_block(kind.name, kind.field_schemas, kind.required) not in rules:
        problems.append("its field_schemas are not the spec schema's rule for its judges")
    problems += [f"sample_settings names {f!r}, which is not one of its fields" for f in kind.sample_settings
                 if f not in kind.fields]
    judge = Judge(f"contract-{kind.name}", kind.name, settings=dict(kind.sample_settings))
    if not kind.describe(judge, role).strip():
        problems.append(f"describe() says nothing in role {role!r}")
    if kind.name in ALIASES:
        problems += [f"older spelling does not forward {hook}()" for hook in _hooks()
                     if getattr(type(kind), hook) is getattr(JudgeKind, hook)]
    if not kind.offline:
        return problems
    if kind.learns:
        problems += _fit_problems(kind, judge) if role == "vibe" else _fit_rating_problems(kind, judge)
    elif role in ("vibe", "dimension"):
        problems += _pair_problems(kind, judge)
    elif role in ("reference", "tests"):
        problems += _rating_problems(kind, judge)
    return problems


def _hooks() -> list[str]:
    return [name for name, _ in inspect.getmembers(JudgeKind, inspect.isfunction) if name != "does"]


def _pair_problems(kind: JudgeKind, judge: Judge) -> list[str]:
    vibe = next((v for v in SAMPLE_VIBES if kind.can_score(judge, v)), None)
    if vibe is None:
        return []  # it scores only vibes its own settings name
    config = kind.pair_config(judge)
    if json.loads(json.dumps(config)) != config or kind.pair_config(judge) != config:
        return ["pair_config() is not plain JSON, the same every time"]
    request = PairJudgment(judge.name, kind.wire, {"vibe": vibe.name, "low": vibe.low, "high": vibe.high,
                                                  **({"metric": vibe.metric} if vibe.metric else {})},
                           ("a", "b"), config=config)
    verdicts = list(kind.judge_pairs([request, request], ANSWERS))
    if len(verdicts) != 2 or not all(isinstance(v, PairVerdict) and v.score in (-1, 0, 1) for v in verdicts):
        return [f"judge_pairs() gave {verdicts!r}, not one PairVerdict of -1, 0 or +1 per request"]
    return []


def _fit_problems(kind: JudgeKind, judge: Judge) -> list[str]:
    """A learning kind, taught 40 pairs whose labels say the longer answer sits higher: a verdict per pair,
    each −1, 0, +1 or None, and the opposite verdicts on the same pairs swapped."""
    pairs = [PairToFit("Say something.", "word " * (1 + n % 7), "word " * (1 + n % 5), None, f"u{n}",
                       ((n % 7 > n % 5) - (n % 7 < n % 5),)) for n in range(40)]
    swapped = [dataclasses.replace(p, a=p.b, b=p.a, labels=tuple(-y for y in p.labels)) for p in pairs]
    vibe = SAMPLE_VIBES[0]
    fitted, turned = (kind.fit_verdicts(judge, vibe, given, 0) for given in (pairs, swapped))
    if len(fitted.scores) != len(pairs) or not all(s in (-1, 0, 1, None) for s in fitted.scores):
        return [f"fit_verdicts() gave {fitted.scores!r}, not one verdict of -1, 0, +1 or None per pair"]
    if [None if s is None else -s for s in fitted.scores] != turned.scores:
        return ["fit_verdicts() on the same pairs with A and B swapped did not give the opposite verdicts"]
    return []


def _fit_rating_problems(kind: JudgeKind, judge: Judge) -> list[str]:
    """A learning kind in the reference role, taught 30 answers of three models rated by whether they repeat
    the reference: a rating in 1–5 (or None) per answer, and a model's ratings unchanged when its own recorded
    ratings change (a fit never rates a model whose ratings it learned from)."""
    answers = [AnswerToRate("Name the capital of France.", ANSWERS["a" if n % 3 else "b"], str(SAMPLE_ITEM.reference),
                            f"u{n}", f"m{n % 3}", 5.0 if n % 3 else 1.0) for n in range(30)]
    turned = [dataclasses.replace(a, rating=6.0 - a.rating) if a.group == "m0" and a.rating else a for a in answers]
    fitted, again = (kind.fit_ratings(judge, given, 0).ratings for given in (answers, turned))
    if len(fitted) != len(answers) or not all(r is None or 1.0 <= r <= 5.0 for r in fitted):
        return [f"fit_ratings() gave {fitted!r}, not one rating in 1–5 (or None) per answer"]
    if [r for r, a in zip(fitted, answers, strict=True) if a.group == "m0"] != [
            r for r, a in zip(again, answers, strict=True) if a.group == "m0"]:
        return ["fit_ratings() rated a model differently when only that model's own recorded ratings changed"]
    return []


def _rating_problems(kind: JudgeKind, judge: Judge) -> list[str]:
    if not kind.can_rate(SAMPLE_ITEM):
        return []
    planned = kind.rating_input(judge, SAMPLE_ITEM, "corpus", 0)
    if planned is None:
        return []
    fields, config = planned
    if json.loads(json.dumps([fields, config])) != [fields, config]:
        return ["rating_input() is not plain JSON"]
    ratings = list(kind.rate([Rating(judge.name, kind.wire, fields, "a", config=config)], ANSWERS,
                             {"corpus": (str(SAMPLE_ITEM.reference),)}))
    if len(ratings) != 1 or not isinstance(ratings[0], RatingScore):
        return [f"rate() gave {ratings!r}, not one RatingScore per request"]
    rating = ratings[0]
    problems = [] if 1.0 <= rating.value <= 5.0 else [f"rating {rating.value} is outside 1 to 5"]
    if not rating.explanation.strip():
        problems.append("a rating without an explanation")
    if RatingScore.from_json(rating.to_json()) != rating:
        problems.append("a rating does not read back as it was stored")
    return problems


def format_problems(form: DatasetFormat) -> list[str]:
    problems = [] if form.description.strip() else ["no description"]
    columns = schema()["properties"]["datasets"]["additionalProperties"]["properties"]["fields"]["properties"]
    known = set(COMMON_COLUMNS) | set(form.reads) | set(form.fields)
    problems += [f"needs {c!r}, which it neither reads nor presets" for c in form.needs if c not in known]
    problems += [f"column {c!r} is not described by the schema (declare it in columns)"
                 for c in (*form.reads, *form.fields, *form.needs) if c not in columns]
    if form.winners != "sign" and not (isinstance(form.winners, dict)
                                       and set(form.winners.values()) <= {"a", "b", "tie"}):
        problems.append(f"winners {form.winners!r} is neither 'sign' nor a mapping to a, b or tie")
    if type(form).records is DatasetFormat.records or type(form).rows is DatasetFormat.rows:
        problems.append("it does not implement records() and rows()")
    with tempfile.TemporaryDirectory() as folder:
        plain = Path(folder) / "prompts.jsonl"
        rows = [{"id": str(i), "prompt": f"Question {i}?"} for i in range(3)]
        plain.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        if form.sniff(plain, None) is not None or form.sniff(plain, rows) is not None:
            problems.append("its sniff() claims a plain file of prompts")
    return problems


def provider_problems(name: str) -> list[str]:
    info = PROVIDERS[name]
    model_fields = schema()["properties"]["models"]["additionalProperties"]["properties"]
    problems = [f"needs {f!r}, which is not a model field" for f in info.needs if f not in model_fields]
    for what, registry, module in (("client", _CLIENTS, info.client), ("batch client", _BATCH_CLIENTS, info.batches)):
        if module is None:
            continue
        try:
            registry.get(name)
        except KeyError as exc:
            problems.append(f"its {what} module {module} does not register it: {exc}")
    if info.settings is not None:
        record = settings_record(name)
        if not (isinstance(record, type) and dataclasses.is_dataclass(record)
                and issubclass(record, ProviderSettings)):
            problems.append(f"its settings {info.settings} are not a ProviderSettings dataclass")
        else:
            settings.schemas(record)  # a setting whose type has no schema raises, naming it
    return problems


def exporter_problems(name: str) -> list[str]:
    write = getattr(exporter(name), "write", None)
    if not callable(write):
        return ["its module defines no write(run, out)"]
    if len(inspect.signature(write).parameters) != 2:
        return [f"write{inspect.signature(write)} does not take (run, out)"]
    return []


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.contract", description="check that plug-ins keep "
                                     "the contract every plug-in keeps (all registered ones by default)")
    parser.add_argument("--plugin", action="append", default=[], metavar="NAME",
                        help="check only the plug-in(s) of this name (a method, judge kind, format, provider or "
                             "exporter)")
    args = parser.parse_args(argv)
    selected = checks(args.plugin)
    if not selected:
        print(f"no registered plug-in is named {', '.join(args.plugin)}", file=sys.stderr)
        return 2
    failed = 0
    for check in selected:
        problems = run_check(check)
        failed += bool(problems)
        print(f"{'ok  ' if not problems else 'FAIL'} {check.id}" + "".join(f"\n     {p}" for p in problems))
    print(f"{failed} of {len(selected)} plug-in checks failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
