"""Turn a planned task into the messages and parameters a provider sends.

Generation tasks carry their messages already (a persona generation may take its user text from an LLM
rewrite's output, named by `prompt_from`; a conversation's later turn names its own earlier answers by task
id, filled in here). Judge, rating and rewrite tasks carry a template name plus
fields, and name the outputs they judge by task id: those are filled in here from finished results, which
is why a judgment can only run after the generations it reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.execute.providers import ResponseSchema
from engine.judges.answers import SCHEMAS
from engine.judges.context import context_prompt
from engine.judges.prompts import TEMPLATES
from engine.records import Result, Task
from engine.requests import Chat, PairJudgment, Rating, Request, Rewrite, SameTaskCheck, answer_format, parse

Messages = list[dict[str, Any]]
Call = tuple[Messages, dict[str, Any], ResponseSchema | None]


def response_schema(request: Request) -> ResponseSchema | None:
    """The JSON schema a request's answer must follow, when its judge answers in one."""
    answer = answer_format(request)
    if answer is None:
        return None
    schema = SCHEMAS[answer["schema"]]
    return ResponseSchema(schema.title, schema.schema)


def render(task: Task, results: dict[str, Result]) -> Call:
    """The messages, sampling parameters and answer schema of a task's call."""
    request = parse(task.request)
    schema = response_schema(request)
    source = getattr(request, "prompt_from", None)
    rewritten = str(results[source].output).strip() if source else None
    if isinstance(request, Chat):
        messages = request.messages if rewritten is None else _with_user_text(request.messages, rewritten)
        return [_answered(m, results) for m in messages], dict(request.params), schema
    call = getattr(request, "call", None)
    if call is None:
        raise ValueError(f"a {request.kind!r} task is not a model call")
    template = TEMPLATES[call.template]
    raw_fields = getattr(request, "fields", {})
    fields = {k: str(v) for k, v in raw_fields.items() if v is not None and k != "context"}
    examples = raw_fields.get("examples")
    if examples:
        fields.update({f"examples_{end}": _listed(examples[end]) for end in ("low", "high")})
    if rewritten is not None:
        fields["rewrite" if isinstance(request, SameTaskCheck) else "prompt"] = rewritten
    if isinstance(request, PairJudgment):
        first, second = (str(results[tid].output) for tid in request.outputs)
        fields.update(output_1=first, output_2=second)
        if "context" in raw_fields:  # a conversation's turn: the earlier turns behind each answer
            shown = (0, 1) if request.order != "ba" else (1, 0)
            fields["prompt"] = context_prompt(raw_fields["context"], shown, fields["prompt"],
                                              lambda tid: str(results[tid].output))
    elif isinstance(request, Rating):
        fields["output"] = str(results[request.output].output)
    elif isinstance(request, Rewrite):
        fields.update(persona=request.persona, prompt=request.prompt)
    return template.render(**fields), dict(call.params), schema


def _answered(message: Mapping[str, Any], results: dict[str, Result]) -> dict[str, Any]:
    """A message as sent: an earlier turn's answer, named by its generation task, becomes that task's text."""
    if "from" in message:
        return {"role": message["role"], "content": str(results[message["from"]].output)}
    return dict(message)


def _listed(texts: list[str]) -> str:
    return "\n".join(f"[Example {n}]\n{text}\n[End of example {n}]" for n, text in enumerate(texts, 1))


def _with_user_text(messages: Sequence[Mapping[str, Any]], text: str) -> Messages:
    """The messages with the last user turn's text replaced (an image part, if any, is kept)."""
    out = [dict(m) for m in messages]
    last = out[-1]
    if isinstance(last["content"], list):
        last["content"] = [{**part, "text": text} if part["type"] == "text" else part for part in last["content"]]
    else:
        last["content"] = text
    return out
