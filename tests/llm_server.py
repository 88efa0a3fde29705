"""A small OpenAI- and Anthropic-compatible HTTP server for tests and benchmarks, on 127.0.0.1.

Plain asyncio (HTTP/1.1 with keep-alive), so that it handles well over 1,000 requests/s and is never the
bottleneck. Behaviour is chosen per request by a marker in the last user message:

    [[429]]        first call: 429 with Retry-After: 1 (seconds); then success
    [[429date]]    same, with an HTTP-date Retry-After 2 s ahead (dates have 1 s resolution)
    [[500x2]]      two 500s, then success
    [[timeout]]    sleeps 30 s (client timeouts fire first)
    [[malformed]]  200 with a body that is not JSON
    [[empty]]      200 with an empty `choices` list / empty `content`
    [[400]]        400 every time
    [[html]]       200 with a web page (Content-Type text/html), as a proxy or a wrong base_url answers
    [[trickle]]    200 whose body arrives one byte every 0.5 s (each read resets an HTTP client's timeout)

Structured answers: a request carrying `response_format` or `tools` is logged with its body; with
`state.refuse_schemas` set (400 or 422), such a request is refused with a message naming the field, as an
older server would. A forced Anthropic tool is answered with a `tool_use` block whose input is the scripted
reply read as JSON.

Faults as real gateways make them, for a whole run: `state.faults = Faults(rate, seed)` gives each attempt of
each request one of: a reset connection, a hang, a trickling body, a 503 with Retry-After, a 500, or a 200
HTML page, at `rate` in all (seeded by request and attempt, so the same run sees the same faults); everything
else is answered. `state.html_after = n` answers every request after the first n with an HTML page (a gateway
that starts serving its login page mid-run) until `state.html_after` is set back to None. Faulted requests are
logged with the status the client saw: 0 for a reset, 599 for a hang or a trickle (the client times out).

The model name `missing-model` gets 404. Answers echo the prompt so a test can tell them apart. Tests can
script answers: `state.replies[substring] = text` answers any request containing the substring, and
`state.reply(text)` answers from the last user message (a judge whose answer depends on what it reads). Every
request is logged (path, marker, status, body key), which is how tests count what the server really saw.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from batch_api import BatchDesk, handle

MARKER = re.compile(r"\[\[(\w+)\]\]")


@dataclass
class Logged:
    path: str
    marker: str | None
    status: int
    key: str
    text: str
    images: tuple[str, ...] = ()  # image parts as sent: an OpenAI image URL or Anthropic base64 data
    body: dict[str, Any] = field(default_factory=dict)  # the request as sent


FAULT_KINDS = ("reset", "hang", "trickle", "503", "500", "html")


@dataclass(frozen=True)
class Faults:
    rate: float  # share of attempts that fail, split evenly over FAULT_KINDS
    seed: int = 0

    def choose(self, key: str, attempt: int) -> str | None:
        draw = int(hashlib.sha256(f"{self.seed}:{key}:{attempt}".encode()).hexdigest()[:8], 16) / 2**32
        return FAULT_KINDS[int(draw / self.rate * len(FAULT_KINDS))] if draw < self.rate else None


@dataclass
class ServerState:
    latency_s: float = 0.0
    log: list[Logged] = field(default_factory=list)
    seen: Counter[str] = field(default_factory=Counter)
    log_requests: bool = True
    replies: dict[str, str] = field(default_factory=dict)  # substring of the request -> fixed answer text
    reply: Callable[[str], str | None] | None = None  # the last user message -> an answer (None: not scripted)
    refuse_schemas: int | None = None  # status for requests that ask for a schema (None: accept them)
    faults: Faults | None = None
    html_after: int | None = None
    answered: int = 0  # requests answered 200 with JSON
    batch: BatchDesk = field(default_factory=BatchDesk)  # the batch endpoints (tests/batch_api.py)

    def successes(self) -> Counter[str]:
        return Counter(entry.key for entry in self.log if entry.status == 200)


def judged_answers(text: str) -> tuple[str, str] | None:
    """The two answers a pairwise judge prompt shows (answer 1, answer 2), or None for any other request: for
    scripted judges whose verdict depends on what they read."""
    if "[Answer 1]" not in text:
        return None
    one = text.split("[Answer 1]", 1)[1].split("[End of answer 1]", 1)[0]
    two = text.split("[Answer 2]", 1)[1].split("[End of answer 2]", 1)[0]
    return one, two


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message["content"]
            if isinstance(content, list):
                return " ".join(p.get("text", "") for p in content if p.get("type") == "text")
            return str(content)
    return ""


def _images(body: dict[str, Any]) -> tuple[str, ...]:
    found = []
    for message in body.get("messages", []):
        for part in message["content"] if isinstance(message.get("content"), list) else []:
            if part.get("type") == "image_url":
                found.append(part["image_url"]["url"])
            elif part.get("type") == "image":
                found.append(part["source"].get("data") or part["source"].get("url", ""))
    return tuple(found)


def _deployment(path: str) -> str:
    """Azure OpenAI names the model in the path (`/openai/deployments/<name>/chat/completions`), not the body."""
    return path.split("/deployments/", 1)[-1].split("/", 1)[0]


def _respond(path: str, body: dict[str, Any], state: ServerState) -> tuple[int, dict[str, str], bytes]:
    text = _last_user_text(body)
    everything = json.dumps(body.get("messages", []))
    scripted = state.reply(text) if state.reply else None
    scripted = scripted or next((reply for key, reply in state.replies.items() if key in everything), None)
    key = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]
    match = MARKER.search(text)
    marker = match.group(1) if match else None
    state.seen[key] += 1
    attempt = state.seen[key]
    status, headers, payload = 200, {}, b""
    fault = state.faults.choose(key, attempt) if state.faults else None
    if state.html_after is not None and state.answered >= state.html_after:
        fault = "html"
    if fault in ("500", "503"):
        status, payload = int(fault), b'{"error": {"message": "upstream trouble"}}'
        headers = {"Retry-After": "1"} if fault == "503" else {}
    elif fault == "html":
        headers = {"Content-Type": "text/html; charset=utf-8"}
        payload = b"<!DOCTYPE html><html><head><title>Gateway</title></head><body>Please sign in</body></html>"
    elif body.get("model") == "missing-model":
        status, payload = 404, b'{"error": {"message": "model not found"}}'
    elif state.refuse_schemas and ("response_format" in body or "tools" in body):
        field_name = "response_format" if "response_format" in body else "tools"
        status = state.refuse_schemas
        payload = json.dumps({"error": {"message": f"{field_name}: json_schema is not supported"}}).encode()
    elif marker == "400":
        status, payload = 400, b'{"error": {"message": "bad request"}}'
    elif marker in ("429", "429date") and attempt == 1:
        when = "1" if marker == "429" else email.utils.formatdate(time.time() + 2, usegmt=True)
        status, headers, payload = 429, {"Retry-After": when}, b'{"error": {"message": "slow down"}}'
    elif marker == "500x2" and attempt <= 2:
        status, payload = 500, b'{"error": {"message": "boom"}}'
    elif marker == "html":
        headers = {"Content-Type": "text/html; charset=utf-8"}
        payload = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>Proxy login</body></html>"
    elif marker == "malformed":
        payload = b'{"id": "x", "choices": [ this is not json'
    elif path.endswith("/messages"):
        content = [] if marker == "empty" else [{"type": "text", "text": scripted or f"echo: {text}"}]
        forced = (body.get("tool_choice") or {}).get("name")
        if forced and marker != "empty":
            content = [{"type": "tool_use", "id": f"toolu_{key}", "name": forced,
                        "input": json.loads(scripted or "{}")}]
        payload = json.dumps({"id": f"msg_{key}", "type": "message", "role": "assistant", "model": body["model"],
                              "content": content, "stop_reason": "end_turn", "stop_sequence": None,
                              "usage": {"input_tokens": len(text.split()), "output_tokens": 3}}).encode()
    else:
        message = {"role": "assistant", "content": scripted or f"echo: {text}"}
        choices = [] if marker == "empty" else [{"index": 0, "finish_reason": "stop", "message": message}]
        payload = json.dumps({"id": f"chatcmpl-{key}", "object": "chat.completion", "created": 0,
                              "model": body.get("model") or _deployment(path), "choices": choices,
                              "usage": {"prompt_tokens": len(text.split()), "completion_tokens": 3,
                                        "total_tokens": len(text.split()) + 3}}).encode()
    if fault in ("reset", "hang", "trickle"):
        headers = {"X-Fault": fault}
    elif status == 200 and fault != "html" and marker not in ("html", "malformed", "trickle", "timeout"):
        state.answered += 1
    if state.log_requests:
        seen = {"reset": 0, "hang": 599, "trickle": 599}.get(fault or "", 599 if marker in ("trickle", "timeout")
                                                            else status)
        state.log.append(Logged(path, fault or marker, seen, key, text, _images(body), body))
    return status, headers, payload


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: ServerState) -> None:
    try:
        while True:
            request_line = await reader.readline()
            if not request_line:
                break
            method, path, _ = request_line.decode().split(" ", 2)
            headers: dict[str, str] = {}
            while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = line.decode().partition(":")
                headers[name.strip().lower()] = value.strip()
            raw = await reader.readexactly(int(headers.get("content-length", "0")))
            batch = handle(method, path, headers, raw, state.batch, lambda p, b: _respond(p, b, state))
            if batch is not None:
                status, extra, payload = batch
                body = {}
            elif method == "GET":
                status, extra, payload = 200, {}, b'{"object": "list", "data": []}'
            else:
                body = json.loads(raw or b"{}")
                if "[[timeout]]" in _last_user_text(body):
                    await asyncio.sleep(30)
                if state.latency_s:
                    await asyncio.sleep(state.latency_s)
                status, extra, payload = _respond(path, body, state)
                fault = extra.pop("X-Fault", None)
                if fault == "reset":
                    writer.transport.abort()  # the connection dies with no response
                    return
                if fault == "hang":
                    await asyncio.sleep(30)
                if fault == "trickle":
                    body = {"messages": [{"role": "user", "content": "[[trickle]]"}]}
            kind = extra.pop("Content-Type", "application/json")
            head = [f"HTTP/1.1 {status} {'OK' if status == 200 else 'ERR'}", f"Content-Type: {kind}",
                    f"Content-Length: {len(payload)}", *(f"{k}: {v}" for k, v in extra.items())]
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
            if method != "GET" and "[[trickle]]" in _last_user_text(body):
                for i in range(len(payload)):
                    writer.write(payload[i:i + 1])
                    await writer.drain()
                    await asyncio.sleep(0.5)
            else:
                writer.write(payload)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, ValueError):
        pass
    finally:
        writer.close()


class LLMServer:
    """Runs the server on its own event loop in a background thread; use as a context manager."""

    def __init__(self, latency_s: float = 0.0, log_requests: bool = True):
        self.state = ServerState(latency_s=latency_s, log_requests=log_requests)
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(lambda r, w: _handle(r, w, self.state), "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()
        # finish the connection handlers still running (e.g. a [[timeout]] sleep) before the loop closes
        pending = [t for t in asyncio.all_tasks(self._loop) if not t.done()]
        for task in pending:
            task.cancel()
        self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))

    def __enter__(self) -> LLMServer:
        self._thread.start()
        self._ready.wait(5)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()


def serve_forever(port: int, latency_s: float) -> None:
    """Entry point for a server in its own process (benchmarks): no request log, fixed port."""
    state = ServerState(latency_s=latency_s, log_requests=False)

    async def main() -> None:
        server = await asyncio.start_server(lambda r, w: _handle(r, w, state), "127.0.0.1", port, backlog=1024)
        async with server:
            await server.serve_forever()

    asyncio.run(main())
