"""What `vibe plan` prints: tasks, calls and their cost per stage and endpoint, with how each judge answers, what
goes in provider batches and where local models run. Printed from the plan's outline (`plan_outline`), which a
kept plan carries beside it, so a plan read back needs neither its requests nor the modules that compile one."""

from __future__ import annotations

import os
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from engine.plan_outline import MeasuredOutline, Outline

if TYPE_CHECKING:
    from pathlib import Path

    from engine.execute.cache import Cache
    from engine.records import Plan, Prepared


def outline(spec_path: str | Path, limit: int | None = None) -> Outline:
    """What `vibe plan` and `vibe diff` show of the prepared run (`outline_of`), read back on its own where an
    earlier command kept it (`pipeline.prepared_view`)."""
    from engine.pipeline import prepared_view

    return prepared_view(spec_path, limit, outline_of, "outline")


def outline_of(prepared: Prepared) -> Outline:
    """The outline of a prepared run: what `print_plan`, `finished` and `diff.diff_plans` read of it."""
    from engine.execute.measures import measure_key
    from engine.judges.kinds import kind_of
    from engine.provider_table import in_cluster_providers, is_recorded, schema_form
    from engine.readiness import key_variables, located
    from engine.records import call_endpoints

    plan, spec = prepared.plan, prepared.spec
    providers = {t.provider for t in plan.tasks}
    call = {p: _is_call(plan, p) for p in providers}  # asked once per provider, not per task
    recorded = {p: is_recorded(p) for p in providers}
    notes = []
    if plan.deferred:
        notes.append("Rows marked (estimate) are upper bounds for work that depends on earlier results (vibes not "
                     "yet discovered); the other rows count planned tasks exactly.")
    for judge in spec.judges.values():
        if judge.endpoint is None:
            continue
        form = (f"a JSON schema per prompt (structured: auto), sent as {schema_form(judge.endpoint.provider)}"
                if kind_of(judge).answers_in_schema(judge) else "free text (structured: off)")
        notes.append(f"LLM judge {judge.name} answers in {form}")
    if spec.skipped_judges:
        notes.append(f"optional judges left out (API key unset): {', '.join(spec.skipped_judges)}")
    endpoints = call_endpoints(prepared)
    for name, endpoint in sorted(endpoints.items()):
        if endpoint.batch is not None:
            notes.append(f"{name} goes in provider batches: priced above at half the live rate; answers within 24 h, "
                         f"checked every {endpoint.batch.poll_s:g} s; failed requests asked again "
                         f"{'live' if endpoint.batch.retry == 'live' else 'in a new batch'}")
    execution = spec.execution
    if execution.backend == "ray":
        in_cluster = {e.model: e.provider for e in endpoints.values() if e.provider in in_cluster_providers()}
        shares = [(model, execution.replica_resources(model, p)) for model, p in in_cluster.items()]
        replicas = "; ".join(f"{model}: {r.replicas} × ({r.num_cpus:g} CPU, {r.num_gpus:g} GPU)"
                             for model, r in shares) or "no local models"
        notes.append(f"runs on the ray backend ({execution.address or 'RAY_ADDRESS, else auto'}): {replicas}; "
                     f"encoders: {execution.embeddings.replicas} × {execution.embeddings.num_cpus:g} CPU")
    return Outline(
        plan.spec_name, plan.spec_hash, spec.document, plan.stages,
        ids=[t.id for t in plan.tasks], task_stages=[t.stage for t in plan.tasks],
        endpoints=[t.endpoint for t in plan.tasks], calls=[call[t.provider] for t in plan.tasks],
        recorded=[recorded[t.provider] for t in plan.tasks], input_tokens=[t.input_tokens for t in plan.tasks],
        output_tokens=[t.output_tokens for t in plan.tasks], costs=[t.cost for t in plan.tasks],
        measured=[MeasuredOutline(m.id, m.stage, m.judge, (m.stage, m.judge, m.judge_kind, m.vibe,
                                                           repr(sorted(m.measure.items())),
                                                           repr((m.tolerance, m.relative))),
                                  measure_key(m), m.pairs.outputs_a, m.pairs.outputs_b) for m in plan.measured],
        deferred=[{"stage": d.stage, "endpoint": d.endpoint, "tasks": d.tasks, "calls": d.calls,
                   "input_tokens": d.input_tokens, "output_tokens": d.output_tokens, "cost": d.cost}
                  for d in plan.deferred],
        notes=notes,
        keys=[(variable, str(located(spec, path, message))) for variable, path, message in key_variables(spec)],
        excluded=dict(prepared.excluded))


