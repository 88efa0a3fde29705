"""OpenAI Codex CLI rollouts: the JSONL files the CLI writes under `~/.codex/sessions/YYYY/MM/DD/`, one session
each (`rollout-<time>-<id>.jsonl`).

Every line is {timestamp, type, payload}. The human's prompts are the `user_message` events: the history's
own user messages also hold the environment and AGENTS.md text the CLI injects. The assistant's prose, its
tool calls (`function_call`, `custom_tool_call`, `web_search_call`) and the tools' outputs (paired to their call
by `call_id`) are the `response_item`s; the model is named per turn, by `turn_context`. Reasoning items are
left out: most are encrypted, and none is prose the user reads."""

from __future__ import annotations

import contextlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from engine.api.data import Session, SessionRows, dataset_format_class, inner, located_rows

LINE_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state"}
CALLS = {"function_call": "arguments", "custom_tool_call": "input", "local_shell_call": "action",
         "web_search_call": "action"}
OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")
UNREAD_ITEMS = {"message", "reasoning", "ghost_snapshot", "compaction", *CALLS, *OUTPUTS}


@dataset_format_class("codex")
class Codex(SessionRows):
    description = ("OpenAI Codex CLI rollouts (a rollout-*.jsonl, or a folder of them such as a copy of "
                   "~/.codex/sessions): a session per conversation, paired across agents by the prompt that "
                   "opens it; the model from each turn's context")
    suffix = ".jsonl"
    noun = "Codex sessions"

    def owns(self, path: Path) -> bool:
        """A rollout opens with its `session_meta` line."""
        return '"session_meta"' in self.head(path, 65536).split("\n", 1)[0]

    def sessions(self, files: list[Path]) -> list[Session]:
        return [session(file) for file in files]


def session(path: Path) -> Session:
    lines = located_rows(path, "jsonl")
    meta: dict[str, Any] = {}
    model = ""
    models: list[str] = []
    messages: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # call_id -> the tool's name
    unknown: dict[str, list[str]] = {}
    for where, line in lines:
        kind, payload = line.get("type"), line.get("payload")
        if not isinstance(payload, dict) or kind not in LINE_TYPES:
            unknown.setdefault(f"line type {kind!r}", []).append(where)
            continue
        item = payload.get("type")
        if kind == "session_meta":
            meta = payload
        elif kind == "turn_context":
            model = str(payload.get("model") or model)
        elif kind == "event_msg" and item == "user_message":
            messages.append({"role": "user", "content": str(payload.get("message") or ""),
                             "time": line.get("timestamp")})
        elif kind == "event_msg" and item == "token_count":
            _count_tokens(messages, payload)
        elif kind != "response_item":
            continue
        elif item == "message" and payload.get("role") == "assistant":
            messages.append({"role": "assistant", "content": _text(payload.get("content")),
                             "time": line.get("timestamp")})
            models.append(model)
        elif item in CALLS:
            call = str(payload.get("call_id") or payload.get("id") or where)
            name = str(payload.get("name") or item.removesuffix("_call"))
            names[call] = name
            messages.append({"role": "assistant", "content": "", "time": line.get("timestamp"), "tool_calls": [
                {"function": name, "arguments": payload.get(CALLS[item]) or {}, "id": call}]})
            models.append(model)
        elif item in OUTPUTS:
            call = str(payload.get("call_id"))
            output = payload.get("output")
            messages.append({"role": "tool", "tool_call_id": call, "name": names.get(call, "tool"),
                             "content": output if isinstance(output, str) else _text(output),
                             "error": _failed(output), "time": line.get("timestamp")})
        elif item not in UNREAD_ITEMS:
            unknown.setdefault(f"response item {item!r}", []).append(where)
    for what, wheres in unknown.items():
        print(f"vibe: {wheres[0]}: a Codex {what} this reader does not know; read past it ({len(wheres)} such "
              f"line{'s' * (len(wheres) > 1)})", file=sys.stderr)
    version = meta.get("cli_version")
    return Session(id=str(meta.get("id") or path.stem), models=models, messages=messages, where=lines[0][0] if lines
                   else str(path), agent=f"codex {version}" if version else "codex", tool="codex")


def _count_tokens(messages: list[dict[str, Any]], payload: dict[str, Any]) -> None:
    """A `token_count` event follows each model response: its last usage's output tokens are the response's,
    given to the assistant message it produced last (once: the CLI may repeat the event)."""
    last = inner(inner(payload, "info"), "last_token_usage")
    tokens = last.get("output_tokens")
    answer = next((m for m in reversed(messages) if m["role"] != "tool"), None)
    if isinstance(tokens, int) and answer is not None and answer["role"] == "assistant" and "tokens" not in answer:
        answer["tokens"] = tokens


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


EXIT = re.compile(r"^(?:Exit code: |Process exited with code )(-?\d+)$", re.M)


def _failed(output: Any) -> bool | None:
    """Whether a tool call failed, where its output says: a shell call's `Exit code: N` (older CLIs) or
    `Process exited with code N` (the unified exec of newer ones), a structured output's
    `metadata.exit_code` (apply_patch), or an output that opens `<tool> failed:` (write_stdin on a closed
    session). A process still running (`Process running with session ID …`) and other outputs do not say."""
    if isinstance(output, str) and output.lstrip().startswith("{"):
        with contextlib.suppress(json.JSONDecodeError):
            output = json.loads(output)
    if isinstance(output, dict):
        code = inner(output, "metadata").get("exit_code", output.get("exit_code"))
        if isinstance(code, int) and not isinstance(code, bool):
            return code != 0
        output = output.get("output")
    text = output if isinstance(output, str) else ""
    found = EXIT.search(text.split("\nOutput:", 1)[0])  # the header, not what the command printed
    if found:
        return int(found.group(1)) != 0
    return True if re.match(r"[\w ]{1,40} failed: ", text) else None
