"""People's labels of pairs, as files and dataset columns hold them: which answer sits higher on a vibe, or
neither. A label is a verdict on the judges' scale: +1 when answer A sits higher, −1 when B does, 0 for neither.
Files are shaped as Inspect Scout's validation sets (`id,label_<vibe>,...,split`, with who labelled); the
explorer's label view writes them. Every bad value is a `DatasetError` naming the file, the line and the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from engine.datasets import DatasetError
from engine.datasets.files import located_rows
from engine.names import did_you_mean
from engine.spec.data_model import Dataset

LABEL_PREFIX = "label_"
SPLITS = ("dev", "test")  # a label teaches or checks: a learned judge fits dev labels, figures read test ones
STRATA = ("", "random", "uncertain")
WORDS = {"a": 1, "b": -1, "neither": 0, "tie": 0, "same": 0, "1": 1, "+1": 1, "-1": -1, "0": 0}


@dataclass(frozen=True)
class HumanLabel:
    """One person's verdict on one vibe of one pair, and whether it teaches a judge (dev) or checks it (test)."""

    pair: str  # the pair's prompt id (the explorer's id)
    vibe: str
    verdict: int  # +1 A higher, −1 B higher, 0 neither
    labeller: str
    split: str  # dev | test | "" (none given: assigned by `assign_splits`)
    where: str = ""  # file:line, for messages
    # how the pair came to be labelled: "" (a random sample, as every estimate needs) or "uncertain" (chosen where a
    # learned judge was least sure: it teaches that judge and no estimate reads it)
    stratum: str = ""


def read_labels(path: Path, vibes: Sequence[str], model_a: str, model_b: str,
                several: bool = False) -> list[HumanLabel]:
    """This comparison's labels in a labels file (CSV or JSON lines): `id`, one `label_<vibe>` column per vibe,
    and optionally `split` (dev or test), `labeller` (else the file's name), `model_a`, `model_b` (the
    comparison the label's a and b are; the label view writes them) and `stratum` (random, or uncertain for a
    pair chosen where a learned judge was least sure: a dev label that only teaches). A value is a, b or
    neither (also tie, +1, −1, 0, or a model's name); an empty one is no label. A row for another comparison is
    skipped, one for this comparison in the other order is turned round, and where the analysis makes `several`
    comparisons (a `reference`) a row that does not say which is an error: its a and b would be read against every
    one.
    Anything else is a `DatasetError` naming the file, the line and the field; a vibe the analysis does not
    measure is one too."""
    labels = []
    for where, row in located_rows(path):
        pair = row.get("id")
        if pair is None or str(pair).strip() == "":
            raise DatasetError(f"{where}: field 'id' is missing: each label names the pair it is for")
        orientation = _orientation(row, where, model_a, model_b, several)
        if orientation == 0:
            continue
        split = str(row.get("split") or "").strip().lower()
        if split not in ("", *SPLITS):
            raise DatasetError(f"{where}: field 'split' holds {_shown(split)}: dev or test (or empty)")
        stratum = str(row.get("stratum") or "").strip().lower()
        if stratum not in STRATA:
            raise DatasetError(f"{where}: field 'stratum' holds {_shown(stratum)}: random or uncertain (or empty)")
        stratum = "" if stratum == "random" else stratum
        if stratum and split == "test":
            raise DatasetError(f"{where}: field 'split' is test, but a pair chosen where a judge was least sure "
                               "(stratum uncertain) is no random sample: it can only teach (dev)")
        split = "dev" if stratum else split
        labeller = str(row.get("labeller") or "").strip() or path.stem
        for key, value in row.items():
            if not key.startswith(LABEL_PREFIX) or value is None or str(value).strip() == "":
                continue
            vibe = key[len(LABEL_PREFIX):]
            if vibe not in vibes:
                raise DatasetError(f"{where}: field {_shown(key)} names no vibe this analysis measures"
                                   f"{did_you_mean(vibe, vibes)} ({', '.join(vibes)})")
            verdict = _verdict(value, (model_a, model_b), where, key, orientation)
            labels.append(HumanLabel(str(pair), vibe, verdict, labeller, split, where, stratum))
    return labels


