"""VibeCheck analysis: from judge results to per-vibe scores and the two held-out regressions.

From the comparison's pair table (`pair_table`: each judge's score s_J in A/B terms on every pair and vibe, and
the panel verdict ν), per vibe its separability, judge agreement (κ), and whether it passes validation on the
training split (κ, |sep|, and sep more than one standard error from 0: all on training pairs, since that is
what selection may see; a phrase lexicon mined from the training pairs is validated on cross-fitted verdicts, each pair
scored by the lexicon mined without it; a lexicon mined as typical of one model that leans to the other on those
verdicts does not carry over, and is dropped). On the test split each kept vibe's separability gets an exact sign
test, one-sided in the direction its training pairs showed (a claim confirms that direction or nothing: it can
never name the other), adjusted by a weighted Holm (weights from the training z, `keep`) together with the
regressions' vibe coefficients: the claims a page makes about vibes at once. The vibes that pass (the top-k by
least-angle regression, as VibeCheck) feed the two held-out regressions of `heldout`: model matching (which
model wrote the first-shown answer) and preference prediction (which answer the dataset's labels favour,
starting from the longer-answer rule).
"""

from __future__ import annotations

import csv
import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from engine.api.analysis import JudgeAgreement, JudgeReliability, people, reliability, stats
from engine.api.records import Prepared, Result
from engine.api.spec import Analysis, Labels, Vibe
from engine.builtin_plugins.methods.vibecheck import heldout
from engine.builtin_plugins.methods.vibecheck.ceiling import ceiling, unit_pairs
from engine.builtin_plugins.methods.vibecheck.discovery import statistical as discovery
from engine.builtin_plugins.methods.vibecheck.discovery.propose import training_pairs
from engine.builtin_plugins.methods.vibecheck.discovery.splits import (
    discovery_sides,
    mined_items,
    split_seed,
)
from engine.builtin_plugins.methods.vibecheck.keep import decide
from engine.builtin_plugins.methods.vibecheck.options import VibeCheckOptions
from engine.builtin_plugins.methods.vibecheck.pair_table import PairTable, judges_for, pair_table
from engine.builtin_plugins.methods.vibecheck.records import PairVerdicts, VibeCheckResult, VibeScore
from engine.builtin_plugins.methods.vibecheck.regressions import Features, fit_regressions, select_vibes
from engine.builtin_plugins.methods.vibecheck.validation import against_people


def train_verdicts(prepared: Prepared, analysis: Analysis, results: dict[str, Result],
                   vibes: list[Vibe]) -> np.ndarray:
    """ν of `vibes` on the training pairs of every comparison of the analysis (pairs × vibes): what LLM
    discovery validates its proposals on."""
    return pair_verdicts(prepared, analysis, results, vibes, split="train")[1]


def pair_verdicts(prepared: Prepared, analysis: Analysis, results: dict[str, Result], vibes: list[Vibe],
                  split: str | None = None) -> tuple[list[str], np.ndarray]:
    """ν of `vibes` on the pairs of every comparison of the analysis (of `split` only, when given): each row's
    item, and the matrix (pairs × vibes), NaN where no judge gave a readable verdict."""
    pairs = [p for comparison in analysis.comparisons()
             for p in pair_table(prepared, analysis, results, comparison).pairs
             if split is None or p.split == split]
    nu = np.array([[np.nan if p.nu[v.name] is None else p.nu[v.name] for v in vibes] for p in pairs],
                  dtype=float).reshape(len(pairs), len(vibes))
    return [p.item_id for p in pairs], nu


