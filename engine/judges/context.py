"""What an LLM judge is shown of a conversation before the turn it judges: each answer's earlier turns, as
plain labelled lines (tool calls and tool results marked as such, so they read as the model's actions and
not its prose), cut from the oldest end to a token budget. What was cut is said in the prompt itself, so a
verdict can always be read beside what its judge saw."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

CHARS_PER_TOKEN = 4  # the planner's estimate (engine.plan.estimate_tokens)


def message_lines(message: dict[str, Any], text_of: Callable[[str], str]) -> str:
    """One message as the judge reads it; `text_of` gives an earlier generated answer's text by task id."""
    role = message["role"]
    content = text_of(message["from"]) if "from" in message else str(message.get("content") or "")
    if role == "tool":
        return f"[Tool {message.get('name', 'tool')} returned]\n{content}"
    speaker = {"user": "User", "system": "System"}.get(role, "Assistant")
    lines = [f"{speaker}: {content}"] if content.strip() or not message.get("tool_calls") else []
    lines += [f"[Assistant called tool {call['name']} with {call['arguments']}]"
              for call in message.get("tool_calls", ())]
    return "\n".join(lines)


def within_budget(blocks: Sequence[str], tokens: int) -> tuple[list[str], int, int]:
    """The newest blocks that fit `tokens` (the newest one cut to its end when it alone does not), the number
    of blocks left out and their estimated tokens."""
    room = tokens * CHARS_PER_TOKEN
    kept: list[str] = []
    for block in reversed(blocks):
        if len(block) <= room:
            kept.insert(0, block)
            room -= len(block) + 1
        else:
            if not kept and room > 0:
                kept.insert(0, "…" + block[len(block) - room + 1:])
            break
    dropped = blocks[: len(blocks) - len(kept)]
    return kept, len(dropped), sum(math.ceil(len(b) / CHARS_PER_TOKEN) for b in dropped)


def context_prompt(context: dict[str, Any], shown: Sequence[int], prompt: str, text_of: Callable[[str], str]) -> str:
    """The request field of a judged turn: the earlier turns behind Answer 1 and Answer 2 (`shown`: which of
    the request's two answers is shown first), each within the budget, then the latest user message."""
    parts = []
    for label, index in zip(("Answer 1", "Answer 2"), shown, strict=True):
        messages = context["answers"][index]
        if not messages:
            continue
        kept, cut, cut_tokens = within_budget([message_lines(m, text_of) for m in messages], context["tokens"])
        note = (f"\n[{cut} earlier message{'s' if cut != 1 else ''}, about {cut_tokens} tokens, cut to fit the "
                f"judge's {context['tokens']}-token context]" if cut else "")
        parts.append(f"[The conversation before {label}, oldest first]{note}\n" + "\n".join(kept))
    return "\n\n".join([*parts, f"[The user's latest message, which both answers reply to]\n{prompt}"])
