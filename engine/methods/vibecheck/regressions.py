"""The held-out regressions' inputs and fits: each pair's vibe strengths (cross-fitted where a lexicon was mined
from the training pairs), which kept vibes enter the regressions, and the model-matching and preference fits
scored on the test pairs."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine import stats
from engine.methods.vibecheck import heldout
from engine.methods.vibecheck.options import Regression
from engine.methods.vibecheck.records import PairVerdicts


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
    if any(p.conversation for p in test):
        notes.append(CLUSTERED_FITS)
    mm = heldout.cached_fit(heldout.model_matching, kept, features.matrix(train, kept), features.matrix(test, kept),
                            features.length(train), features.length(test), seed, *_clusters(test))
    labelled_train = [p for p in train if p.preference not in (None, "tie")]
    labelled_test = [p for p in test if p.preference not in (None, "tie")]
    pp = None
    if labelled_train and labelled_test:
        try:
            pp = heldout.cached_fit(
                heldout.preference, kept, features.matrix(labelled_train, kept),
                np.array([p.preference == model_a for p in labelled_train], dtype=float),
                features.matrix(labelled_test, kept),
                np.array([p.preference == model_a for p in labelled_test], dtype=float),
                features.length(labelled_train), features.length(labelled_test), seed, *_clusters(labelled_test))
        except ValueError as exc:
            notes.append(str(exc))
    else:
        notes.append("No preference labels on both splits, so preference prediction was skipped.")
    return mm, pp


CLUSTERED_FITS = ("The pairs are turns of conversations: the split keeps a conversation's turns together and the "
                  "gain over the rule resamples conversations, but the Wilson intervals and the refit's p-values "
                  "count turns as independent, so they are narrower than the data supports.")


def _clusters(pairs: list[PairVerdicts]) -> list[list[str]]:
    """Turns of conversations: the extra argument that makes the gain's bootstrap resample conversations."""
    return [[p.cluster for p in pairs]] if any(p.conversation for p in pairs) else []
