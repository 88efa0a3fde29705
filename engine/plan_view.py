"""What `vibe plan` prints: tasks, calls and their cost per stage and endpoint, with how each judge answers, what
goes in provider batches and where local models run."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from rich.console import Console
from rich.table import Table

from engine.judges.kinds import kind_of
from engine.provider_table import in_cluster_providers, schema_form
from engine.records import Plan, Prepared, call_endpoints


def print_plan(prepared: Prepared, cached: set[str]) -> None:
    """The plan's table (`cached`: the task ids already done: in the cache, or answers read from the data) and
    its notes."""
    plan = prepared.plan
    table = Table(title=f"plan for {plan.spec_name} (spec {plan.spec_hash[:12]})")
    for col in ("stage", "endpoint", "tasks", "calls", "cached", "input tok", "output tok", "$ (max)"):
        table.add_column(col, justify="left" if col in ("stage", "endpoint") else "right")
    rows = summarize(plan, cached)
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
    if plan.deferred:
        console.print("Rows marked (estimate) are upper bounds for work that depends on earlier results (vibes "
                      "not yet discovered); the other rows count planned tasks exactly.")
    for judge in prepared.spec.judges.values():
        if judge.endpoint is None:
            continue
        form = (f"a JSON schema per prompt (structured: auto), sent as "
                f"{schema_form(judge.endpoint.provider)}"
                if kind_of(judge).answers_in_schema(judge) else "free text (structured: off)")
        console.print(f"LLM judge {judge.name} answers in {form}")
    if prepared.spec.skipped_judges:
        console.print(f"optional judges left out (API key unset): {', '.join(prepared.spec.skipped_judges)}")
    for name, endpoint in sorted(call_endpoints(prepared).items()):
        if endpoint.batch is not None:
            console.print(f"{name} goes in provider batches: priced above at half the live rate; answers within "
                          f"24 h, checked every {endpoint.batch.poll_s:g} s; failed requests asked again "
                          f"{'live' if endpoint.batch.retry == 'live' else 'in a new batch'}")
    execution = prepared.spec.execution
    if execution.backend == "ray":
        in_cluster = {e.model: e.provider for e in call_endpoints(prepared).values()
                      if e.provider in in_cluster_providers()}
        shares = [(model, execution.replica_resources(model, p)) for model, p in in_cluster.items()]
        replicas = "; ".join(f"{model}: {r.replicas} × ({r.num_cpus:g} CPU, {r.num_gpus:g} GPU)"
                             for model, r in shares) or "no local models"
        console.print(f"runs on the ray backend ({execution.address or 'RAY_ADDRESS, else auto'}): {replicas}; "
                      f"encoders: {execution.embeddings.replicas} × {execution.embeddings.num_cpus:g} CPU")


def summarize(plan: Plan, cached: set[str] | frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """One row per (stage, endpoint): calls, cached, tokens and cost still to spend. A `Measured` record counts
    a task per pair it judges (cached when `cached` holds its id: every answer of it is measured)."""
    rows: dict[tuple[str, str], dict[str, Any]] = defaultdict(
        lambda: {"tasks": 0, "calls": 0, "cached": 0, "input_tokens": 0, "output_tokens": 0, "cost": 0.0})
    calls: dict[str, bool] = {}  # whether a provider's tasks are calls, asked once per provider
    for t in plan.tasks:
        row = rows[(t.stage, t.endpoint)]
        row["tasks"] += 1
        if (call := calls.get(t.provider)) is None:
            call = calls[t.provider] = t.is_call
        row["calls"] += call
        if t.id in cached:
            row["cached"] += 1
            continue
        row["input_tokens"] += t.input_tokens
        row["output_tokens"] += t.output_tokens
        row["cost"] += t.cost
    for m in plan.measured:
        row = rows[(m.stage, m.judge)]
        row["tasks"] += len(m.pairs)
        row["cached"] += len(m.pairs) if m.id in cached else 0
    for d in plan.deferred:
        row = rows[(d.stage + " (estimate)", d.endpoint)]
        row["tasks"] += d.tasks
        row["calls"] += d.calls
        row["input_tokens"] += d.input_tokens
        row["output_tokens"] += d.output_tokens
        row["cost"] += d.cost
    order = {stage: n for n, stage in enumerate(plan.stages)}
    keys = sorted(rows, key=lambda k: (order.get(k[0].split(" ")[0], 99), k[0], k[1]))
    return [{"stage": s, "endpoint": e, **rows[(s, e)]} for s, e in keys]
