"""People in `vibe compare`: what people's labels say of the panel that measures the drift.

Two sources. The runs themselves: a run whose spec gave `validation` labels wrote, per comparison, how its
panel agreed with people (`engine.analyze.people.FILE`); a vibe flagged there is flagged beside its shift.
And labels of the compared pairs (`vibe compare --labels FILE`, one model slot): people said, per prompt,
whether the base's answer (a) or the head's (b) sits higher on a vibe. Against them the panel's verdicts give
its agreement and κ on these very pairs, and the shift as people would read it over every shared prompt, by
prediction-powered inference: the labels corrected by the panel's verdicts on the pairs nobody labelled.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from engine.analyze.people import FILE, Corrected, PeopleAgreement, agreement_with_people, corrected_separability
from engine.analyze.people_labels import HumanLabel, read_labels

SPLIT = "all"  # compare's labels tune no judge: every one checks the panel


@dataclass
class PeopleShift:
    """One vibe of one slot against people's labels of its compared pairs. Both figures are in the shift's
    orientation: +1 where the head's answer sits higher."""

    vibe: str
    agreement: PeopleAgreement
    corrected: Corrected | None  # the shift people would read over every shared prompt (PPI++), with the labels alone


def read_compare_labels(paths: list[Path], vibes: list[str], base: str, head: str) -> list[HumanLabel]:
    """Labels of the compared pairs: a (or `base`) is the base run's answer, b (or `head`) the head's. Turned to
    the shift's orientation (+1: the head's answer higher)."""
    labels = [label for path in paths for label in read_labels(path, vibes, base, head)]
    return [replace(label, verdict=-label.verdict, split=SPLIT) for label in labels]


def people_shifts(labels: list[HumanLabel], item_ids: list[str], nu: np.ndarray, vibes: list[str],
                  clusters: list[str] | None) -> list[PeopleShift]:
    """For every vibe with labels, the panel's verdicts (`nu`: one row per item, +1 where the base sits higher)
    against the people's."""
    units = dict(zip(item_ids, clusters, strict=True)) if clusters else {}
    out = []
    for j, vibe in enumerate(vibes):
        mine = [label for label in labels if label.vibe == vibe]
        if not mine:
            continue
        verdicts = {i: -int(v) for i, v in zip(item_ids, nu[:, j], strict=True) if not np.isnan(v)}
        out.append(PeopleShift(vibe, agreement_with_people(mine, verdicts, units, vibe, "panel", SPLIT, seed=0),
                               corrected_separability(mine, verdicts, units, vibe)))
    return out


def flagged_in(folder: Path, analysis: str) -> dict[str, str]:
    """Each vibe whose panel people's labels flagged in a run (any comparison of its panel analysis), with why
    and where."""
    out: dict[str, str] = {}
    for path in sorted((folder / analysis).rglob(FILE)):
        for vibe, why in json.loads(path.read_text(encoding="utf-8")).get("flagged", {}).items():
            out.setdefault(vibe, f"{why} ({path.parent.relative_to(folder)} in {folder})")
    return out
