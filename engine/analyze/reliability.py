"""How far to trust each LLM judge: the reliability figures the MT-Bench / Chatbot Arena work reports.

An LLM judge is asked about every pair twice, once with each answer shown first. From those two answers:

- invalid rate: answers that held no readable verdict, over all answers asked for;
- position consistency: pairs whose two verdicts (in A/B terms) are the same, over pairs with both answers
  readable. A tie in both orders is consistent; a tie in one order and a win in the other is not;
- tie rate: readable answers that call a tie or "does not apply";
- agreement with the dataset's labels (who made them is stated: people, a recorded judge...), where a label
  exists: the position-swapped verdict against the label, as accuracy and Cohen's κ. A pair whose two orders
  disagree never agrees with a label: its combined 0 is the answer order speaking, not a call of a tie;
- agreement with every other judge on the same questions (Cohen's κ over the verdicts both gave).

The independent unit is the pair: a pair asked about several vibes or dimensions is one unit, so the
intervals come from a bootstrap over pairs (Wilson's formula would count each question as independent).
"""

from __future__ import annotations

import csv
import itertools
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import numpy as np

from engine import stats
from engine.judges.reading import order_verdicts
from engine.judges.verdicts import combine_orders
from engine.records import Result

# what a plug-in may use of this module, through the public API (held by tests/test_api_surface.py)
__all__ = ["agreements", "reliability", "two_orders", "write"]

CONSISTENCY_MIN = 0.6  # below this, half the decided verdicts or more may be the answer order speaking
INVALID_MAX = 0.05
TIE_MAX = 0.9  # a judge that almost never decides says little, however consistent
BOOTSTRAP_ROUNDS = 1000
INCONSISTENT = 2  # the category of a pair whose two orders disagree, against labels (+1, 0, −1) it never matches


@dataclass(frozen=True)
class TwoOrders:
    """One judge's answers on one question about one pair: `first` with answer A shown first, `second` with
    B first, both in A/B terms (+1 A, −1 B, 0 tie or N/A, None unreadable)."""

    judge: str
    pair: str  # the independent unit
    question: str  # the vibe, dimension or "preference" asked about
    first: int | None
    second: int | None
    structured: int = 0  # how many of the two answers came back in the judge's JSON schema

    @property
    def verdict(self) -> int | None:
        return combine_orders(self.first, self.second)


def two_orders(judge: str, pair: str, question: str, first: Result, second: Result) -> TwoOrders:
    """A judge's two answers (A shown first, then B first) read into A/B terms."""
    s1, s2 = order_verdicts(str(first.output), str(second.output))
    return TwoOrders(judge, pair, question, s1, s2,
                     sum(bool(r.meta.get("structured")) for r in (first, second)))


@dataclass(frozen=True)
class JudgeReliability:
    """One judge's answers on one task: how many could not be read, how often its verdict survives swapping the
    answers' order, how often it calls a tie, and its agreement with people where labels were given."""

    judge: str
    task: str  # what the judge was asked ("vibe scores", "preference", "persona dimensions")
    pairs: int
    answers: int
    invalid: int
    invalid_rate: float
    structured: int  # answers given in the JSON schema
    position_consistency: float | None  # None when no pair has two readable answers
    consistency_ci: tuple[float, float] | None  # 95% bootstrap interval over pairs
    consistent_n: int  # questions with both answers readable
    tie_rate: float | None
    label_source: str | None = None
    label_n: int = 0
    label_accuracy: float | None = None
    label_accuracy_ci: tuple[float, float] | None = None
    label_kappa: float | None = None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class JudgeAgreement:
    """Two judges on the same questions: how often they give the same verdict, and Cohen's κ."""

    task: str
    question: str  # the vibe or dimension: κ is computed per question, never pooled over them
    judge: str
    other: str
    n: int  # questions both answered
    agreement: float  # share of identical verdicts
    kappa: float | None


def reliability(answers: Iterable[TwoOrders], task: str, labels: Mapping[str, int] | None = None,
                label_source: str | None = None, seed: int = 0) -> list[JudgeReliability]:
    """One row per judge. `labels`: pair -> label in A/B terms (+1 A preferred, −1 B, 0 tie), where the
    dataset has one; compared with the judge's position-swapped verdict on that pair."""
    by_judge: dict[str, list[TwoOrders]] = defaultdict(list)
    for answer in answers:
        by_judge[answer.judge].append(answer)
    return [_one(judge, rows, task, labels or {}, label_source, seed) for judge, rows in sorted(by_judge.items())]


