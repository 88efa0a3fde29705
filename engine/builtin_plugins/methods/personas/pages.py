"""A persona analysis on the leaderboard: its section's chart, and per persona every prompt as that user
asked it, with both answers and every per-dimension verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment

from engine.api.records import Chat, Prepared, Request, Result
from engine.api.report import ITEMS_PER_PAGE, charts, slug, text_of, write_pages
from engine.builtin_plugins.methods.personas.charts import persona_chart
from engine.builtin_plugins.methods.personas.records import PersonaResult


def persona_section(env: Environment, result: PersonaResult, prepared: Prepared, run_dir: Path,
                     outputs: dict[str, Result]) -> dict[str, Any]:
    """The index section's chart, plus a drill-down per persona: every prompt as the models saw it."""
    rows = []
    for p in result.personas:
        for c in p.cells:
            if not c.votes:
                continue
            for rank_, (outcome, votes) in enumerate(((f"{result.model_a} wins", c.a_wins), ("tie", c.ties),
                                                      (f"{result.model_b} wins", c.b_wins))):
                rows.append({"condition": f"{p.persona} · {c.prompt_type}", "outcome": outcome, "votes": votes,
                             "share": votes / c.votes, "rank": rank_})
    spec = persona_chart(rows, result.model_a, result.model_b)
    name = f"{slug(result.analysis)}-personas"
    charts.export(spec, run_dir / "charts" / name)
    bindings = {(b.item, b.variant): b for b in prepared.plan.bindings.get(result.analysis, [])}
    pages = {}
    for p in result.personas:
        entries = []
        for sample in (s for s in result.samples if s.persona == p.persona):
            binding = bindings[(sample.item_id, f"{p.persona}/{sample.variant}")]
            ga, gb = binding.outputs[result.model_a][0], binding.outputs[result.model_b][0]
            entries.append({"sample": sample, "prompt": shown_prompt(prepared.plan.requests[ga], outputs),
                            "answer_a": text_of(outputs, ga), "answer_b": text_of(outputs, gb)})
        prefix = f"{slug(result.analysis)}-{slug(p.persona)}"
        write_pages(env, "personas.html.j2", run_dir / "answers", prefix, "entries", entries, ITEMS_PER_PAGE,
                     pr=result, persona=p.persona, weights=p.weights)
        pages[p.persona] = f"answers/{prefix}-1.html"
    return {"result": result, "chart": spec, "chart_file": f"charts/{name}.svg", "pages": pages}


def shown_prompt(request: Request, outputs: dict[str, Result]) -> str:
    """The user message a generation answered: an LLM rewrite's output, or the planned text."""
    assert isinstance(request, Chat)
    if request.prompt_from:
        return text_of(outputs, request.prompt_from)
    content = request.messages[-1]["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
