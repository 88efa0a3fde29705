"""OpenTelemetry GenAI spans: a span's attributes as a JSON object, a list of them, or an OTLP/JSON export
(`resourceSpans`), in a file or a folder of files.

A model call's messages are `gen_ai.input.messages` and `gen_ai.output.messages` (parts-based, usually as JSON
text; on the span, or on its `gen_ai.client.inference.operation.details` event) with `gen_ai.system_instructions`;
instrumentations older than the v1.37 conventions wrote `gen_ai.prompt` / `gen_ai.completion`, as JSON text or
flattened into `gen_ai.prompt.<n>.role`, `.content` and `gen_ai.completion.<n>.tool_calls.<m>.name`, which
read too. The calls of one `gen_ai.conversation.id` (else one trace) are one conversation; the model is
`gen_ai.response.model`, else `gen_ai.request.model`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from engine.api.data import CallFacts, Session, SessionRows, conversation, count, dataset_format_class, moment
from engine.api.records import DatasetError

DETAILS_EVENT = "gen_ai.client.inference.operation.details"
STARTED, ENDED = "\0started", "\0ended"  # an OTLP span's own times, kept beside its attributes
NANOSECONDS = 1e9
FLAT = re.compile(r"gen_ai\.(prompt|completion)\.(\d+)\.(.+)")


@dataset_format_class("otel-genai")
class OTelGenAI(SessionRows):
    description = ("OpenTelemetry GenAI spans (span attributes as JSON, or an OTLP/JSON export; current and "
                   "pre-1.37 attribute styles): a conversation per gen_ai.conversation.id, else per trace")
    noun = "traced conversations"

    def owns(self, path: Path) -> bool:
        head = self.head(path, 65536)
        return '"gen_ai.' in head and '"observations"' not in head

    def sessions(self, files: list[Path]) -> list[Session]:
        return sessions(files)


def spans(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(trace id, attributes) of each span in the file, a span's GenAI event's attributes merged in."""
    doc = SessionRows.document(path)
    if isinstance(doc, dict) and "resourceSpans" in doc:
        out = []
        for resource in doc["resourceSpans"] or []:
            for scope in resource.get("scopeSpans") or []:
                for span in scope.get("spans") or []:
                    attributes = _attributes(span.get("attributes"))
                    for event in span.get("events") or []:
                        if event.get("name") == DETAILS_EVENT:
                            attributes.update(_attributes(event.get("attributes")))
                    attributes.setdefault(STARTED, span.get("startTimeUnixNano"))
                    attributes.setdefault(ENDED, span.get("endTimeUnixNano"))
                    out.append((str(span.get("traceId") or path.stem), attributes))
        return out
    flat = doc if isinstance(doc, list) else [doc]
    if not all(isinstance(span, dict) for span in flat):
        raise DatasetError(f"{path}: expected a span's attributes (an object), a list of them, or an OTLP export")
    return [(str(span.get("traceId") or path.stem), span) for span in flat]


def _attributes(pairs: Any) -> dict[str, Any]:
    return {str(p.get("key")): _value(p.get("value")) for p in pairs or [] if isinstance(p, dict)}


def _value(value: Any) -> Any:
    """An OTLP AnyValue as plain JSON."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return _attributes((value["kvlistValue"] or {}).get("values"))
    return None


def sessions(files: list[Path]) -> list[Session]:
    grouped: dict[str, tuple[str, list[tuple[Any, Any]], list[str], list[CallFacts]]] = {}
    for path in files:
        for trace, attributes in spans(path):
            call = _call(attributes)
            if call is None:
                continue  # a tool's or an agent's span: its messages are in the model calls'
            key = str(attributes.get("gen_ai.conversation.id") or trace)
            _, calls, models, facts = grouped.setdefault(key, (str(path), [], [], []))
            calls.append(call)
            facts.append(CallFacts(moment(attributes.get(STARTED), NANOSECONDS),
                                   moment(attributes.get(ENDED), NANOSECONDS),
                                   count(attributes.get("gen_ai.usage.output_tokens"))))
            models.append(str(attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model") or ""))
    out = []
    for key, (where, calls, models, facts) in grouped.items():
        if all(fact.started for fact in facts):  # an export lists spans as they ended, not as they began
            order = sorted(range(len(calls)), key=lambda k: str(facts[k].started))
            calls, models, facts = [calls[k] for k in order], [models[k] for k in order], [facts[k] for k in order]
        out.append(Session(id=key, models=models, messages=conversation(calls, facts), where=where))
    return out


def _call(attributes: dict[str, Any]) -> tuple[Any, Any] | None:
    """A model call's (input, output) messages, in whichever convention the span used; None for a span that
    is not a model call."""
    given = attributes.get("gen_ai.input.messages", attributes.get("gen_ai.prompt"))
    answer = attributes.get("gen_ai.output.messages", attributes.get("gen_ai.completion"))
    if given is None and answer is None:
        given, answer = _flattened(attributes, "prompt"), _flattened(attributes, "completion")
        if not given and not answer:
            return None
    system = attributes.get("gen_ai.system_instructions")
    if system:
        parts = json.loads(system) if isinstance(system, str) and system.lstrip().startswith("[") else system
        given = [{"role": "system", "parts": parts if isinstance(parts, list) else [
            {"type": "text", "content": str(parts)}]}, *_as_list(given)]
    return given, answer


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return [value]
    return value if isinstance(value, list) else [value]


def _flattened(attributes: dict[str, Any], side: str) -> list[dict[str, Any]]:
    """OpenLLMetry's flattened messages: gen_ai.<side>.<n>.role / content / tool_calls.<m>.name|arguments|id."""
    messages: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = FLAT.fullmatch(key)
        if not match or match.group(1) != side:
            continue
        message = messages.setdefault(int(match.group(2)), {})
        field = match.group(3)
        if field.startswith("tool_calls."):
            _, m, name = field.split(".", 2)
            calls = message.setdefault("tool_calls", {})
            calls.setdefault(int(m), {"function": {}})
            if name in ("name", "arguments"):
                calls[int(m)]["function"][name] = value
            else:
                calls[int(m)][name] = value
        else:
            message[field] = value
    out = []
    for _, message in sorted(messages.items()):
        if "tool_calls" in message:
            message["tool_calls"] = [call for _, call in sorted(message["tool_calls"].items())]
        message.setdefault("role", "user" if side == "prompt" else "assistant")
        out.append(message)
    return out
