"""Held-out VibeCheck accuracy on the real Chatbot Arena battles, with offline statistical discovery.

1,415 unique battles of Llama-3-70B-Instruct against top proprietary models (from specs/llama-vs-gpt.yaml,
read from ../shared/data/arena/). For each of 10 seeded 50/50 splits: discovery sees only the training
half and proposes at most 10 vibes; each vibe is scored on every pair by its judge (the metric judge, or
the embedding judge for an embedding cluster); model matching (which model wrote the first-shown output)
and preference prediction (which one people voted for) are fitted on the training half and scored on the
test half. As in the product's analysis, a phrase lexicon
mined from the training half scores those pairs cross-fitted (the lexicon mined on the other half of them).
Paper (GPT-4-class judges): 80% / 61%.
A plain logistic regression on eleven style counts reaches about 77% / 56% on this data.

Beside them, on the same splits, two references for preference prediction: length alone, and every
candidate the proposer had (all metrics, lexicons and embedding clusters, no limit of 10), which shows how
much a larger vibe set could add.

Last line: model_matching_acc=<float> preference_acc=<float> n_vibes=<int>
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from engine.analyze import discovery, stats
from engine.judges.metrics import PHRASES_PREFIX
from engine.pipeline import prepare
from engine.spec.model import Vibe

ROOT = Path(__file__).resolve().parent.parent
SPLITS = 10
MAX_VIBES = 10


def features(vibes: list[Vibe], train: list[discovery.TrainingPair], test: list[discovery.TrainingPair],
             crossfit: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Verdict matrices for the training and test pairs, as the vibecheck analysis builds them: a phrase
    lexicon mined from the training pairs scores them cross-fitted (from the other half's lexicon)."""
    x_train = np.column_stack([crossfit[v.name] if (v.metric or "").startswith(PHRASES_PREFIX)
                               else discovery.pair_scores(v, train) for v in vibes])
    return x_train, np.column_stack([discovery.pair_scores(v, test) for v in vibes])


def main() -> None:
    prepared = prepare(ROOT / "specs" / "llama-vs-gpt.yaml")
    items = prepared.items["arena"]
    a, b = "llama-3-70b-instruct", "opponent"
    pairs = [discovery.TrainingPair(it.outputs[a], it.outputs[b], it.preference == a) for it in items]
    ids = [it.id for it in items]
    position = {item_id: n for n, item_id in enumerate(ids)}
    print(f"{len(items)} battles; llama preferred in {np.mean([p.a_preferred for p in pairs]):.1%}")
    mm_acc, pp_acc, n_vibes, chosen = [], [], [], Counter()
    length_acc, all_acc, n_all = [], [], []
    start = time.perf_counter()
    for seed in range(SPLITS):
        train_ids, test_ids = stats.split(ids, 0.5, seed)
        train = [pairs[position[i]] for i in train_ids]
        test = [pairs[position[i]] for i in test_ids]
        vibes = [c.vibe for c in discovery.discover(train, a, b, MAX_VIBES, clusters=True, seed=seed)]
        names = [v.name for v in vibes]
        chosen.update(names)
        crossfit = discovery.crossfit_lexicon_scores(train, a, b, seed)
        x_train, x_test = features(vibes, train, test, crossfit)
        mm = stats.fit_logistic("model_matching", names, np.vstack([x_train, -x_train]),
                                np.r_[np.ones(len(train)), np.zeros(len(train))], np.vstack([x_test, -x_test]),
                                np.r_[np.ones(len(test)), np.zeros(len(test))])
        y_train, y_test = (np.array([p.a_preferred for p in half], float) for half in (train, test))
        pp = stats.fit_logistic("preference", names, x_train, y_train, x_test, y_test)
        everything = [c.vibe for c in discovery.candidates(train, a, b)
                      + discovery.cluster_candidates(train, a, b, seed)]
        length = next(v for v in everything if v.metric == "length_words")
        for pool, accs in (([length], length_acc), (everything, all_acc)):
            xs = features(pool, train, test, crossfit)
            accs.append(stats.fit_logistic("preference", [v.name for v in pool], xs[0], y_train, xs[1],
                                           y_test).test_accuracy)
        n_all.append(len(everything))
        mm_acc.append(mm.test_accuracy)
        pp_acc.append(pp.test_accuracy)
        n_vibes.append(len(vibes))
        print(f"split {seed}: model matching {mm.test_accuracy:.3f}, preference {pp.test_accuracy:.3f}, "
              f"{len(vibes)} vibes: {', '.join(names)}", flush=True)
    print(f"{SPLITS} splits in {time.perf_counter() - start:.1f} s")
    print(f"model matching: {np.mean(mm_acc):.3f} ± {np.std(mm_acc):.3f} (paper 0.80)")
    print(f"preference:     {np.mean(pp_acc):.3f} ± {np.std(pp_acc):.3f} (paper 0.61)")
    print(f"preference from length alone: {np.mean(length_acc):.3f} ± {np.std(length_acc):.3f}; from all "
          f"{min(n_all)}-{max(n_all)} candidates: {np.mean(all_acc):.3f} ± {np.std(all_acc):.3f}")
    print("vibes chosen (splits):", ", ".join(f"{k} ({v})" for k, v in chosen.most_common()))
    print(f"model_matching_acc={np.mean(mm_acc):.4f} preference_acc={np.mean(pp_acc):.4f} n_vibes={max(n_vibes)}")


if __name__ == "__main__":
    sys.exit(main())
