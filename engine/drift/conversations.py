"""Conversations in `vibe compare`: a shared turn is judged with the earlier turns its model saw in each run,
as the run's own judge read it, and the conversation, not the turn, is the unit its shift is tested over."""

from __future__ import annotations

from typing import Any

from engine.datasets.items import Item

FILE = "conversations.jsonl"


def turns_of(items: dict[str, Item]) -> dict[str, list[Item]]:
    """Each conversation's judged turns in order, where the run judged turns of conversations; empty when its
    items are prompts (or whole transcripts, each already one unit)."""
    out: dict[str, list[Item]] = {}
    for item in items.values():
        if item.conversation is not None and item.turn is not None:
            out.setdefault(item.conversation, []).append(item)
    return {cid: sorted(turns, key=lambda it: it.turn or 0) for cid, turns in out.items()}


def whole(conversations: dict[str, list[Item]], ids: list[str]) -> list[str]:
    """`ids` less the turns of conversations that are not shared whole: a conversation compared on some of its
    turns would be judged without the context of the others."""
    shared = set(ids)
    return [i for cid, turns in conversations.items() if all(t.id in shared for t in turns) for i in
            (t.id for t in turns)]


def messages(turns: list[Item], model: str, answers: dict[str, str]) -> list[dict[str, Any]]:
    """`model`'s side of one conversation as the run had it: the recorded messages where the dataset gave
    them (tool traffic included), else the user's turns and the run's own answers, turn by turn."""
    last = turns[-1]
    out: list[dict[str, Any]] = list(last.history.get(model, ()))
    if not out:
        by_turn = {t.turn: t.id for t in turns}
        for k, user in enumerate(last.earlier, 1):
            out += [{"role": "user", "content": user},
                    {"role": "assistant", "content": answers.get(by_turn.get(k, ""), "")}]
    out.append({"role": "user", "content": last.prompt})
    out += list(last.transcript.get(model) or ({"role": "assistant", "content": answers[last.id]},))
    return out
