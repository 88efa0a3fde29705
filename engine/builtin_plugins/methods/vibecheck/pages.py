"""A two-model vibecheck on the leaderboard: its section's figures, a page per vibe (definition, verdict
distribution, measured values, the sentences a measure of meaning counts in each model's answers, telling
examples, what the LLM judges said), the regressions page and the
explorer of every pair, which every chart, table row and vibe page links into with its filter set."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from jinja2 import Environment

from engine.api.judging import sentence_meaning
from engine.api.records import Prepared, Result
from engine.api.report import charts, slug, text_of
from engine.builtin_plugins.methods.vibecheck import charts as own_charts
from engine.builtin_plugins.methods.vibecheck import headline
from engine.builtin_plugins.methods.vibecheck.explorer import label_page, link, write_explorer
from engine.builtin_plugins.methods.vibecheck.heldout import Accuracy, HeldOutFit
from engine.builtin_plugins.methods.vibecheck.records import PairVerdicts, VibeCheckResult, VibeScore

EXAMPLES_PER_VIBE = 3
MEANING_PAIRS = 12  # the clearest pairs each way whose sentences a measure of meaning's page reads
MEANING_SENTENCES = 5  # the sentences it shows per model


@dataclass(frozen=True)
class Sample:
    """One pair as a vibe page shows it."""

    pair: PairVerdicts
    prompt: str
    output_a: str
    output_b: str
    link: str  # the pair in the explorer, from the report root


def vibecheck_section(env: Environment, vc: VibeCheckResult, prepared: Prepared, run_dir: Path,
                      outputs: dict[str, Result]) -> dict[str, Any]:
    items = {it.id: it for it in prepared.items[prepared.spec.analyses[vc.analysis].dataset]}
    vibe_pages = {vibe.name: f"vibes/{slug(vc.analysis)}-{slug(vibe.name)}.html" for vibe in vc.vibes}
    explorer = write_explorer(env, vc, prepared, outputs, run_dir, slug(vc.analysis), vibe_pages, "index.html")
    samples = [Sample(p, items[p.item_id].prompt, text_of(outputs, p.output_a), text_of(outputs, p.output_b),
                      link(explorer, pair=p.item_id)) for p in vc.pairs]
    rows = [{**row, "explore": link(explorer, vibe=row["vibe"], dir=_sign(row["separability"]))}
            for row in headline.chart_rows(vc)]
    sep_chart = own_charts.separability_chart(rows, vc.model_a, vc.model_b)
    charts.export(sep_chart, run_dir / "charts" / f"{slug(vc.analysis)}-separability")
    acc_rows = [{"task": name, "rule": rule.rule, "accuracy": rule.accuracy, "ci_low": rule.ci_low,
                 "ci_high": rule.ci_high, "n_test": rule.n}
                for name, reg in (("model matching", vc.model_matching), ("preference", vc.preference)) if reg
                for rule in _accuracies(reg)]
    acc_chart = own_charts.accuracy_chart(acc_rows) if acc_rows else None
    measured = _measured_values(vc)
    for vibe in vc.vibes:
        _render_vibe_page(env, vc, vibe, samples, measured.get(vibe.name), run_dir / vibe_pages[vibe.name], run_dir,
                          explorer, {name: judge.kind for name, judge in prepared.spec.judges.items()})
    regressions_page = f"{slug(vc.analysis)}-regressions.html"
    explore = {v.name: link(explorer, vibe=v.name, dir=_sign(_lean(v))) for v in vc.vibes}
    (run_dir / regressions_page).write_text(env.get_template("regressions.html.j2").render(vc=vc, explore=explore,
                                                                                            root="."),
                                            encoding="utf-8")
    ranked = sorted(vc.vibes, key=lambda v: (not v.kept, -abs(_lean(v))))
    return {"result": vc, "ranked": ranked, "sep_chart": sep_chart, "regressions_page": regressions_page,
            "headline": headline.headline(vc),
            "acc_chart": acc_chart, "vibe_pages": vibe_pages, "explorer": explorer, "label_page": label_page(explorer),
            "explore": explore,
            "pairs": len(vc.pairs),
            "n_train": sum(p.split == "train" for p in vc.pairs), "n_test": sum(p.split == "test" for p in vc.pairs),
            # turns of conversations: the intervals' units, where they differ from the pairs
            "test_conversations": len({p.cluster for p in vc.pairs if p.split == "test" and p.conversation}),
            "chart_file": f"charts/{slug(vc.analysis)}-separability.svg"}


def _accuracies(reg: HeldOutFit) -> list[Accuracy]:
    """The regression's own accuracy first, then its baselines on the same test pairs."""
    return [Accuracy("vibes", reg.test_accuracy, reg.ci_low, reg.ci_high, reg.n_test), *reg.baselines]


def _sign(value: float | None) -> int | None:
    return None if not value else (1 if value > 0 else -1)


def _lean(vibe: VibeScore) -> float:
    """The side a vibe leans to: its test separability, else (a dropped vibe) its training one."""
    return vibe.separability if vibe.separability is not None else vibe.separability_train


