"""Statistical discovery recovers planted vibes on real data, through the real pipeline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

SPEC_FRIENDLY = """\
name: friendly-cold
models: {{friendly: {{provider: recorded}}, cold: {{provider: recorded}}}}
judges: {{m: {{kind: metric}}}}
datasets:
  d:
    source: {{path: {data}/vibecheck/friendly_and_cold_sample.csv}}
    fields: {{prompt: question, preference: preference, outputs: {{friendly: friendly, cold: cold}}}}
vibes: [{{discover: {{method: statistical, max_vibes: 5}}}}]
analyses:
  vibecheck: {{dataset: d, models: [friendly, cold], judges: [m], split: {{train: 0.5, seed: 0}}}}
"""

SPEC_ALPACA = """\
name: concise-verbose
models: {{concise: {{provider: recorded}}, verbose: {{provider: recorded}}}}
judges: {{m: {{kind: metric}}}}
datasets:
  d:
    source:
      path: {data}/alpaca_eval/gpt-3.5-turbo-1106_concise/model_outputs.json
      join:
        verbose_output: {{path: {data}/alpaca_eval/gpt-3.5-turbo-1106_verbose/model_outputs.json, field: output}}
    fields: {{id: instruction, prompt: instruction, outputs: {{concise: output, verbose: verbose_output}}}}
vibes: [{{discover: {{method: statistical, max_vibes: 3}}}}]
analyses:
  vibecheck: {{dataset: d, models: [concise, verbose], judges: [m]}}
"""


def discover(tmp_path: Path, text: str) -> list[dict]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    out = subprocess.run([sys.executable, "-m", "engine", "discover", str(spec), "--cache",
                          str(tmp_path / "cache.sqlite"), "--out", str(tmp_path / "vibes.yaml"), "--quiet"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    return yaml.safe_load((tmp_path / "vibes.yaml").read_text())["vibes"]


def test_friendly_vs_cold_top_vibe_is_warmth(tmp_path: Path, shared_data: Path) -> None:
    vibes = discover(tmp_path, SPEC_FRIENDLY.format(data=shared_data))
    assert vibes[0]["metric"] == "warmth"
    assert "Warm, friendly wording" in vibes[0]["high"]


def test_concise_vs_verbose_top_vibe_is_length(tmp_path: Path, shared_data: Path) -> None:
    vibes = discover(tmp_path, SPEC_ALPACA.format(data=shared_data))
    assert vibes[0]["metric"] == "length_words"


def test_run_on_planted_data_keeps_the_planted_vibe(tmp_path: Path, shared_data: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC_FRIENDLY.format(data=shared_data))
    out = subprocess.run([sys.executable, "-m", "engine", "run", str(spec), "--cache", str(tmp_path / "c.sqlite"),
                          "--out", str(tmp_path / "run"), "--quiet", "--no-report"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rows = [yaml.safe_load(line) for line in (tmp_path / "run" / "vibecheck" / "vibes.jsonl").read_text().splitlines()]
    warmth = next(r for r in rows if r["name"] == "warmth")
    assert warmth["kept"] and warmth["separability"] > 0.5  # friendly (model A) is far warmer
    assert warmth["origin"].startswith("discovered (metric")
