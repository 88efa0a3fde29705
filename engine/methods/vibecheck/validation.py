"""People check the judges: labels people gave pairs (which answer sits higher on a vibe, or neither), read from
files shaped as Inspect Scout's validation sets (`id,label_<vibe>,...,split`, with who labelled), compared with
every judge's verdicts and the panel's, and used to correct the panel's separability.

A label is a verdict on the judges' scale: +1 when answer A sits higher on the vibe, −1 when B does, 0 for
neither. For every vibe with labels and every judge of it (and the panel):
- agreement (share of labels the judge's verdict equals) and Cohen's κ (scikit-learn) between the judge and
  the people, each with a 95% percentile interval from bootstrap rounds that resample prompts (conversations),
  computed on the labels' dev and test splits apart: a judge prompt tuned on dev is checked on test;
- where two or more people labelled the same pairs, their leave-one-out agreement (each label against the most
  common label of the others on its pair, as AlpacaEval and MT-Bench report people's agreement) beside the
  judge's on the same pairs, computed the same way with the judge in the left-out person's place;
- a flag when the panel agrees with people less than people agree with each other, or, with one labeller,
  when its κ with people is below 0.4.

Where the labelled pairs are a random sample of the comparison's pairs, the people's separability (the mean of
their verdicts over all pairs) is estimated by prediction-powered inference, in its power-tuned form (PPI++):
the labels, corrected by the panel's verdicts on every pair nobody labelled, weighted by how well the panel
predicts the labels. Unbiased for the people's reading whatever the panel's errors, and about as narrow as
the labels alone when the panel predicts nothing, narrower when it predicts them.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from engine import stats
from engine.datasets import DatasetError
from engine.datasets.files import located_rows
from engine.methods.vibecheck.discovery.splits import split_seed
from engine.methods.vibecheck.options import VibeCheckOptions
from engine.methods.vibecheck.records import Agreement, Corrected, HumanHuman, PairVerdicts, Validation
from engine.records import Prepared
from engine.spec.data_model import Dataset
from engine.spec.model import Analysis
from engine.spec.paths import resolve_path

LABEL_PREFIX = "label_"
SPLITS = ("dev", "test")
WORDS = {"a": 1, "b": -1, "neither": 0, "tie": 0, "same": 0, "1": 1, "+1": 1, "-1": -1, "0": 0}
KAPPA_FLOOR = 0.4  # below it, with no second labeller to compare with, a judge is flagged
PANEL = "panel"
ROUNDS = 1000


@dataclass(frozen=True)
class HumanLabel:
    pair: str  # the pair's prompt id (the explorer's id)
    vibe: str
    verdict: int  # +1 A higher, −1 B higher, 0 neither
    labeller: str
    split: str  # dev | test | "" (none given: assigned by `assign_splits`)
    where: str = ""  # file:line, for messages


def read_labels(path: Path, vibes: Sequence[str], model_a: str, model_b: str) -> list[HumanLabel]:
    """Every label in a labels file (CSV or JSON lines): `id`, one `label_<vibe>` column per vibe, and optionally
    `split` (dev or test) and `labeller` (else the file's name). A value is a, b or neither (also tie, +1, −1,
    0, or a model's name); an empty one is no label. Anything else is a `DatasetError` naming the file, the line
    and the field; a vibe the analysis does not measure is one too."""
    labels = []
    names = {model_a.lower(): 1, model_b.lower(): -1}
    for where, row in located_rows(path):
        pair = row.get("id")
        if pair is None or str(pair).strip() == "":
            raise DatasetError(f"{where}: field 'id' is missing: each label names the pair it is for")
        split = str(row.get("split") or "").strip().lower()
        if split not in ("", *SPLITS):
            raise DatasetError(f"{where}: field 'split' holds {_shown(split)}: dev or test (or empty)")
        labeller = str(row.get("labeller") or "").strip() or path.stem
        for key, value in row.items():
            if not key.startswith(LABEL_PREFIX) or value is None or str(value).strip() == "":
                continue
            vibe = key[len(LABEL_PREFIX):]
            if vibe not in vibes:
                raise DatasetError(f"{where}: field {_shown(key)} names no vibe this analysis measures "
                                   f"({', '.join(vibes)})")
            labels.append(HumanLabel(str(pair), vibe, _verdict(value, names, where, key, (model_a, model_b)),
                                     labeller, split, where))
    return labels


def read_columns(dataset: Dataset, columns: Sequence[Mapping[str, str]], vibes: Sequence[str], model_a: str,
                 model_b: str) -> list[HumanLabel]:
    """Labels a dataset ships in its own columns (`validation.columns`: each a `vibe`, the `column` and who
    wrote it, `labeller`), one row per prompt, keyed as the dataset keys its prompts. A value reads as in a
    labels file, or as a pair of scores [A's, B's] (the higher one sits higher; equal is neither)."""
    from engine.datasets.rows import field_value
    from engine.datasets.tidy import key_of

    names = {model_a.lower(): 1, model_b.lower(): -1}
    labels = []
    for entry in columns:
        if entry["vibe"] not in vibes:
            raise DatasetError(f"validation.columns: vibe {entry['vibe']!r} is not one this analysis measures "
                               f"({', '.join(vibes)})")
        for path in dataset.source.paths:
            for where, row in located_rows(path):
                value = field_value(row, entry["column"])
                if value is None or str(value).strip() == "":
                    continue
                verdict = _verdict(value, names, where, entry["column"], (model_a, model_b))
                labels.append(HumanLabel(key_of(dataset, row, where), entry["vibe"], verdict,
                                         entry.get("labeller") or entry["column"], "", where))
    return labels


SCORE_PAIR = re.compile(r"^\[\s*(-?[0-9.]+)\s*,\s*(-?[0-9.]+)\s*\]$")


def _verdict(value: object, names: dict[str, int], where: str, field_name: str, models: tuple[str, str]) -> int:
    """A label's value as −1/0/+1 (see `read_labels` and `read_columns`), or a `DatasetError` at its place."""
    text = str(value).strip().lower()
    verdict = WORDS.get(text, names.get(text))
    if verdict is None and (pair := SCORE_PAIR.match(text)):
        verdict = int(np.sign(float(pair.group(1)) - float(pair.group(2))))
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
    on_dev = set(stats.split(units, dev, seed)[0])
    return [label if label.split else replace(label, split="dev" if clusters.get(label.pair, label.pair) in on_dev
                                              else "test") for label in labels]


def judge_verdicts(pairs: Sequence[PairVerdicts], vibe: str, judge: str) -> dict[str, int]:
    """A judge's verdict (or the panel's, `PANEL`) on every pair that has one: pair id → −1/0/+1."""
    out = {}
    for pair in pairs:
        value = pair.nu.get(vibe) if judge == PANEL else pair.by_judge.get(vibe, {}).get(judge)
        if value is not None:
            out[pair.item_id] = int(value)
    return out


def agreement(labels: Sequence[HumanLabel], verdicts: dict[str, int], clusters: dict[str, str], vibe: str,
              judge: str, split: str, seed: int) -> Agreement:
    """`judge`'s verdicts against the labels of one split (see the module docstring)."""
    rows = [(label.pair, label.verdict, verdicts[label.pair]) for label in labels if label.pair in verdicts]
    if not rows:
        return Agreement(vibe, judge, split, 0, None, None, None, None, None, None)
    human = np.array([r[1] for r in rows])
    machine = np.array([r[2] for r in rows])
    units = stats.cluster_index([clusters.get(r[0], r[0]) for r in rows])
    point = _both(human, machine)
    members = [np.flatnonzero(units == u) for u in range(int(units.max()) + 1)]
    rng = np.random.default_rng(seed)
    rounds = []
    for _ in range(ROUNDS):
        drawn = np.concatenate([members[u] for u in rng.integers(0, len(members), len(members))])
        rounds.append(_both(human[drawn], machine[drawn]))
    agreements = [r[0] for r in rounds]
    kappas = [r[1] for r in rounds if r[1] is not None]
    a_low, a_high = np.percentile(agreements, [2.5, 97.5])
    k_low, k_high = np.percentile(kappas, [2.5, 97.5]) if kappas and point[1] is not None else (None, None)
    return Agreement(vibe, judge, split, len(rows), point[0], float(a_low), float(a_high), point[1],
                     None if k_low is None else float(k_low), None if k_high is None else float(k_high))


def _both(human: np.ndarray, machine: np.ndarray) -> tuple[float, float | None]:
    """Agreement and Cohen's κ (None where it is undefined: one category throughout on both sides, where
    `stats.cohen_kappa` says 1)."""
    share = float(np.mean(human == machine))
    if len(set(human.tolist()) | set(machine.tolist())) < 2:
        return share, None
    return share, stats.cohen_kappa(human.tolist(), machine.tolist())


def human_human(labels: Sequence[HumanLabel], verdicts: dict[str, int], vibe: str, judge: str) -> HumanHuman | None:
    """Leave-one-out agreement among people on the pairs two or more labelled, and the judge's in the left-out
    person's place: each label (or the judge's verdict) against the most common label of the others on the
    pair, a tie between labels counting the share of them it matches."""
    by_pair: dict[str, list[int]] = {}
    for label in labels:
        by_pair.setdefault(label.pair, []).append(label.verdict)
    shared = {pair: values for pair, values in by_pair.items() if len(values) > 1 and pair in verdicts}
    if not shared:
        return None
    human, machine = [], []
    for pair, values in shared.items():
        for i, value in enumerate(values):
            others = values[:i] + values[i + 1:]
            human.append(_matches(value, others))
            machine.append(_matches(verdicts[pair], others))
    return HumanHuman(vibe, judge, len(shared), float(np.mean(human)), float(np.mean(machine)))


def _matches(value: int, others: list[int]) -> float:
    counts = Counter(others)
    top = max(counts.values())
    modes = [v for v, c in counts.items() if c == top]
    return (value in modes) / len(modes)


def corrected_separability(labels: Sequence[HumanLabel], panel: dict[str, int], clusters: dict[str, str],
                           vibe: str) -> Corrected | None:
    """The people's separability over every pair the panel judged, by PPI++ (Angelopoulos, Duchi and Zrnic,
    2023): the labelled pairs' mean verdict plus λ times the gap between the panel's mean on the pairs nobody
    labelled and its mean on the labelled ones, with λ = Cov(people, panel) / ((1 + n/N) Var(panel)) clipped
    to [0, 1] (0: the labels alone; 1: classical prediction-powered inference), and its 95% normal interval;
    beside the labels-only mean and interval. Valid for a random sample of labelled pairs (or one stratified
    in proportion to the panel's verdicts). A pair's several labels count as their mean; a conversation counts
    once (its turns' means)."""
    by_pair: dict[str, list[int]] = {}
    for label in labels:
        if label.pair in panel:
            by_pair.setdefault(label.pair, []).append(label.verdict)
    unlabelled = {p: float(v) for p, v in panel.items() if p not in by_pair}
    if len(by_pair) < 2 or len(unlabelled) < 2:
        return None
    units = _units(list(by_pair), clusters)
    people = np.array([np.mean([np.mean(by_pair[p]) for p in members]) for members in units])
    judged = np.array([np.mean([panel[p] for p in members]) for members in units])
    rest = np.array([np.mean([unlabelled[p] for p in members]) for members in _units(list(unlabelled), clusters)])
    n, big_n = len(people), len(rest)
    spread = float(np.var(np.concatenate([judged, rest]), ddof=1))
    lam = 0.0 if spread == 0 else float(np.clip(np.cov(people, judged)[0, 1] / ((1 + n / big_n) * spread), 0, 1))
    estimate = float(people.mean() + lam * (rest.mean() - judged.mean()))
    half = 1.96 * math.sqrt(_variance(people - lam * judged) / n + lam**2 * _variance(rest) / big_n)
    only_half = 1.96 * math.sqrt(_variance(people) / n)
    every = list(panel.values())
    return Corrected(vibe, estimate, estimate - half, estimate + half, float(people.mean()),
                     float(people.mean()) - only_half, float(people.mean()) + only_half, float(np.mean(every)),
                     len(every), len(by_pair), lam)


def _units(pairs: list[str], clusters: dict[str, str]) -> list[list[str]]:
    """The pairs grouped by conversation (a prompt is its own unit), in order of first appearance."""
    grouped: dict[str, list[str]] = {}
    for pair in pairs:
        grouped.setdefault(clusters.get(pair, pair), []).append(pair)
    return list(grouped.values())


def _variance(values: np.ndarray) -> float:
    return float(values.var(ddof=1)) if len(values) > 1 else 0.0


def validate(labels: list[HumanLabel], pairs: Sequence[PairVerdicts], judges: dict[str, list[str]],
             clusters: dict[str, str], seed: int, sources: list[str]) -> Validation:
    """Everything the module docstring lists, for every vibe with labels (`judges`: vibe → its judges)."""
    known = {pair.item_id for pair in pairs}
    matched = [label for label in labels if label.pair in known]
    out = Validation(labellers=sorted({label.labeller for label in matched}), sources=sources,
                     unmatched=len(labels) - len(matched))
    for vibe, vibe_judges in judges.items():
        mine = [label for label in matched if label.vibe == vibe]
        if not mine:
            continue
        panel = judge_verdicts(pairs, vibe, PANEL)
        for judge in (*vibe_judges, PANEL) if len(vibe_judges) > 1 else (PANEL,):
            verdicts = panel if judge == PANEL else judge_verdicts(pairs, vibe, judge)
            for split in SPLITS:
                chosen = [label for label in mine if label.split == split]
                if chosen:
                    out.agreements.append(agreement(chosen, verdicts, clusters, vibe, judge, split, seed))
            if (between := human_human(mine, verdicts, vibe, judge)) is not None:
                out.human_human.append(between)
        if (corrected := corrected_separability(mine, panel, clusters, vibe)) is not None:
            out.corrected.append(corrected)
        if why := _flag(out, vibe):
            out.flagged[vibe] = why
    return out


def _flag(out: Validation, vibe: str) -> str:
    """Why the panel's reading of `vibe` is flagged, or ""."""
    between = next((h for h in out.human_human if h.vibe == vibe and h.judge == PANEL), None)
    if between is not None:
        if between.judge_agreement < between.human:
            return (f"the panel agrees with people {between.judge_agreement:.0%} of the time, people with each "
                    f"other {between.human:.0%} (on the {between.pairs} pairs two or more labelled)")
        return ""
    rows = [a for a in out.agreements if a.vibe == vibe and a.judge == PANEL and a.kappa is not None]
    test = next((a for a in rows if a.split == "test"), rows[0] if rows else None)
    if test is not None and test.kappa is not None and test.kappa < KAPPA_FLOOR:
        return (f"the panel's κ with people is {test.kappa:.2f} on the {test.split} labels, below {KAPPA_FLOOR} "
                "(no second labeller to compare with)")
    return ""


def against_people(prepared: Prepared, analysis: Analysis, pairs: list[PairVerdicts], models: tuple[str, str],
                   judges: dict[str, list[str]]) -> Validation | None:
    """People's labels (the analysis' `validation` files and columns) against the judges of this comparison
    (`judges`: each vibe's); None where the analysis gives none."""
    opts = VibeCheckOptions.of(analysis).validation
    if opts is None or not (opts.files or opts.columns):
        return None
    paths = [resolve_path(prepared.spec.path.parent, raw) for raw in opts.files]
    labels = [label for path in paths for label in read_labels(path, list(judges), *models)]
    dataset = prepared.spec.datasets[analysis.dataset]
    labels += read_columns(dataset, opts.columns, list(judges), *models)
    paths += [Path(f"{path} ({', '.join(c['column'] for c in opts.columns)})") for path in dataset.source.paths
              if opts.columns]
    clusters = {p.item_id: p.cluster for p in pairs}
    seed = split_seed(analysis)
    return validate(assign_splits(labels, clusters, opts.dev, seed), pairs, judges, clusters, seed,
                    [str(path) for path in paths])