def analyze_vibecheck(prepared: Prepared, analysis: Analysis, results: dict[str, Result],
                      origins: dict[str, str] | None = None,
                      comparison: tuple[str, str] | None = None) -> VibeCheckResult:
    """One comparison of the analysis (its first, or the one named): model A against model B."""
    table = pair_table(prepared, analysis, results, comparison)
    spec = prepared.spec
    model_a, model_b, vibes, pairs = table.model_a, table.model_b, table.vibes, table.pairs
    origins = origins or {}
    discovery = spec.discovery
    kappa_min = discovery.kappa_min if discovery else 0.2
    sep_min = discovery.separability_min if discovery else 0.05
    opts = VibeCheckOptions.of(analysis)
    mined = mined_items(prepared, analysis)
    crossfit, crossfit_verdicts = _crossfit_lexicons(pairs, vibes, origins, results, prepared, analysis, mined)
    vibe_scores = [_vibe_score(v, pairs, analysis, prepared, origins, table.invalid_by_vibe[v.name], kappa_min,
                               sep_min, crossfit_verdicts.get(v.name), mined) for v in vibes]
    kept = [s.name for s in vibe_scores if s.kept]
    crossfit = {name: values for name, values in crossfit.items() if name in kept}
    notes = [f"{judge} on {vibe} (learned from people's labels): {said}"
             for (judge, vibe), said in table.fitted.items()]
    if crossfit:
        notes.append(f"{', '.join(sorted(crossfit))}: phrase lexicons mined from the training pairs. Their keep/drop "
                     "test and the regressions score each training pair by the lexicon mined on the other half of "
                     "them (cross-fitted), never by one mined from that pair; test pairs keep the panel's scores"
                     + ("." if mined is None else ", as do the training pairs beyond discovery's sample of "
                        f"{len(mined):,} training prompts, which the lexicons never saw."))
    labels = spec.datasets[analysis.dataset].labels
    features = Features(pairs, crossfit)
    chosen, selection, dropped = select_vibes(kept, features, opts.regression)
    vibe_scores, mm, pp, claims = adjust_claims(vibe_scores, *fit_regressions(chosen, features, model_a, notes,
                                                                      split_seed(analysis)))
    vibe_scores = [_with_coefficients(s, mm, pp, dropped.get(s.name, "")) for s in vibe_scores]
    judged = _judge_reliability(analysis, table, labels)
    texts = unit_pairs((p.split, p.cluster, str(results[p.output_a].output), str(results[p.output_b].output))
                       for p in pairs if p.output_a in results and p.output_b in results)
    return VibeCheckResult(analysis.name, model_a, model_b, vibe_scores, pairs, mm, pp,
                           sum(table.invalid_by_vibe.values()), notes, labels, selection, *judged,
                           dataset=analysis.dataset, claims=claims,
                           ceiling=ceiling(texts["train"], texts["test"], mm.test_accuracy if mm else None),
                           validation=against_people(
                               prepared, analysis, pairs, (model_a, model_b),
                               {v.name: [j for j, _ in table.panels[v.name]] for v in vibes},
                               {v.name: [j for j, kind in table.panels[v.name] if kind.learns] for v in vibes}))


def _judge_reliability(analysis: Analysis, table: PairTable,
                       labels: Labels) -> tuple[list[JudgeReliability], list[JudgeAgreement]]:
    """Every LLM judge's reliability on the vibe scores and, for `preference_judges`, on which answer is
    better (with its agreement with the dataset's labels, where there are labels); κ between every two
    judges that scored the same vibes on the same pairs."""
    model_a, model_b = table.model_a, table.model_b
    label_values = {model_a: 1, model_b: -1, "tie": 0}
    pair_labels = {item_id: label_values[label] for item_id, item in table.items.items()
                   if (label := item.label(model_a, model_b)) in label_values}
    rows = (reliability.reliability(table.two_orders, "vibe scores", seed=split_seed(analysis))
            + reliability.reliability(table.preference_answers, "preference", pair_labels, labels.source,
                                      seed=split_seed(analysis)))
    return rows, reliability.agreements(table.verdicts, "vibe scores")


def adjust_claims(scores: list[VibeScore], mm: heldout.HeldOutFit | None,
                  pp: heldout.HeldOutFit | None) -> tuple[list[VibeScore], heldout.HeldOutFit | None,
                                                          heldout.HeldOutFit | None, int]:
    """Weighted Holm over every claim the comparison's section makes about its vibes at once: each kept vibe's
    test-pair separability (what the headline names) and each vibe coefficient of both held-out regressions,
    every claim about a vibe weighted by that vibe's training evidence (`keep.holm_weight`). Corrected apart, two
    families of 5% would let a page with nothing to find claim something nearly twice that often. Returned with
    the family's size, which the headline states."""
    fits, adjusted, alphas, family = heldout.adjust([f for f in (mm, pp) if f is not None],
                                            [s.separability_p for s in scores],
                                            {s.name: s.holm_weight for s in scores if s.holm_weight is not None},
                                            [s.name for s in scores])
    scores = [replace(s, separability_p_adjusted=q, separability_mde=_corrected_mde(s, alpha), power_alpha=alpha)
              if s.separability_p is not None and alpha is not None else s
              for s, q, alpha in zip(scores, adjusted, alphas, strict=True)]
    return scores, (fits.pop(0) if mm else None), (fits.pop(0) if pp else None), family


def _corrected_mde(score: VibeScore, alpha: float) -> float | None:
    """The test separability the vibe's one-sided sign test detects with 80% power at `alpha`, the level its
    Holm-corrected test faces, from its test verdicts' counts (None over conversation means, whose values are
    not −1, 0 or +1)."""
    if score.test_nonzero is None:
        return None
    return stats.sign_test_mde(score.test_nonzero, score.test_verdicts, alpha=alpha)


