"""What a VibeCheck analysis produces: each vibe's scores, each pair's verdicts, and the comparison's result."""

from __future__ import annotations

from collections.abc import Hashable, ItemsView, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from engine.api.analysis import Corrected, JudgeAgreement, JudgeReliability, PeopleAgreement, stats
from engine.api.spec import Labels, VibeExamples
from engine.builtin_plugins.methods.vibecheck import heldout
from engine.builtin_plugins.methods.vibecheck.between_people import HumanHuman
from engine.builtin_plugins.methods.vibecheck.ceiling import Ceiling


@dataclass(frozen=True)
class ReasonTheme:
    """One group of reasons about a vibe: its size, which way its verdicts went (+1 for A, −1 for B, 0 a tie
    or no verdict), distinctive words, and the reasons nearest its centre (the first is the theme's face)."""

    size: int
    for_a: int
    for_b: int
    neither: int
    keywords: list[str]
    examples: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class VibeScore:
    name: str
    low: str
    high: str
    origin: str  # "declared" or "discovered (<how>)"
    metric: str | None
    judges: list[str]
    judge_kinds: list[str]
    separability: float | None  # mean ν over the test pairs (None without any); > 0: model A leans high
    separability_train: float  # mean ν over the training pairs: what the keep/drop decision used
    separability_train_ci: tuple[float, float]  # its 95% interval over training pairs, inside [−1, 1]
    # (`stats.verdict_interval`; shown: the screen reads z, `keep.decide`)
    kappa: float | None  # judge agreement on the test pairs; None with a single judge
    kappa_train: float | None
    kept: bool
    drop_reason: str
    n_pairs: int
    invalid_verdicts: int
    mm_coefficient: float | None = None
    mm_p_value: float | None = None
    pp_coefficient: float | None = None
    pp_p_value: float | None = None
    examples: VibeExamples | None = None  # the answers an embedding judge measures against, when given
    n_train: int = 0
    n_test: int = 0
    mm_p_adjusted: float | None = None  # Holm over every coefficient test of the analysis
    pp_p_adjusted: float | None = None
    regression_note: str = ""  # for a kept vibe left out of a regression: why
    mm_p_note: str = ""  # why a coefficient has no p-value
    pp_p_note: str = ""
    mm_detectable: float | None = None  # the |coefficient| its test detects with 80% power (`heldout.adjust`)
    pp_detectable: float | None = None
    separability_ci: tuple[float, float] | None = None  # 95% interval of the test separability (`verdict_interval`)
    # kept vibes only: the exact sign test of the test verdicts, one-sided in `direction` (the sign of the
    # training separability: +1 model A higher), weighted Holm over the comparison's claims with this vibe's
    # `holm_weight` from its training z (`keep.holm_weight`, `analysis.adjust_claims`); and the smallest test
    # separability that test detects with 80% power (at the observed share of ties) at `power_alpha`: the level
    # weighted Holm's first step gives it once the claims are corrected, 5%·w/W, the level the corrected test
    # faces (5% before); from `test_nonzero` of the `test_verdicts` (None over conversation means)
    separability_p: float | None = None
    separability_p_adjusted: float | None = None
    direction: int = 0
    separability_mde: float | None = None
    power_alpha: float | None = None
    holm_weight: float | None = None
    test_verdicts: int = 0
    test_nonzero: int | None = None
    missing_verdicts: int = 0  # pairs where no judge gave a readable verdict: left out, never a tie
    ac1_train: float | None = None  # Gwet's AC1 of the judges on the training pairs, beside κ (`keep.drop_reasons`)


@dataclass(frozen=True)
class TurnCell:
    model: str
    vibe: str
    turn: int
    separability: float | None  # mean ν over the `n` conversations' pairs on this turn
    ci_low: float | None
    ci_high: float | None
    n: int
    p_value: float | None = None
    p_adjusted: float | None = None
    change: float | None = None  # mean (ν on this turn − ν on turn 1) over `change_n` conversations
    change_low: float | None = None
    change_high: float | None = None
    change_n: int = 0

    def clear(self) -> bool:
        return self.p_adjusted is not None and self.p_adjusted < 0.05


@dataclass(frozen=True)
class MeasureTable:
    """What the metric judges measured on every pair of one comparison: (pairs × vibes × [A, B]) in one array,
    NaN where nothing was measured, instead of a list of two floats per pair and vibe (two kilobytes a pair)."""

    vibes: dict[str, int]  # vibe -> its column
    values: np.ndarray

    @classmethod
    def empty(cls, pairs: int, vibes: list[str]) -> MeasureTable:
        return cls({v: i for i, v in enumerate(vibes)}, np.full((pairs, len(vibes), 2), np.nan))

    def row(self, pair: int) -> MeasuredValues:
        return MeasuredValues(self, pair)


