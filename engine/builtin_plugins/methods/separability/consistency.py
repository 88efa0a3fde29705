"""Rating consistency (Ghosh et al.): does one rater, shown N sampled output pairs of the same input,
prefer the same model every time?

For a rater's set of preferences r ∈ {−1, 0, +1} (one model, neither, the other): c = 0 when the set holds
both −1 and +1, else c = mean |r|. An instance's consistency is the mean over its raters. The measure does
not depend on which model is called +1, so it is immune to the undocumented sign convention of the
published MTurk files.
"""

from __future__ import annotations

import csv
import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


def consistency(ratings: Sequence[int]) -> float:
    if not ratings:
        raise ValueError("no ratings")
    if 1 in ratings and -1 in ratings:
        return 0.0
    return sum(abs(r) for r in ratings) / len(ratings)


def preference_strength(ratings: Sequence[int]) -> float:
    return sum(ratings) / len(ratings)


@dataclass(frozen=True)
class RaterSet:
    instance: str  # a hash of the shown outputs: the same HIT shown to several raters
    rater: str
    ratings: tuple[int, ...]  # +1: the first model of the pair, −1: the second, 0: neither


def load_mturk(path: Path, n: int = 5) -> list[RaterSet]:
    """The separability paper's MTurk CSV: `Input.id{i}` says which model sits in the model1 slot of item i,
    `Answer.pref{i}` is the rater's choice between the slots."""
    out = []
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            shown = "\0".join(row[f"Input.model{s}_summary{i}"] for i in range(1, n + 1) for s in (1, 2))
            ratings = tuple(int(row[f"Answer.pref{i}"]) * (1 if row[f"Input.id{i}"] == "1" else -1)
                            for i in range(1, n + 1))
            out.append(RaterSet(hashlib.sha256(shown.encode()).hexdigest()[:12], row["WorkerId"], ratings))
    return out


def instance_consistency(sets: Sequence[RaterSet]) -> dict[str, float]:
    by_instance: dict[str, list[float]] = defaultdict(list)
    for s in sets:
        by_instance[s.instance].append(consistency(s.ratings))
    return {instance: sum(v) / len(v) for instance, v in by_instance.items()}
