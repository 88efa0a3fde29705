"""Conversations and agent traces as items: each model's ordered messages (system, user, assistant with its
tool calls, tool results) under one conversation id, cut into turns and turned into the items a spec judges.

A turn opens with a user message and holds every assistant and tool message up to the next user message. Its
answer, the text judges and metrics read, is the assistant's prose only: tool calls and tool results are kept
for the page and for a judge's context, never measured as the model's writing. The dataset's `unit` chooses
the items: `turn` (one per assistant turn, the earlier turns as context), `final` (the last turn, same
context) or `conversation` (the whole transcript's prose as one answer). Items of one conversation share its
id, and analyses resample and split by it, since two turns of one conversation are not independent.

Problems a whole file shares (roles out of order) are errors naming the file, the row and the message;
problems of one conversation that leave the rest usable (models with different turn counts, a turn whose
answer has no text) are exclusions, counted and said, so that one odd transcript does not stop a run.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from engine.datasets.items import Battle, DatasetError, Item
from engine.datasets.tidy import spec_name
from engine.spec.data_model import Dataset

CONVERSATIONS = "\0conversations\0"  # a gathered row's model -> (where, messages)
USER_TURNS = "\0user_turns\0"  # a gathered row's user turns, when the file gives them apart from any answer
BATTLE = "\0battle\0"  # a gathered row's labelled comparison: (model_a, model_b, winner)
LEFT_OUT = "\0left_out\0"  # why a record of this id was not read (an agent's subagent run, a mixed session)
REDACTED = "\0redacted\0"  # how many secrets of each kind its reader took out of the row's conversations
UNITS = ("turn", "final", "conversation")
ROLES = {"system", "developer", "user", "assistant", "tool", "function"}

Message = dict[str, Any]


@dataclass(frozen=True)
class Turn:
    user: str  # the user's message that opens the turn
    replies: tuple[Message, ...]  # the assistant and tool messages that follow it, as the page shows them
    answer: str  # the assistant's prose in the turn: what is judged and measured


def content_text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of content parts (images and audio left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content
                         if isinstance(part, dict) and part.get("type") in ("text", "output_text", "input_text"))
    return ""


def normalised(where: str, messages: Any) -> list[Message]:
    """Messages as vibe keeps them: role, content as text, and for tool traffic the calls (name, arguments as
    JSON text) and the tool's name. OpenAI's `tool_calls[].function`, Inspect's flat `function`/`arguments`
    and vibe's own `name`/`arguments` all read, and a list written as JSON text (a CSV cell) is parsed."""
    if isinstance(messages, str):
        try:
            messages = json.loads(messages)
        except json.JSONDecodeError:
            raise DatasetError(f"{where}: the messages are text that is not a JSON list of messages") from None
    if not isinstance(messages, list) or not messages:
        raise DatasetError(f"{where}: field 'messages' is not a non-empty list of messages")
    out = []
    for n, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            role = message.get("role") if isinstance(message, dict) else type(message).__name__
            raise DatasetError(f"{where}: messages.{n}.role is {role!r}; a message's role is one of "
                               f"{', '.join(sorted(ROLES))}")
        role = {"developer": "system", "function": "tool"}.get(message["role"], message["role"])
        kept: Message = {"role": role, "content": content_text(message.get("content"))}
        calls = [_call(where, n, k, call) for k, call in enumerate(message.get("tool_calls") or [])]
        if calls:
            kept["tool_calls"] = calls
        if role == "tool":
            kept["name"] = str(message.get("name") or message.get("function") or "tool")
            if isinstance(message.get("error"), bool):  # whether an agent log's call failed, where it says
                kept["error"] = message["error"]
        for fact in ("tokens", "elapsed"):  # an agent log's output tokens, seconds since the turn's prompt
            if isinstance(message.get(fact), (int, float)) and not isinstance(message.get(fact), bool):
                kept[fact] = message[fact]
        out.append(kept)
    return out


