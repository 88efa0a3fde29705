"""One Parquet table of every verdict: a row per (comparison, pair, vibe or preference, judge), with the
split, the label and who wrote it, the panel's verdict, the judge's verdict in each order (LLM judges) and
what a metric judge measured on each answer: what a dataframe user filters and groups."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.api.analysis import combine_orders
from engine.api.exporters import Comparison, ExportError, RunFiles

COLUMNS = ("analysis", "model_a", "model_b", "item_id", "category", "split", "label", "label_source", "question",
           "panel", "judge", "judge_kind", "verdict", "verdict_a_first", "verdict_b_first", "measure_a", "measure_b")


def write(run: RunFiles, out: Path) -> list[Path]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ExportError("--to parquet needs pyarrow: pip install 'vibe-bench[parquet]'") from None
    rows = [row for comparison in run.comparisons() for row in _rows(run, comparison)]
    table = pa.Table.from_pylist(rows, schema=pa.schema([
        (name, pa.int8() if name.startswith("verdict") else pa.float64() if name in ("panel", "measure_a", "measure_b")
         else pa.string()) for name in COLUMNS]))
    path = out / "verdicts.parquet"
    pq.write_table(table, path)
    return [path]


def _rows(run: RunFiles, comparison: Comparison) -> list[dict[str, Any]]:
    items = run.dataset_items(comparison.dataset)
    source = run.spec.datasets[comparison.dataset].labels.source
    out = []
    for pair in comparison.pairs:
        base = {"analysis": comparison.analysis, "model_a": comparison.model_a, "model_b": comparison.model_b,
                "item_id": pair["item_id"], "category": getattr(items.get(pair["item_id"]), "category", None),
                "split": pair["split"], "label": pair["preference"],
                "label_source": source if pair["preference"] is not None else None}
        for vibe, judges in pair["by_judge"].items():
            measure = pair.get("measures", {}).get(vibe, [None, None])
            for judge, verdict in judges.items():
                first, second = pair.get("orders", {}).get(vibe, {}).get(judge, [None, None])
                out.append({**base, "question": vibe, "panel": pair["nu"].get(vibe), "judge": judge,
                            "judge_kind": run.spec.judges[judge].kind, "verdict": verdict, "verdict_a_first": first,
                            "verdict_b_first": second, "measure_a": measure[0], "measure_b": measure[1]})
        for judge, (first, second) in pair.get("preferred", {}).items():
            out.append({**base, "question": "preference", "panel": None, "judge": judge,
                        "judge_kind": run.spec.judges[judge].kind,
                        "verdict": combine_orders(first, second), "verdict_a_first": first, "verdict_b_first": second,
                        "measure_a": None, "measure_b": None})
    return out
