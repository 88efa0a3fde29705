"""Held-out VibeCheck accuracy beside its baselines, with offline statistical discovery.

Arena: 1,415 unique battles of Llama-3-70B-Instruct against top proprietary models with the human vote
(specs/llama-vs-gpt.yaml, read from ../shared/data/arena/). AlpacaEval: two of its annotation files in
../shared/data/alpaca_eval/ (GPT-4-Turbo's verdicts on 805 instructions: Mixtral-8x7B-Instruct and
gpt-3.5-turbo-1106 each against gpt4_1106_preview; labels written by an LLM judge, not people).

For each seeded 50/50 split: discovery sees only the training half and proposes at most 10 vibes; each is
scored on every pair by its judge, and enters the regressions as the analysis builds them (a metric vibe as
its signed strength, a cluster as its verdict, a mined lexicon cross-fitted on the training pairs). Model
matching and preference prediction are chosen and fitted on the training half (each pair once, Firth's
penalized likelihood; the preference model starts as the length rule pointed the way the training half
favours, admits the intercept or length and then a vibe only through the calibrated score test, and leaves the
rule only where that procedure, cross-fitted on the training half, predicts better) and scored on the test half
beside the rules on the same test pairs:

- length_only_acc: "the longer answer wins", literally (more characters wins; equal lengths go to the training
  majority): length alone, as its name says;
- length_fit_acc: a logistic curve on the log length ratio with an intercept, fitted on the training half (what
  earlier versions called "length alone", and which can do worse than the rule);
- gain_over_length: the preference model's accuracy minus the rule's, averaged over the Arena splits (each
  split's 95% bootstrap interval over test pairs is printed); alpaca_gain_over_length: the same over the
  AlpacaEval sets and their splits. The target is a gain of at least 0 on average;
- below_rule_splits: splits (of all sets) whose gain is below 0 by more than its own noise: the upper end of
  the gain's 95% paired bootstrap interval over test pairs under 0. Target 0.

Paper (GPT-4-class judges): 80% / 61%.

Last line: model_matching_acc=<f> preference_acc=<f> n_vibes=<int> length_only_acc=<f> gain_over_length=<f>
  length_fit_acc=<f> alpaca_gain_over_length=<f> below_rule_splits=<int>
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from sizes import pick, positional

from engine import stats
from engine.builtin_plugins.methods.vibecheck import heldout
from engine.builtin_plugins.methods.vibecheck.discovery import statistical as discovery
from engine.judges.metrics import PHRASES_PREFIX
from engine.pipeline import prepare
from engine.spec.model import Vibe

ROOT = Path(__file__).resolve().parent.parent
ALPACA = ROOT.parent / "shared" / "data" / "alpaca_eval"
ARENA_SPLITS = positional(0, pick(10, 1))
ALPACA_SPLITS = positional(1, pick(10, 1))
PAIRS = pick(None, 80)  # the first pairs of each set (smoke: enough for both regressions to fit)
# (annotator, model) of each AlpacaEval set; the smoke run reads the weighted annotator's, whose probabilities
# take the one path the other set does not (a preference read by which side of 1.5 it falls)
ALPACA_SETS = pick([("alpaca_eval_gpt4_turbo_fn", "Mixtral-8x7B-Instruct-v0.1"),
                    ("weighted_alpaca_eval_gpt4_turbo", "gpt-3.5-turbo-1106")],
                   [("weighted_alpaca_eval_gpt4_turbo", "gpt-3.5-turbo-1106")])
MAX_VIBES = 10


def features(vibes: list[Vibe], train: list[discovery.TrainingPair], test: list[discovery.TrainingPair],
             crossfit: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """What the regressions read, as the vibecheck analysis builds it."""
    def column(vibe: Vibe, pairs: list[discovery.TrainingPair], fitted: bool) -> np.ndarray:
        if fitted and (vibe.metric or "").startswith(PHRASES_PREFIX):
            return crossfit[vibe.name]
        return discovery.judged_columns(vibe, pairs)[1]  # the regressions' column: strength, or the verdict

    shape = (len(train), 0), (len(test), 0)
    if not vibes:
        return np.zeros(shape[0]), np.zeros(shape[1])
    return (np.column_stack([column(v, train, True) for v in vibes]),
            np.column_stack([column(v, test, False) for v in vibes]))


def length(pairs: list[discovery.TrainingPair]) -> np.ndarray:
    return stats.length_covariate(np.array([len(p.output_a) for p in pairs]),
                                    np.array([len(p.output_b) for p in pairs]))


def evaluate(name: str, pairs: list[discovery.TrainingPair], a: str, b: str, splits: int) -> dict[str, list]:
    ids = [str(n) for n in range(len(pairs))]
    print(f"{name}: {len(pairs)} pairs; {a} preferred in {np.mean([p.a_preferred for p in pairs]):.1%}", flush=True)
    out: dict[str, list] = {k: [] for k in ("mm", "mm_length", "pp", "pp_length", "pp_fit", "pp_vibes", "majority",
                                            "gain", "gain_high", "n_vibes", "chosen", "admitted")}
    start = time.perf_counter()
    for seed in range(splits):
        train_ids, test_ids = stats.split(ids, 0.5, seed)
        train = [pairs[int(i)] for i in train_ids]
        test = [pairs[int(i)] for i in test_ids]
        vibes = [c.vibe for c in discovery.discover(train, a, b, MAX_VIBES, clusters=True, seed=seed)]
        names = [v.name for v in vibes]
        crossfit = {name: s for name, (s, _) in discovery.crossfit_lexicon_scores(train, a, b, seed).items()}
        x_train, x_test = features(vibes, train, test, crossfit)
        mm = heldout.model_matching(names, x_train, x_test, length(train), length(test), seed)
        y_train, y_test = (np.array([p.a_preferred for p in half], float) for half in (train, test))
        pp = heldout.preference(names, x_train, y_train, x_test, y_test, length(train), length(test), seed)
        admitted = [f for f in pp.features if f != heldout.RULE_TERM]
        admitted += [heldout.INTERCEPT] if pp.intercept is not None else []
        for key, value in (("mm", mm.test_accuracy), ("mm_length", mm.baseline(heldout.RULE).accuracy),
                           ("pp", pp.test_accuracy), ("pp_length", pp.baseline(pp.rule).accuracy),
                           ("pp_fit", pp.baseline(heldout.LENGTH_FIT).accuracy),
                           ("pp_vibes", pp.baseline(heldout.VIBES_ALONE).accuracy),
                           ("majority", pp.baseline(heldout.MAJORITY).accuracy), ("gain", pp.gain_over_rule),
                           ("gain_high", pp.gain_ci_high),
                           ("n_vibes", len(vibes)), ("chosen", names), ("admitted", admitted)):
            out[key].append(value)
        print(f"  split {seed}: model matching {mm.test_accuracy:.3f} (longer-answer rule {out['mm_length'][-1]:.3f}); "
              f"preference {pp.test_accuracy:.3f} ({pp.rule} {out['pp_length'][-1]:.3f}, gain "
              f"{pp.gain_over_rule:+.3f} [{pp.gain_ci_low:+.3f}, {pp.gain_ci_high:+.3f}]; length logistic fit "
              f"{out['pp_fit'][-1]:.3f}, vibes alone {out['pp_vibes'][-1]:.3f}, majority {out['majority'][-1]:.3f}); "
              f"admitted beyond the rule: {', '.join(admitted) or 'nothing'}", flush=True)
    print(f"  {splits} splits in {time.perf_counter() - start:.1f} s")
    for key, label in (("mm", "model matching"), ("mm_length", "  longer-answer rule"), ("pp", "preference"),
                       ("pp_length", "  longer answer wins"), ("pp_fit", "  length logistic fit"),
                       ("pp_vibes", "  vibes alone"), ("majority", "  majority class"),
                       ("gain", "  gain over the rule")):
        print(f"  {label:18s} {np.mean(out[key]):.4f} ± {np.std(out[key]):.4f}")
    chosen = Counter(name for names in out["chosen"] for name in names)
    print("  vibes chosen (splits):", ", ".join(f"{k} ({v})" for k, v in chosen.most_common()))
    return out


def alpaca_pairs(annotator: str, model: str) -> list[discovery.TrainingPair]:
    """gpt4_1106_preview (output_1) against `model` (output_2); preference 1 → output_1, 2 → output_2 (the
    weighted annotator's probabilities are read by which side of 1.5 they fall; exact halves are ties, left out)."""
    rows = json.loads((ALPACA / model / annotator / "annotations.json").read_text(encoding="utf-8"))
    return [discovery.TrainingPair(r["output_1"], r["output_2"], float(r["preference"]) < 1.5) for r in rows
            if r.get("preference") is not None and float(r["preference"]) != 1.5][:PAIRS]


def main() -> None:
    prepared = prepare(ROOT / "specs" / "llama-vs-gpt.yaml")
    a, b = "llama-3-70b-instruct", "opponent"
    arena = [discovery.TrainingPair(it.outputs[a], it.outputs[b], it.preference == a)
             for it in prepared.items["arena"]][:PAIRS]
    result = evaluate("Arena (human votes)", arena, a, b, ARENA_SPLITS)
    alpaca_gains = []
    below = sum(high < 0 for high in result["gain_high"])
    for annotator, model in ALPACA_SETS:
        alpaca = evaluate(f"AlpacaEval {model} (LLM-judge labels, {annotator})", alpaca_pairs(annotator, model),
                          "gpt4_1106_preview", model, ALPACA_SPLITS)
        alpaca_gains += alpaca["gain"]
        below += sum(high < 0 for high in alpaca["gain_high"])
    print(f"model_matching_acc={np.mean(result['mm']):.4f} preference_acc={np.mean(result['pp']):.4f} "
          f"n_vibes={max(result['n_vibes'])} length_only_acc={np.mean(result['pp_length']):.4f} "
          f"gain_over_length={np.mean(result['gain']):.4f} length_fit_acc={np.mean(result['pp_fit']):.4f} "
          f"alpaca_gain_over_length={np.mean(alpaca_gains):.4f} below_rule_splits={below}")


if __name__ == "__main__":
    sys.exit(main())