def _render_vibe_page(env: Environment, vc: VibeCheckResult, vibe: VibeScore, samples: list[Sample],
                      measured: np.ndarray | None, path: Path, run_dir: Path, explorer: str,
                      kind_of_judge: dict[str, str]) -> None:
    counts = {"-1": 0, "0": 0, "1": 0}
    for s in samples:
        verdict = s.pair.nu[vibe.name]
        if verdict is not None:  # no readable verdict: missing, not counted as a tie
            counts[str(verdict)] += 1
    page = "../" + explorer
    links = {"all": link(page, vibe=vibe.name, sort="vibe-a"), "disagree": link(page, vibe=vibe.name, disagree=1),
             "flip": link(page, vibe=vibe.name, flip=1),
             **{key: link(page, vibe=vibe.name, dir=key) for key in counts}}
    dist = own_charts.verdict_distribution_chart(counts, vc.model_a, vc.model_b,
                                             {key: links[key] for key in counts})
    charts.export(dist, run_dir / "charts" / f"{slug(vc.analysis)}-{slug(vibe.name)}-verdicts")
    bins = None if measured is None else own_charts.measure_bins({vc.model_a: measured[:, 0],
                                                                   vc.model_b: measured[:, 1]})
    measure_spec = None if bins is None else own_charts.measure_chart(bins, vibe.metric or "", vc.model_a, vc.model_b)
    examples, against = _telling(samples, vibe)
    html = env.get_template("vibe.html.j2").render(vc=vc, vibe=vibe, dist=dist, measure=measure_spec,
                                                   sentences=_counted_sentences(vc, vibe, samples),
                                                   examples=examples, against=against, links=links, counts=counts,
                                                   themes=vc.themes.get(vibe.name, []), kind_of_judge=kind_of_judge,
                                                   root="..")
    path.write_text(html, encoding="utf-8")


def _telling(samples: list[Sample], vibe: VibeScore) -> tuple[list[Sample], list[Sample]]:
    """Pairs that show the vibe's measured direction (the side its separability leans to), clearest first,
    and one that goes against it, so a reader sees both what the number says and that it is a tendency."""
    lean = _lean(vibe)
    sign = 1 if lean > 0 else -1
    decided = _decided(samples, vibe)
    if lean == 0:
        return decided[:EXAMPLES_PER_VIBE], []
    return ([s for s in decided if s.pair.nu[vibe.name] == sign][:EXAMPLES_PER_VIBE],
            [s for s in decided if s.pair.nu[vibe.name] == -sign][:1])


def _counted_sentences(vc: VibeCheckResult, vibe: VibeScore, samples: list[Sample]) -> dict[str, Any] | None:
    """For a measure of meaning (None for any other vibe): per model, the sentences of its answers the measure
    counts, nearest the examples' mean direction first, each with its pair in the explorer, read from the
    `MEANING_PAIRS` clearest pairs each way, so a page embeds a few hundred sentences at most, whatever the run's
    size."""
    if not sentence_meaning.is_measure(vibe.metric or ""):
        return None
    decided = _decided(samples, vibe)
    read = [s for way in (1, -1) for s in [d for d in decided if d.pair.nu[vibe.name] == way][:MEANING_PAIRS]]
    found = sentence_meaning.counted(str(vibe.metric), [s.output_a for s in read] + [s.output_b for s in read])
    shown: dict[str, list[dict[str, Any]]] = {}
    for model, per_answer in ((vc.model_a, found[:len(read)]), (vc.model_b, found[len(read):])):
        nearest: dict[str, tuple[float, str]] = {}  # a sentence -> its cosine and its first pair's link
        for sample, sentences in zip(read, per_answer, strict=True):
            for text, cosine in sentences:
                nearest.setdefault(text, (cosine, sample.link))
        ranked = sorted(nearest.items(), key=lambda item: -item[1][0])[:MEANING_SENTENCES]
        shown[model] = [{"text": text, "cosine": cosine, "link": where} for text, (cosine, where) in ranked]
    return {"pairs": len(read), "threshold": sentence_meaning.parse(str(vibe.metric))[0], "by_model": shown}


def _decided(samples: list[Sample], vibe: VibeScore) -> list[Sample]:
    """The pairs with a verdict other than a tie on the vibe, clearest first."""
    return sorted((s for s in samples if s.pair.nu[vibe.name] not in (0, None)),
                  key=lambda s: -_strength(s.pair, vibe.name))


def _strength(pair: PairVerdicts, vibe: str) -> float:
    """How clear-cut a pair is for a vibe: judges that agree with the panel verdict, then fewer abstentions."""
    scores = [s for s in pair.by_judge[vibe].values() if s is not None]
    return sum(s == pair.nu[vibe] for s in scores) + 0.01 * len(scores)


def _measured_values(vc: VibeCheckResult) -> dict[str, np.ndarray]:
    """Per vibe, the (A's value, B's value) of every pair measured on it, as the metric judge recorded them: one
    pass over the pairs for every vibe, into arrays (a tuple per pair and vibe would hold 100 bytes each)."""
    values: dict[str, np.ndarray] = {}
    for row, pair in enumerate(vc.pairs):
        for vibe, measured in pair.measures.items():
            if vibe not in values:
                values[vibe] = np.full((len(vc.pairs), 2), np.nan)
            values[vibe][row] = measured
    return {vibe: column[~np.isnan(column[:, 0])] for vibe, column in values.items()}
