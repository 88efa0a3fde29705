"""The files a persona analysis writes beside the run, for pandas and spreadsheets."""

from __future__ import annotations

import csv
import json
from dataclasses import asdict
from pathlib import Path

from engine.api.analysis import reliability
from engine.builtin_plugins.methods.personas.records import PersonaResult


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.4g}"


def write_personas(result: PersonaResult, run_dir: Path) -> Path:
    """cells.csv (persona × prompt type), dimensions.csv, samples.jsonl and personas.json."""
    out = run_dir / result.analysis
    out.mkdir(parents=True, exist_ok=True)
    with (out / "cells.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["persona", "prompt_type", "votes", f"{result.model_a}_wins", f"{result.model_b}_wins", "ties",
                         "win_rate_a", "tie_rate", "prompts", f"{result.model_a}_prompts", f"{result.model_b}_prompts",
                         "sign_test_p", "holm_p", "fleiss_kappa"])
        for p in result.personas:
            for c in p.cells:
                writer.writerow([p.persona, c.prompt_type, c.votes, c.a_wins, c.b_wins, c.ties, f"{c.win_rate_a:.4f}",
                                 f"{c.tie_rate:.4f}", c.items, c.a_items, c.b_items, _fmt(c.p_value),
                                 _fmt(c.p_adjusted), _fmt(c.kappa)])
    with (out / "dimensions.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["persona", "dimension", "judge", "kind", "weight", "measure", "prefers", "a_wins", "b_wins",
                         "ties"])
        for p in result.personas:
            for d in p.dimensions:
                writer.writerow([p.persona, d.dimension, d.judge, d.kind, d.weight, d.measure or "", d.prefers or "",
                                 d.a_wins, d.b_wins, d.ties])
    (out / "samples.jsonl").write_text("".join(json.dumps(asdict(s)) + "\n" for s in result.samples),
                                       encoding="utf-8")
    body = {k: v for k, v in asdict(result).items() if k != "samples"}
    (out / "personas.json").write_text(json.dumps(body, indent=1), encoding="utf-8")
    reliability.write(result.reliability, result.agreements, out)
    return out
