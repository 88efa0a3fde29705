"""The kinds of judge a spec may declare (`judges.<name>.kind`), behind a small lazy registry.

A judge kind says what a judge of that kind takes (its config fields, beyond `kind`, `description` and
`optional`), which jobs it can do (ROLES), whether it runs here without a model (offline) and, if so, how
it answers the tasks planned for it. The spec, the planner and the executor ask the kind; none of them
names one. A kind lives in one module that registers its class with `@judge_kind_class`.

Adding a kind: write its module, add its line to `engine.plugin_tables.JUDGE_KINDS`, or publish it under the
`vibe.judge_kinds` entry-point group from a package of your own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Self

from engine import settings
from engine.plugin_tables import JUDGE_KINDS
from engine.plugins import Plugins, names_with_published

if TYPE_CHECKING:
    from engine.datasets.items import Item
    from engine.judges.fitting import AnswerToRate, FittedRatings, FittedVerdicts, PairToFit
    from engine.judges.verdicts import AnswerMeasure, PairVerdict, RatingScore
    from engine.requests import PairJudgment, Rating
    from engine.spec.model import Judge, Persona, Vibe

# Older spellings still read, each with the kinds it stood for (a warning names them). `embedding` once
# named both offline embedding judges; a judge declared so keeps doing what it did in each place.
ALIASES: dict[str, tuple[str, ...]] = {"embedding": ("embedding_axis", "reference_similarity")}

# The jobs a judge can be given; a spec that gives a judge a job its kind cannot do is a located error.
ROLES: dict[str, str] = {
    "vibe": "score a pair of answers on a vibe",
    "dimension": "score a pair of answers on a persona's dimension",
    "reference": "rate one answer against the dataset's reference answer",
    "tests": "run the dataset's unit tests against the code in an answer",
    "text": "read answers and write free text (propose vibes, rewrite or check a prompt, write a profile, "
            "say which answer is better)",
}
COMMON_FIELDS = ("kind", "description", "optional")  # what every judge entry may hold, whatever its kind
RatingInput = tuple[dict[str, Any], dict[str, Any]]  # an offline rating's (fields, config)


@dataclasses.dataclass(frozen=True)
class KindSettings:
    """A judge kind's own settings as a typed record (like an analysis method's options): subclass it as a
    frozen dataclass with a field per setting, each defaulting to the kind's default, and read a judge's with
    `YourSettings.of(judge)`, so a type checker checks every setting a kind reads."""

    @classmethod
    def of(cls, judge: Judge) -> Self:
        return settings.read(cls, judge.settings)


class JudgeKind:
    """One kind of judge. Subclasses set the class attributes and implement what their roles need."""

    name: ClassVar[str]
    label: ClassVar[str]  # how pages name a judge of this kind: "an LLM judge", "a metric judge"
    roles: ClassVar[frozenset[str]]
    fields: ClassVar[tuple[str, ...]] = ()  # the spec fields it takes, beyond COMMON_FIELDS
    # The JSON schema of each field of its own (beyond the endpoint fields every model entry has), checked only
    # on judges of this kind: the spec schema gets a block per kind when it is read, so two kinds may give one
    # name different schemas, and a new kind's field is validated and located like a built-in one. Read
    # through `judge.settings`.
    field_schemas: ClassVar[dict[str, dict[str, Any]]] = {}
    settings_record: ClassVar[type[KindSettings] | None] = None  # its settings, typed (see KindSettings)
    required: ClassVar[tuple[str, ...]] = ()  # the fields a judge of the kind cannot do without (the schema says so)
    offline: ClassVar[bool] = True  # runs here on the answers; False: a model is called (an endpoint)
    # The judge kind its requests carry. It is part of every task's content hash, so a kind that is
    # renamed keeps the old value here: the cache stays valid and no plan changes.
    wire: ClassVar[str] = ""
    measures: ClassVar[bool] = False  # its verdicts carry a measured value per answer (pages show them)
    reads_examples: ClassVar[bool] = False  # it scores a vibe defined by example answers (discovered clusters)
    # its `measure_answers` is plain Python on the texts alone (no model, no cache), so the measure pass may run
    # it in worker processes, one per core; an encoder stays in the run's process, where torch uses every core
    # and the embeddings cached earlier in the run are read back
    measure_in_workers: ClassVar[bool] = False
    dataset_field: ClassVar[str | None] = None  # a dataset column it needs mapped (fields.<name>)
    extra: ClassVar[str] = ""  # the vibe-bench extra its runtime needs installed ("": none beyond the core)
    # the background of its badge on every page (any CSS colour dark enough for white text); "" lets the pages
    # derive one from its name
    badge_colour: ClassVar[str] = ""
    # the settings a judge of this kind is given where the contract suite needs one (scikit-learn's test
    # instances): a value for every field it cannot do without
    sample_settings: ClassVar[dict[str, Any]] = {}
    # which vibes it can score, as a located error says when no judge of a panel can score one
    scores_which: ClassVar[str] = "any vibe"
    # its verdicts are fitted to people's labels of the analysis' pairs when the run's answers are read
    # (`fit_verdicts`), never asked of it pair by pair: the plan holds no task of it
    learns: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A kind that gives its `settings_record` declares its settings there alone (`engine.settings`): its
        `fields`, `required`, `field_schemas` and `sample_settings` are read off the record, each unless the
        class sets it itself (a kind whose fields are more than its record's)."""
        super().__init_subclass__(**kwargs)
        record = cls.__dict__.get("settings_record")
        if record is None:
            return
        for attr, read in (("fields", settings.names), ("required", settings.required),
                           ("field_schemas", settings.schemas), ("sample_settings", settings.sample)):
            if attr not in cls.__dict__:
                setattr(cls, attr, read(record))

    def does(self, role: str) -> bool:
        return role in self.roles

    def can_score(self, judge: Judge, vibe: Vibe) -> bool:
        """Whether a panel sends `vibe` to this judge."""
        return self.does("vibe")

    def can_judge_dimension(self, judge: Judge, dimension_measure: str | None, persona: Persona) -> bool:
        """Whether it scores a persona's dimension (`dimension_measure`: the metric that measures it, if any)."""
        return self.does("dimension")

    def can_rate(self, item: Item) -> bool:
        """Whether it has what it needs to rate an answer to `item` (a reference answer, unless it says otherwise)."""
        return bool(item.reference)

    def check(self, entry: dict[str, Any]) -> list[tuple[str, str]]:
        """Problems with a judge entry of this kind that the schema cannot see: (field, message) pairs."""
        return []

    def answers_in_schema(self, judge: Judge) -> bool:
        """Whether a judge of the kind is asked to answer in its prompt's JSON schema (an LLM judge unless its
        spec says otherwise); offline kinds write no answers."""
        return False

    def pair_config(self, judge: Judge) -> dict[str, Any]:
        """The settings an offline pair judgment is computed with (part of its task's hash): by default the
        judge's own settings, as the spec gives them."""
        return dict(judge.settings)

    def answer_measure(self, fields: dict[str, Any], config: dict[str, Any]) -> AnswerMeasure | None:
        """For a kind whose verdict on a pair compares a value it measures on each answer alone: that measure, for
        a judgment with these fields (the vibe's: a measure of an answer alone reads no pair's prompt, and a plan
        may ask once for every pair) and config (`pair_config`). The planner then measures each
        answer once, in bulk (`measure_answers`), and derives the pairs' verdicts as array operations, instead of
        a task per pair; `judge_pairs` must give the same verdicts. None (the default): pairs are judged one by
        one."""
        return None

    def measure_answers(self, measure: dict[str, Any], texts: Sequence[str]) -> Sequence[float]:
        """The value an `answer_measure` definition names, for each text."""
        raise NotImplementedError

    def rating_input(self, judge: Judge, item: Item, corpus: str, repeat: int) -> RatingInput | None:
        """An offline rating's (fields, config) for one answer to `item` by `judge`, or None when it plans none
        there; the config (the judge's own settings that change the rating) is part of the task's hash."""
        raise NotImplementedError

    def describe(self, judge: Judge, role: str) -> str:
        """How a page names a judge of this kind doing `role` (ROLES): what produced the numbers it shows."""
        return f"{self.label} ‘{judge.name}’"

    def judge_pairs(self, requests: Sequence[PairJudgment], texts: dict[str, str]) -> Sequence[PairVerdict]:
        """Offline pair verdicts, one per request; `texts` maps answer task ids to their text."""
        raise NotImplementedError

    def rate(self, requests: Sequence[Rating], texts: dict[str, str],
             corpora: dict[str, tuple[str, ...]]) -> Sequence[RatingScore]:
        """Offline ratings (1–5, with an explanation), one per request; `corpora`: reference corpus hash -> the
        references."""
        raise NotImplementedError

    def fit_verdicts(self, judge: Judge, vibe: Vibe, pairs: Sequence[PairToFit], seed: int) -> FittedVerdicts:
        """A kind that `learns`: its verdict on every pair of a comparison, fitted (seeded by `seed`) to the
        development labels the pairs carry; a labelled pair's own verdict from a fit that left its unit out."""
        raise NotImplementedError

    def fit_ratings(self, judge: Judge, answers: Sequence[AnswerToRate], seed: int) -> FittedRatings:
        """A kind that `learns`, in the reference role: a rating of every answer, each group's (model's) from a
        fit to the recorded ratings of the other groups' answers alone."""
        raise NotImplementedError


