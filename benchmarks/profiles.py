"""The many-model vibe leaderboard, timed cold: `vibe run specs/alpaca-eval-vibes.yaml` (seven AlpacaEval
models and the reference gpt4_1106_preview on 805 instructions, recorded answers, the offline metric panel and
statistical discovery) as a subprocess with an empty cache in a fresh temporary folder. Prints the phases,
how many models the profile covers and on how many vibes, and the two win rates against AlpacaEval's
published figures for the weighted annotator (its win rate, the mean graded share, and its discrete win rate;
its LC rate also uses an instruction-difficulty term fitted over its whole leaderboard, which one run cannot
estimate).

Target: 8 models, at least 8 vibes, under 120 s cold on this machine.
Last line: models=<int> vibes=<int> wall_s=<float>
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import sizes

ROOT = Path(__file__).resolve().parent.parent
LEADERBOARD = "alpaca_eval/leaderboards/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"


def main() -> None:
    spec = sizes.spec(ROOT / "specs" / "alpaca-eval-vibes.yaml", "datasets: {alpaca-eval: {limit: 60}}\n")
    data = Path(os.environ.get("VIBE_DATA", ROOT.parent / "shared" / "data"))
    with tempfile.TemporaryDirectory() as folder:
        out, cache = Path(folder) / "run", Path(folder) / "cache.sqlite"
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "engine", "run", str(spec), "--out", str(out), "--cache",
                               str(cache), "--quiet"], capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"vibe run failed ({done.returncode}):\n{done.stderr[-2000:]}")
        print(f"phases: {json.loads((out / 'manifest.json').read_text())['phases_s']}")
        profile = json.loads((out / "vibe-profiles" / "profiles.json").read_text())
        models = len(profile["models"]) + 1  # and the reference
        vibes = len(profile["vibes"])
        with (data / LEADERBOARD).open(encoding="utf-8") as fh:
            published = {row[""]: row for row in csv.DictReader(fh)}
        for rate in profile["winrates"]:
            row = published.get(rate["model"], {})
            lc = "—" if rate["lc_win_rate"] is None else f"{100 * rate['lc_win_rate']:.1f}"
            print(f"{rate['model']}: win rate {100 * rate['win_rate']:.1f} (AlpacaEval, weighted annotator: "
                  f"{row.get('win_rate', '?')[:5]}, discrete {row.get('discrete_win_rate', '?')[:5]}), LC {lc} "
                  f"(published {row.get('length_controlled_winrate', '?')[:5]})")
    print(f"models={models} vibes={vibes} wall_s={wall:.2f}")


if __name__ == "__main__":
    main()
