"""Execute stage: run every unfinished task of a plan, stage by stage, then write the run directory.

Resume is the cache: a finished task is never run again, so re-running after a crash, a Ctrl-C or a
`kill -9` picks up exactly where the last committed result left off. The run directory is rewritten from
the cache at the end of every run (also an interrupted one), so it always matches what is really done:

    runs/<spec>/plan.json.gz      the compiled plan (`vibe plan --json` writes it uncompressed)
    runs/<spec>/<stage>.jsonl.gz  one `TaskRecord` per task (pandas.read_json(..., lines=True))
    runs/<spec>/failures.jsonl    tasks that did not finish, with the error
    runs/<spec>/manifest.json     spec hash, versions, start/end, counts, tokens and cost
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import platform
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.execute.batches import BatchLog, run_batches
from engine.execute.cache import Cache
from engine.execute.interrupts import interruptible
from engine.execute.measures import MeasurePass, MeasureTable, measure_table, run_measures
from engine.execute.messages import render
from engine.execute.offline_judges import run_offline
from engine.execute.progress import RunProgress
from engine.execute.providers import Provider, ProviderError, create_provider
from engine.execute.recorded import hold_recorded
from engine.execute.scheduler import Failure, Scheduler
from engine.execute.snapshot import stage_file, write_measures, write_snapshot, write_spec
from engine.gzip_members import gzip_text
from engine.plan import reference_corpora
from engine.plugins import load_named
from engine.provider_table import PROVIDERS, in_cluster_providers, is_recorded
from engine.records import OFFLINE_PROVIDER, Plan, Prepared, Result, Task, call_endpoints
from engine.spec.model import Endpoint, Execution

if TYPE_CHECKING:
    from engine.execute.ray_generation import RayGenerator

OFFLINE_CHUNK = 2000  # offline judgments per batch: enough to batch the encoders, few enough that progress moves


@dataclass(frozen=True)
class TaskRecord:
    """One line of a stage's JSONL file."""

    task_id: str
    stage: str
    analysis: str
    endpoint: str
    provider: str
    item_id: str
    output: Any
    input_tokens: int
    output_tokens: int
    cost: float
    latency_s: float
    meta: dict[str, Any]


@dataclass
class RunSummary:
    run_dir: Path
    total: int
    done: int
    ran_now: int
    read: int = 0  # answers read from the datasets: done whenever the plan is, never run
    failed: list[Failure] = field(default_factory=list)
    endpoint_errors: dict[str, str] = field(default_factory=dict)
    free_text_fallbacks: dict[str, str] = field(default_factory=dict)  # endpoint -> why it left its schema
    cost: float = 0.0
    interrupted: bool = False
    execution: dict[str, Any] = field(default_factory=lambda: {"backend": "local"})  # where the calls ran
    batches: dict[str, BatchLog] = field(default_factory=dict)  # endpoint -> what its provider batches did
    open_batches: int = 0  # batches still running at their providers when the run stopped
    measured: MeasurePass = field(default_factory=MeasurePass)  # what the measure pass computed and found
    measures: MeasureTable | None = None  # the plan's measured values, as the pass that wrote the folder read them


def execute(prepared: Prepared, run_dir: Path, cache: Cache, *, quiet: bool = False,
            stages: tuple[str, ...] | None = None, write: bool = True,
            execution: Execution | None = None) -> RunSummary:
    """Run the plan's unfinished tasks of the given stages (None: all the plan's); `write=False` leaves the run
    directory alone (intermediate steps such as scoring candidate vibes during discovery). On the ray backend
    (`execution`, already joined: see `backend.joined`) local models' calls run on the cluster."""
    plan = prepared.plan
    started = datetime.now(UTC)
    recorded = hold_recorded(prepared, cache)
    done = cache.known(t.id for t in plan.tasks)
    stages = plan.stages if stages is None else stages
    pending = [t for t in plan.tasks if t.id not in done and t.stage in stages]
    summary = RunSummary(run_dir, len(plan.tasks), len(done), 0, read=recorded)
    endpoints = call_endpoints(prepared)
    on_ray = execution is not None and execution.backend == "ray"
    served = {} if on_ray else _models_to_serve(pending, endpoints)
    progress = RunProgress(pending, plan.stages, quiet=quiet)
    generator = None
    if on_ray:
        from engine.execute.ray_generation import RayGenerator

        assert execution is not None
        generator = RayGenerator(execution, endpoints, cache, on_result=progress.advance, on_replica=progress.replica)
        summary.execution = {"backend": "ray", "address": execution.address, "replicas": []}
    try:
        with progress, _models_served(served):
            asyncio.run(_execute_stages(pending, prepared, endpoints, cache, progress, summary, generator, stages))
    except KeyboardInterrupt:
        summary.interrupted = True
        summary.open_batches = len([b for b in cache.batches(open_only=True) if b.endpoint in endpoints])
    except ProviderError as exc:  # a server of models run here could not start: each of its tasks fails with one reason
        summary.endpoint_errors[" and ".join(sorted(served)) or "models served here"] = str(exc)
    finally:
        if generator is not None:
            generator.stop()
            summary.execution["replicas"] = [
                {"model": r.weights, "replica": r.index, "ran_on": r.where or "never started", "tasks": r.tasks,
                 **({"lost": True} if r.lost else {})} for r in generator.replicas]
        if write or summary.interrupted:  # an interrupted pass always leaves a run directory that says so
            _write_outputs(prepared, run_dir, cache, summary, started)
    return summary