class UnknownJudgeKind(KeyError):
    pass


ENTRY_POINTS = "vibe.judge_kinds"
_KINDS: Plugins[JudgeKind] = Plugins("judge kind", JUDGE_KINDS.get, UnknownJudgeKind, ENTRY_POINTS)


def judge_kind_class(name: str) -> Callable[[type[JudgeKind]], type[JudgeKind]]:
    """Class decorator: register a judge kind under `name` (a second registration is an error)."""
    def register(cls: type[JudgeKind]) -> type[JudgeKind]:
        _KINDS.add(name, cls())
        cls.name = name
        cls.wire = cls.wire or name
        return cls
    return register


def kind_names() -> list[str]:
    """The kinds a spec may name: the table's, those installed packages publish, then the older spellings."""
    return [*_registered(), *ALIASES]


def _registered() -> list[str]:
    return names_with_published(JUDGE_KINDS, ENTRY_POINTS)


def kind_source(name: str) -> str | None:
    """The module that registers kind `name`, not imported (`Plugins.source`)."""
    return None if name in ALIASES else _KINDS.source(name)


def judge_kind(name: str) -> JudgeKind:
    """The kind registered as `name` (an older spelling gives the kind it still stands for), imported on first use."""
    return _alias(name) if name in ALIASES else _KINDS.get(name)


