"""A comparison's pair table: every pair of its prompts with each judge's verdict on each vibe and the
panel's ν (LLM judges: both orders combined by the swap rule; offline judges: their measured comparison; an
unreadable answer leaves the judge's score missing, never a tie; ν is the rounded mean of the scores present,
missing when none is), with what the judges' reliability reads beside it. Discovery and `vibe compare` read
only this; the analysis (`analysis.analyze_vibecheck`) starts from it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.api.analysis import TwoOrders, reliability, stats
from engine.api.judging import JudgeKind, PairVerdict, kind_of, scores
from engine.api.records import Item, Measured, PairJudgment, Prepared, Result
from engine.api.spec import Analysis, Vibe
from engine.builtin_plugins.methods.vibecheck.discovery.splits import split_bindings
from engine.builtin_plugins.methods.vibecheck.fitted import fitted_verdicts
from engine.builtin_plugins.methods.vibecheck.options import VibeCheckOptions
from engine.builtin_plugins.methods.vibecheck.records import MeasureTable, PairVerdicts

NO_LEANS: dict[str, float] = {}  # every pair's where no learned judge reads a vibe (shared, so read only)


@dataclass
class PairTable:
    """What `pair_table` reads from the results for one comparison: its pairs and what the judges said."""

    model_a: str
    model_b: str
    vibes: list[Vibe]  # the vibes the analysis measures
    panels: dict[str, list[tuple[str, JudgeKind]]]  # vibe -> the judges that score it, with their kinds
    items: dict[str, Item]
    pairs: list[PairVerdicts]
    two_orders: list[TwoOrders]  # every LLM judge's answers in both orders, for its reliability
    verdicts: dict[str, dict[tuple[str, str], int]]  # judge -> (pair, vibe) -> its readable verdict
    preference_answers: list[TwoOrders]  # the preference judges' answers in both orders
    invalid_by_vibe: dict[str, int]  # unreadable answers per vibe
    fitted: dict[tuple[str, str], str]  # (learning judge, vibe) -> how it was fitted to people's labels


def pair_table(prepared: Prepared, analysis: Analysis, results: dict[str, Result],
               comparison: tuple[str, str] | None = None) -> PairTable:
    """The table of one comparison of the analysis (its first, or the one named): model A against model B."""
    spec = prepared.spec
    model_a, model_b = comparison or analysis.comparisons()[0]
    items = {it.id: it for it in prepared.items[analysis.dataset]}
    bindings, train_set = split_bindings(prepared, analysis, (model_a, model_b))
    index = _index_judgments(prepared)
    measured = _index_measured(prepared)
    opts = VibeCheckOptions.of(analysis)
    vibes = opts.measured(spec.vibes)
    pairs: list[PairVerdicts] = []
    invalid_by_vibe = dict.fromkeys((v.name for v in vibes), 0)
    two_orders: list[TwoOrders] = []  # every LLM judge's answers in both orders, for its reliability
    verdicts: dict[str, dict[tuple[str, str], int]] = {}  # judge -> (pair, vibe) -> verdict
    preference_index = _index_judgments(prepared, stage="preference")
    preference_answers: list[TwoOrders] = []
    # one dict per distinct (judge -> score) of a vibe, shared by the pairs that have it (read only): a panel of
    # one or two offline judges has a handful, where a dict per pair and vibe cost a kilobyte a pair
    shared_scores: dict[tuple[tuple[str, int | None], ...], dict[str, int | None]] = {}
    panels = {vibe.name: [(name, kind_of(spec.judges[name])) for name in judges_for(prepared, analysis, vibe)]
              for vibe in vibes}
    table = MeasureTable.empty(len(bindings), [v.name for v in vibes])  # its rows are filled at the end
    answers = [(b.outputs[model_a][0], b.outputs[model_b][0]) for b in bindings]
    # measured per answer: every pair's verdict and values, read from the records' columns at once
    in_bulk = {(name, vibe.name): _measured(measured[(name, vibe.name)], results, answers)
               for vibe in vibes for name, _ in panels[vibe.name] if (name, vibe.name) in measured}
    judged_values: dict[tuple[str, str], dict[int, list[float]]] = {}  # an offline task's values, by row
    fitted = fitted_verdicts(prepared, analysis, results, bindings, answers, (model_a, model_b), vibes, panels, items)
    for row, binding in enumerate(bindings):
        ga, gb = answers[row]
        nu: dict[str, int | None] = {}
        by_judge: dict[str, dict[str, int | None]] = {}
        rationales: dict[str, dict[str, list[str]]] = {}
        orders_by_vibe: dict[str, dict[str, list[int | None]]] = {}
        for vibe in vibes:
            scores: dict[str, int | None] = {}
            for judge_name, kind in panels[vibe.name]:
                tasks = index.get((judge_name, vibe.name, ga, gb), {})
                bulk = in_bulk.get((judge_name, vibe.name))
                if kind.learns:
                    score, orders, raw = fitted[(judge_name, vibe.name)][0][row], None, list[str]()
                elif bulk is not None:
                    score, orders, raw = bulk.scores[row], None, list[str]()
                else:
                    score, orders, raw = _judge_score(kind.offline, tasks, results,
                                                      (judge_name, binding.item, vibe.name))
                if kind.measures and tasks.get("any") in results:
                    out = PairVerdict.from_json(results[tasks["any"]].output)
                    judged_values.setdefault((judge_name, vibe.name), {})[row] = [
                        np.nan if v is None else v for v in (out.value_a, out.value_b)]
                scores[judge_name] = score
                # κ between judges needs two of them on the vibe; one alone has nobody to agree with
                if (score is not None and (orders is None or None not in (orders.first, orders.second))
                        and len(panels[vibe.name]) > 1):
                    verdicts.setdefault(judge_name, {})[(binding.item, vibe.name)] = score  # readable ones
                if orders is not None:
                    two_orders.append(orders)
                    invalid_by_vibe[vibe.name] += (orders.first is None) + (orders.second is None)
                    orders_by_vibe.setdefault(vibe.name, {})[judge_name] = [orders.first, orders.second]
                if raw:
                    rationales.setdefault(vibe.name, {})[judge_name] = raw
            by_judge[vibe.name] = shared_scores.setdefault(tuple(scores.items()), scores)
            present = [s for s in scores.values() if s is not None]
            # one judge's verdict is the panel's (the rounded mean of one integer is itself)
            nu[vibe.name] = (present[0] if len(present) == 1 else stats.ensemble(present)) if present else None
        preferred, preferred_raw = {}, {}
        for preference_judge in opts.preference_judges:
            tasks = preference_index.get((preference_judge, "", ga, gb), {})
            first, second = results.get(tasks.get("ab", "")), results.get(tasks.get("ba", ""))
            if first is not None and second is not None:
                answer = reliability.two_orders(preference_judge, binding.item, "preference", first, second)
                preference_answers.append(answer)
                preferred[preference_judge] = [answer.first, answer.second]
                preferred_raw[preference_judge] = [str(first.output), str(second.output)]
        leans = {vibe: lean for (_, vibe), (_, by_row, _) in reversed(fitted.items())
                 if (lean := by_row[row]) is not None} if fitted else NO_LEANS
        chars = [len(str(results[g].output)) if g in results else 0 for g in (ga, gb)]
        item = items[binding.item]
        pairs.append(PairVerdicts(binding.item, "train" if binding.item in train_set else "test",
                                  item.label(model_a, model_b), ga, gb, nu, by_judge, rationales,
                                  table.row(row), chars, orders_by_vibe, preferred, preferred_raw, item.conversation,
                                  item.turn, item.label_share(model_a, model_b), leans))
    for vibe in vibes:  # a pair's values are the first measuring judge's of the panel that has A's value
        column = table.vibes[vibe.name]
        for judge_name, kind in panels[vibe.name]:
            bulk = in_bulk.get((judge_name, vibe.name))
            if kind.measures and bulk is not None:
                take = np.isnan(table.values[:, column, 0]) & bulk.found
                table.values[take, column] = bulk.values[take]
            for row, values in judged_values.get((judge_name, vibe.name), {}).items():
                if np.isnan(table.values[row, column, 0]):
                    table.values[row, column] = values
    return PairTable(model_a, model_b, vibes, panels, items, pairs, two_orders, verdicts, preference_answers,
                     invalid_by_vibe, {key: said for key, (_, _, said) in fitted.items()})


def judges_for(prepared: Prepared, analysis: Analysis, vibe: Vibe) -> list[str]:
    names = vibe.judges or VibeCheckOptions.of(analysis).judges
    return [name for name in names if scores(prepared.spec.judges[name], vibe)]


def _index_judgments(prepared: Prepared, stage: str = "judge") -> dict[tuple[str, str, str, str], dict[str, str]]:
    """(judge, vibe, output A task, output B task) -> {order: task id}; offline judges use order 'any', and
    preference judgments the vibe ''. Keyed by outputs, not by analysis: a judgment shared by two analyses
    is one task."""
    index: dict[tuple[str, str, str, str], dict[str, str]] = {}
    for task in prepared.plan.tasks:
        if task.stage != stage:
            continue
        request = prepared.plan.requests[task.id]
        if not isinstance(request, PairJudgment) or (stage == "judge" and "vibe" not in request.fields):
            continue
        order = request.order or "any"
        first, second = request.outputs
        a, b = (second, first) if order == "ba" else (first, second)
        index.setdefault((request.judge, request.fields.get("vibe", ""), a, b), {})[order] = task.id
    return index


def _index_measured(prepared: Prepared) -> dict[tuple[str, str], list[Measured]]:
    """(judge, vibe) -> the plan's `Measured` records of it (one per set of pairs an analysis judged)."""
    index: dict[tuple[str, str], list[Measured]] = {}
    for record in prepared.plan.measured:
        if record.stage == "judge":
            index.setdefault((record.judge, record.vibe), []).append(record)
    return index


