"""People check the judges: the labels of a comparison's pairs (files, and columns of its dataset) against
every judge of each vibe and the panel (`engine.analyze.people` computes each figure), and, per vibe, how the
panel reads it beside people, on evidence rather than point estimates (which flagged nearly half of the panels
exactly as good as a person):
- where two or more people labelled pairs, from the 95% interval of the panel's agreement with people minus
  people's with each other (pairs the units): *unlike people* when it lies below 0, *as people read it* when it
  lies above −`PARITY` (the panel at most that much behind a person), else *not enough labels to tell*;
- with one labeller, from the 95% interval of the panel's κ with people on the test labels: unlike people when
  it lies below `KAPPA_FLOOR`, as people read it when above, else not enough labels to tell.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from engine.api.analysis import (
    SPLITS,
    HumanLabel,
    agreement_with_people,
    assign_splits,
    corrected_separability,
    people,
    read_columns,
    read_labels,
)
from engine.api.records import Prepared
from engine.api.spec import Analysis, resolve_path
from engine.builtin_plugins.methods.vibecheck.between_people import human_human
from engine.builtin_plugins.methods.vibecheck.discovery.splits import split_seed
from engine.builtin_plugins.methods.vibecheck.heldout import RULE, longer_rule
from engine.builtin_plugins.methods.vibecheck.options import VibeCheckOptions
from engine.builtin_plugins.methods.vibecheck.records import PANEL, PairVerdicts, Validation

KAPPA_FLOOR = 0.4  # κ with people below which, with no second labeller to compare with, a judge reads unlike them
PARITY = 0.1  # how far behind people's agreement with each other the panel may be and still read as they do


def judge_verdicts(pairs: Sequence[PairVerdicts], vibe: str, judge: str) -> dict[str, int]:
    """A judge's verdict (or the panel's, `PANEL`) on every pair that has one: pair id → −1/0/+1."""
    out = {}
    for pair in pairs:
        value = pair.nu.get(vibe) if judge == PANEL else pair.by_judge.get(vibe, {}).get(judge)
        if value is not None:
            out[pair.item_id] = int(value)
    return out


def validate(labels: list[HumanLabel], pairs: Sequence[PairVerdicts], judges: dict[str, list[str]],
             clusters: dict[str, str], seed: int, sources: list[str]) -> Validation:
    """Everything the module docstring lists, for every vibe with labels (`judges`: vibe → its judges), from the
    randomly sampled labels alone: those of pairs chosen where a learned judge was least sure only teach it."""
    known = {pair.item_id for pair in pairs}
    matched = [label for label in labels if label.pair in known and not label.stratum]
    out = Validation(labellers=sorted({label.labeller for label in matched}), sources=sources,
                     unmatched=sum(label.pair not in known for label in labels), judges=dict(judges),
                     teaching=sum(label.pair in known and bool(label.stratum) for label in labels))
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
                    out.agreements.append(agreement_with_people(chosen, verdicts, clusters, vibe, judge, split, seed))
            if (between := human_human(mine, verdicts, vibe, judge)) is not None:
                out.human_human.append(between)
        if (corrected := corrected_separability(mine, panel, clusters, vibe)) is not None:
            out.corrected.append(corrected)
        _beside_rules(out, mine, pairs, clusters, vibe, seed)
        state, why = reading(out, vibe)
        {UNLIKE: out.flagged, LIKE: out.as_people, UNDECIDED: out.undecided}[state][vibe] = why
    out.narrowing = pairs_to_narrow(out)
    return out


KAPPA_HALF_WIDTH = 0.1  # the κ interval's half-width a labelling effort is sized for


def pairs_to_narrow(out: Validation) -> str:
    """About how many more pairs to label for the panel's κ interval on the test labels to be ±`KAPPA_HALF_WIDTH`
    on every labelled vibe (the widest decides): a half-width narrows as 1/√n, and only the test share of newly
    labelled pairs (as the split assigns them) adds test labels. Where too few prompts are labelled for an interval
    at all, the pairs that would give one. Empty where every interval is already that narrow (or no κ can be had)."""
    needs, short = [], []
    for vibe in out.judges:
        rows = {a.split: a for a in out.agreements if a.vibe == vibe and a.judge == PANEL}
        test = rows.get("test")
        if test is None or test.kappa is None:
            continue
        share = test.labels / (test.labels + (rows["dev"].labels if "dev" in rows else 0))
        if test.kappa_low is None or test.kappa_high is None:
            per_pair = test.labels / max(1, len(out.labellers))
            short.append((math.ceil((people.MIN_KAPPA_UNITS - per_pair) / share), vibe))
            continue
        half = (test.kappa_high - test.kappa_low) / 2
        more = test.labels * ((half / KAPPA_HALF_WIDTH) ** 2 - 1) / share
        if more >= 1:
            needs.append((round(more), vibe, half))
    if short:
        more, vibe = max(short)
        return (f"label at least {more:,} more pairs for κ between the panel and people to have an interval at all "
                f"(given from {people.MIN_KAPPA_UNITS} test prompts; fewest now on {vibe})")
    if not needs:
        return ""
    more, vibe, half = max(needs)
    return (f"label about {more:,} more pairs to narrow κ between the panel and people to ±{KAPPA_HALF_WIDTH:g} (now "
            f"±{half:.2f} on {vibe}, the widest; intervals narrow as 1/√n, so this is a guide)")


def _beside_rules(out: Validation, labels: list[HumanLabel], pairs: Sequence[PairVerdicts], clusters: dict[str, str],
                  vibe: str, seed: int) -> None:
    """The trivial rules on the same test labels (the dev labels' most common verdict; the longer answer, in
    characters, sits higher), and every judge of the vibe whose test agreement does not beat the better of them."""
    test = [label for label in labels if label.split == "test"]
    dev = [label.verdict for label in labels if label.split == "dev"]
    if not test:
        return
    measured = [p for p in pairs if len(p.chars) == 2]
    longer = longer_rule(np.array([p.chars[0] - p.chars[1] for p in measured], dtype=float), 0.0)
    rules = {RULE: {p.item_id: int(side) for p, side in zip(measured, longer, strict=True)}}
    if dev:
        common = max((1, 0, -1), key=dev.count)
        rules["majority class (dev)"] = {p.item_id: common for p in pairs}
    rows = [agreement_with_people(test, verdicts, clusters, vibe, rule, "test", seed)
            for rule, verdicts in rules.items()]
    out.baselines += rows
    best = max(rows, key=lambda r: r.agreement or 0.0)
    for row in out.agreements:  # a judge with no verdict on the test labels (a learned judge short of labels) has none
        if (row.vibe == vibe and row.split == "test" and row.agreement is not None
                and row.agreement <= (best.agreement or 0.0)):
            out.below_rules[f"{vibe}/{row.judge}"] = (f"{row.agreement:.1%} on the {row.labels} test labels, no better "
                                                      f"than the rule '{best.judge}' ({best.agreement:.1%})")


UNLIKE, LIKE, UNDECIDED = "unlike people", "as people read it", "not enough labels to tell"


def reading(out: Validation, vibe: str) -> tuple[str, str]:
    """How the panel reads `vibe` beside people (the module docstring's three states), and why."""
    between = next((h for h in out.human_human if h.vibe == vibe and h.judge == PANEL), None)
    if between is not None:
        said = (f"the panel agrees with people {between.judge_agreement:.0%} of the time, people with each other "
                f"{between.human:.0%}, a difference of {between.judge_agreement - between.human:+.0%} "
                f"[{between.low:+.0%}, {between.high:+.0%}] on the {between.pairs} pairs two or more labelled")
        if between.high < 0:
            return UNLIKE, said
        if between.low >= -PARITY:
            return LIKE, said
        more = labels_needed(between.pairs, between.judge_agreement - between.human, between.low, between.high,
                             -PARITY if between.judge_agreement - between.human > -PARITY else 0.0)
        return UNDECIDED, f"{said}, which cannot tell whether it is more than {PARITY:.0%} behind them{more}"
    rows = [a for a in out.agreements if a.vibe == vibe and a.judge == PANEL and a.kappa is not None]
    test = next((a for a in rows if a.split == "test"), rows[0] if rows else None)
    if test is None or test.kappa is None:
        return UNDECIDED, "no κ with people on these labels (one category throughout, or none labelled)"
    if test.kappa_low is None or test.kappa_high is None:
        return UNDECIDED, (f"the panel's κ with people is {test.kappa:.2f} on the {test.labels} {test.split} labels, "
                           f"too few for an interval (given from {people.MIN_KAPPA_UNITS} prompts)")
    said = (f"the panel's κ with people is {test.kappa:.2f} [{test.kappa_low:.2f}, {test.kappa_high:.2f}] on the "
            f"{test.labels} {test.split} labels (no second labeller to compare with)")
    if test.kappa_high < KAPPA_FLOOR:
        return UNLIKE, f"{said}, below {KAPPA_FLOOR}"
    if test.kappa_low >= KAPPA_FLOOR:
        return LIKE, f"{said}, above {KAPPA_FLOOR}"
    more = labels_needed(test.labels, test.kappa, test.kappa_low, test.kappa_high, KAPPA_FLOOR)
    return UNDECIDED, f"{said}, whose interval reaches both sides of {KAPPA_FLOOR}{more}"


def labels_needed(labels: int, estimate: float, low: float, high: float, bound: float) -> str:
    """How many more labels would likely decide a reading: where the estimate stays as it is and its 95% interval
    narrows as 1/√n (as judgegate's "labels needed" reckons), the labels at which the interval's half nearer
    `bound` stops reaching it: n · (half-width / distance)², less the n there are. A rough guide, not a promise:
    the estimate moves as labels come."""
    distance = abs(estimate - bound)
    half = (high - estimate) if bound > estimate else (estimate - low)
    if distance < 1e-9 or half <= 0:
        return "; the estimate sits on the line, so more labels decide it only as it moves"
    more = max(1, round(labels * (half / distance) ** 2) - labels)
    return f"; about {more:,} more labels would decide it if the estimate stays where it is"


def against_people(prepared: Prepared, analysis: Analysis, pairs: list[PairVerdicts], models: tuple[str, str],
                   judges: dict[str, list[str]], learned: dict[str, list[str]]) -> Validation | None:
    """People's labels (the analysis' `validation` files and columns) against the judges of this comparison
    (`judges`: each vibe's; `learned`: those of them fitted to the dev labels); None where the analysis gives
    none."""
    clusters = {p.item_id: p.cluster for p in pairs}
    read = people_labels(prepared, analysis, models, list(judges), clusters)
    if read is None:
        return None
    labels, sources = read
    known = {p.item_id for p in pairs}
    if stray := [label for label in labels if label.pair not in known]:  # said where a run is watched, not only on
        shown = "; ".join(f"{label.where}: {label.pair!r}" for label in stray[:5])  # the page
        print(f"{analysis.name}, {models[0]} vs {models[1]}: {len(stray)} label(s) name a pair this comparison does "
              f"not have and are left out: {shown}{' …' if len(stray) > 5 else ''}", file=sys.stderr)
    out = validate(labels, pairs, judges, clusters, split_seed(analysis), sources)
    out.crossfitted = [f"{vibe}/{judge}" for vibe, names in learned.items() if names for judge in (*names, PANEL)]
    return out


def people_labels(prepared: Prepared, analysis: Analysis, models: tuple[str, str], vibes: list[str],
                  clusters: dict[str, str]) -> tuple[list[HumanLabel], list[str]] | None:
    """The comparison's labels of `vibes`, each on its split (dev or test, as given, else drawn by the analysis'
    seed over the units of `clusters`: pair → conversation), and where they were read; None where the analysis
    gives none. A learned judge learns from the dev ones; every figure for it is read on the test ones."""
    opts = VibeCheckOptions.of(analysis).validation
    if opts is None or not (opts.files or opts.columns):
        return None
    paths = [resolve_path(prepared.spec.path.parent, raw) for raw in opts.files]
    several = VibeCheckOptions.of(analysis).reference is not None
    labels = [label for path in paths for label in read_labels(path, vibes, *models, several)]
    dataset = prepared.spec.datasets[analysis.dataset]
    labels += read_columns(dataset, opts.columns, vibes, *models)
    paths += [Path(f"{path} ({', '.join(c['column'] for c in opts.columns)})") for path in dataset.source.paths
              if opts.columns]
    return assign_splits(labels, clusters, opts.dev, split_seed(analysis)), [str(path) for path in paths]