def settings_of(kind: JudgeKind, entry: Mapping[str, Any]) -> dict[str, Any]:
    """A spec's judge entry's settings for its kind: the fields the kind takes, as the entry gives them."""
    return {key: entry[key] for key in kind.fields if key in entry}


def kind_of(judge: Judge) -> JudgeKind:
    """The kind of a spec's judge (the spec records name their kind; the kinds live here, above them)."""
    return judge_kind(judge.kind)


def scores(judge: Judge, vibe: Vibe) -> bool:
    """Whether a panel sends `vibe` to `judge`: its kind decides (`JudgeKind.can_score`)."""
    return kind_of(judge).can_score(judge, vibe)


def offline_runner(task_kind: str, wire: str) -> JudgeKind:
    """The kind that answers offline `task_kind` tasks ("judge" or "rate") whose requests carry `wire`."""
    role_of = {"judge": ("vibe", "dimension"), "rate": ("reference", "tests")}[task_kind]
    for name in _registered():
        kind = judge_kind(name)
        if kind.offline and kind.wire == wire and any(kind.does(r) for r in role_of):
            return kind
    raise UnknownJudgeKind(f"no offline judge kind answers {task_kind!r} tasks for judge kind {wire!r}")


def renamed(name: str) -> str:
    """What to write instead of an older spelling, for the note it gets."""
    return " or ".join(f"`{k}` (to {' or '.join(ROLES[r] for r in sorted(judge_kind(k).roles))})"
                       for k in ALIASES[name])


