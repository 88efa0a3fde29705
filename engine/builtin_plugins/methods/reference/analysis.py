"""The reference method's analysis: each model's answers rated against the references by the analysis'
judge, turned into score % per subset, the preferences and rankings those ratings imply, and the agreement
with recorded ratings where the dataset has them (the statistics: `scores.py` beside it)."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path

from engine.api.analysis import subset_of
from engine.api.judging import AnswerToRate, item_rating, kind_of
from engine.api.records import Item, Prepared, Rating, Result
from engine.api.spec import Analysis
from engine.builtin_plugins.methods.reference.options import ReferenceOptions
from engine.builtin_plugins.methods.reference.scores import (
    RECORDED_TIE_GAP,
    ItemRating,
    ModelScore,
    ReferenceResult,
    judge_label,
    pair_agreement,
    recorded_agreement,
    subset_rankings,
    subset_scores,
)


def _learned_ratings(prepared: Prepared, analysis: Analysis, results: dict[str, Result],
                     items: dict[str, Item]) -> tuple[dict[tuple[str, str], float | None], str]:
    """A learning judge's rating of every answer with a reference ((prompt, model) → rating), and how it was
    fitted: each model's answers by a fit to the dataset's recorded ratings of the other models' answers."""
    judge = prepared.spec.judges[ReferenceOptions.of(analysis).judge]
    keys, answers = [], []
    for binding in prepared.plan.bindings.get(analysis.name, []):
        item = items[binding.item]
        for model, (gen,) in binding.outputs.items():
            if gen in results and item.reference:
                keys.append((item.id, model))
                score = item.scores.get(model)
                answers.append(AnswerToRate(item.prompt, str(results[gen].output), item.reference, item.cluster, model,
                                            None if score is None else float(score)))
    fitted = kind_of(judge).fit_ratings(judge, answers, ReferenceOptions.of(analysis).seed)
    return dict(zip(keys, fitted.ratings, strict=True)), fitted.description


def analyze_reference(prepared: Prepared, analysis: Analysis, results: dict[str, Result]) -> ReferenceResult:
    spec, opts = prepared.spec, ReferenceOptions.of(analysis)
    judge = spec.judges[opts.judge]
    llm = judge.endpoint is not None
    repeats = opts.repeats if llm else 1
    tie_gap = float(opts.tie_gap)
    seed = opts.seed
    rounds = opts.bootstrap
    items = {item.id: item for item in prepared.items[analysis.dataset]}
    ratings_of: dict[str, list[Result]] = defaultdict(list)  # generation task id -> its rating results
    for task_id, request in prepared.plan.requests.items():
        if isinstance(request, Rating) and request.judge == judge.name and task_id in results:
            ratings_of[request.output].append(results[task_id])
    per_model: dict[str, dict[str, tuple[str, float]]] = defaultdict(dict)
    invalid: dict[str, int] = defaultdict(int)
    texts: dict[tuple[str, str], str] = {}
    rows: list[ItemRating] = []
    learned = _learned_ratings(prepared, analysis, results, items) if kind_of(judge).learns else None
    for binding in prepared.plan.bindings.get(analysis.name, []):
        item = items[binding.item]
        subset = subset_of(item.difficulty)
        for model, (gen,) in binding.outputs.items():
            raw = ratings_of.get(gen, [])
            if gen in results:
                texts[(item.id, model)] = str(results[gen].output)
            if learned is not None:
                if (item.id, model) in learned[0]:
                    mean = learned[0][(item.id, model)]
                    if mean is not None:
                        per_model[model][item.id] = (subset, mean)
                    rows.append(ItemRating(item.id, subset, model, mean, (mean,), learned[1],
                                           item.scores.get(model)))
                continue
            if not raw:
                continue
            mean, each, explanation, bad = item_rating(raw, llm)
            invalid[model] += bad
            if mean is not None:
                per_model[model][item.id] = (subset, mean)
            rows.append(ItemRating(item.id, subset, model, mean, each, explanation, item.scores.get(model)))
    units = {i: item.cluster for i, item in items.items()}  # a conversation's turns resample together
    recorded_per_model = {m: {i: (subset_of(item.difficulty), float(item.scores[m]))
                              for i, item in items.items() if m in item.scores} for m in analysis.models}
    recorded_per_model = {m: rated for m, rated in recorded_per_model.items() if rated}
    scores = []
    for model in analysis.models:  # recorded scores on the answers this judge rated, side by side
        mine = recorded_per_model.get(model, {})
        recorded = {i: mine[i] for i in per_model[model] if i in mine}
        scores.append(ModelScore(model, subset_scores(per_model[model], rounds, seed, units), invalid[model],
                                 subset_scores(recorded, rounds, seed, units) if recorded else []))
    scores.sort(key=lambda s: -s.subsets[0].score if s.subsets[0].n else float("inf"))
    ties = opts.ties
    return ReferenceResult(analysis.name, analysis.dataset, judge.name, judge_label(judge, repeats),
                           repeats, tie_gap, scores, rows,
                           subset_rankings(per_model, texts, tie_gap, list(analysis.models), ties, seed, units),
                           recorded_agreement(rows, scores), ties,
                           pair_agreement(per_model, recorded_per_model, tie_gap),
                           subset_rankings(recorded_per_model, texts, RECORDED_TIE_GAP, list(analysis.models), ties,
                                           seed, units))


def write_reference(result: ReferenceResult, run_dir: Path) -> Path:
    """scores.csv (one row per model and subset), ratings.jsonl (every answer) and reference.json."""
    out = run_dir / result.analysis
    out.mkdir(parents=True, exist_ok=True)
    with (out / "scores.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["model", "judge", "subset", "n", "score_percent", "ci_low", "ci_high", "invalid"])
        for s in result.scores:
            for sub in s.subsets:
                writer.writerow([s.model, result.judge, sub.subset, sub.n, f"{sub.score:.2f}", f"{sub.ci_low:.2f}",
                                 f"{sub.ci_high:.2f}", s.invalid])
            for sub in s.recorded:
                writer.writerow([s.model, "recorded", sub.subset, sub.n, f"{sub.score:.2f}", f"{sub.ci_low:.2f}",
                                 f"{sub.ci_high:.2f}", 0])
    (out / "ratings.jsonl").write_text("".join(json.dumps(asdict(r)) + "\n" for r in result.ratings),
                                       encoding="utf-8")
    body = {k: v for k, v in asdict(result).items() if k != "ratings"}
    (out / "reference.json").write_text(json.dumps(body, indent=1), encoding="utf-8")
    return out
