"""Agent Trajectory Interchange Format (ATIF, Harbor's RFC 0001; v1.0 to v1.7): a JSON trajectory per file
({schema_version, session_id, agent, steps, ...}), or a folder of them.

A step's `source` is its role. An agent step holds the assistant's message, its tool calls and, in the same
step, the tools' results (`observation.results`, each naming its call by `source_call_id`); here they become
an assistant message and one tool message per result. Some producers record the prompt again before every
model call: a user step repeating the prompt before it is that, not a new turn. A placeholder an exporter
writes where the model wrote no text is no text. v1.7's embedded `subagent_trajectories` are read as
subagent runs, apart from their parent."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from engine.api.data import Session, SessionRows, dataset_format_class, inner
from engine.api.records import DatasetError

PLACEHOLDERS = {"(no assistant text)", "[tool call]", "(empty)"}
NEWEST = (1, 7)  # the newest schema version this reader was written against


@dataset_format_class("atif")
class ATIF(SessionRows):
    description = ("Agent Trajectory Interchange Format (Harbor, NeMo Agent Toolkit; ATIF-v1.x .json, or a "
                   "folder of them): a trajectory per conversation, paired across agents by the prompt that "
                   "opens it; tool calls and observations shown beside the prose")
    noun = "ATIF trajectories"

    def owns(self, path: Path) -> bool:
        return '"ATIF-v' in self.head(path)

    def sessions(self, files: list[Path]) -> list[Session]:
        return [session for file in files for session in sessions(file)]


def sessions(path: Path) -> list[Session]:
    doc = SessionRows.document(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
        raise DatasetError(f"{path}: field 'steps' is missing or not a list (an ATIF trajectory's steps)")
    version = str(doc.get("schema_version", ""))
    try:
        number = tuple(int(x) for x in version.removeprefix("ATIF-v").split("."))
    except ValueError:
        number = ()
    if not number or number > NEWEST:
        print(f"vibe: {path}: schema_version {version!r} is not one this reader knows (ATIF-v1.0 to "
              f"v{'.'.join(map(str, NEWEST))}); read as v1.7, fields it does not know left out", file=sys.stderr)
    out = [_session(path, doc, None)]
    for k, child in enumerate(doc.get("subagent_trajectories") or []):
        if isinstance(child, dict) and isinstance(child.get("steps"), list):
            out.append(_session(path, child, str(child.get("trajectory_id") or k)))
    return out


def _session(path: Path, doc: dict[str, Any], subagent: str | None) -> Session:
    agent = inner(doc, "agent")
    default_model = str(agent.get("model_name") or "")
    messages: list[dict[str, Any]] = []
    models: list[str] = []
    for n, step in enumerate(doc["steps"]):
        if not isinstance(step, dict):
            raise DatasetError(f"{path}: steps.{n} is not an object")
        source, text = step.get("source"), _text(step.get("message"))
        if source == "user":
            if _last_prompt(messages) != text:  # else the prompt again, as recorded before a later model call
                messages.append({"role": "user", "content": text, "time": step.get("timestamp")})
        elif source == "system":
            messages.append({"role": "system", "content": text})
        elif source == "agent":
            calls = [{"function": str(c.get("function_name")), "arguments": c.get("arguments") or {},
                      "id": str(c.get("tool_call_id"))} for c in step.get("tool_calls") or [] if isinstance(c, dict)]
            metrics = inner(step, "metrics")
            messages.append({"role": "assistant", "content": "" if text.strip() in PLACEHOLDERS else text,
                             "time": step.get("timestamp"), "tokens": metrics.get("completion_tokens"),
                             **({"tool_calls": calls} if calls else {})})
            models.append(str(step.get("model_name") or default_model))
            names = {c["id"]: c["function"] for c in calls}
            for result in (step.get("observation") or {}).get("results") or []:
                call = str(result.get("source_call_id"))
                messages.append({"role": "tool", "tool_call_id": call, "name": names.get(call, "tool"),
                                 "content": _text(result.get("content")), "time": step.get("timestamp")})
        else:
            raise DatasetError(f"{path}: steps.{n}.source is {source!r}; an ATIF step's source is system, user or "
                               "agent")
    # a version may be a CLI's whole banner: its line naming the agent says the version
    name, lines = str(agent.get("name") or "agent"), str(agent.get("version") or "").strip().splitlines()
    version = next((line for line in lines if name.lower() in line.lower()), lines[0] if lines else "")
    label = f"{name} {version}".strip()
    return Session(id=str(doc.get("session_id") or doc.get("trajectory_id") or path.stem), models=models,
                   messages=messages, where=str(path), subagent=subagent, agent=label,
                   tool=name)


def _last_prompt(messages: list[dict[str, Any]]) -> str | None:
    return next((str(m["content"]) for m in reversed(messages) if m["role"] == "user"), None)


def _text(message: Any) -> str:
    """A step's message: text, or (from v1.6) a list of content parts whose text parts are read."""
    if isinstance(message, list):
        return "\n".join(str(p.get("text", "")) for p in message if isinstance(p, dict) and p.get("type") == "text")
    if isinstance(message, dict):
        return json.dumps(message, ensure_ascii=False)
    return "" if message is None else str(message)