def _one(judge: str, rows: list[TwoOrders], task: str, labels: Mapping[str, int], label_source: str | None,
         seed: int) -> JudgeReliability:
    given = [v for r in rows for v in (r.first, r.second)]
    readable = [v for v in given if v is not None]
    invalid = len(given) - len(readable)
    both = [r for r in rows if r.first is not None and r.second is not None]
    consistency = float(np.mean([r.first == r.second for r in both])) if both else None
    consistency_ci = _pair_bootstrap([(r.pair, float(r.first == r.second)) for r in both], seed)
    tie_rate = float(np.mean([v == 0 for v in readable])) if readable else None
    labelled = [r for r in rows if r.pair in labels and r.verdict is not None]
    stated = [r.first if r.first == r.second else INCONSISTENT for r in labelled]  # what each pair says of a label
    accuracy = float(np.mean([v == labels[r.pair] for r, v in zip(labelled, stated, strict=True)])) if labelled \
        else None
    kappa = stats.cohen_kappa([int(v or 0) for v in stated], [labels[r.pair] for r in labelled]) if labelled else None
    out = JudgeReliability(
        judge, task, len({r.pair for r in rows}), len(given), invalid, invalid / len(given) if given else 0.0,
        sum(r.structured for r in rows), consistency, consistency_ci, len(both), tie_rate,
        label_source if labelled else None, len(labelled), accuracy,
        _pair_bootstrap([(r.pair, float(v == labels[r.pair])) for r, v in zip(labelled, stated, strict=True)], seed),
        kappa)
    return _with_warnings(out)


def _with_warnings(r: JudgeReliability) -> JudgeReliability:
    warnings = []
    if r.position_consistency is not None and r.position_consistency < CONSISTENCY_MIN:
        warnings.append(f"position consistency {r.position_consistency:.0%} is below {CONSISTENCY_MIN:.0%}: its "
                        "verdicts depend on which answer it reads first")
    if r.invalid_rate > INVALID_MAX:
        warnings.append(f"{r.invalid_rate:.0%} of its answers held no readable verdict (above {INVALID_MAX:.0%})")
    if r.tie_rate is not None and r.tie_rate >= TIE_MAX:
        warnings.append(f"it calls a tie or N/A in {r.tie_rate:.0%} of readable answers, so it rarely decides")
    return replace(r, warnings=tuple(warnings))


def _pair_bootstrap(values: list[tuple[str, float]], seed: int) -> tuple[float, float] | None:
    """95% percentile interval of a mean over questions, resampling pairs (all of a pair's questions go
    together)."""
    if not values:
        return None
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for pair, value in values:
        sums[pair][0] += value
        sums[pair][1] += 1
    totals = np.array(list(sums.values()))
    means = stats.bootstrap_ratios(totals[:, 0], totals[:, 1], np.random.default_rng(seed), BOOTSTRAP_ROUNDS)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def agreements(verdicts: Mapping[str, Mapping[tuple[str, str], int]], task: str) -> list[JudgeAgreement]:
    """Cohen's κ for every two judges on each question (vibe or dimension), over the pairs both gave a verdict
    on; `verdicts`: judge -> (pair, question) -> verdict in A/B terms. Offline judges take part like LLM ones.
    Pooling questions would mix their base rates (a vibe one judge calls +1 everywhere beside one it calls 0
    everywhere), and κ's chance correction would then credit agreement on which question was asked."""
    out = []
    for judge, other in itertools.combinations(sorted(verdicts), 2):
        common = set(verdicts[judge]) & set(verdicts[other])
        for question in sorted({q for _, q in common}):
            keys = sorted(k for k in common if k[1] == question)
            a, b = [verdicts[judge][k] for k in keys], [verdicts[other][k] for k in keys]
            out.append(JudgeAgreement(task, question, judge, other, len(keys), float(np.mean(np.equal(a, b))),
                                      stats.cohen_kappa(a, b)))
    return out


def write(rows: list[JudgeReliability], pairs: list[JudgeAgreement], folder: Path) -> None:
    """judge_reliability.csv / judge_agreement.csv, and both in judge_reliability.json (nothing without rows)."""
    if not rows and not pairs:
        return
    folder.mkdir(parents=True, exist_ok=True)
    tables: tuple[tuple[str, type, list], ...] = (("judge_reliability", JudgeReliability, rows),
                                                  ("judge_agreement", JudgeAgreement, pairs))
    for name, record, records in tables:
        flat = [{k: (";".join(map(str, v)) if isinstance(v, tuple) else v) for k, v in asdict(r).items()}
                for r in records]
        with (folder / f"{name}.csv").open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=[f.name for f in fields(record)])
            writer.writeheader()
            writer.writerows(flat)
    (folder / "judge_reliability.json").write_text(json.dumps(
        {"judges": [asdict(r) for r in rows], "agreement": [asdict(p) for p in pairs],
         "thresholds": {"position_consistency_min": CONSISTENCY_MIN, "invalid_rate_max": INVALID_MAX,
                        "tie_rate_max": TIE_MAX}}, indent=2), encoding="utf-8")
