"""A folder of agent logs of several kinds (Claude Code sessions beside Codex rollouts, say): each file is read
by the installed session format that recognises it, and all of them make one dataset, so that two agents'
sessions compare whatever tools wrote them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from engine.api.data import Session, SessionRows, Sniffed, dataset_format_class, log_format, session_formats


@dataset_format_class("agent-logs")
class AgentLogs(SessionRows):
    description = ("a folder of agent logs of any kinds vibe reads (Claude Code, Codex, ATIF, OpenTelemetry "
                   "GenAI, Langfuse, LangSmith), each file read by the format that recognises it")
    noun = "agent sessions"
    any_kind = True

    def fits(self, path: Path) -> bool:
        return log_format(path) is not None

    def log_suffixes(self) -> set[str]:
        return {form.suffix for form in session_formats()}

    def sessions(self, files: list[Path]) -> list[Session]:
        return [session for form, group in _by_format(files).items() for session in form.sessions(group)]

    def sniff(self, path: Path, rows: list[dict[str, Any]] | None) -> Sniffed | None:
        """A folder holding logs of more than one kind (a folder of one kind is that format's)."""
        groups = _by_format(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else {}
        if len(groups) < 2:
            return None
        return self.sniffed([session for form, group in groups.items() for session in form.sessions(group)])


def _by_format(files: Iterable[Path]) -> dict[SessionRows, list[Path]]:
    """The files each installed session format recognises (each file's head read once); the rest left out."""
    kinds: dict[SessionRows, list[Path]] = {}
    for file in files:
        form = log_format(file)
        if form is not None:
            kinds.setdefault(form, []).append(file)
    return kinds