def _call(where: str, n: int, k: int, call: Any) -> dict[str, str]:
    if not isinstance(call, dict):
        raise DatasetError(f"{where}: messages.{n}.tool_calls.{k} is not an object")
    function = call.get("function")
    # OpenAI's {function: {name, arguments}}, Inspect's {function, arguments}, or vibe's own {name, arguments}
    # (the messages a run folder keeps, read back by `vibe compare`)
    name, arguments = (function.get("name"), function.get("arguments")) if isinstance(function, dict) \
        else (function or call.get("name"), call.get("arguments"))
    if not name:
        raise DatasetError(f"{where}: messages.{n}.tool_calls.{k}: the call names no function")
    text = arguments if isinstance(arguments, str) else json.dumps(arguments or {}, ensure_ascii=False, sort_keys=True)
    return {"name": str(name), "arguments": text}


def turns(where: str, messages: list[Message]) -> tuple[list[Message], list[Turn]]:
    """The leading system messages and the turns. Roles must alternate: a user message after a user message,
    an assistant message right after another with no tool result between, or a tool result nobody called is
    an error naming the message."""
    system = []
    n = 0
    while n < len(messages) and messages[n]["role"] == "system":
        system.append(messages[n])
        n += 1
    out: list[Turn] = []
    user: str | None = None
    replies: list[Message] = []
    calling = False  # the last assistant message called a tool, so tool results may follow
    for k in range(n, len(messages)):
        message, previous = messages[k], messages[k - 1]["role"] if k > n else None
        role = message["role"]
        if role == "system":
            continue  # a system message mid-conversation is shown nowhere and judged never
        if role == "user":
            if previous == "user":
                raise DatasetError(f"{where}: messages.{k} is a user message right after another; the roles do not "
                                   "alternate (merge the two, or split the conversation)")
            if user is not None:
                out.append(_turn(user, replies))
            user, replies = message["content"], []
        elif user is None:
            raise DatasetError(f"{where}: messages.{k} ({role}) comes before any user message")
        elif role == "assistant" and previous == "assistant" and not messages[k - 1].get("tool_calls"):
            raise DatasetError(f"{where}: messages.{k} is an assistant message right after another; the roles do "
                               "not alternate")
        elif role == "tool" and (previous not in ("assistant", "tool") or not calling):
            raise DatasetError(f"{where}: messages.{k} is a tool result that follows no assistant tool call")
        else:
            replies.append(message)
        if role in ("user", "assistant"):
            calling = bool(message.get("tool_calls"))
    if user is not None:
        out.append(_turn(user, replies))
    return system, out


def _turn(user: str, replies: list[Message]) -> Turn:
    prose = [m["content"].strip() for m in replies if m["role"] == "assistant" and m["content"].strip()]
    return Turn(user, tuple(replies), "\n\n".join(prose))


