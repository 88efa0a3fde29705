"""Agent sessions, as the logs of coding agents and tracing tools hold them, turned into vibe's conversations.

Each log format (Claude Code, Codex, ATIF, OpenTelemetry GenAI, Langfuse, LangSmith) reads its files into
`Session`s: the messages in the order the agent saw them (the human's prompts, the assistant's prose and tool
calls, the tools' results), the model the log names, and where the session sits. What every format then
needs alike lives here:

- the turns an agent's log makes are tidied to the shape a conversation has: a prompt nobody answered (a local
  command, an interrupted request, the log's last line) is dropped, an assistant's consecutive messages with no
  tool call between them are one message, and a tool result whose call is not in the log is dropped;
- secrets are redacted before any text leaves the reader (`redaction.redact`), so nothing a run folder or a
  page holds carries a key, a token or a user's home folder;
- sessions pair across agents by the prompt that opens them (the k-th session of each agent opening with the
  same prompt pair), since two agents' logs share no session id; a dataset may pair on the log's own id instead.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from engine.datasets.items import DatasetError
from engine.datasets.redaction import redact
from engine.datasets.shapes import ConversationRows
from engine.formats import Located, Sniffed, dataset_format, format_names
from engine.spec.data_model import Dataset

Message = dict[str, Any]

@dataclass
class Session:
    """One agent session as a log holds it. `messages` are role/content dicts: `user` (the human's prompt),
    `assistant` (its prose, and `tool_calls` as {function, arguments, id}), `tool` (a result: `name`, and
    `tool_call_id` matching its call, `error` whether the tool failed, where the log says) and `system`; each
    may carry `time` (when
    the log wrote it, ISO-8601) and an assistant message `tokens` (the output tokens of its model call)."""

    id: str  # the log's own session id
    models: list[str]  # the model of each of its assistant messages, as the log names it
    messages: list[Message]
    where: str  # the file (and line) it was read from, for errors
    subagent: str | None = None  # the subagent's id, for a subagent's own run; None for the main thread
    agent: str | None = None  # the tool that wrote the log, and its version, where the log says
    tool: str | None = None  # that tool's name alone (`claude-code`), which its versions share


def inner(record: Any, key: str) -> dict[str, Any]:
    """The object a log record holds under `key`; empty where it holds none (logs omit what they lack)."""
    value = record.get(key) if isinstance(record, dict) else None
    return value if isinstance(value, dict) else {}


def tidy(messages: list[Message]) -> list[Message]:
    """The messages in the shape of a conversation: every prompt answered, assistant prose between two tool
    rounds one message, every tool result after its call. Agent logs break that shape routinely (a local
    `/exit` with no answer, one API response spread over several messages, an interrupted call)."""
    out: list[Message] = []
    called: set[str] = set()
    prompted = False  # a prompt came before: what the agent says now answers it
    for message in messages:
        role = message["role"]
        if role == "user":
            if out and out[-1]["role"] == "user":
                out.pop()  # the prompt before it went unanswered
            out.append(message)
            called, prompted = set(), True
        elif not prompted:
            if role == "system":
                out.append(message)
        elif role == "assistant":
            last = out[-1]
            if last["role"] == "assistant" and not last.get("tool_calls"):
                text = "\n\n".join(t for t in (last["content"], message["content"]) if t.strip())
                out[-1] = {**message, "content": text}
                if isinstance(last.get("tokens"), int) and isinstance(message.get("tokens"), int):
                    out[-1]["tokens"] = last["tokens"] + message["tokens"]
            else:
                out.append(message)
            called |= {str(c.get("id")) for c in message.get("tool_calls") or ()}
        elif role == "tool" and str(message.get("tool_call_id")) in called and out[-1]["role"] in ("assistant",
                                                                                                   "tool"):
            out.append(message)
    while out and out[-1]["role"] in ("user", "system"):
        out.pop()  # the log ends on a prompt nobody answered
    return out


def conversation_messages(session: Session) -> tuple[list[Message], Counter[str]]:
    """The session's tidied messages, redacted, in the shape `conversations.normalised` reads, each reply with
    the seconds since its turn's prompt (`elapsed`, where the log gives times); and the redactions made."""
    counts: Counter[str] = Counter()

    def clean(text: Any) -> str:
        redacted, found = redact(text if isinstance(text, str) else json.dumps(text, ensure_ascii=False))
        counts.update(found)
        return redacted

    out = []
    asked: datetime | None = None  # when the turn's prompt was sent
    for message in tidy(session.messages):
        kept: Message = {"role": message["role"], "content": clean(message.get("content") or "")}
        if message.get("tool_calls"):
            kept["tool_calls"] = [{"function": call["function"], "arguments": clean(call.get("arguments") or {})}
                                  for call in message["tool_calls"]]
        if message["role"] == "tool":
            kept["name"] = message.get("name") or "tool"
            if isinstance(message.get("error"), bool):  # absent: the log does not say whether the call failed
                kept["error"] = message["error"]
        if isinstance(message.get("tokens"), int):
            kept["tokens"] = message["tokens"]
        when = _moment(message.get("time"))
        if message["role"] == "user":
            asked = when
        elif when is not None and asked is not None:
            kept["elapsed"] = round((when - asked).total_seconds(), 3)
        out.append(kept)
    return out, counts


def _moment(value: Any) -> datetime | None:
    """An ISO-8601 time as logs write it (`Z` or an offset, any fraction of a second); None if it is not one."""
    if not isinstance(value, str):
        return None
    text = re.sub(r"(\.\d{6})\d+", r"\1", value.replace("Z", "+00:00"))  # nanoseconds: Python reads micro
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def session_records(sessions: Iterable[Session], pair_on: str = "prompt",
                    group_by: str = "model") -> list[tuple[str, dict[str, Any]]]:
    """The sessions as the records a conversation format gathers: an id to pair on, the model, the messages.
    `pair_on`: `prompt` pairs the k-th session of each model that opens with the same prompt; `session` pairs
    on the log's own session id. `group_by`: `model` compares the models that wrote the sessions, `agent` the
    tools and their versions that ran them, `tool` the tools whatever their version or model. Subagents'
    runs and sessions with no answered prompt are left out, as are sessions whose assistant turns more than
    one model wrote (when models are compared), each with the reason in its record's `left_out`."""
    seen: Counter[tuple[str, str]] = Counter()
    out = []
    for session in sessions:
        messages, redactions = conversation_messages(session)
        prompt = next((m["content"] for m in messages if m["role"] == "user"), None)
        named = [m for m in dict.fromkeys(session.models) if m and m != "<synthetic>"]  # <synthetic>: made locally
        model = {"agent": session.agent, "tool": session.tool}.get(group_by, named[0] if named else None)
        record: dict[str, Any] = {"model": model or "unknown", "messages": messages, "session": session.id,
                                  "redactions": dict(redactions)}
        if len(named) > 1 and group_by == "model":
            record["left_out"] = (f"session {session.id}: its assistant turns come from {len(named)} models "
                                  f"({', '.join(named)}); split it by model to compare them")
        elif session.subagent is not None:
            record["left_out"] = f"subagent {session.subagent} of session {session.id} (kept apart from its parent)"
        elif prompt is None or not any(m["role"] == "assistant" for m in messages):
            record["left_out"] = f"session {session.id}: no prompt the agent answered"
        if pair_on == "session":
            key = session.id
        elif pair_on == "prompt":
            opening = " ".join((prompt or "").split())
            seen[(record["model"], opening)] += 1
            n = seen[(record["model"], opening)]
            key = hashlib.sha256(opening.encode()).hexdigest()[:12] + (f"#{n}" if n > 1 else "")
        else:
            raise DatasetError(f"{session.where}: pair_on is {pair_on!r}; it is prompt or session")
        record["id"] = key
        out.append((session.where, record))
    return out


class SessionRows(ConversationRows):
    """A format of agent logs: it says which files are its own (`owns`) and reads them into sessions
    (`sessions`); reading a file or a folder, pairing, redaction and `vibe init`'s recognition are shared.
    `fields.id` is what sessions pair on (`prompt` or `session`), `fields.model` what is compared (`model`,
    `agent` or `tool`)."""

    fields: ClassVar[dict[str, str]] = {"id": "prompt", "prompt": "messages", "model": "model"}
    reads: ClassVar[tuple[str, ...]] = ("model",)
    choices: ClassVar[dict[str, tuple[str, ...]]] = {"id": ("prompt", "session"), "model": ("model", "agent", "tool")}
    reads_folders = True
    suffix: ClassVar[str] = ".json"  # its files' suffix
    noun: ClassVar[str] = "sessions"  # what `vibe init` calls what it found
    any_kind: ClassVar[bool] = False  # it reads every other session format's files (`log_format` skips it)

    def owns(self, path: Path) -> bool:
        """Whether the file is one of this format's (read from its first bytes, `head`, never whole)."""
        raise NotImplementedError

    @staticmethod
    def head(path: Path, size: int = 4096) -> str:
        """The file's first `size` characters ("" for a file that cannot be read as text)."""
        try:
            with path.open(encoding="utf-8") as fh:
                return fh.read(size)
        except (OSError, UnicodeDecodeError):
            return ""

    @staticmethod
    def document(path: Path) -> Any:
        """The file's JSON; a file that is not JSON is an error naming it and the line."""
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{exc.lineno}: not JSON: {exc.msg}") from None
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None

    def sessions(self, files: list[Path]) -> list[Session]:
        raise NotImplementedError

    def fits(self, path: Path) -> bool:
        return path.suffix == self.suffix and self.owns(path)

    def files(self, path: Path) -> list[Path]:
        return self._sorted_out(path)[0]

    def records(self, path: Path, ds: Dataset) -> Located:
        files, unread = self._sorted_out(path)
        found = session_records(self.sessions(files), ds.fields.get("id", "prompt"), ds.fields.get("model", "model"))
        # a file with a log's suffix that this format does not read (an HTML error page saved as `trace.json`, a
        # truncated export) is a record left out with why: the run says it on the console, in the manifest and on
        # the page rather than dropping the file unseen
        return found + [(str(file), {"id": f"\0unread\0{file}", "left_out": f"file not read: "
                                                                          f"{unread_reason(file, self)}"})
                        for file in unread]

    def log_suffixes(self) -> set[str]:
        """The suffixes of the files this format reads (a file with one of them that it does not read is said)."""
        return {self.suffix}

    def _sorted_out(self, path: Path) -> tuple[list[Path], list[Path]]:
        """A folder's files with a log's suffix, in one walk and one `fits` each: those this format reads, and
        those it does not. A file given by name is read."""
        if not path.is_dir():
            return [path], []
        suffixes = self.log_suffixes()
        candidates = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in suffixes)
        fitting = {p: self.fits(p) for p in candidates}
        return [p for p in candidates if fitting[p]], [p for p in candidates if not fitting[p]]

    def sniff(self, path: Path, rows: list[dict[str, Any]] | None) -> Sniffed | None:
        files = self.files(path) if path.is_dir() else [path] if self.fits(path) else []
        return self.sniffed(self.sessions(files) if files else [])

    def sniffed(self, sessions: list[Session]) -> Sniffed | None:
        """What `vibe init` takes from sessions read (`compared`): the groups to compare, the reference first,
        and whether any session called a tool; None when there is no main thread."""
        found = [s for s in sessions if s.subagent is None]
        if not found:
            return None
        group_by, groups, note = compared(found)
        acted = any(m.get("tool_calls") for s in found for m in s.messages)
        fields = {"id": "prompt", **({"model": group_by} if group_by != "model" else {})}
        return Sniffed("messages", groups, f"{len(found)} {self.noun}{note}", fields=fields, actions=acted)


