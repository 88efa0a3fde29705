"""Live progress per stage (done/total, rate, ETA, tokens and dollars so far) with rich; silent when stderr
is not a terminal, so CI logs and pipes get only the final summary."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from engine.execute.cache import Result
from engine.plan import STAGES, Task


class RunProgress:
    def __init__(self, tasks: list[Task], quiet: bool = False):
        console = Console(stderr=True)
        self.enabled = not quiet and console.is_terminal
        self.tokens = 0
        self.cost = 0.0
        self._progress = Progress(
            TextColumn("{task.description:<16}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("[progress.data.speed]{task.fields[rate]}"),
            TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[spend]}"),
            console=console, disable=not self.enabled, transient=False,
        )
        counts = Counter(t.stage for t in tasks)
        self._ids: dict[str, TaskID] = {
            stage: self._progress.add_task(stage, total=counts[stage], rate="", spend="")
            for stage in STAGES if counts[stage]}

    def __enter__(self) -> RunProgress:
        self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.__exit__(None, None, None)

    def advance(self, task: Task, result: Result | None) -> None:
        if result is not None:
            self.tokens += result.input_tokens + result.output_tokens
            self.cost += result.cost
        if not self.enabled:
            return
        task_id = self._ids[task.stage]
        self._progress.advance(task_id)
        speed = self._progress.tasks[task_id].speed
        self._progress.update(task_id, rate=f"{speed:.1f}/s" if speed else "",
                              spend=f"{self.tokens:,} tok ${self.cost:.4f}")
