"""Langfuse trace exports: a trace as the UI downloads it ({trace, observations}), a list of them, or a folder
of files.

The conversation is what the trace's model calls (`GENERATION` observations, oldest first) were given and
answered: frameworks differ in what a call's input holds (the whole history, or only what is new since the
last call; OpenAI messages, Responses API items, Anthropic blocks or OpenTelemetry parts, often as JSON
text), and `conversation` reads each. Traces of one Langfuse session (`sessionId`) are one conversation; the
model is each call's `model`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.api.data import CallFacts, Session, SessionRows, conversation, count, dataset_format_class, inner, moment
from engine.api.records import DatasetError


@dataset_format_class("langfuse")
class Langfuse(SessionRows):
    description = ("Langfuse trace exports ({trace, observations} JSON, a list of them, or a folder): a "
                   "conversation per session (else per trace), from its model calls' inputs and outputs")
    noun = "Langfuse conversations"

    def owns(self, path: Path) -> bool:
        head = self.head(path)
        return '"observations"' in head or ('"trace"' in head and '"projectId"' in head)

    def sessions(self, files: list[Path]) -> list[Session]:
        return sessions(files)


def _traces(path: Path) -> list[tuple[dict[str, Any], list[Any]]]:
    """Each export's trace and its observations (beside the trace, or inside it)."""
    doc = SessionRows.document(path)
    out = []
    for n, export in enumerate(doc if isinstance(doc, list) else [doc]):
        trace = inner(export, "trace") or (export if isinstance(export, dict) else {})
        observations = export.get("observations", trace.get("observations")) if isinstance(export, dict) else None
        if not isinstance(observations, list):
            raise DatasetError(f"{path}: trace {n} has no list 'observations' (a Langfuse export is "
                               "{trace, observations})")
        out.append((trace, observations))
    return out


def sessions(files: list[Path]) -> list[Session]:
    grouped: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    for path in files:
        for trace, observations in _traces(path):
            key = str(trace.get("sessionId") or trace.get("id") or path.stem)
            grouped.setdefault(key, (str(path), []))[1].extend(
                o for o in observations if isinstance(o, dict) and o.get("type") == "GENERATION")
    out = []
    for key, (where, generations) in grouped.items():
        generations.sort(key=lambda o: str(o.get("startTime") or ""))
        facts = [CallFacts(moment(o.get("startTime")), moment(o.get("endTime")),
                           count(inner(o, "usageDetails").get("output") or inner(o, "usage").get("output")))
                 for o in generations]
        messages = conversation([(o.get("input"), o.get("output")) for o in generations], facts)
        models = [str(o.get("model") or "") for o in generations]
        out.append(Session(id=key, models=models, messages=messages, where=where))
    return out