def _vibe_score(vibe: Vibe, pairs: list[PairVerdicts], analysis: Analysis, prepared: Prepared,
                origins: dict[str, str], invalid: int, kappa_min: float, sep_min: float,
                crossfit: dict[str, float] | None = None, mined: set[str] | None = None) -> VibeScore:
    spec = prepared.spec
    # the judges that gave this vibe a verdict on at least one pair (a judge whose calls all failed is not listed)
    judges = [j for j in judges_for(prepared, analysis, vibe) if any(p.by_judge[vibe.name].get(j) is not None
                                                                        for p in pairs)]
    train = [p for p in pairs if p.split == "train"]
    test = [p for p in pairs if p.split == "test"]
    if crossfit is not None:  # a lexicon mined from the training pairs: judged on each by the lexicon mined
        # without it, and on those beyond discovery's sample (`mined`) by its panel, as a test pair is
        scored = [(v, p.cluster) for p in train
                  if (v := crossfit.get(p.item_id) if mined is None or p.item_id in mined else p.nu[vibe.name])
                  is not None]
    else:
        scored = [(v, p.cluster) for p in train if (v := p.nu[vibe.name]) is not None]
    tested = [(v, p.cluster) for p in test if (v := p.nu[vibe.name]) is not None]
    # the turns of one conversation are one unit: tests and intervals read each conversation's mean verdict
    nu_train, nu_test = (stats.cluster_means([v for v, _ in vs], [c for _, c in vs]) for vs in (scored, tested))

    def verdicts(subset: list[PairVerdicts]) -> list[list[int]] | None:
        """Each judge's verdicts on the pairs every judge gave one; None with one judge (nobody to agree with)."""
        if len(judges) < 2:
            return None
        complete = [p for p in subset if all(p.by_judge[vibe.name][j] is not None for j in judges)]
        return [[int(p.by_judge[vibe.name][j] or 0) for p in complete] for j in judges] if complete else None

    def kappa(subset: list[PairVerdicts]) -> float | None:
        given = verdicts(subset)
        return stats.agreement(given) if given else None

    given_train = verdicts(train)  # κ and AC1 read the same verdicts
    kappa_train = stats.agreement(given_train) if given_train else None
    ac1_train = stats.gwet_ac1(given_train) if given_train else None
    decision = decide(nu_train, nu_test, kappa_train=kappa_train, kappa_min=kappa_min, sep_min=sep_min,
                      origin=origins.get(vibe.name, ""), sides=discovery_sides(analysis),
                      ternary=len(nu_test) == len(tested), ac1_train=ac1_train)
    return VibeScore(
        name=vibe.name, low=vibe.low, high=vibe.high, origin=origins.get(vibe.name, "declared"), metric=vibe.metric,
        judges=judges, judge_kinds=sorted({spec.judges[j].kind for j in judges}),
        separability=stats.separability(nu_test) if nu_test else None,
        separability_ci=stats.verdict_interval(nu_test) if len(nu_test) > 1 else None,
        separability_train=decision.separability_train, separability_train_ci=decision.train_ci, kappa=kappa(test),
        kappa_train=kappa_train, ac1_train=ac1_train, kept=decision.kept, drop_reason="; ".join(decision.reasons),
        n_pairs=len(pairs),
        invalid_verdicts=invalid,
        examples=vibe.examples, n_train=len(train), n_test=len(test),
        missing_verdicts=sum(p.nu[vibe.name] is None for p in pairs),
        separability_p=decision.p_value, direction=decision.direction, separability_mde=decision.detectable,
        holm_weight=decision.weight, test_verdicts=len(nu_test),
        test_nonzero=sum(v != 0 for v in nu_test) if len(nu_test) == len(tested) else None)