def _orientation(row: Mapping[str, object], where: str, model_a: str, model_b: str, several: bool) -> int:
    """+1 where a row's a and b are this comparison's, −1 where they are its models the other way round, 0 for
    a row of another comparison; see `read_labels`."""
    named = [str(row.get(key) or "").strip() for key in ("model_a", "model_b")]
    if not any(named):
        if several:
            raise DatasetError(f"{where}: fields 'model_a' and 'model_b' are missing: this analysis compares "
                               "several pairs of models, so each label says which two its a and b are")
        return 1
    if not all(named):
        missing = "model_a" if not named[0] else "model_b"
        raise DatasetError(f"{where}: field {missing!r} is missing: a label names both models or neither")
    if named == [model_a, model_b]:
        return 1
    return -1 if named == [model_b, model_a] else 0


def read_columns(dataset: Dataset, columns: Sequence[Mapping[str, str]], vibes: Sequence[str], model_a: str,
                 model_b: str) -> list[HumanLabel]:
    """Labels a dataset ships in its own columns (`validation.columns`: each a `vibe`, the `column` and who
    wrote it, `labeller`), one row per prompt, keyed as the dataset keys its prompts. A value reads as in a
    labels file, or as a pair of scores [A's, B's] (the higher one sits higher; equal is neither)."""
    from engine.datasets.rows import field_value
    from engine.datasets.tidy import key_of

    labels = []
    for entry in columns:
        if entry["vibe"] not in vibes:
            raise DatasetError(f"validation.columns: vibe {entry['vibe']!r} is not one this analysis measures"
                               f"{did_you_mean(entry['vibe'], vibes)} ({', '.join(vibes)})")
        for path in dataset.source.paths:
            for where, row in located_rows(path):
                value = field_value(row, entry["column"])
                if value is None or str(value).strip() == "":
                    continue
                verdict = _verdict(value, (model_a, model_b), where, entry["column"])
                labels.append(HumanLabel(key_of(dataset, row, where), entry["vibe"], verdict,
                                         entry.get("labeller") or entry["column"], "", where))
    return labels


SCORE_PAIR = re.compile(r"^\[\s*(-?[0-9.]+)\s*,\s*(-?[0-9.]+)\s*\]$")


def _verdict(value: object, models: tuple[str, str], where: str, field_name: str, orientation: int = 1) -> int:
    """A label's value as −1/0/+1 (see `read_labels` and `read_columns`), or a `DatasetError` at its place. Its a
    and b are turned round where `orientation` is −1; a model's name needs no turning."""
    text = str(value).strip().lower()
    verdict = WORDS.get(text)
    if verdict is None and (pair := SCORE_PAIR.match(text)):
        a, b = float(pair.group(1)), float(pair.group(2))
        verdict = (a > b) - (a < b)
    if verdict is not None:
        verdict *= orientation
    else:
        verdict = {models[0].lower(): 1, models[1].lower(): -1}.get(text)
    if verdict is None:
        raise DatasetError(f"{where}: field {_shown(field_name)} holds {_shown(text)}: a, b or neither "
                           f"(or {models[0]} / {models[1]}, or scores [A's, B's])")
    return verdict


def _shown(text: str, most: int = 60) -> str:
    """A value from a file, quoted and cut, for a one-line message."""
    return repr(text if len(text) <= most else text[:most] + "…")


def assign_splits(labels: list[HumanLabel], clusters: dict[str, str], dev: float, seed: int) -> list[HumanLabel]:
    """Labels without a split get one: a seeded split of the labelled prompts (conversations), so every label of
    one prompt lands on the same side."""
    units = sorted({clusters.get(label.pair, label.pair) for label in labels if not label.split})
    from engine import stats  # scipy comes with it: reading labels at `vibe validate` stays light

    on_dev = set(stats.split(units, dev, seed)[0])
    return [label if label.split else replace(label, split="dev" if clusters.get(label.pair, label.pair) in on_dev
                                              else "test") for label in labels]