def _models_to_serve(tasks: list[Task], endpoints: dict[str, Endpoint]) -> dict[str, set[str]]:
    """For every provider that serves its models here while a run calls them (`ProviderInfo.serves`), the
    models these tasks call."""
    out: dict[str, set[str]] = {}
    for t in tasks:
        info = PROVIDERS.get(t.provider)
        if info is not None and info.serves is not None:
            out.setdefault(t.provider, set()).add(endpoints[t.endpoint].model)
    return out


@contextlib.contextmanager
def _models_served(served: dict[str, set[str]]) -> Iterator[None]:
    """Each provider's models served for the block, by the server its table entry names (no import of it
    unless one of its models has work to do)."""
    with contextlib.ExitStack() as stack:
        for provider, models in served.items():
            stack.enter_context(load_named(str(PROVIDERS[provider].serves))(models))
        yield


def _providers(names: set[str], endpoints: dict[str, Endpoint]) -> dict[str, Provider | ProviderError]:
    """A provider per endpoint, or the reason it cannot be had (missing key...), which stops only that one."""
    out: dict[str, Provider | ProviderError] = {}
    for name in names:
        try:
            out[name] = create_provider(endpoints[name])
        except ProviderError as exc:
            out[name] = exc
    return out


async def _close(providers: dict[str, Provider | ProviderError]) -> None:
    for provider in providers.values():
        if not isinstance(provider, ProviderError):
            await provider.aclose()


async def _execute_stages(pending: list[Task], prepared: Prepared, endpoints: dict[str, Endpoint], cache: Cache,
                          progress: RunProgress, summary: RunSummary, generator: RayGenerator | None,
                          measured_stages: tuple[str, ...]) -> None:
    on_ray = {t.endpoint for t in pending
              if generator is not None and endpoints[t.endpoint].provider in in_cluster_providers()}
    used = {t.endpoint for t in pending if t.is_call} - on_ray
    providers = _providers(used, endpoints)
    scheduler = Scheduler(cache, {n: endpoints[n] for n in used}, providers, on_result=progress.advance)
    corpora = reference_corpora(prepared.plan.tasks)  # whole plan: a resumed partial batch weighs words the same
    try:
        for stage in prepared.plan.stages:
            if stage in measured_stages:  # reads only earlier stages' answers: first, whatever the stage's tasks
                with interruptible():
                    _measure(stage, prepared, cache, progress, summary)
            stage_tasks = [t for t in pending if t.stage == stage]
            if not stage_tasks:
                continue
            offline = [t for t in stage_tasks if t.provider == OFFLINE_PROVIDER]
            calls = [t for t in stage_tasks if t.is_call]
            while calls:  # in waves: a conversation's next turn waits for the answer to its previous one
                known = cache.known({d for t in calls for d in t.depends_on})
                queued = {t.id for t in calls}
                ready = [all(d in known for d in t.depends_on) for t in calls]
                runnable = [t for t, ok in zip(calls, ready, strict=True) if ok]
                later = [t for t, ok in zip(calls, ready, strict=True)
                         if not ok and any(d in queued for d in t.depends_on)]
                waiting = {t.id for t in later} if runnable else set()
                summary.failed.extend(Failure(t.id, t.stage, t.endpoint, "skipped: an input failed", 0)
                                      for t, ok in zip(calls, ready, strict=True) if not ok and t.id not in waiting)
                if not runnable:
                    break
                calls = later
                inputs = cache.get_many({d for t in runnable for d in t.depends_on})
                call = functools.partial(render, results=inputs)
                batched = {t.endpoint for t in runnable if endpoints[t.endpoint].batch is not None} - on_ray
                api, cluster, (in_batches, live_again) = await asyncio.gather(
                    scheduler.run([t for t in runnable if t.endpoint not in on_ray | batched], call),
                    _on_cluster(generator, [t for t in runnable if t.endpoint in on_ray], call),
                    _in_batches([t for t in runnable if t.endpoint in batched], call, endpoints, cache, progress,
                                summary))
                failures = api + cluster + in_batches + await scheduler.run(live_again, call)
                summary.failed.extend(failures)
                summary.ran_now += len(runnable) - len(failures)
            new_offline = []
            for start in range(0, len(offline), OFFLINE_CHUNK):  # in chunks, so the bar moves as they finish
                chunk = offline[start:start + OFFLINE_CHUNK]
                with interruptible():
                    new_offline += run_offline(chunk, cache, corpora)
                for task in chunk:
                    progress.advance(task, None)
            summary.ran_now += len(new_offline)
            missing = {t.id for t in offline} - {r.task_id for r in new_offline}
            summary.failed.extend(Failure(t.id, t.stage, t.endpoint, "skipped: an input failed", 0)
                                  for t in offline if t.id in missing)
    finally:
        summary.endpoint_errors.update(scheduler.stop_messages)
        summary.free_text_fallbacks.update(scheduler.fallbacks)
        await _close(providers)


