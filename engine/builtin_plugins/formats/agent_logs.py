"""A folder of agent logs of several kinds (Claude Code sessions beside Codex rollouts, say): each file is read
by the installed session format that recognises it, and all of them make one dataset, so that two agents'
sessions compare whatever tools wrote them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.api.data import Session, SessionRows, Sniffed, dataset_format_class, log_format


@dataset_format_class("agent-logs")
class AgentLogs(SessionRows):
    description = ("a folder of agent logs of any kinds vibe reads (Claude Code, Codex, ATIF, OpenTelemetry "
                   "GenAI, Langfuse, LangSmith), each file read by the format that recognises it")
    noun = "agent sessions"
    any_kind = True

    def fits(self, path: Path) -> bool:
        return log_format(path) is not None

    def sessions(self, files: list[Path]) -> list[Session]:
        kinds: dict[SessionRows, list[Path]] = {}
        for file in files:
            form = log_format(file)
            if form is not None:
                kinds.setdefault(form, []).append(file)
        return [session for form, group in kinds.items() for session in form.sessions(group)]

    def sniff(self, path: Path, rows: list[dict[str, Any]] | None) -> Sniffed | None:
        """A folder holding logs of more than one kind (a folder of one kind is that format's)."""
        if not path.is_dir() or len({type(log_format(p)) for p in self.files(path)}) < 2:
            return None
        return super().sniff(path, rows)
