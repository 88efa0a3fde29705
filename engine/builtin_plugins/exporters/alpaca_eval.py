"""AlpacaEval's `model_outputs.json` for every model the run generated (recorded answers were not vibe's
to submit): one record per prompt, with the instruction, the answer, the generator and the dataset (the
prompt's category where it has one), from the first sample of the original prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.api.exporters import ExportError, RunFiles
from engine.api.judging import is_recorded
from engine.api.report import slug


def write(run: RunFiles, out: Path) -> list[Path]:
    records: dict[str, dict[str, dict[str, Any]]] = {}  # model -> item -> record
    for analysis, bindings in run.bindings.items():
        dataset = run.spec.analyses[analysis].dataset
        items = run.dataset_items(dataset)
        for binding in bindings:
            if binding["variant"] != "original" or binding["item"] not in items:
                continue
            item = items[binding["item"]]
            for model, tasks in binding["outputs"].items():
                if is_recorded(run.spec.models[model].provider) or tasks[0] not in run.answers:
                    continue
                records.setdefault(model, {}).setdefault(item.id, {
                    "instruction": item.prompt, "output": run.answers[tasks[0]], "generator": model,
                    "dataset": item.category or dataset})
    if not records:
        raise ExportError(f"{run.run_dir}: no generated answers to export (every model of this run is recorded)")
    written = []
    for model, by_item in records.items():
        path = out / slug(model) / "model_outputs.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(list(by_item.values()), ensure_ascii=False, indent=2), encoding="utf-8")
        written.append(path)
    return written