def gathered(ds: Dataset, records: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Normalised records (`id`, then `model` + `messages`, or `turns` for the user turns alone, or
    `model_a`/`model_b`/`winner` for a labelled pair) gathered into one row per conversation id, in order of
    first appearance, keeping only the spec's recorded models (named through `model_names`)."""
    wanted = set(ds.outputs)
    rows: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for where, record in records:
        cid = str(record["id"])
        row = rows.setdefault(cid, {ds.fields.get("id", "id"): cid, "id": cid, CONVERSATIONS: {}})
        for key in ("category", "reference"):
            if record.get(key) is not None:
                row.setdefault(key, record[key])
        if "turns" in record:
            row[USER_TURNS] = list(record["turns"])
        if "winner" in record:
            row[BATTLE] = (record["model_a"], record["model_b"], record["winner"])
        if record.get("left_out"):
            row.setdefault(LEFT_OUT, []).append(f"{where}: {record['left_out']}")
        elif "messages" in record:
            seen.add(str(record["model"]))
            model = spec_name(ds, str(record["model"]), wanted)
            if model not in wanted:
                continue
            if model in row[CONVERSATIONS]:
                raise DatasetError(f"{where}: a second conversation of model {model!r} with id {record['id']!r} "
                                   f"(the first is {row[CONVERSATIONS][model][0]}); give each conversation its own id")
            row[CONVERSATIONS][model] = (where, normalised(where, record["messages"]))
            if record.get("redactions"):
                row.setdefault(REDACTED, Counter()).update(record["redactions"])
    if wanted and not seen:  # recorded conversations were expected and none was read: the models are not to blame
        said = [why for row in rows.values() for why in row.get(LEFT_OUT, ())]
        raise DatasetError(f"dataset {ds.name!r}: no conversation was read from "
                           f"{', '.join(str(p) for p in ds.source.paths) or 'its source'}"
                           + (f"; {len(said)} left out: " + "; ".join(said[:3]) + (" …" if len(said) > 3 else "")
                              if said else " (it holds no file its format reads)")
                           + ", so there is nothing to compare")
    answered = {m for row in rows.values() for m in row[CONVERSATIONS]}
    missing = sorted(wanted - answered)
    if missing:
        raise DatasetError(f"dataset {ds.name!r}: recorded model(s) {', '.join(missing)} have no conversation in the "
                           f"data, whose models are: {', '.join(sorted(seen)[:12])}; name the spec's models as the "
                           "data does, or map them with model_names")
    for row in rows.values():
        if BATTLE in row:
            a, b, winner = row[BATTLE]
            row[BATTLE] = (spec_name(ds, a, wanted), spec_name(ds, b, wanted), winner)
    return list(rows.values())


def conversation_items(ds: Dataset, row: dict[str, Any], excluded: list[str]) -> list[Item]:
    """The items `ds.unit` asks of one gathered conversation; what cannot be compared is added to `excluded`."""
    cid = row["id"]
    excluded.extend(row.get(LEFT_OUT, ()))
    if not row[CONVERSATIONS] and not row.get(USER_TURNS):
        return []  # a battle between models the spec leaves out
    cut: dict[str, tuple[list[Message], list[Turn]]] = {}
    for model, (where, messages) in row[CONVERSATIONS].items():
        cut[model] = turns(where, messages)
    counts = {model: len(ts) for model, (_, ts) in cut.items()}
    if len(set(counts.values())) > 1:
        excluded.append(f"conversation {cid!r}: the models answered different numbers of turns "
                        f"({', '.join(f'{m} {n}' for m, n in sorted(counts.items()))})")
        return []
    user_turns = [t.user for t in next(iter(cut.values()))[1]] if cut else list(row.get(USER_TURNS) or [])
    if not user_turns:
        excluded.append(f"conversation {cid!r}: no user turn")
        return []
    battle = row.get(BATTLE)  # (model_a, model_b, winner as a, b or tie)
    winner = {"a": battle[0], "b": battle[1], "tie": "tie"}.get(battle[2]) if battle else None
    common: dict[str, Any] = {"category": row.get("category"), "conversation": cid,
                              "battles": (Battle(battle[0], battle[1], winner),) if battle and winner else ()}
    if ds.unit == "conversation":
        answers = {m: "\n\n".join(t.answer for t in ts if t.answer) for m, (_, ts) in cut.items()}
        empty = sorted(m for m, text in answers.items() if not text)
        if empty:
            excluded.append(f"conversation {cid!r}: {', '.join(empty)} wrote no text in any turn")
            return []
        prompt = "\n\n".join(f"[User, turn {k}]\n{text}" for k, text in enumerate(user_turns, 1))
        return [Item(cid, prompt, outputs=answers, transcript={m: (*system, *_flat(ts)) for m, (system, ts) in
                                                               cut.items()}, **common)]
    chosen = range(1, len(user_turns) + 1) if ds.unit == "turn" else [len(user_turns)]
    items = []
    for k in chosen:
        empty = sorted(m for m, (_, ts) in cut.items() if not ts[k - 1].answer)
        if empty:
            excluded.append(f"conversation {cid!r} turn {k}: {', '.join(empty)}'s answer has no text (tool calls "
                            "only, or empty)")
            continue
        items.append(Item(
            f"{cid}#{k}" if ds.unit == "turn" else cid, user_turns[k - 1], turn=k, earlier=tuple(user_turns[:k - 1]),
            outputs={m: ts[k - 1].answer for m, (_, ts) in cut.items()},
            history={m: (*system, *_flat(ts[:k - 1])) for m, (system, ts) in cut.items() if system or k > 1},
            transcript={m: ts[k - 1].replies for m, (_, ts) in cut.items()},
            reference=_reference(row.get("reference"), k), **common))
    return items


def _flat(ts: list[Turn]) -> list[Message]:
    return [m for t in ts for m in ({"role": "user", "content": t.user}, *t.replies)]


def _reference(reference: Any, k: int) -> str | None:
    """A per-turn reference list (MT-Bench's) gives turn k its own; a single text is the last turn's."""
    if isinstance(reference, list):
        return str(reference[k - 1]) if k - 1 < len(reference) and reference[k - 1] else None
    return None if reference in (None, "") else str(reference)
