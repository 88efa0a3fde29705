"""LangSmith runs: the run payloads an SDK sends (`{post: [...], patch: [...]}`, a run's fields spread over its
create and its update), a list of runs, or a folder of such files.

A trace's `llm` runs, oldest first, are its model calls: their `inputs` (messages) and `outputs` (a chat
completion, or messages) make one conversation per trace, read by `conversation`. The model is the output's
`model`, else the run's `ls_model_name`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.api.data import CallFacts, Session, SessionRows, conversation, count, dataset_format_class, inner, moment
from engine.api.records import DatasetError


@dataset_format_class("langsmith")
class LangSmith(SessionRows):
    description = ("LangSmith runs (the SDK's {post, patch} payloads, a list of runs, or a folder): a "
                   "conversation per trace, from its llm runs' inputs and outputs")
    noun = "LangSmith traces"

    def owns(self, path: Path) -> bool:
        head = self.head(path)
        return '"run_type"' in head and '"trace_id"' in head

    def sessions(self, files: list[Path]) -> list[Session]:
        return sessions(files)


def _runs(path: Path) -> list[dict[str, Any]]:
    """Each run, its create and update merged (the update's fields win)."""
    doc = SessionRows.document(path)
    parts = [*doc.get("post", []), *doc.get("patch", [])] if isinstance(doc, dict) and (
        "post" in doc or "patch" in doc) else doc if isinstance(doc, list) else [doc]
    runs: dict[str, dict[str, Any]] = {}
    for n, run in enumerate(parts):
        # an update names its run in the request's address, not its body: its dotted order ends with the id
        key = run.get("id") or str(run.get("dotted_order") or "").rpartition("Z")[2] if isinstance(run, dict) else None
        if not key:
            raise DatasetError(f"{path}: run {n} has neither an 'id' nor a 'dotted_order' (a LangSmith run)")
        runs.setdefault(str(key), {}).update(run)
    return list(runs.values())


def sessions(files: list[Path]) -> list[Session]:
    grouped: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    for path in files:
        for run in _runs(path):
            if run.get("run_type") == "llm":
                grouped.setdefault(str(run.get("trace_id") or run["id"]), (str(path), []))[1].append(run)
    out = []
    for key, (where, runs) in grouped.items():
        runs.sort(key=lambda r: str(r.get("dotted_order") or r.get("start_time") or ""))
        models = [_model(run) for run in runs]
        facts = [CallFacts(moment(run.get("start_time"), MILLISECONDS), moment(run.get("end_time"), MILLISECONDS),
                           count(inner(inner(run, "outputs"), "usage_metadata").get("output_tokens")))
                 for run in runs]
        out.append(Session(id=key, models=models, messages=conversation(
            [(run.get("inputs"), run.get("outputs")) for run in runs], facts), where=where))
    return out


MILLISECONDS = 1_000.0  # the SDK's times: milliseconds since the epoch (or ISO-8601 text, read as it is)


def _model(run: dict[str, Any]) -> str:
    outputs = inner(run, "outputs")
    metadata = inner(inner(run, "extra"), "metadata")
    return str(outputs.get("model") or metadata.get("ls_model_name") or "")