@dataclass(frozen=True)
class _BulkVerdicts:
    """A measure's verdicts on every pair of the table, in its order: the verdict (None where no record holds
    the pair, or an answer has no value), whether there is one, and the two values (NaN where there is none)."""

    scores: list[int | None]
    found: np.ndarray
    values: np.ndarray


def _measured(records: list[Measured], results: dict[str, Result], pairs: list[tuple[str, str]]) -> _BulkVerdicts:
    """Each pair's verdict and values from the first record that holds the pair and has a result."""
    score = np.full(len(pairs), np.nan)
    values = np.full((len(pairs), 2), np.nan)
    todo = np.ones(len(pairs), dtype=bool)
    for record in records:
        if record.id not in results:
            continue
        rows = record.pairs.rows
        at = np.array([rows.get(pair, -1) for pair in pairs], dtype=np.intp)
        held = todo & (at >= 0)
        columns = results[record.id].output
        score[held] = np.asarray(columns.scores, dtype=float)[at[held]]
        values[held, 0] = np.asarray(columns.value_a, dtype=float)[at[held]]
        values[held, 1] = np.asarray(columns.value_b, dtype=float)[at[held]]
        todo &= ~held
    found = ~np.isnan(score)
    values[~found] = np.nan
    return _BulkVerdicts([int(s) if ok else None for s, ok in zip(score.tolist(), found.tolist(), strict=True)],
                     found, values)


def _judge_score(offline: bool, tasks: dict[str, str], results: dict[str, Result],
                 unit: tuple[str, str, str]) -> tuple[int | None, TwoOrders | None, list[str]]:
    """(s_J or None if missing, an LLM judge's two answers, their raw texts). `unit`: (judge, pair, vibe)."""
    if offline:
        result = results.get(tasks.get("any", ""))
        return (None, None, []) if result is None else (PairVerdict.from_json(result.output).score, None, [])
    first, second = results.get(tasks.get("ab", "")), results.get(tasks.get("ba", ""))
    if first is None or second is None:
        return None, None, []
    orders = reliability.two_orders(*unit, first, second)
    return orders.verdict, orders, [str(first.output), str(second.output)]
