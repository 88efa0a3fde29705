"""How well the offline reference-similarity judge tracks Vibe-Eval's official judge (Reka Core).

The 3,476 recorded answers of 13 models to the 269 Vibe-Eval prompts (../shared/data/vibe_eval/, through
specs/vibe-eval.yaml) are rated 1–5 against their references by the engine's offline reference judge, run
through the normal plan → execute → analyze path with a fresh cache. Compared with Reka Core's recorded
ratings of the same answers:

- item level: Spearman's ρ over every (prompt, model) rating;
- model level: Kendall's τ between the 13 models' score percentages.

Intervals are percentile bootstraps over prompts (1,000 seeded rounds). Side by side, from the same run:
each of the judge's three signals alone, TF-IDF cosine to the reference (the issue's baseline), and the
learned judge in the reference role (`kind: learned`, its own `fit_ratings`): each model's answers rated by a
fit to Reka Core's ratings of the other twelve models' answers, so its τ says how it orders models it never
saw. Targets: ρ ≥ 0.45, τ ≥ 0.7.

Last line: item_spearman=<float> model_kendall=<float> learned_tau_models_out=<float>
  learned_spearman_models_out=<float> tfidf_tau=<float>
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path

import numpy as np
import sizes
from scipy.stats import kendalltau, spearmanr
from sklearn.feature_extraction.text import TfidfVectorizer

from engine.analyze.outcomes import subset_of
from engine.api.judging import AnswerToRate
from engine.builtin_plugins.judges.learned.ratings import fit_ratings
from engine.builtin_plugins.methods.reference.analysis import analyze_reference
from engine.execute.cache import Cache
from engine.execute.run import execute
from engine.judges.verdicts import RatingScore
from engine.pipeline import prepare
from engine.planner import compile_plan
from engine.records import Prepared

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = sizes.pick(1000, 20)


def reference_only(prepared: Prepared) -> Prepared:
    spec = prepared.spec
    spec = dataclasses.replace(spec, analyses={"reference": spec.analyses["reference"]})
    return Prepared(spec, prepared.items, compile_plan(spec, prepared.items))


def agreement(score: np.ndarray, reka: np.ndarray, models: np.ndarray, rows: np.ndarray) -> tuple[float, float]:
    """(ρ over the rows, τ over per-model means of the rows)."""
    names = np.unique(models[rows])
    ours = [score[rows][models[rows] == m].mean() for m in names]
    theirs = [reka[rows][models[rows] == m].mean() for m in names]
    return float(spearmanr(score[rows], reka[rows]).statistic), float(kendalltau(ours, theirs).statistic)


def interval(values: np.ndarray) -> str:
    low, high = np.percentile(values, [2.5, 97.5])
    return f"({low:.2f}–{high:.2f})"


def by_subset(candidates: dict[str, np.ndarray], keys: list[tuple[str, str]], items: dict, texts: dict,
              reka: np.ndarray, models: np.ndarray) -> None:
    """Each difficulty on its own (Vibe-Eval's hard and normal prompts): the judge, whose equal weights saw no
    data, beside weights fitted on the other subset (least squares on Reka Core's ratings), each signal alone,
    TF-IDF, and answer length as a trivial baseline."""
    subset = np.array([subset_of(items[k[0]].difficulty) for k in keys])
    signals = np.column_stack([candidates[name] for name in SIGNAL_ROWS])
    length = np.array([len(texts[k].split()) for k in keys], dtype=float)
    print(f"\n{'subset':8s} {'scorer':42s} {'item ρ':>7s} {'model τ':>8s}")
    for name in ("normal", "hard"):
        rows, other = np.flatnonzero(subset == name), np.flatnonzero(subset != name)
        design = np.column_stack([signals[other], np.ones(len(other))])
        weights = np.linalg.lstsq(design, reka[other], rcond=None)[0][:-1]
        scorers = {"offline reference judge (equal weights)": candidates["offline reference judge"],
                   "weights fitted on the other subset": signals @ weights,
                   **{f"  {label.strip()}": candidates[label] for label in SIGNAL_ROWS},
                   "TF-IDF cosine (baseline)": candidates["TF-IDF cosine (baseline)"],
                   "answer length in words (baseline)": length}
        for label, score in scorers.items():
            rho, tau = agreement(score, reka, models, rows)
            print(f"{name:8s} {label:42s} {rho:7.3f} {tau:8.3f}")
        print(f"{name:8s} fitted weights (BERTScore, key terms, cosine): "
              + ", ".join(f"{w:.2f}" for w in weights / np.abs(weights).sum()))


SIGNAL_ROWS = ("  its BERTScore recall alone", "  its key-term recall alone", "  its MiniLM cosine alone")


def main() -> None:
    spec = sizes.spec(ROOT / "specs" / "vibe-eval.yaml", "datasets: {vibe-eval: {limit: 8}}\n")
    prepared = reference_only(prepare(spec))
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        with Cache(Path(tmp) / "cache.sqlite") as cache:
            execute(prepared, Path(tmp) / "run", cache, quiet=True)
            finished = cache.get_many(t.id for t in prepared.plan.tasks)
        elapsed = time.perf_counter() - start
    result = analyze_reference(prepared, prepared.spec.analyses["reference"], finished)
    rated = [r for r in result.ratings if r.rating is not None and r.recorded is not None]
    print(f"{len(rated)} answers of {len(result.scores)} models rated in {elapsed:.0f} s ({result.judge_label})")

    print(f"\n{'model':40s} {'Reka Core %':>11s} {'offline %':>10s}  (95% interval)")
    for s in sorted(result.scores, key=lambda s: -s.recorded[0].score):
        ours = s.subsets[0]
        print(f"{s.model:40s} {s.recorded[0].score:11.1f} {ours.score:10.1f}  ({ours.ci_low:.1f}–{ours.ci_high:.1f})")

    details = {(r.item_id, r.model): r for r in rated}
    out = {t.request["output"]: finished[t.id].output for t in prepared.plan.tasks if t.request["kind"] == "rate"}
    texts = {(b.item, m): str(finished[g].output) for b in prepared.plan.bindings["reference"]
             for m, (g,) in b.outputs.items()}
    signals = {(b.item, m): RatingScore.from_json(out[g]).signals for b in prepared.plan.bindings["reference"]
               for m, (g,) in b.outputs.items()}
    keys = sorted(details)
    items = {i.id: i for i in prepared.items["vibe-eval"]}
    reka = np.array([details[k].recorded for k in keys], float)
    models = np.array([k[1] for k in keys])
    item_of = np.array([k[0] for k in keys])
    tfidf = TfidfVectorizer().fit([i.reference for i in items.values()] + [texts[k] for k in keys])
    refs, answers = tfidf.transform([items[k[0]].reference for k in keys]), tfidf.transform([texts[k] for k in keys])
    candidates = {
        "offline reference judge": np.array([details[k].rating for k in keys], float),
        "  its BERTScore recall alone": np.array([signals[k]["bertscore_recall"] for k in keys]),
        "  its key-term recall alone": np.array([signals[k]["key_term_recall"] for k in keys]),
        "  its MiniLM cosine alone": np.array([signals[k]["cosine"] for k in keys]),
        "TF-IDF cosine (baseline)": np.asarray(refs.multiply(answers).sum(axis=1)).ravel(),
    }
    learned = fit_ratings([AnswerToRate(items[k[0]].prompt, texts[k], items[k[0]].reference, k[0], k[1],
                                        float(details[k].recorded)) for k in keys], seed=0)
    print(f"learned judge: {learned.description}")
    candidates["learned judge, models left out"] = np.array(learned.ratings, dtype=float)
    every = np.arange(len(keys))
    prompts = np.unique(item_of)
    rows_of = {p: np.flatnonzero(item_of == p) for p in prompts}
    rng = np.random.default_rng(0)
    samples = [np.concatenate([rows_of[p] for p in rng.choice(prompts, len(prompts))]) for _ in range(ROUNDS)]
    print(f"\n{'judge':34s} {'item ρ':>7s} {'(95%)':>13s} {'model τ':>8s} {'(95%)':>13s}")
    for name, score in candidates.items():
        rho, tau = agreement(score, reka, models, every)
        boot = np.array([agreement(score, reka, models, s) for s in samples])
        print(f"{name:34s} {rho:7.3f} {interval(boot[:, 0]):>13s} {tau:8.3f} {interval(boot[:, 1]):>13s}")
    by_subset(candidates, keys, items, texts, reka, models)
    rho, tau = agreement(candidates["offline reference judge"], reka, models, every)
    learned_rho, learned_tau = agreement(candidates["learned judge, models left out"], reka, models, every)
    tfidf_tau = agreement(candidates["TF-IDF cosine (baseline)"], reka, models, every)[1]
    print("targets: item ρ ≥ 0.45, model τ ≥ 0.7")
    print(f"item_spearman={rho:.4f} model_kendall={tau:.4f} learned_tau_models_out={learned_tau:.4f} "
          f"learned_spearman_models_out={learned_rho:.4f} tfidf_tau={tfidf_tau:.4f}")


if __name__ == "__main__":
    main()
