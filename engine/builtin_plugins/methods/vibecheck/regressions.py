"""The held-out regressions' inputs and fits: each pair's vibe strengths (cross-fitted where a lexicon was mined
from the training pairs), which kept vibes enter the regressions, and the model-matching and preference fits
scored on the test pairs."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from engine.api.analysis import stats
from engine.builtin_plugins.methods.vibecheck import heldout
from engine.builtin_plugins.methods.vibecheck.options import Regression
from engine.builtin_plugins.methods.vibecheck.records import PairVerdicts, one_label_each


@dataclass(frozen=True)
class Features:
    """The regressions' inputs, pair by pair: each vibe's strength (cross-fitted where a lexicon was mined
    from the training pairs) and the length covariate."""

    pairs: list[PairVerdicts]
    crossfit: dict[str, dict[str, float]]
    # each vibe's value on every pair, read once: the selection and both fits read the same values many times
    _columns: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False, compare=False)
    _rows: dict[int, int] = field(default_factory=dict, init=False, repr=False, compare=False)

    def split(self, name: str) -> list[PairVerdicts]:
        return [p for p in self.pairs if p.split == name]

    def matrix(self, subset: list[PairVerdicts], vibes: list[str]) -> np.ndarray:
        """`subset` (pairs of `pairs`) × `vibes`."""
        if not self._rows:
            self._rows.update((id(p), row) for row, p in enumerate(self.pairs))
        rows = np.array([self._rows[id(p)] for p in subset], dtype=np.intp)
        out = np.empty((len(subset), len(vibes)))
        for j, vibe in enumerate(vibes):
            out[:, j] = self._column(vibe)[rows]
        return out

    def _column(self, vibe: str) -> np.ndarray:
        if vibe not in self._columns:
            lexicon = self.crossfit.get(vibe, {})
            self._columns[vibe] = np.array([lexicon.get(p.item_id, p.feature(vibe)) if p.split == "train"
                                            else p.feature(vibe) for p in self.pairs], dtype=float)
        return self._columns[vibe]

    def complete(self, subset: list[PairVerdicts], vibes: list[str]) -> list[PairVerdicts]:
        """The pairs with a value for every one of `vibes`: a pair no judge could score on a vibe is missing
        from a fit that reads that vibe, never a 0."""
        finite = np.all(np.isfinite(self.matrix(subset, vibes)), axis=1)
        return [p for p, ok in zip(subset, finite, strict=True) if ok]

    @staticmethod
    def length(subset: list[PairVerdicts]) -> np.ndarray:
        return stats.length_covariate(np.array([p.chars[0] for p in subset]), np.array([p.chars[1] for p in subset]))


def select_vibes(kept: list[str], features: Features,
                 regression: Regression) -> tuple[list[str], str, dict[str, str]]:
    """The kept vibes that enter the regressions: VibeCheck's top-k by least-angle regression on model
    identity (the default), or all of them."""
    top = regression.top
    if regression.select == "all" or len(kept) <= top:
        how = "every kept vibe" if regression.select == "all" else f"every kept vibe ({len(kept)} ≤ top {top})"
        return kept, how, {}
    train = features.complete(features.split("train"), kept)
    order = heldout.lars_order(features.matrix(train, kept), kept)[:top]
    chosen = [v for v in kept if v in order]
    dropped = {v: f"kept, but not among the first {top} to enter the least-angle regression path"
               for v in kept if v not in order}
    return chosen, (f"the first {top} of {len(kept)} kept vibes to enter a least-angle regression path "
                    "predicting model identity on the training pairs (VibeCheck's top-k step)"), dropped


def fit_regressions(kept: list[str], features: Features, model_a: str, notes: list[str],
                    seed: int) -> tuple[heldout.HeldOutFit | None, heldout.HeldOutFit | None]:
    if not kept:
        notes.append("No vibe passed validation, so no regression was fitted.")
        return None, None
    every_train, every_test = features.split("train"), features.split("test")
    train, test = features.complete(every_train, kept), features.complete(every_test, kept)
    if len(train) + len(test) < len(every_train) + len(every_test):
        notes.append(f"{len(every_train) - len(train)} training and {len(every_test) - len(test)} test pair(s) have no "
                     "readable verdict on a vibe of the regressions and are left out of them (missing, not ties).")
    if not test:
        notes.append("The split leaves no test pairs, so nothing is held out and no regression is scored.")
        return None, None
    conversations = any(p.conversation for p in train + test)
    if conversations:
        notes.append(CONVERSATION_ROWS)
    mm_train, mm_test = (_rows(features, pairs, kept, model_a, conversations) for pairs in (train, test))
    mm = heldout.cached_fit(heldout.model_matching, kept, mm_train.x, mm_test.x, mm_train.length, mm_test.length, seed)
    if conversations:
        mm = replace(mm, unit="conversations")
    labelled_train = [p for p in train if p.preference not in (None, "tie")]
    labelled_test = [p for p in test if p.preference not in (None, "tie")]
    pp = None
    if labelled_train and labelled_test:
        whole = one_label_each((p.cluster, p.preference) for p in labelled_train + labelled_test)
        train_rows, test_rows = (_rows(features, pairs, kept, model_a, conversations and whole)
                                 for pairs in (labelled_train, labelled_test))
        per_turn = conversations and not whole
        if conversations:
            notes.append(TURN_LABELS if per_turn else CONVERSATION_LABELS)
        try:
            pp = heldout.cached_fit(
                heldout.preference, kept, train_rows.x, train_rows.y, test_rows.x, test_rows.y, train_rows.length,
                test_rows.length, seed, test_rows.clusters if per_turn else None,
                train_rows.clusters if per_turn else None)
        except ValueError as exc:
            notes.append(str(exc))
        if pp is not None and conversations and whole:
            pp = replace(pp, unit="conversations")
    else:
        notes.append("No preference labels on both splits, so preference prediction was skipped.")
    return mm, pp


CONVERSATION_ROWS = ("The pairs are turns of conversations. Model matching is fitted on one row per conversation "
                     "(its turns' vibe values and length averaged), so its n, intervals and p-values count "
                     "conversations.")
CONVERSATION_LABELS = ("Each conversation carries one preference label on all its turns, so preference is fitted on "
                       "one row per conversation as well (its turns' values averaged): admission, folds, intervals "
                       "and p-values count conversations.")
TURN_LABELS = ("Preference labels differ between a conversation's turns, so preference is fitted on turns: admission "
               "draws its null and cuts its folds by conversation, the intervals resample conversations, and the "
               "refit prints no p-values (its tests would count turns as independent).")


@dataclass(frozen=True)
class Rows:
    """What one fit reads: a row per pair, or per conversation (its turns' values averaged)."""

    x: np.ndarray  # rows × vibes
    length: np.ndarray
    y: np.ndarray  # 1 where the label went to model A
    clusters: list[str]  # each row's conversation (or pair)


def _rows(features: Features, pairs: list[PairVerdicts], vibes: list[str], model_a: str,
          per_conversation: bool) -> Rows:
    x, length = features.matrix(pairs, vibes), features.length(pairs)
    y = np.array([p.preference == model_a for p in pairs], dtype=float)
    clusters = [p.cluster for p in pairs]
    if not per_conversation:
        return Rows(x, length, y, clusters)
    units = list(dict.fromkeys(clusters))
    row = stats.cluster_index(clusters)
    counts = np.bincount(row, minlength=len(units)).astype(float)

    def means(values: np.ndarray) -> np.ndarray:
        out = np.zeros((len(units), *values.shape[1:]))
        np.add.at(out, row, values)
        out /= counts.reshape(-1, *([1] * (values.ndim - 1)))
        return out

    return Rows(means(x), means(length), means(y), units)
