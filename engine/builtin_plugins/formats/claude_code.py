"""Claude Code session logs: the JSONL files the CLI writes under `~/.claude/projects/<folder>/`, one per session
(and, from 2.0, one `agent-<id>.jsonl` per subagent run beside it or in `<session>/subagents/`).

A session is a tree of lines linked by `uuid` and `parentUuid`; the conversation is the branch that ends at its
last line, so a prompt the user edited and sent again leaves its first branch out. One API response is spread
over several `assistant` lines sharing `message.id`, one content block each: they are one message here. Tool
results arrive as `user` lines holding `tool_result` blocks and are the tools' messages, not the human's turns;
`isMeta` lines (a slash command's expansion, a local command's caveat) are not typed by the human either.
Subagent runs (`isSidechain`: inline in 1.0 logs, in agent files from 2.0) are read apart from their parent and
left out of its conversation, said as such."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from engine.api.data import Session, SessionRows, content_text, dataset_format_class, inner, located_rows

MESSAGE_LINES = ("user", "assistant", "system")
BOOKKEEPING = {"summary", "file-history-snapshot", "queue-operation", "progress", "attachment", "permission-mode",
               "ai-title", "custom-title", "agent-name", "last-prompt", "pr-link", "worktree-state"}
COMMAND = re.compile(r"<command-(name|args)>(.*?)</command-\1>", re.S)
LOCAL_OUTPUT = ("<local-command-stdout>", "<local-command-stderr>", "<bash-input>", "<bash-stdout>",
                "<bash-stderr>")


@dataset_format_class("claude-code")
class ClaudeCode(SessionRows):
    description = ("Claude Code session logs (a session's .jsonl, or a folder of them such as a copy of "
                   "~/.claude/projects): a session per conversation, paired across agents by the prompt that "
                   "opens it; tool calls and results shown beside the prose, subagent runs kept apart")
    suffix = ".jsonl"
    noun = "Claude Code sessions"

    def owns(self, path: Path) -> bool:
        """A Claude Code log's lines carry `sessionId` and `uuid`, where other JSONL formats carry neither."""
        return any('"sessionId"' in line and '"uuid"' in line for line in self.head(path, 65536).splitlines()[:5])

    def sessions(self, files: list[Path]) -> list[Session]:
        return [session for file in files for session in sessions(file)]


def sessions(path: Path) -> list[Session]:
    """The file's main session and each subagent run in it, as sessions."""
    lines = located_rows(path, "jsonl")
    by_uuid = {line["uuid"]: (where, line) for where, line in lines if isinstance(line.get("uuid"), str)}
    unknown: dict[str, list[str]] = {}
    threads: dict[str | None, list[tuple[str, dict[str, Any]]]] = {}
    for where, line in lines:
        kind = line.get("type")
        if kind in MESSAGE_LINES:
            threads.setdefault(_thread(line, by_uuid) if line.get("isSidechain") else None, []).append((where, line))
        elif kind not in BOOKKEEPING:
            unknown.setdefault(str(kind), []).append(where)
    for kind, wheres in unknown.items():
        print(f"vibe: {wheres[0]}: a Claude Code line of type {kind!r} this reader does not know; read past it "
              f"({len(wheres)} such line{'s' * (len(wheres) > 1)})", file=sys.stderr)
    out = []
    for thread, entries in threads.items():
        branch = entries if thread is not None else _branch(entries, by_uuid)
        first = branch[0][1]
        version = first.get("version")
        out.append(Session(
            id=str(first.get("sessionId") or path.stem), models=_models(branch), messages=_messages(branch),
            where=branch[0][0], subagent=thread, agent=f"claude-code {version}" if version else "claude-code",
            tool="claude-code"))
    return out


def _thread(line: dict[str, Any], by_uuid: dict[str, tuple[str, dict[str, Any]]]) -> str:
    """A subagent run's id: the agent file's `agentId`, else the uuid of the line its branch starts at."""
    if line.get("agentId"):
        return str(line["agentId"])
    seen = set()
    while line.get("parentUuid") in by_uuid and line["uuid"] not in seen:
        seen.add(line["uuid"])
        line = by_uuid[line["parentUuid"]][1]
    return str(line.get("uuid", ""))[:8]


def _branch(entries: list[tuple[str, dict[str, Any]]],
            by_uuid: dict[str, tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """The main thread's lines on the branch that ends at its last line, in order; a compacted session's
    boundary links back through `logicalParentUuid`."""
    wanted = {id(line) for _, line in entries}
    chain = []
    where, line = entries[-1]
    seen: set[str] = set()
    while True:
        if id(line) in wanted:
            chain.append((where, line))
        seen.add(str(line.get("uuid")))
        parent = line.get("parentUuid") or line.get("logicalParentUuid")
        if parent not in by_uuid or parent in seen:
            break
        where, line = by_uuid[parent]
    return chain[::-1]


def _models(entries: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [str(line["message"].get("model") or "") for _, line in entries
            if line.get("type") == "assistant" and isinstance(line.get("message"), dict)]


def _messages(entries: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # tool_use id -> the tool's name
    response = None  # the API response (`message.id`) the last assistant message came from
    for _, line in entries:
        message = line.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        if line["type"] == "assistant":
            text = "\n\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
            calls: list[dict[str, Any]] = [
                {"function": str(b.get("name")), "arguments": b.get("input") or {}, "id": str(b.get("id"))}
                for b in blocks if b.get("type") == "tool_use"]
            names.update({str(c["id"]): str(c["function"]) for c in calls})
            if response is not None and message.get("id") == response and out and out[-1]["role"] == "assistant":
                last = out[-1]
                last["content"] = "\n\n".join(t for t in (last["content"], text) if t)
                last["tool_calls"] = [*last.get("tool_calls", ()), *calls]
            else:
                out.append({"role": "assistant", "content": text, **({"tool_calls": calls} if calls else {})})
            # each line's usage is a snapshot of the response so far: the last line's is the response's
            usage = inner(message, "usage")
            if isinstance(usage.get("output_tokens"), int):
                out[-1]["tokens"] = usage["output_tokens"]
            out[-1]["time"] = line.get("timestamp")
            response = message.get("id")
            continue
        response = None
        for block in blocks:
            if block.get("type") == "tool_result":
                call = str(block.get("tool_use_id"))
                out.append({"role": "tool", "tool_call_id": call, "name": names.get(call, "tool"),
                            "content": content_text(block.get("content")), "error": bool(block.get("is_error")),
                            "time": line.get("timestamp")})
            elif block.get("type") == "text" and line["type"] == "user":
                _prompt(out, str(block.get("text") or ""), bool(line.get("isMeta")), line.get("timestamp"))
    return out


def _prompt(out: list[dict[str, Any]], text: str, meta: bool, time: Any) -> None:
    """A user line's text: a prompt typed, a slash command (read as typed, its expansion added), or what a
    local command printed (no prompt)."""
    if text.lstrip().startswith(LOCAL_OUTPUT):
        return
    if meta:  # a slash command's expansion belongs to the command; any other injected text to nobody
        if out and out[-1]["role"] == "user" and out[-1].get("command"):
            out[-1]["content"] += "\n\n" + text
        return
    parts = dict(COMMAND.findall(text))
    if "name" in parts:
        out.append({"role": "user", "content": " ".join(p for p in (parts["name"], parts.get("args", "").strip())
                                                         if p), "command": True, "time": time})
    else:
        out.append({"role": "user", "content": text, "time": time})
