"""Agent behaviour (`method: agents`): what several agents do in their logs, beyond what they write. Each
conversation's tool calls, the tools called, the calls that failed, measured from the transcript the dataset's
format read (an agent log's, an Inspect log's, OpenAI messages with tool calls) and compared with one
conversation as the unit. It plans no calls: the logs are the data.

The statistics live in `engine.builtin_plugins.methods.agents.analysis`, imported when a run reaches them."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from engine.api.data import dataset_format
from engine.api.methods import AnalysisMethod, Page, analysis_method
from engine.api.records import Prepared, Result
from engine.api.spec import Analysis, PathKey, SpecChecker
from engine.builtin_plugins.methods.agents.options import AgentOptions


@analysis_method("agents")
class Agents(AnalysisMethod):
    options = AgentOptions
    sections = ("agent_board", "agents")

    def check(self, c: SpecChecker, path: PathKey, analysis: dict[str, Any]) -> None:
        if len(analysis.get("models", [])) < 2:
            c.report((*path, "models"), "an agents analysis compares at least 2 models")
        if not dataset_format(c.dataset(analysis).get("format")).conversations:
            c.report((*path, "dataset"), "an agents analysis reads transcripts: its dataset's format must hold "
                     "conversations (an agent log format, inspect-messages, openai-messages)")

    def analyze(self, prepared: Prepared, analysis: Analysis, results: dict[str, Result], run_dir: Path,
                origins: dict[str, str]) -> dict[str, list[Any]]:
        from engine.builtin_plugins.methods.agents.analysis import analyze_agents

        summary, compared = analyze_agents(prepared, analysis)
        out_dir = run_dir / analysis.name
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "board.json").write_text(json.dumps(asdict(summary), indent=1), encoding="utf-8")
        for behaviour in compared:
            (out_dir / f"agents-{behaviour.model_a}-vs-{behaviour.model_b}.json").write_text(
                json.dumps(asdict(behaviour), indent=1), encoding="utf-8")
        return {"agent_board": [summary], "agents": compared}

    def section(self, name: str, result: Any, page: Page) -> list[dict[str, Any]]:
        return [{"result": result}]
