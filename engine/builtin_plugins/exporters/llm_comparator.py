"""Google PAIR's LLM Comparator input: one JSON file per comparison, in the field rules of its `types.ts`.

- `score` (positive: A better) is the panel's preference where preference judges ran (the mean of each
  judge's two-order verdict), else the dataset's label (+1, −1, 0 for a tie), else null; `metadata`
  says which.
- `individual_rater_scores`: every judge's verdict on every question it was asked (preference, each vibe),
  with `is_flipped` for the order that showed B first (null for order-free offline judges), the judge's
  reason as the rationale, and the question and judge as per-rating fields.
- `custom_fields`: each vibe's panel verdict (number), what a metric judge measured on each answer
  (per-model number), the answers' lengths, the split and the label; `tags`: the prompt's category.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.api.analysis import combine_orders
from engine.api.exporters import Comparison, RunFiles
from engine.api.judging import verdict_reason
from engine.api.report import slug

ORDER_NAMES = ("A shown first", "B shown first")


def write(run: RunFiles, out: Path) -> list[Path]:
    written = []
    for comparison in run.comparisons():
        path = out / f"{slug(comparison.analysis)}-{slug(comparison.model_a)}-vs-{slug(comparison.model_b)}.json"
        path.write_text(json.dumps(document(run, comparison), ensure_ascii=False, indent=1), encoding="utf-8")
        written.append(path)
    return written


def document(run: RunFiles, comparison: Comparison) -> dict[str, Any]:
    items = run.dataset_items(comparison.dataset)
    vibes = list(dict.fromkeys(v for pair in comparison.pairs for v in pair["nu"]))
    measured = list(dict.fromkeys(v for pair in comparison.pairs for v in pair.get("measures", {})))
    judged = any(pair.get("preferred") for pair in comparison.pairs)
    labelled = any(pair["preference"] is not None for pair in comparison.pairs)
    schema = ([{"name": vibe, "type": "number"} for vibe in vibes]
              + [{"name": f"{vibe} (measured)", "type": "per_model_number"} for vibe in measured]
              + [{"name": "characters", "type": "per_model_number"}, {"name": "split", "type": "category"},
                 {"name": "label", "type": "category"}, {"name": "question", "type": "per_rating_string"},
                 {"name": "judge", "type": "per_rating_string"}])
    score_from = ("the preference judges' panel verdict" if judged else
                  f"the dataset's labels ({run.spec.datasets[comparison.dataset].labels.who()})" if labelled else
                  "nothing: no preference judge ran and the dataset has no labels")
    return {
        "metadata": {"source_path": f"vibe run {run.manifest['spec_name']} ({run.run_dir}), analysis "
                                    f"{comparison.analysis}; score: {score_from}",
                     "custom_fields_schema": schema},
        "models": [{"name": comparison.model_a}, {"name": comparison.model_b}],
        "examples": [_example(run, comparison, pair, items[pair["item_id"]].prompt,
                              items[pair["item_id"]].category, vibes, measured, judged)
                     for pair in comparison.pairs if pair["item_id"] in items],
    }


def _example(run: RunFiles, comparison: Comparison, pair: dict[str, Any], prompt: str, category: str | None,
             vibes: list[str], measured: list[str], judged: bool) -> dict[str, Any]:
    label = {comparison.model_a: "A", comparison.model_b: "B", "tie": "tie"}.get(pair["preference"] or "", "none")
    custom: dict[str, Any] = {vibe: pair["nu"].get(vibe) for vibe in vibes}
    custom.update({f"{vibe} (measured)": pair["measures"].get(vibe, [None, None]) for vibe in measured})
    custom.update({"characters": pair["chars"], "split": pair["split"], "label": label})
    return {"input_text": prompt, "tags": [category] if category else [],
            "output_text_a": run.answers.get(pair["output_a"], ""),
            "output_text_b": run.answers.get(pair["output_b"], ""),
            "score": _score(pair, label, judged), "individual_rater_scores": _ratings(run, pair),
            "custom_fields": custom}


def _score(pair: dict[str, Any], label: str, judged: bool) -> float | None:
    if judged:
        verdicts = [v for first, second in pair["preferred"].values()
                    if (v := combine_orders(first, second)) is not None]
        return sum(verdicts) / len(verdicts) if verdicts else None
    return {"A": 1.0, "B": -1.0, "tie": 0.0}.get(label)


def _ratings(run: RunFiles, pair: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for judge, orders in pair.get("preferred", {}).items():
        texts = pair.get("preferred_rationales", {}).get(judge, ["", ""])
        out += [_rating("preference", judge, verdict, i == 1, texts[i]) for i, verdict in enumerate(orders)]
    for vibe, judges in pair["by_judge"].items():
        for judge, verdict in judges.items():
            orders = pair.get("orders", {}).get(vibe, {}).get(judge)
            if orders is None:  # an offline judge: one order-free measurement
                measure = pair.get("measures", {}).get(vibe)
                reason = (f"{run.spec.judges[judge].kind} judge measured {measure[0]:g} (A) and {measure[1]:g} (B)"
                          if measure else f"{run.spec.judges[judge].kind} judge")
                out.append(_rating(vibe, judge, verdict, None, reason))
                continue
            texts = pair.get("rationales", {}).get(vibe, {}).get(judge, ["", ""])
            out += [_rating(vibe, judge, v, i == 1, texts[i]) for i, v in enumerate(orders)]
    return out


def _rating(question: str, judge: str, verdict: int | None, flipped: bool | None, text: str) -> dict[str, Any]:
    side = {1: "A", -1: "B", 0: "neither"}.get(verdict) if verdict is not None else None
    label = (None if side is None else f"{side} is better" if question == "preference" else
             f"{side} more: {question}" if side != "neither" else f"alike: {question}")
    rationale = verdict_reason(text) if flipped is not None else text
    return {"score": None if verdict is None else float(verdict), "rating_label": label, "is_flipped": flipped,
            "rationale": rationale or None, "custom_fields": {"question": question, "judge": judge}}
