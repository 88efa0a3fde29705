"""Chat messages out of whatever shape a tracing tool stored them in, and the conversation a trace's model
calls add up to.

Tracing tools record a model call's input and output as the instrumented library handed them over: OpenAI
chat messages, the Responses API's items, Anthropic content blocks, OpenTelemetry GenAI's `parts`, a chat
completion object, and often any of these as JSON text. `chat_messages` reads them all into the role/content
messages `sessions.Session` holds; `conversation` joins a trace's calls, oldest first, into one conversation,
whether each call carried the whole history so far or only what was new to it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "model": "assistant",
         "system": "system", "developer": "system", "tool": "tool", "function": "tool"}
TEXT_PARTS = {"text", "input_text", "output_text"}

Message = dict[str, Any]


def chat_messages(value: Any, default_role: str) -> list[Message]:
    """The messages a stored input or output holds; `default_role` is what a bare text is (a prompt in an
    input, an answer in an output). Shapes it cannot read give no message rather than a wrong one."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return [{"role": default_role, "content": value}] if value.strip() else []
        return chat_messages(parsed, default_role) if isinstance(parsed, (list, dict)) else []
    if isinstance(value, list):
        return [m for item in value for m in chat_messages(item, default_role)]
    if not isinstance(value, dict):
        return []
    for key in ("messages", "output", "input"):  # a request ({messages}), a Responses API response ({output})
        if isinstance(value.get(key), list):
            return chat_messages(value[key], default_role)
    if isinstance(value.get("choices"), list) and value["choices"]:  # a chat completion
        choice = value["choices"][0]
        return chat_messages(choice.get("message") if isinstance(choice, dict) else None, "assistant")
    return _message(value, default_role)


def _message(item: dict[str, Any], default_role: str) -> list[Message]:
    kind = item.get("type")
    if kind in ("function_call", "custom_tool_call"):  # Responses API items
        return [{"role": "assistant", "content": "", "tool_calls": [
            {"function": str(item.get("name")), "arguments": item.get("arguments") or item.get("input") or {},
             "id": str(item.get("call_id") or item.get("id"))}]}]
    if kind in ("function_call_output", "custom_tool_call_output"):
        return [{"role": "tool", "tool_call_id": str(item.get("call_id")), "content": _text(item.get("output"))}]
    role = ROLES.get(str(item.get("role")))
    if role is None:
        if "text" in item and isinstance(item["text"], str):  # an older completion record: {text, finish_reason}
            return [{"role": default_role, "content": item["text"]}]
        return []
    parts = item.get("parts") if isinstance(item.get("parts"), list) else item.get("content")
    text, calls, results = _parts(parts)
    for call in item.get("tool_calls") or []:  # OpenAI chat messages
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            calls.append({"function": str(function.get("name")), "arguments": function.get("arguments") or {},
                          "id": str(call.get("id"))})
    if role == "tool":
        call_id = item.get("tool_call_id") or item.get("id")
        return results or [{"role": "tool", "tool_call_id": str(call_id), "content": text,
                            "name": str(item.get("name") or "tool")}]
    out: list[Message] = [{"role": role, "content": text, **({"tool_calls": calls} if calls else {})}]
    if role == "user" and results:  # Anthropic's tool results ride in a user message
        out = results + ([out[0]] if text.strip() else [])
    return out if text.strip() or calls or results else []


def _parts(parts: Any) -> tuple[str, list[dict[str, Any]], list[Message]]:
    """Text, tool calls and tool results of a content: a string, OpenTelemetry parts, OpenAI content parts or
    Anthropic blocks. Reasoning, images and parts of kinds not known are left out."""
    if isinstance(parts, str):
        return parts, [], []
    texts, calls, results = [], [], []
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in TEXT_PARTS:
            texts.append(str(part.get("content") if "content" in part else part.get("text", "")))
        elif kind in ("tool_call", "tool_use"):
            calls.append({"function": str(part.get("name")), "arguments": part.get("arguments", part.get("input"))
                          or {}, "id": str(part.get("id"))})
        elif kind in ("tool_call_response", "tool_result"):
            result = next((part[k] for k in ("response", "result", "content") if k in part), None)
            results.append({"role": "tool", "tool_call_id": str(part.get("id") or part.get("tool_use_id")),
                            "content": _text(result)})
    return "\n".join(t for t in texts if t), calls, results


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return _parts(value)[0]
    return "" if value is None else json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class CallFacts:
    """What a trace records of a model call beyond its messages, where it does: when it started and ended
    (ISO-8601) and the output tokens it wrote."""

    started: str | None = None
    ended: str | None = None
    tokens: int | None = None