def _alias(name: str) -> JudgeKind:
    """An older spelling: a kind that does what each kind it stood for does, in the role that kind has."""
    if name not in _KINDS.loaded:
        _KINDS.add(name, _Either(name, [judge_kind(k) for k in ALIASES[name]]))
    return _KINDS.loaded[name]


class _Either(JudgeKind):
    """The kind an older spelling stands for: each role is done by the first of its kinds that has it."""

    def __init__(self, name: str, parts: list[JudgeKind]):
        self.parts = parts
        first = parts[0]
        setattr(self, "name", name)  # noqa: B010  (a class variable elsewhere; this instance stands for an alias)
        for attr in ("label", "offline", "wire", "measures", "reads_examples", "measure_in_workers", "dataset_field",
                     "extra", "learns"):
            setattr(self, attr, getattr(first, attr))
        setattr(self, "roles", frozenset(r for p in parts for r in p.roles))  # noqa: B010
        setattr(self, "fields", tuple(dict.fromkeys(f for p in parts for f in p.fields)))  # noqa: B010
        setattr(self, "field_schemas", {f: s for p in reversed(parts) for f, s in p.field_schemas.items()})  # noqa: B010

    def _for(self, role: str) -> JudgeKind:
        return next(p for p in self.parts if p.does(role))

    def can_score(self, judge: Judge, vibe: Vibe) -> bool:
        return self.does("vibe") and self._for("vibe").can_score(judge, vibe)

    def check(self, entry: dict[str, Any]) -> list[tuple[str, str]]:
        return [problem for p in self.parts for problem in p.check(entry)]

    def answers_in_schema(self, judge: Judge) -> bool:
        return self._for("vibe").answers_in_schema(judge)

    def pair_config(self, judge: Judge) -> dict[str, Any]:
        return self._for("vibe").pair_config(judge)

    def rating_input(self, judge: Judge, item: Item, corpus: str, repeat: int) -> RatingInput | None:
        return self._for("reference").rating_input(judge, item, corpus, repeat)

    def answer_measure(self, fields: dict[str, Any], config: dict[str, Any]) -> AnswerMeasure | None:
        return self._for("vibe").answer_measure(fields, config)

    def measure_answers(self, measure: dict[str, Any], texts: Sequence[str]) -> Sequence[float]:
        return self._for("vibe").measure_answers(measure, texts)

    def can_rate(self, item: Item) -> bool:
        return self._for("reference").can_rate(item)

    def can_judge_dimension(self, judge: Judge, dimension_measure: str | None, persona: Persona) -> bool:
        return self.does("dimension") and self._for("dimension").can_judge_dimension(judge, dimension_measure, persona)

    def describe(self, judge: Judge, role: str) -> str:
        return self._for(role).describe(judge, role) if self.does(role) else super().describe(judge, role)

    def judge_pairs(self, requests: Sequence[PairJudgment], texts: dict[str, str]) -> Sequence[PairVerdict]:
        return self._for("vibe").judge_pairs(requests, texts)

    def rate(self, requests: Sequence[Rating], texts: dict[str, str],
             corpora: dict[str, tuple[str, ...]]) -> Sequence[RatingScore]:
        return self._for("reference").rate(requests, texts, corpora)

    def fit_verdicts(self, judge: Judge, vibe: Vibe, pairs: Sequence[PairToFit], seed: int) -> FittedVerdicts:
        return self._for("vibe").fit_verdicts(judge, vibe, pairs, seed)

    def fit_ratings(self, judge: Judge, answers: Sequence[AnswerToRate], seed: int) -> FittedRatings:
        return self._for("reference").fit_ratings(judge, answers, seed)