def compared(sessions: list[Session]) -> tuple[str, list[str], str]:
    """Who `vibe init` compares in a folder of main-thread sessions: (`fields.model`, the groups with the
    reference first, a note for what it prints).

    The models the logs name, unless more than two of them come from fewer tools that the logs name (two
    agents, each under two model versions): then the tools, each model's sessions under the tool that ran
    them, since a model version is a setting of an agent more than an agent of its own. Where a model ran
    under more than one tool, or a log does not say its tool, the models stay. The reference (the group
    every other is compared with) is the one that shares the most opening prompts with the others (paired
    comparisons need them), then the one with the most sessions."""
    def named(session: Session) -> str | None:
        return next((m for m in session.models if m and m != "<synthetic>"), None)

    models = sorted({m for s in sessions if (m := named(s))})
    tools: dict[str, set[str | None]] = {m: set() for m in models}
    for session in sessions:
        if (model := named(session)) is not None:
            tools[model].add(session.tool)
    every = {t for ts in tools.values() for t in ts}
    group_by, note = "model", ""
    if len(models) > 2 and None not in every and all(len(ts) == 1 for ts in tools.values()) and 2 <= len(every) < len(
            models):
        group_by = "tool"
        note = "; " + ", ".join(f"{t} ran {', '.join(m for m in models if t in tools[m])}" for t in sorted(
            every, key=str)) + ": compared as agents (fields.model: tool)"

    def group(session: Session) -> str | None:
        return session.tool if group_by == "tool" else named(session)

    prompts: dict[str, set[str]] = {}
    sizes: Counter[str] = Counter()
    for session in sessions:
        key = group(session)
        if key is None:
            continue
        opening = next((str(m.get("content")) for m in session.messages if m["role"] == "user"), "")
        prompts.setdefault(key, set()).add(" ".join(opening.split()))
        sizes[key] += 1

    def shared(key: str) -> int:
        return len(prompts[key] & set().union(*(p for k, p in prompts.items() if k != key)))

    order = sorted(prompts, key=lambda k: (-shared(k), -sizes[k], k))
    return group_by, order, note


def unread_reason(path: Path, form: SessionRows) -> str:
    """Why `form` does not read a file with a log's suffix: not UTF-8 text, not JSON (where, and what it
    begins with), or JSON of a kind no installed log format recognises."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return f"not UTF-8 text ({exc})"
    if not text.strip():
        return "the file is empty"
    lines = [line for line in text.splitlines() if line.strip()] if path.suffix == ".jsonl" else [text]
    try:
        json.loads(lines[0])
    except json.JSONDecodeError as exc:
        start = " ".join(text.split())[:40]
        return f"not JSON (line {exc.lineno}: {exc.msg}); it begins {start!r}"
    other = log_format(path)
    if other is not None:
        return f"a {other.noun} file, which format {form.name!r} does not read (format agent-logs reads every kind)"
    return f"JSON, but not a log that format {form.name!r} recognises"


def session_formats() -> list[SessionRows]:
    """Every installed format that reads one kind of agent log."""
    forms = [dataset_format(name) for name in format_names()]
    return [form for form in forms if isinstance(form, SessionRows) and not form.any_kind]


def log_format(path: Path) -> SessionRows | None:
    """The agent-log format whose file `path` is, asking every installed format that reads sessions."""
    return next((form for form in session_formats() if form.fits(path)), None)
