"""Rankings controlled for vibes, against plain Bradley–Terry and Arena's four-feature style control, on held-out
battles. Arena's four features are counted exactly as lmarena counts them (`engine.analyze.arena_style`); they
are fitted twice: in the rankings' own Bradley–Terry (style4: scaled, not centred, unpenalized) and in Arena's
own fit (arena_style4: centred, L2-penalized, `rating_systems.py`'s `fit_contextual_bt`).

Two outcome sources, each through the rankings method's own path (`rank_outcomes` with `methods:
[vibe_controlled]`, vibes discovered on the training prompts), over 10 seeded prompt splits (the analysis' seed):
- Vibe-Eval (specs/vibe-eval.yaml): the 13 models' recorded answers to all 269 prompts, hard and normal, turned
  into battles by Reka Core's recorded 1–5 ratings (a gap of 2 or more wins; smaller gaps tie and are left out,
  as the spec ranks them);
- AlpacaEval 2 (specs/alpaca-eval-vibes.yaml): GPT-4-Turbo's recorded annotations of Mixtral-8x7B and
  gpt-3.5-turbo-1106 against gpt4_1106_preview on the 805 instructions (ties half a win each).

Per split: each model's held-out log-likelihood per test battle (trained on the training prompts, scored on the
test battles), and the largest leave-one-model-out move of a controlled score over its interval's half-width
(200 bootstrap rounds by prompt). Targets: the vibe-controlled model's held-out log-likelihood at least the
four-feature control's on average, and every leave-one-model-out move under one half-width.

Last line: heldout_ll_plain=<float> heldout_ll_style4=<float> heldout_ll_vibes=<float>
  vibes_beat_style4_splits=<int> max_shift_over_halfwidth=<float> heldout_ll_arena_style4=<float>
  vibes_beat_arena_style4_splits=<int> (splits counted over both sources)
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from pathlib import Path

import numpy as np
import sizes

from engine.builtin_plugins.methods.rankings.method import rank_outcomes
from engine.builtin_plugins.methods.rankings.options import RankingsOptions
from engine.pipeline import prepare
from engine.spec.model import Analysis

ROOT = Path(__file__).resolve().parent.parent
SPLITS = sizes.pick(10, 2)
ROUNDS = sizes.pick(200, 20)
ALPACA_MODELS = ("gpt4_1106_preview", "Mixtral-8x7B-Instruct-v0.1", "gpt-3.5-turbo-1106")


def sources() -> list[tuple[str, object, Analysis]]:
    """(name, prepared run, the rankings analysis to vary) for each outcome source."""
    limit = sizes.pick(None, 60)
    vibe_eval = prepare(ROOT / "specs" / "vibe-eval.yaml", limit)
    ranked = vibe_eval.spec.analyses["rankings"]
    alpaca = prepare(ROOT / "specs" / "alpaca-eval-vibes.yaml", limit)
    annotations = Analysis("annotations", "rankings", "alpaca-eval", ALPACA_MODELS, RankingsOptions(outcomes="labels"))
    return [("Vibe-Eval, Reka Core's ratings", vibe_eval, ranked),
            ("AlpacaEval 2, GPT-4-Turbo's annotations", alpaca, annotations)]


def main() -> None:
    totals: dict[str, list[float]] = {"plain": [], "style4": [], "arena_style4": [], "vibes": []}
    beats, beats_arena, shifts = 0, 0, []
    for name, prepared, analysis in sources():
        base = RankingsOptions.of(analysis)
        chosen: Counter[str] = Counter()
        print(f"\n{name}: {SPLITS} seeded prompt splits")
        print(f"{'seed':>4s} {'plain':>8s} {'style4':>8s} {'arena':>8s} {'vibes':>8s}  {'acc vibes':>9s} "
              f"{'max move':>8s}  chosen")
        start = time.perf_counter()
        for seed in range(SPLITS):
            options = dataclasses.replace(base, methods=["vibe_controlled"], seed=seed, bootstrap=ROUNDS)
            control = rank_outcomes(prepared, dataclasses.replace(analysis, options=options)).control
            assert control is not None, "no controlled ranking"
            ll = {h.model: h.log_likelihood for h in control.heldout}
            for model, value in ll.items():
                totals[model].append(value)
            beats += ll["vibes"] >= ll["style4"]
            beats_arena += ll["vibes"] >= ll["arena_style4"]
            shifts.append(control.max_shift_over_halfwidth or 0.0)
            chosen.update(control.chosen)
            accuracy = next(h.accuracy for h in control.heldout if h.model == "vibes")
            print(f"{seed:4d} {ll['plain']:8.4f} {ll['style4']:8.4f} {ll['arena_style4']:8.4f} {ll['vibes']:8.4f}  "
                  f"{accuracy or 0:9.3f} "
                  f"{shifts[-1]:8.2f}  {', '.join(control.chosen) or '(none)'}")
        here = {model: float(np.mean(values[-SPLITS:])) for model, values in totals.items()}
        print(f"mean: plain {here['plain']:.4f}, style4 {here['style4']:.4f}, arena_style4 {here['arena_style4']:.4f}, "
              f"vibes {here['vibes']:.4f}; chosen in "
              f"how many splits: {dict(chosen.most_common())}; {time.perf_counter() - start:.0f} s")
    mean = {model: float(np.mean(values)) for model, values in totals.items()}
    print(f"targets: heldout_ll_vibes ≥ heldout_ll_arena_style4 on average; max_shift_over_halfwidth < 1; the "
          f"vibes beat style4 on {beats} and arena_style4 on {beats_arena} of {len(totals['vibes'])} splits")
    print(f"heldout_ll_plain={mean['plain']:.4f} heldout_ll_style4={mean['style4']:.4f} "
          f"heldout_ll_vibes={mean['vibes']:.4f} vibes_beat_style4_splits={beats} "
          f"max_shift_over_halfwidth={max(shifts):.3f} heldout_ll_arena_style4={mean['arena_style4']:.4f} "
          f"vibes_beat_arena_style4_splits={beats_arena}")


if __name__ == "__main__":
    main()