def moment(value: Any, per_second: float = 1.0) -> str | None:
    """A time as a trace writes it (ISO-8601 text, or a number of `1 / per_second` seconds since the epoch:
    LangSmith's milliseconds, OTLP's nanoseconds) as ISO-8601 text; None where there is none."""
    if isinstance(value, str) and not value.strip().isdigit():
        return value or None
    try:
        seconds = float(value) / per_second
    except (TypeError, ValueError):
        return None
    return datetime.fromtimestamp(seconds, UTC).isoformat()


def count(value: Any) -> int | None:
    """A token count, where the trace gives one."""
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def conversation(calls: list[tuple[Any, Any]], facts: list[CallFacts] | None = None) -> list[Message]:
    """One conversation from a trace's model calls (input, output), oldest first: each call's input adds what
    is new to the conversation (a call that resends the history adds nothing old), then its output. Tool
    results are named after the call they answer. With `facts` (one per call), what a call's input adds is
    timed at its start, its output at its end, and its last assistant message carries its tokens.

    What is old is found by its place, never by its content alone: a message that repeats an earlier one
    ("yes", "Done.") is a message of its own, and so is the turn it opens (`_new`)."""
    out: list[Message] = []
    keys: list[str] = []  # each message of `out`, as `_key` writes it
    for k, (given, answer) in enumerate(calls):
        fact = facts[k] if facts else CallFacts()
        asked = _new(chat_messages(given, "user"), keys)
        keys += [_key(m) for m in asked]
        answered = _new(chat_messages(answer, "assistant"), keys)
        keys += [_key(m) for m in answered]
        asked, answered = _timed(asked, fact.started), _timed(answered, fact.ended)
        replies = [m for m in answered if m["role"] == "assistant"]
        if replies and fact.tokens is not None:
            replies[-1]["tokens"] = fact.tokens
        out += asked + answered
    names = {c["id"]: c["function"] for m in out for c in m.get("tool_calls", ())}
    for message in out:
        if message["role"] == "tool":
            message["name"] = names.get(message.get("tool_call_id"), message.get("name") or "tool")
    return out


def _key(message: Message) -> str:
    return json.dumps(message, sort_keys=True, default=str)


def _new(messages: list[Message], keys: list[str]) -> list[Message]:
    """The messages of one call's input (or output) that the conversation so far (`keys`) does not hold.

    The old ones come first: the history so far (whole, or a window of its last messages, or with a message
    the tool wrote differently) ends where the conversation ends. So the new messages are those after the
    longest run of the call's first messages that appears in the conversation in order and ends on its last
    message; where none does, those after the first messages it shares with the conversation's beginning (a
    system prompt resent before each call's new messages). A message whose text repeats an earlier one's
    ("yes", "Done.") is new where its place says so, never dropped for its content."""
    given = [_key(m) for m in messages]
    if not keys or not given:
        return list(messages)
    for end in range(len(given), 0, -1):
        if given[end - 1] == keys[-1] and _in_order(given[:end - 1], keys[:-1]):
            return list(messages[end:])
    shared = next((n for n, (a, b) in enumerate(zip(given, keys, strict=False)) if a != b),
                  min(len(given), len(keys)))
    return list(messages[shared:])


def _in_order(sub: list[str], keys: list[str]) -> bool:
    """Whether every key of `sub` appears in `keys`, in the same order (not necessarily side by side)."""
    rest = iter(keys)
    return all(key in rest for key in sub)


def _timed(messages: list[Message], when: str | None) -> list[Message]:
    return [{**m, "time": when} for m in messages] if when is not None else list(messages)