def _measure(stage: str, prepared: Prepared, cache: Cache, progress: RunProgress, summary: RunSummary) -> None:
    """The stage's measure pass: every answer its `Measured` records compare, measured once per measure."""
    records = [m for m in prepared.plan.measured if m.stage == stage]
    if not records:
        return
    done = run_measures(records, cache, progress.measured)
    if done.unanswered:  # an answer that failed leaves its pairs without a verdict: said once per record
        answered = cache.known({a for m in records for a in (*m.pairs.outputs_a, *m.pairs.outputs_b)})
        summary.failed.extend(Failure(m.id, m.stage, m.judge, "skipped: an input failed", 0) for m in records
                              if not answered.issuperset((*m.pairs.outputs_a, *m.pairs.outputs_b)))
    summary.measured.add(done)


async def _in_batches(tasks: list[Task], call: Any, endpoints: dict[str, Endpoint], cache: Cache,
                      progress: RunProgress, summary: RunSummary) -> tuple[list[Failure], list[Task]]:
    """The batched endpoints' share of a stage's calls, every endpoint's batches at once; their failures,
    and the tasks to ask live (`batch.retry: live`)."""
    names = sorted({t.endpoint for t in tasks})
    runs = await asyncio.gather(*(run_batches(
        [t for t in tasks if t.endpoint == name], call, endpoints[name], cache, progress.advance, progress.batch,
        summary.batches.setdefault(name, BatchLog(name))) for name in names))
    return [f for failed, _ in runs for f in failed], [t for _, live in runs for t in live]


async def _on_cluster(generator: RayGenerator | None, tasks: list[Task], call: Any) -> list[Failure]:
    """The cluster's share of a stage's calls, run beside the scheduler's (the generator blocks in a thread)."""
    if generator is None or not tasks:
        return []
    try:
        return await asyncio.to_thread(generator.run, tasks, call)
    except asyncio.CancelledError:
        generator.stop()
        raise


