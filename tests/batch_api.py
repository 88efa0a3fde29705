"""The batch endpoints of the loopback LLM server: OpenAI's Batch API (file upload, create, retrieve, cancel,
file content) and Anthropic's Message Batches (create, retrieve, cancel, results).

Each line of a batch is answered by the same code that answers a live call, so a batch gives the answers
live calls get. `BatchDesk` controls the rest: `delay_s` (a batch ends that long after it is created),
markers in a request's prompt (`[[batch_error]]` errors and `[[batch_expire]]` expires that request the
first time it is submitted, so a retry succeeds), `expire_all` (every batch expires unanswered), and what a
provider does to old batches: `forget()` (every batch so far answers 404, as past retention or for another
organisation's key; with `results_only`, their results files do while the batches still show) and
`unavailable` (that many retrieves answer 503 first). It counts submissions (`submitted`: one entry per
batch created, with its custom_ids and lines), which is how tests show that a resumed run sent nothing again.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Respond = Callable[[str, dict[str, Any]], tuple[int, dict[str, str], bytes]]
Reply = tuple[int, dict[str, str], bytes]


@dataclass
class BatchDesk:
    delay_s: float = 0.0
    expire_all: bool = False
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    submitted: list[dict[str, Any]] = field(default_factory=list)
    seen: Counter[str] = field(default_factory=Counter)  # custom_id -> times submitted
    polls: int = 0
    forgotten: set[str] = field(default_factory=set)
    forgotten_results: set[str] = field(default_factory=set)
    unavailable: int = 0

    def forget(self, results_only: bool = False) -> None:
        (self.forgotten_results if results_only else self.forgotten).update(self.batches)


def _json(value: Any, status: int = 200) -> Reply:
    return status, {}, json.dumps(value).encode()


def handle(method: str, path: str, headers: dict[str, str], raw: bytes, desk: BatchDesk,
           respond: Respond) -> Reply | None:
    """The answer to a batch API request, or None for any other path."""
    parts = path.split("?")[0].rstrip("/").split("/")
    if parts[:3] == ["", "v1", "files"]:
        if method == "POST" and len(parts) == 3:
            return _upload(headers, raw, desk)
        if method == "GET" and len(parts) == 5 and parts[4] == "content":
            if parts[3].removeprefix("file-out-") in desk.forgotten_results:
                return _json({"error": {"message": f"No such File object: {parts[3]}"}}, 404)
            return 200, {"Content-Type": "application/jsonl"}, desk.files.get(parts[3], b"")
    batch_id = parts[3] if parts[:3] == ["", "v1", "batches"] and len(parts) >= 4 else (
        parts[4] if parts[:4] == ["", "v1", "messages", "batches"] and len(parts) >= 5 else None)
    if batch_id in desk.forgotten:
        return _json({"error": {"type": "not_found_error", "message": f"No batch found with id '{batch_id}'"}}, 404)
    if batch_id is not None and method == "GET" and desk.unavailable > 0 and not path.endswith("/results"):
        desk.unavailable -= 1
        return _json({"error": {"message": "service unavailable"}}, 503)
    if parts[:3] == ["", "v1", "batches"]:
        if method == "POST" and len(parts) == 3:
            return _create_openai(json.loads(raw), desk, respond)
        if len(parts) >= 4 and parts[3] in desk.batches:
            if method == "POST" and parts[4:] == ["cancel"]:
                desk.batches[parts[3]]["cancelled"] = True
            desk.polls += method == "GET"
            return _json(_openai_view(desk.batches[parts[3]], desk))
        return _json({"error": {"message": "no such batch"}}, 404)
    if parts[:4] == ["", "v1", "messages", "batches"]:
        if method == "POST" and len(parts) == 4:
            return _create_anthropic(json.loads(raw), headers, desk, respond)
        if len(parts) >= 5 and parts[4] in desk.batches:
            batch = desk.batches[parts[4]]
            if method == "POST" and parts[5:] == ["cancel"]:
                batch["cancelled"] = True
            if method == "GET" and parts[5:] == ["results"]:
                if batch["id"] in desk.forgotten_results:
                    return _json({"error": {"type": "not_found_error", "message": "results expired"}}, 404)
                return 200, {"Content-Type": "application/x-jsonl"}, _anthropic_results(batch, desk)
            desk.polls += method == "GET"
            return _json(_anthropic_view(batch, desk))
        return _json({"error": {"type": "not_found_error", "message": "no such batch"}}, 404)
    return None


def _upload(headers: dict[str, str], raw: bytes, desk: BatchDesk) -> Reply:
    """multipart/form-data with a `purpose` field and a `file` part: the file is kept whole."""
    boundary = headers.get("content-type", "").split("boundary=")[-1].strip('"').encode()
    content = b""
    for part in raw.split(b"--" + boundary):
        head, _, body = part.partition(b"\r\n\r\n")
        if b'name="file"' in head:
            content = body[:-2] if body.endswith(b"\r\n") else body
    file_id = f"file-{len(desk.files) + 1}"
    desk.files[file_id] = content
    return _json({"id": file_id, "object": "file", "purpose": "batch", "bytes": len(content)})


def _outcome(custom_id: str, prompt: str, desk: BatchDesk) -> str:
    first = desk.seen[custom_id] == 1
    if desk.expire_all or ("[[batch_expire]]" in prompt and first):
        return "expired"
    return "errored" if "[[batch_error]]" in prompt and first else "succeeded"


def _prompt(body: dict[str, Any]) -> str:
    return json.dumps(body.get("messages", []))


def _create_openai(request: dict[str, Any], desk: BatchDesk, respond: Respond) -> Reply:
    lines = [json.loads(line) for line in desk.files[request["input_file_id"]].splitlines() if line.strip()]
    batch_id = f"batch_{len(desk.batches) + 1}"
    for line in lines:
        desk.seen[line["custom_id"]] += 1
    desk.submitted.append({"id": batch_id, "custom_ids": [x["custom_id"] for x in lines], "lines": lines})
    desk.batches[batch_id] = {"kind": "openai", "id": batch_id, "created": time.time(), "cancelled": False,
                              "lines": lines, "outcomes": [_outcome(x["custom_id"], _prompt(x["body"]), desk)
                                                           for x in lines], "respond": respond}
    return _json(_openai_view(desk.batches[batch_id], desk))


def _ended(batch: dict[str, Any], desk: BatchDesk) -> bool:
    return batch["cancelled"] or time.time() - batch["created"] >= desk.delay_s


def _openai_view(batch: dict[str, Any], desk: BatchDesk) -> dict[str, Any]:
    view: dict[str, Any] = {"id": batch["id"], "object": "batch", "endpoint": "/v1/chat/completions",
                            "completion_window": "24h", "status": "in_progress",
                            "request_counts": {"total": len(batch["lines"]), "completed": 0, "failed": 0}}
    if not _ended(batch, desk):
        return view
    if "output_file_id" not in batch:
        good, bad = [], []
        for line, outcome in zip(batch["lines"], batch["outcomes"], strict=True):
            if batch["cancelled"] or outcome != "succeeded":
                code = "batch_cancelled" if batch["cancelled"] else (
                    "batch_expired" if outcome == "expired" else "server_error")
                bad.append({"id": f"r-{line['custom_id']}", "custom_id": line["custom_id"], "response": None,
                            "error": {"code": code, "message": f"request {outcome}"}})
                continue
            status, _, payload = batch["respond"]("batch/v1/chat/completions", line["body"])
            good.append({"id": f"r-{line['custom_id']}", "custom_id": line["custom_id"], "error": None,
                         "response": {"status_code": status, "request_id": "req", "body": json.loads(payload)}})
        batch["output_file_id"] = f"file-out-{batch['id']}"
        batch["error_file_id"] = f"file-err-{batch['id']}" if bad else None
        desk.files[batch["output_file_id"]] = b"".join(json.dumps(x).encode() + b"\n" for x in good)
        if bad:
            desk.files[batch["error_file_id"]] = b"".join(json.dumps(x).encode() + b"\n" for x in bad)
        batch["counts"] = {"total": len(batch["lines"]), "completed": len(good), "failed": len(bad)}
    status = "cancelled" if batch["cancelled"] else ("expired" if desk.expire_all else "completed")
    return {**view, "status": status, "request_counts": batch["counts"], "output_file_id": batch["output_file_id"],
            "error_file_id": batch["error_file_id"]}


def _create_anthropic(request: dict[str, Any], headers: dict[str, str], desk: BatchDesk, respond: Respond) -> Reply:
    lines = request["requests"]
    batch_id = f"msgbatch_{len(desk.batches) + 1}"
    for line in lines:
        desk.seen[line["custom_id"]] += 1
    desk.submitted.append({"id": batch_id, "custom_ids": [x["custom_id"] for x in lines], "lines": lines})
    desk.batches[batch_id] = {"kind": "anthropic", "id": batch_id, "created": time.time(), "cancelled": False,
                              "lines": lines, "host": headers.get("host", ""), "respond": respond,
                              "outcomes": [_outcome(x["custom_id"], _prompt(x["params"]), desk) for x in lines]}
    return _json(_anthropic_view(desk.batches[batch_id], desk))


def _anthropic_view(batch: dict[str, Any], desk: BatchDesk) -> dict[str, Any]:
    ended = _ended(batch, desk)
    outcomes = ["canceled" if batch["cancelled"] else o for o in batch["outcomes"]]
    counts = Counter(outcomes) if ended else Counter({"processing": len(outcomes)})
    return {"id": batch["id"], "type": "message_batch",
            "processing_status": "ended" if ended else ("canceling" if batch["cancelled"] else "in_progress"),
            "request_counts": {k: counts.get(k, 0) for k in ("processing", "succeeded", "errored", "canceled",
                                                             "expired")},
            "results_url": f"http://{batch['host']}/v1/messages/batches/{batch['id']}/results" if ended else None}


def _anthropic_results(batch: dict[str, Any], desk: BatchDesk) -> bytes:
    out = []
    for line, outcome in zip(batch["lines"], batch["outcomes"], strict=True):
        outcome = "canceled" if batch["cancelled"] else outcome
        if outcome == "succeeded":
            _, _, payload = batch["respond"]("batch/v1/messages", line["params"])
            result: dict[str, Any] = {"type": "succeeded", "message": json.loads(payload)}
        elif outcome == "errored":
            result = {"type": "errored", "error": {"type": "error", "error": {"type": "api_error",
                                                                             "message": "overloaded"}}}
        else:
            result = {"type": outcome}
        out.append(json.dumps({"custom_id": line["custom_id"], "result": result}).encode() + b"\n")
    return b"".join(out)