def _crossfit_lexicons(pairs: list[PairVerdicts], vibes: list[Vibe], origins: dict[str, str],
                       results: dict[str, Result], prepared: Prepared, analysis: Analysis, sample: set[str] | None
                       ) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Training-pair strengths (the regressions' columns) and verdicts (keep/drop's: −1, 0 or +1, a difference
    within the metric's tolerance a tie, as discovery and the benchmarks judge them) of discovered phrase
    lexicons, cross-fitted: vibe -> item -> value. A lexicon mined from the training pairs separates them
    almost perfectly by construction, which says nothing of how it generalizes; scored by the lexicon from the
    other half, it weighs what it would on new pairs. The cross-fit is discovery's own: on the pairs it mined
    from (`training_pairs`: every comparison's, pooled, in its order, `sample` of them), so each lexicon and habit
    it proposed is found under its name. Cross-fitting this comparison's pairs alone mined other halves, and a
    many-model analysis' habits, not found there, were screened on verdicts of the lexicon mined from those very
    pairs. Pairs beyond `sample` the lexicons never saw, and keep their panel's verdicts."""
    mined = [v.name for v in vibes if origins.get(v.name, "").startswith("discovered (phrases:")]
    if not mined:
        return {}, {}
    pooled = training_pairs(prepared, analysis, lambda ids: {i: results[i] for i in ids if i in results}, sample)
    columns = discovery.crossfit_lexicon_scores(pooled, *discovery_sides(analysis), seed=split_seed(analysis))
    position = {pair.answers: k for k, pair in enumerate(pooled)}
    train = [(p, k) for p in pairs if p.split == "train" and (k := position.get((p.output_a, p.output_b))) is not None]
    # a lexicon not found (its answers missing from this run's results) gets no cross-fitted verdict: keep/drop
    # then reads only the pairs it was never mined from, never the panel's in-sample verdicts
    strengths, verdicts = ({name: {p.item_id: float(columns[name][j][k]) for p, k in train} if name in columns else {}
                            for name in mined} for j in (0, 1))
    return strengths, verdicts


def _with_coefficients(score: VibeScore, mm: heldout.HeldOutFit | None, pp: heldout.HeldOutFit | None,
                       left_out: str) -> VibeScore:
    values: dict[str, Any] = {"regression_note": left_out}
    for prefix, reg in (("mm", mm), ("pp", pp)):
        if reg is not None and score.name in reg.features:
            i = reg.features.index(score.name)
            values[f"{prefix}_coefficient"] = reg.coefficients[i]
            values[f"{prefix}_p_value"] = reg.p_values[i]
            values[f"{prefix}_p_adjusted"] = reg.p_adjusted[i] if reg.p_adjusted else None
            values[f"{prefix}_p_note"] = reg.p_notes[i]
            values[f"{prefix}_detectable"] = reg.detectable[i] if reg.detectable else None
    return replace(score, **values)


def write_vibecheck(result: VibeCheckResult, run_dir: Path, folder: str | None = None) -> Path:
    """CSV and JSONL beside the run, for pandas and spreadsheets, in <run_dir>/<folder or the analysis>."""
    out = run_dir / (folder or result.analysis)
    out.mkdir(parents=True, exist_ok=True)
    rows = [asdict(s) for s in result.vibes]
    flat = [{k: (";".join(map(str, v)) if isinstance(v, list | tuple) else v)
             for k, v in row.items() if k != "examples"} for row in rows]
    with (out / "vibes.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(flat[0]) if flat else ["name"])
        writer.writeheader()
        writer.writerows(flat)  # example answers (multi-line) stay in vibes.jsonl
    (out / "vibes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    # a pair's fields are plain values and dicts of them: vars() gives what asdict() would, without its deep copy
    with (out / "pairs.jsonl").open("w", encoding="utf-8") as fh:  # a pair at a time: never the file as one string
        fh.writelines(json.dumps(_pair_row(p)) + "\n" for p in result.pairs)
    (out / "comparison.json").write_text(json.dumps({"analysis": result.analysis, "dataset": result.dataset,
                                                     "model_a": result.model_a, "model_b": result.model_b}),
                                         encoding="utf-8")
    regressions = {name: asdict(reg) if reg else None
                   for name, reg in (("model_matching", result.model_matching), ("preference", result.preference))}
    (out / "regressions.json").write_text(json.dumps({**regressions, "notes": result.notes,
                                                      "labels": asdict(result.labels), "selection": result.selection,
                                                      "invalid_verdicts": result.invalid_verdicts,
                                                      "black_box_ceiling": asdict(result.ceiling) if result.ceiling
                                                      else None}, indent=2),
                                          encoding="utf-8")
    reliability.write(result.reliability, result.agreements, out)
    if result.turns:
        (out / "turns.json").write_text(json.dumps([asdict(t) for t in result.turns], indent=1), encoding="utf-8")
    if result.validation is not None:  # the judges against people: agreement, κ, people's own, PPI++
        (out / people.FILE).write_text(json.dumps(asdict(result.validation), indent=1), encoding="utf-8")
    if result.themes:
        (out / "reason_themes.json").write_text(json.dumps({v: [asdict(t) for t in ts]
                                                            for v, ts in result.themes.items()}, indent=1),
                                                encoding="utf-8")
    return out


def _pair_row(pair: PairVerdicts) -> dict[str, Any]:
    """A pair's fields as plain values (vars() gives what asdict() would, without its deep copy); a pair that is
    no conversation's turn leaves those fields out."""
    row = {**vars(pair), "measures": {vibe: list(values) for vibe, values in pair.measures.items()}}
    return row if pair.conversation is not None else {k: v for k, v in row.items() if k not in ("conversation", "turn")}