def run_calls(tasks: list[Task], endpoints: dict[str, Endpoint], cache: Cache) -> dict[str, Result]:
    """Run ad-hoc call tasks (built outside the plan, e.g. discovery prompts) through the same scheduler,
    provider registry and cache as planned ones; returns every result, cached or new."""
    finished = cache.known(t.id for t in tasks)
    pending = [t for t in tasks if t.id not in finished]

    async def main() -> None:
        names = {t.endpoint for t in pending}
        providers = _providers(names, endpoints)
        try:
            await Scheduler(cache, {n: endpoints[n] for n in names}, providers).run(
                pending, functools.partial(render, results={}))
        finally:
            await _close(providers)

    if pending:
        with _models_served(_models_to_serve(pending, endpoints)):
            asyncio.run(main())
    return cache.get_many(t.id for t in tasks)


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for package in ("vibe-bench", "openai", "anthropic", "llama-cpp-python", "torch", "bert-score"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return out


def _fingerprint(plan: Plan, done: Iterable[str], measured: int) -> str:
    """What the run directory's task files are a view of: the plan's tasks and `Measured` records, which of the
    tasks are finished and how many values the records' answers have."""
    digest = hashlib.sha256()
    for task_id in sorted([t.id for t in plan.tasks] + [m.id for m in plan.measured]):
        digest.update(task_id.encode())
    digest.update(b"|")
    for task_id in sorted(done):
        digest.update(task_id.encode())
    digest.update(f"|{measured}".encode())
    return digest.hexdigest()[:32]


def _write_outputs(prepared: Prepared, run_dir: Path, cache: Cache, summary: RunSummary, started: datetime) -> None:
    plan = prepared.plan
    run_dir.mkdir(parents=True, exist_ok=True)
    results = cache.get_many(t.id for t in plan.tasks)
    summary.done = len(results)
    summary.measures = measure_table(plan.measured, cache.measures)
    fingerprint = _fingerprint(plan, results, summary.measures.measured())
    manifest_path = run_dir / "manifest.json"
    previous = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else {}
    if previous.get("fingerprint") != fingerprint or not (run_dir / "plan.json.gz").exists():
        _write_task_files(plan, run_dir, results, previous.get("by_stage", {}))  # else they hold these already
        write_measures(run_dir, summary.measures)
        write_snapshot(prepared, run_dir)
    write_spec(prepared, run_dir)
    failed_ids = {f.task_id for f in summary.failed}
    (run_dir / "failures.jsonl").write_text(
        "".join(json.dumps(asdict(f)) + "\n" for f in summary.failed if f.task_id not in results), encoding="utf-8")
    summary.cost = sum(r.cost for r in results.values())
    manifest = {
        "spec_name": plan.spec_name,
        "spec_hash": plan.spec_hash,
        "fingerprint": fingerprint,
        "spec_path": str(prepared.spec.path),
        "cache_path": str(cache.path),
        "started_at": started.isoformat(timespec="seconds"),
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "status": "interrupted" if summary.interrupted else (
            "complete" if summary.done == summary.total else "partial"),
        "tasks": {"total": summary.total, "done": summary.done, "ran_now": summary.ran_now,
                  "read_from_data": summary.read, "failed": len(failed_ids - set(results))},
        "by_stage": dict(Counter(t.stage for t in plan.tasks)),
        **({"measured": {"records": len(plan.measured), "pairs": sum(len(m.pairs) for m in plan.measured),
                         **asdict(summary.measured)}} if plan.measured else {}),
        "tokens": {"input": sum(r.input_tokens for r in results.values()),
                   "output": sum(r.output_tokens for r in results.values())},
        "cost_usd": round(summary.cost, 6),
        "endpoint_errors": summary.endpoint_errors,
        "free_text_fallbacks": summary.free_text_fallbacks,
        "skipped_judges": list(prepared.spec.skipped_judges),
        "execution": summary.execution,
        **({"batches": {name: asdict(log) for name, log in summary.batches.items()}} if summary.batches else {}),
        "versions": _versions(),
        "wall_s": round(time.time() - started.timestamp(), 3),
    }
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def _write_task_files(plan: Plan, run_dir: Path, results: dict[str, Result], earlier: Iterable[str]) -> None:
    """plan.json.gz and one gzipped JSONL of task records per stage (pandas.read_json(path, lines=True) reads
    them as they are; compressed, Arena's run folder is 13 MB smaller), and no file of a stage it has no results
    of: not of its own stages, nor of the `earlier` ones the folder's previous manifest counted (a folder
    written before by another spec loses them)."""
    (run_dir / "plan.json").unlink(missing_ok=True)  # written uncompressed by earlier versions
    # gzip: every task's request repeats the prompt and answers it judges (27 MB for 800 pairs, ~3x less)
    with gzip_text(run_dir / "plan.json.gz") as text:
        text.writelines(plan.json_parts())  # streamed: never the whole plan as one string
    by_stage: dict[str, list[Task]] = {}
    for task in plan.tasks:
        if task.id in results:
            by_stage.setdefault(task.stage, []).append(task)
    for stage in dict.fromkeys((*plan.stages, *earlier)):
        (run_dir / f"{stage}.jsonl").unlink(missing_ok=True)  # written uncompressed by earlier versions
        path = stage_file(run_dir, stage)
        if stage not in by_stage:
            path.unlink(missing_ok=True)
            continue
        with gzip_text(path) as text:
            for task in by_stage[stage]:
                result = results[task.id]
                # a recorded answer's text is the dataset's, which items.jsonl.gz keeps: `task_records` reads it there
                output = None if is_recorded(task.provider) else result.output
                record = TaskRecord(task.id, task.stage, task.analysis, task.endpoint, task.provider, task.item_id,
                                    output, result.input_tokens, result.output_tokens, result.cost,
                                    result.latency_s, result.meta)
                # its fields as they are (asdict deep-copies each meta), a record nested in a meta as asdict has it
                text.write(json.dumps(vars(record), ensure_ascii=False, default=asdict) + "\n")