class MeasuredValues(Mapping[str, tuple[float, float]]):
    """One pair's row of a `MeasureTable`, read as vibe -> (A's value, B's value) for the vibes measured on it."""

    __slots__ = ("_row", "_table")

    def __init__(self, table: MeasureTable, row: int):
        self._table, self._row = table, row

    def __getitem__(self, vibe: str) -> tuple[float, float]:
        column = self._table.vibes.get(vibe)
        if column is None:
            raise KeyError(vibe)
        a, b = self._table.values[self._row, column].tolist()
        if a != a:  # NaN: nothing measured
            raise KeyError(vibe)
        return a, b

    def __iter__(self) -> Iterator[str]:
        measured = ~np.isnan(self._table.values[self._row, :, 0])
        return (vibe for vibe, column in self._table.vibes.items() if measured[column])

    def __len__(self) -> int:
        return int((~np.isnan(self._table.values[self._row, :, 0])).sum())

    def items(self) -> ItemsView[str, tuple[float, float]]:
        return _RowItems(self)


class _RowItems(ItemsView[str, tuple[float, float]]):
    """A row's (vibe, values) read from one copy of the row: the pages and files of 100,000 pairs read every
    pair's measures, and a lookup per vibe through `__getitem__` cost seconds."""

    _mapping: MeasuredValues

    def __iter__(self) -> Iterator[tuple[str, tuple[float, float]]]:
        row = self._mapping._table.values[self._mapping._row].tolist()
        for vibe, column in self._mapping._table.vibes.items():
            a, b = row[column]
            if a == a:  # NaN: nothing measured
                yield vibe, (a, b)


@dataclass(frozen=True)
class PairVerdicts:
    item_id: str
    split: str  # "train" | "test"
    preference: str | None
    output_a: str  # task ids of the two outputs
    output_b: str
    nu: dict[str, int | None]  # vibe -> panel verdict (None: no judge gave a readable one)
    by_judge: dict[str, dict[str, int | None]]  # vibe -> judge -> s_J (None: no verdict)
    # vibe -> LLM judge -> its raw answers, [A shown first, B shown first]; `orders`: the verdicts read from them
    rationales: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    # vibe -> (A's value, B's value) (metric judge): a `MeasuredValues` row, or a dict
    measures: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    chars: list[int] = field(default_factory=list)  # [A's, B's] length in characters
    orders: dict[str, dict[str, list[int | None]]] = field(default_factory=dict)
    # preference judges: judge -> [verdict A first, verdict B first], and their raw answers the same way
    preferred: dict[str, list[int | None]] = field(default_factory=dict)
    preferred_rationales: dict[str, list[str]] = field(default_factory=dict)
    conversation: str | None = None  # a conversation's turn: its conversation (the independent unit)
    turn: int | None = None
    share: float | None = None  # a graded label's share of the win for model A (None: all or nothing)
    # vibe -> a learned judge's probability that people who put one answer higher put A higher
    leans: Mapping[str, float] = field(default_factory=dict)

    @property
    def cluster(self) -> str:
        return self.conversation or self.item_id

    def feature(self, vibe: str) -> float:
        """What the regressions read for a vibe: its measured, signed strength where a metric judge measured
        it ((a − b) / (|a| + |b|), in [−1, 1]), else the panel verdict ν."""
        values = self.measures.get(vibe)
        if values is not None:
            return stats.strength(*values)
        verdict = self.nu[vibe]
        return float("nan") if verdict is None else float(verdict)


PANEL = "panel"  # the judges' combined verdict, where a table lists it beside each judge


