"""What makes a run folder self-contained: the validated spec it ran (`spec.json`) and every prompt it asked
(`items.jsonl.gz`, each dataset's items as the run read them), beside the task records of every stage.
`vibe export`, `vibe report` and `vibe compare` read these when the spec, its data or the cache are gone (a run
downloaded from a published site, a data folder cleaned up, another machine)."""

from __future__ import annotations

import dataclasses
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from engine.datasets.items import Battle, Item
from engine.execute.measures import MeasureTable, measured_results
from engine.gzip_members import GzipMembers
from engine.provider_table import is_recorded
from engine.records import Plan, Prepared, Result

SPEC_FILE = "spec.json"
ITEMS_FILE = "items.jsonl.gz"
MEASURES_FILE = "measures.npz"


def write_spec(prepared: Prepared, run_dir: Path) -> None:
    """The spec's merged document, on every run: a change the plan does not see (a gate's margin, a page's
    setting) must still reach the folder, since `vibe monitor` and `vibe compare` read their settings here."""
    spec = prepared.spec
    (run_dir / SPEC_FILE).write_text(json.dumps({"path": str(spec.path), "document": spec.document}, indent=1,
                                                ensure_ascii=False) + "\n", encoding="utf-8")


def write_snapshot(prepared: Prepared, run_dir: Path) -> None:
    """The datasets' items, beside the answers."""
    # an item at a time: never the file as one string
    with GzipMembers(run_dir / ITEMS_FILE) as fh:
        for name, items in prepared.items.items():
            for item in items:
                fh.write((json.dumps({"dataset": name, **_fields(item)}, ensure_ascii=False) + "\n").encode("utf-8"))


CONVERSATION_FIELDS = ("conversation", "turn", "earlier", "history", "transcript")


_ITEM_FIELDS = tuple(f.name for f in dataclasses.fields(Item))


def _fields(item: Item) -> dict[str, Any]:
    """An item's fields, those of a conversation's turn only where it is one: what `dataclasses.asdict` gives,
    without its deep copy of every value (only the battles are records; the rest JSON takes as they are)."""
    out = {k: v for k in _ITEM_FIELDS if (v := getattr(item, k)) or k not in CONVERSATION_FIELDS}
    out["battles"] = [dataclasses.asdict(b) for b in item.battles]
    return out


def write_measures(run_dir: Path, table: MeasureTable) -> None:
    """What offline judges measured on each answer (`engine.execute.measures`), as columns: the answers' task ids,
    the measure keys, and a value per answer and measure (NaN where an answer has none)."""
    path = run_dir / MEASURES_FILE
    if not table.columns:
        path.unlink(missing_ok=True)
        return
    keys = sorted(table.columns)
    values = np.column_stack([table.columns[key] for key in keys])
    with path.open("wb") as fh:
        np.savez_compressed(fh, answers=np.array(table.answers), keys=np.array(keys), values=values)


def read_measures(run_dir: Path) -> MeasureTable:
    """The table `write_measures` kept (an empty one for a run written before, or one that measured nothing)."""
    path = run_dir / MEASURES_FILE
    if not path.is_file():
        return MeasureTable([], {})
    with np.load(path) as kept:
        answers, keys, values = kept["answers"].tolist(), kept["keys"].tolist(), kept["values"]
    return MeasureTable(answers, {key: values[:, i] for i, key in enumerate(keys)})


def read_spec_document(run_dir: Path) -> tuple[dict[str, Any], Path] | None:
    """The run's merged spec document and the path it was read from, or None for a run written before."""
    path = run_dir / SPEC_FILE
    if not path.is_file():
        return None
    saved = json.loads(path.read_text(encoding="utf-8"))
    return saved["document"], Path(saved["path"])


def read_items(run_dir: Path) -> dict[str, list[Item]] | None:
    """Each dataset's items as the run read them, or None for a run written before."""
    path = run_dir / ITEMS_FILE
    if not path.is_file():
        return None
    out: dict[str, list[Item]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            dataset = row.pop("dataset")
            row["battles"] = tuple(Battle(**b) for b in row.get("battles", ()))
            row["earlier"] = tuple(row.get("earlier", ()))
            for key in ("history", "transcript"):
                row[key] = {model: tuple(messages) for model, messages in row.get(key, {}).items()}
            out.setdefault(dataset, []).append(Item(**row))
    return out


def prepared_from(run_dir: Path) -> Prepared | None:
    """The run's spec, items and plan rebuilt from its own copies (None for a run that keeps none): the plan
    is compiled again from them, so its tasks are the run's tasks."""
    from engine.planner import compile_plan
    from engine.spec.build import spec_from_document

    kept, items = read_spec_document(run_dir), read_items(run_dir)
    if kept is None or items is None:
        return None
    spec = spec_from_document(*kept)
    return Prepared(spec, items, compile_plan(spec, items))


def stage_file(run_dir: Path, stage: str) -> Path:
    """Where a run folder holds one stage's task records (`engine.execute.run` writes them)."""
    return run_dir / f"{stage}.jsonl.gz"


def task_records(run_dir: Path, stage: str) -> Iterator[dict[str, Any]]:
    """One stage's task records as the run folder holds them (the file must exist: see `stage_file`). A recorded
    answer's text is written once, with its item in items.jsonl.gz (its record's output is null): it is read back
    from there."""
    recorded: dict[tuple[str, str], Item] | None = None
    with gzip.open(stage_file(run_dir, stage), "rt", encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            if record["output"] is None and is_recorded(record["provider"]):
                if recorded is None:
                    recorded = {(name, item.id): item for name, items in (read_items(run_dir) or {}).items()
                                for item in items}
                record["output"] = recorded[(record["meta"]["source"], record["item_id"])].outputs[record["endpoint"]]
            yield record


def read_bindings(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Each analysis's bindings as the run's plan.json.gz keeps them: per item and variant, the generation task
    ids of every model's outputs (K of them where an analysis samples)."""
    with gzip.open(run_dir / "plan.json.gz", "rt", encoding="utf-8") as fh:
        bindings: dict[str, list[dict[str, Any]]] = json.load(fh)["bindings"]
    return bindings


def output_text(record: dict[str, Any]) -> str:
    """A task record's output as text (a structured output as its JSON)."""
    output = record["output"]
    return output if isinstance(output, str) else json.dumps(output)


def read_results(run_dir: Path, plan: Plan) -> dict[str, Result]:
    """Every finished task's result as the run folder's stage files hold it (what the cache held when the run
    was written), with the verdicts of the plan's `Measured` records from the values the folder kept."""
    results = {r["task_id"]: Result(r["task_id"], r["stage"], r["endpoint"], r["provider"], r["output"],
                                    r["input_tokens"], r["output_tokens"], r["cost"], r["latency_s"], r["meta"])
               for stage in plan.stages if stage_file(run_dir, stage).is_file() for r in task_records(run_dir, stage)}
    results.update(measured_results(plan.measured, read_measures(run_dir)))
    return results