def _is_call(plan: Plan, provider: str) -> bool:
    return next(t for t in plan.tasks if t.provider == provider).is_call


def missing_keys(outline: Outline) -> list[str]:
    """The warnings for API key variables unset now (`readiness.missing_keys`, from the outline)."""
    return [warning for variable, warning in outline.keys if not os.environ.get(variable)]


def finished(outline: Outline, cache: Cache | None) -> set[str]:
    """The plan's finished tasks (answers read from the datasets always are, with or without a cache) and the
    `Measured` records every answer of which has a stored value: what `vibe plan` counts as done."""
    done = {i for i, recorded in zip(outline.ids, outline.recorded, strict=True) if recorded}
    if cache is None:
        return done
    done |= cache.known(outline.ids)
    by_key: dict[str, list[MeasuredOutline]] = defaultdict(list)
    for m in outline.measured:
        by_key[m.key].append(m)
    for key, records in by_key.items():
        have = cache.measures(key, list(dict.fromkeys(a for m in records for a in (*m.outputs_a, *m.outputs_b))))
        done.update(m.id for m in records if all(a in have for a in (*m.outputs_a, *m.outputs_b)))
    return done


def print_plan(outline: Outline, cached: set[str]) -> None:
    """The plan's table (`cached`: the task ids already done: in the cache, or answers read from the data) and
    its notes."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"plan for {outline.spec_name} (spec {outline.spec_hash[:12]})")
    for col in ("stage", "endpoint", "tasks", "calls", "cached", "input tok", "output tok", "$ (max)"):
        table.add_column(col, justify="left" if col in ("stage", "endpoint") else "right")
    rows = summarize(outline, cached)
    for row in rows:
        table.add_row(row["stage"], row["endpoint"], f"{row['tasks']:,}", f"{row['calls']:,}",
                      f"{row['cached']:,}", f"{row['input_tokens']:,}", f"{row['output_tokens']:,}",
                      f"{row['cost']:.2f}")
    table.add_row("total", "", f"{sum(r['tasks'] for r in rows):,}", f"{sum(r['calls'] for r in rows):,}",
                  f"{sum(r['cached'] for r in rows):,}", f"{sum(r['input_tokens'] for r in rows):,}",
                  f"{sum(r['output_tokens'] for r in rows):,}", f"{sum(r['cost'] for r in rows):.2f}",
                  style="bold")
    console = Console(width=140)
    console.print(table)
    for note in outline.notes:
        console.print(note)


def summarize(outline: Outline, cached: set[str] | frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """One row per (stage, endpoint): calls, cached, tokens and cost still to spend. A `Measured` record counts
    a task per pair it judges (cached when `cached` holds its id: every answer of it is measured)."""
    rows: dict[tuple[str, str], dict[str, Any]] = defaultdict(
        lambda: {"tasks": 0, "calls": 0, "cached": 0, "input_tokens": 0, "output_tokens": 0, "cost": 0.0})
    for task_id, stage, endpoint, call, tokens_in, tokens_out, cost in zip(
            outline.ids, outline.task_stages, outline.endpoints, outline.calls, outline.input_tokens,
            outline.output_tokens, outline.costs, strict=True):
        row = rows[(stage, endpoint)]
        row["tasks"] += 1
        row["calls"] += call
        if task_id in cached:
            row["cached"] += 1
            continue
        row["input_tokens"] += tokens_in
        row["output_tokens"] += tokens_out
        row["cost"] += cost
    for m in outline.measured:
        row = rows[(m.stage, m.judge)]
        row["tasks"] += len(m.outputs_a)
        row["cached"] += len(m.outputs_a) if m.id in cached else 0
    for d in outline.deferred:
        row = rows[(d["stage"] + " (estimate)", d["endpoint"])]
        for name in ("tasks", "calls", "input_tokens", "output_tokens", "cost"):
            row[name] += d[name]
    order = {stage: n for n, stage in enumerate(outline.stages)}
    keys = sorted(rows, key=lambda k: (order.get(k[0].split(" ")[0], 99), k[0], k[1]))
    return [{"stage": s, "endpoint": e, **rows[(s, e)]} for s, e in keys]