@dataclass
class Validation:
    agreements: list[PeopleAgreement] = field(default_factory=list)
    human_human: list[HumanHuman] = field(default_factory=list)
    corrected: list[Corrected] = field(default_factory=list)
    flagged: dict[str, str] = field(default_factory=dict)  # vibe -> why its panel reads it unlike people
    as_people: dict[str, str] = field(default_factory=dict)  # vibe -> why its panel reads it as people do
    undecided: dict[str, str] = field(default_factory=dict)  # vibe -> why the labels cannot tell which
    labellers: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    unmatched: int = 0  # labels naming a pair this comparison does not have
    teaching: int = 0  # labels of pairs chosen where a learned judge was least sure: they teach it, check nothing
    baselines: list[PeopleAgreement] = field(default_factory=list)  # the trivial rules on the same test labels
    below_rules: dict[str, str] = field(default_factory=dict)  # "vibe/judge" -> why it beats no trivial rule
    judges: dict[str, list[str]] = field(default_factory=dict)  # vibe -> its judges (one judge: the panel is it)
    # "vibe/judge" whose dev verdicts are cross-fitted: a learned judge's (and a panel's that holds one)
    crossfitted: list[str] = field(default_factory=list)
    narrowing: str = ""  # about how many more pairs to label for κ intervals of ±0.1 (empty: they are that narrow)

    def judge_lines(self, where: str) -> dict[str, list[str]]:
        """Each judge's agreement with people, vibe by vibe, on the test labels (the dev ones where there are no
        test labels), as the leaderboard's list of judges says it; `where` names the comparison."""
        out: dict[str, list[str]] = {}
        for vibe, judges in self.judges.items():
            for judge in judges:
                rows = [a for a in self.agreements if a.vibe == vibe and a.agreement is not None
                        and a.judge == (judge if len(judges) > 1 else PANEL)]
                row = next((a for a in rows if a.split == "test"), rows[0] if rows else None)
                if row is None or row.agreement is None:
                    continue
                kappa = "" if row.kappa is None else f", κ {row.kappa:.2f}"
                flag = " (flagged)" if vibe in self.flagged else ""
                rules = ("; no better than a trivial rule on the same labels"
                         if f"{vibe}/{row.judge}" in self.below_rules else "")
                out.setdefault(judge, []).append(f"agrees with people on {vibe}{flag}: {row.agreement:.0%} of "
                                                 f"{row.labels} {row.split} labels{kappa}{rules}, {where}")
        return out


EXTRAPOLATION = 0.2  # below this share of shorter (or longer) answers, the LC rate is flagged as extrapolated


@dataclass(frozen=True)
class WinRate:
    model: str
    win_rate: float  # share of labelled rows (`unit`) the model won (a tie counts half)
    ci_low: float
    ci_high: float
    lc_win_rate: float | None
    lc_ci_low: float | None
    lc_ci_high: float | None
    n: int
    ties: int
    shorter: float = 0.0  # share of labelled rows where the model's answer (all its turns) is the shorter one
    note: str = ""  # why the length-controlled rate is missing, or how many resamples had no fit
    unit: str = "prompts"  # what n counts: prompts, conversations, or turns (then resampled by conversation)
    interval: str = "Tango's score interval"  # what gave ci_low and ci_high (`profiles.win_interval`)

    def extrapolates(self) -> bool:
        """Equal length is far outside what the labels saw: the length-controlled rate then rests on the
        GLM's extrapolation more than on the data."""
        return not EXTRAPOLATION <= self.shorter <= 1 - EXTRAPOLATION


@dataclass
class VibeCheckResult:
    analysis: str
    model_a: str
    model_b: str
    vibes: list[VibeScore]
    pairs: list[PairVerdicts]
    model_matching: heldout.HeldOutFit | None
    preference: heldout.HeldOutFit | None
    invalid_verdicts: int
    notes: list[str]
    labels: Labels = field(default_factory=Labels)
    selection: str = ""  # which kept vibes entered the regressions, and how they were chosen
    reliability: list[JudgeReliability] = field(default_factory=list)  # one row per LLM judge and task
    agreements: list[JudgeAgreement] = field(default_factory=list)  # κ between every two judges
    dataset: str = ""  # the dataset the pairs' prompts come from
    claims: int = 0  # the size of the Holm family its claims about its vibes were corrected in (`adjust_claims`)
    themes: dict[str, list[ReasonTheme]] = field(default_factory=dict)  # vibe -> what LLM judges' reasons say
    ceiling: Ceiling | None = None  # a text classifier's model matching on the same test pairs: descriptive
    turns: list[TurnCell] = field(default_factory=list)  # conversations: each vibe on the test pairs, turn by turn
    turn_test: str = ""  # how the turn cells are tested
    validation: Validation | None = None  # people's labels against the judges, where the spec gives them
    winrate: WinRate | None = None  # a two-model comparison's: who won by the dataset's labels


def one_label_each(labels: Iterable[tuple[str, Hashable]]) -> bool:
    """Whether every conversation's labelled turns carry one label, from (conversation, label) per turn: a
    battle's single winner copied to its turns. The regressions and the win rate then take the conversation as
    one row with that label; turns labelled apart stay rows, resampled by conversation."""
    seen: dict[str, set[Hashable]] = {}
    for cluster, label in labels:
        seen.setdefault(cluster, set()).add(label)
    return all(len(found) == 1 for found in seen.values())
