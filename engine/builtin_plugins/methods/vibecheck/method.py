"""VibeCheck (seed 000): every model answers every prompt once, a judge panel scores each pair on every vibe
(LLM judges in both orders), and the analysis measures each vibe's separability, agreement and held-out
model-matching and preference regressions. With a `reference` and more models, every model is compared with
the reference on one set of vibes and the page shows their profiles instead.

The statistics live in this package's `analysis` and `profiles`, the pages in its `pages` and `profile_pages`;
they are imported when a run reaches them, so loading a spec stays fast.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    import numpy as np

    from engine.api.execution import Cache

from engine.api.judging import is_recorded, prompts, scores
from engine.api.methods import (
    AnalysisMethod,
    Builder,
    Page,
    analysis_method,
    estimate_tokens,
    vibe_fields,
)
from engine.api.records import DatasetError, Deferred, Item, Prepared, Result
from engine.api.spec import (
    Analysis,
    Endpoint,
    Judge,
    PathKey,
    SpecChecker,
    Vibe,
    check_vibes_have_judges,
    did_you_mean,
)
from engine.builtin_plugins.methods.vibecheck.options import VibeCheckOptions

Pair = tuple[Item, tuple[str, str], int]  # an item, its two generation tasks, their estimated tokens


def _beside_rule(label: str, accuracy: float, rule: str, rule_accuracy: float | None, where: str = "") -> str:
    """A held-out accuracy beside the length rule's on the same test pairs, as `vibe run` and `vibe publish`
    state it."""
    return f"{label} {accuracy:.1%}{where}" + (f" ({rule} {rule_accuracy:.1%})" if rule_accuracy is not None else "")


@analysis_method("vibecheck")
class VibeCheck(AnalysisMethod):
    options = VibeCheckOptions
    sections = ("profiles", "vibecheck")
    # the preference judges' verdicts (for the held-out model), and vibes proposed from the training pairs
    stages: ClassVar[dict[str, str]] = {"preference": "before judging", "discovery": "before judging"}
    report_folders = ("vibes", "explore", "profiles")
    discovers = True
    assets = ("pairdata.js", "explorer.js", "labeler.js")

    def with_discovered(self, analysis: Analysis, names: list[str]) -> Analysis:
        """An analysis that lists its vibes measures the discovered ones too: discovery ran on its pairs."""
        opts = VibeCheckOptions.of(analysis)
        if not opts.vibes:
            return analysis
        return replace(analysis, options=replace(opts, vibes=[*opts.vibes, *names]))

    def train_verdicts(self, prepared: Prepared, analysis: Analysis, results: dict[str, Result],
                       vibes: list[Vibe]) -> np.ndarray:
        from engine.builtin_plugins.methods.vibecheck.analysis import train_verdicts

        return train_verdicts(prepared, analysis, results, vibes)

    def propose_vibes(self, prepared: Prepared, analysis: Analysis, cache: Cache) -> list[tuple[Vibe, str]]:
        from engine.builtin_plugins.methods.vibecheck.discovery.propose import propose

        return propose(prepared, analysis, cache)

    def start_ahead(self, prepared: Prepared, analysis: Analysis, cache: Cache) -> None:
        """Each comparison's black-box ceiling, fitted on a core discovery leaves idle: it reads the answers and
        the split, no vibe (the pairs are those `pair_table` reads, in its order)."""
        from engine.builtin_plugins.methods.vibecheck.ceiling import start, unit_pairs
        from engine.builtin_plugins.methods.vibecheck.discovery.splits import split_bindings

        items = {it.id: it for it in prepared.items[analysis.dataset]}
        for model_a, model_b in analysis.comparisons():
            bindings, train = split_bindings(prepared, analysis, (model_a, model_b))
            answers = [(b.outputs[model_a][0], b.outputs[model_b][0]) for b in bindings]
            texts = cache.get_many({task for pair in answers for task in pair})
            texts_by_split = unit_pairs(
                ("train" if b.item in train else "test", items[b.item].conversation or b.item,
                 str(texts[a].output), str(texts[b_].output))
                for b, (a, b_) in zip(bindings, answers, strict=True) if a in texts and b_ in texts)
            start(texts_by_split["train"], texts_by_split["test"])

    def pair_verdicts(self, prepared: Prepared, analysis: Analysis, results: dict[str, Result],
                      vibes: list[Vibe]) -> tuple[list[str], np.ndarray]:
        from engine.builtin_plugins.methods.vibecheck.analysis import pair_verdicts

        return pair_verdicts(prepared, analysis, results, vibes)

    def boards(self, folder: Path) -> list[Path]:
        """The vibe profiles against the reference model (profiles.json), written where the analysis has one."""
        path = folder / "profiles.json"
        return [path] if path.is_file() else []

    def headline(self, folder: Path) -> list[str]:
        """The held-out accuracies beside the length rule's, from regressions.json."""
        from engine.builtin_plugins.methods.vibecheck.heldout import RULE

        path = folder / "regressions.json"
        if not path.is_file():
            return []
        data = json.loads(path.read_text(encoding="utf-8"))
        parts = []
        for key, label in (("model_matching", "model matching"), ("preference", "preference")):
            if data.get(key):
                name = data[key].get("rule", RULE)  # a run written before the rule was oriented: the longer
                rule = next((b for b in data[key].get("baselines", []) if b["rule"] == name), None)
                parts.append(_beside_rule(label, data[key]["test_accuracy"], name, rule["accuracy"] if rule else None))
        return parts

    def summary(self, section: str, result: Any) -> str | None:
        if section != "vibecheck":
            return None
        kept = [v for v in result.vibes if v.kept]
        line = f"  {result.analysis}: {len(kept)}/{len(result.vibes)} vibes kept"
        for label, reg in (("model matching", result.model_matching), ("preference", result.preference)):
            if reg:
                rule = reg.baseline(reg.rule)
                line += "; " + _beside_rule(label, reg.test_accuracy, reg.rule, rule.accuracy if rule else None,
                                            " held out")
        return line

    def judge_notes(self, section: str, result: Any) -> dict[str, list[str]]:
        """Each judge's agreement with people's labels, where the analysis reads some (`validation`)."""
        comparisons = result.comparisons if section == "profiles" else [result]
        out: dict[str, list[str]] = {}
        for vc in comparisons:
            if vc.validation is not None:
                where = f"{vc.analysis}, {vc.model_a} vs {vc.model_b}"
                for judge, lines in vc.validation.judge_lines(where).items():
                    out.setdefault(judge, []).extend(lines)
        return out

    def check(self, c: SpecChecker, path: PathKey, analysis: dict[str, Any]) -> None:
        models, reference = analysis.get("models", []), analysis.get("reference")
        if len(models) < 2:
            c.report((*path, "models"), f"vibecheck compares at least 2 models, got {len(models)}")
        elif reference is None and len(models) > 2:
            c.report((*path, "models"), f"vibecheck of {len(models)} models needs a 'reference' (one of them): "
                     "every other model is compared with it on the same prompts and vibes")
        if reference is not None and reference not in models:
            c.report((*path, "reference"), f"reference {reference!r} is not one of the analysis' models "
                     f"({', '.join(models)})")
        vibes = c.doc.get("vibes") or []
        if not vibes:
            c.report(path, "vibecheck needs vibes: declare some under 'vibes' or add a discover block")
        names = {v["name"] for v in vibes if "name" in v}
        for i, vibe in enumerate(analysis.get("vibes", [])):
            if vibe not in names:
                c.report((*path, "vibes", i), f"unknown vibe {vibe!r}{did_you_mean(vibe, names)} (declared: "
                         f"{', '.join(sorted(names)) or 'none'})")
        validation = analysis.get("validation") or {}
        for i, judge in enumerate(analysis.get("judges", [])):
            kind = c.judge_for((*path, "judges", i), judge, "vibe")
            if kind is not None and kind.learns and not (validation.get("files") or validation.get("columns")):
                c.report((*path, "judges", i), f"judge {judge!r} is {kind.label}: it learns from people's labels "
                         "of this analysis' pairs, so give some under 'validation' (files or columns)")
        for i, judge in enumerate(analysis.get("preference_judges", [])):
            c.judge_for((*path, "preference_judges", i), judge, "text")
        check_vibes_have_judges(c, path, analysis)
        for i, raw in enumerate(validation.get("files", [])):
            c.file_problem((*path, "validation", "files", i), raw)
        _check_labels(c, path, analysis, names)
        if reference is not None and validation.get("columns"):
            c.report((*path, "validation", "columns"), "a dataset's label columns hold one verdict per prompt, "
                     f"and this analysis compares every model with {reference!r}: give the labels in files that "
                     "name each label's two models (model_a, model_b), as the label view writes them")

    def plan(self, builder: Builder, a: Analysis) -> None:
        """Each comparison (a model and its reference, or the two models) is judged on every vibe, pair by
        pair; preference judges see every pair too (labelled ones measure the judge)."""
        spec, opts = builder.spec, VibeCheckOptions.of(a)
        comparisons = a.comparisons()
        by_comparison: dict[tuple[str, str], list[Pair]] = {c: [] for c in comparisons}
        # A recorded model may miss a prompt (a battle log shows each prompt to a few models; an empty answer
        # cell is left out as data is read): the prompt is then left out of that model's comparisons.
        for item in builder.items[a.dataset]:
            models = [m for m in (a.models if opts.reference is not None else a.models[:2])
                      if not is_recorded(spec.models[m].provider) or m in item.outputs]
            if opts.reference is not None and opts.reference not in models:
                continue  # a prompt the reference has no recorded answer to has nothing to compare
            made = {model: builder.generation(a.name, model, a.dataset, item) for model in models}
            builder.bind(a.name, item, {model: [task] for model, (task, _) in made.items()})
            for first, second in comparisons:
                if first in made and second in made:
                    by_comparison[(first, second)].append(
                        (item, (made[first][0], made[second][0]), made[first][1] + made[second][1]))
        pairs = [pair for comparison in comparisons for pair in by_comparison[comparison]]
        vibes = opts.measured(spec.vibes)
        judges = [spec.judges[j] for j in opts.judges]
        for vibe in vibes:
            vibe_judges = [spec.judges[j] for j in vibe.judges] if vibe.judges else judges
            fields = vibe_fields(vibe)
            # an LLM judge sees a vibe's example answers too, when it has them
            template = prompts.VIBE_SCORE_EXAMPLES if vibe.examples else prompts.VIBE_SCORE
            examples_text = "".join(vibe.examples.low + vibe.examples.high) if vibe.examples else ""
            for judge in (j for j in vibe_judges if scores(j, vibe)):
                builder.judge_pairs("judge", a.name, judge, pairs, template, fields, extra_text=examples_text,
                                    question=vibe.name)
        for name in opts.preference_judges:
            for item, outputs, tokens in pairs:
                builder.judge_pair("preference", a.name, spec.judges[name], item, prompts.PREFERENCE,
                                   {"prompt": item.prompt}, outputs, tokens)
        if spec.discovery is not None:
            _discovery_estimates(builder, a, pairs, judges)

    def analyze(self, prepared: Prepared, analysis: Analysis, results: dict[str, Result], run_dir: Path,
                origins: dict[str, str]) -> dict[str, list[Any]]:
        from engine.builtin_plugins.methods.vibecheck.analysis import write_vibecheck
        from engine.builtin_plugins.methods.vibecheck.discovery.splits import split_seed
        from engine.builtin_plugins.methods.vibecheck.profiles import (
            BOOTSTRAP_ROUNDS,
            profile,
            win_rate,
            write_profiles,
        )

        opts = VibeCheckOptions.of(analysis)
        if opts.reference is None:
            from engine.builtin_plugins.methods.vibecheck.turns import TURN_TEST, turn_cells

            result = _compared(prepared, analysis, results, origins)
            kept = {v.name for v in result.vibes if v.kept}
            vibes = [v for v in opts.measured(prepared.spec.vibes) if v.name in kept]
            # turn by turn on the test pairs, for the vibes the training pairs kept (and in the direction they
            # showed): a dropped vibe's turn cells were claims the page's own keep/drop had already declined
            result.turns = turn_cells([result], vibes, {v.name: True for v in vibes})
            result.turn_test = TURN_TEST
            result.winrate = win_rate(result, split_seed(analysis), BOOTSTRAP_ROUNDS)  # who won, by the labels
            write_vibecheck(result, run_dir)
            return {"vibecheck": [result]}
        comparisons = []  # each model against the reference, written under <analysis>/<model>/
        for comparison in analysis.comparisons():
            compared = _compared(prepared, analysis, results, origins, comparison)
            write_vibecheck(compared, run_dir / analysis.name, folder=comparison[0])
            comparisons.append(compared)
        vibes = opts.measured(prepared.spec.vibes)
        profiles = profile(comparisons, opts.reference, vibes, origins,
                           prepared.spec.datasets[analysis.dataset].labels, seed=split_seed(analysis))
        write_profiles(profiles, run_dir)
        return {"profiles": [profiles]}

    def section(self, name: str, result: Any, page: Page) -> list[dict[str, Any]]:
        if name == "profiles":
            from engine.builtin_plugins.methods.vibecheck.profile_pages import render_profiles
            return [render_profiles(page.env, result, page.prepared, page.run_dir, page.outputs)]
        from engine.builtin_plugins.methods.vibecheck.pages import vibecheck_section
        return [vibecheck_section(page.env, result, page.prepared, page.run_dir, page.outputs)]


def _check_labels(c: SpecChecker, path: PathKey, analysis: dict[str, Any], declared: set[str]) -> None:
    """People's labels are small: every file (and every column's vibe) is read here, at validate, so a labels
    file whose header names no vibe, or holds a bad value, is located before any answer is measured. Skipped
    where discovery adds vibes, which no label can name until it has run."""
    if any("discover" in entry for entry in c.doc.get("vibes") or [] if isinstance(entry, dict)):
        return
    validation = analysis.get("validation") or {}
    vibes = list(analysis.get("vibes") or sorted(declared))
    models = list(analysis.get("models", []))
    reference = analysis.get("reference")
    for i, entry in enumerate(validation.get("columns", [])):
        if entry.get("vibe") not in vibes:
            c.report((*path, "validation", "columns", i, "vibe"), f"vibe {entry.get('vibe')!r} is not one this "
                     f"analysis measures{did_you_mean(str(entry.get('vibe')), vibes)} ({', '.join(vibes)})")
    if len(models) < 2:
        return
    first, second = (models[0] if models[0] != reference else models[1], reference) if reference else models[:2]
    for i, raw in enumerate(validation.get("files", [])):
        file = c.file_path((*path, "validation", "files", i), raw)
        if file.is_file():
            from engine.api.data import read_labels

            try:
                read_labels(file, vibes, first, second, reference is not None)
            except DatasetError as error:
                c.report((*path, "validation", "files", i), str(error))


def _compared(prepared: Prepared, analysis: Analysis, results: dict[str, Result], origins: dict[str, str],
              comparison: tuple[str, str] | None = None) -> Any:
    """One comparison's verdicts and statistics, with the themes of its LLM judges' reasons for the page."""
    from engine.builtin_plugins.methods.vibecheck import reason_themes
    from engine.builtin_plugins.methods.vibecheck.analysis import analyze_vibecheck

    result = analyze_vibecheck(prepared, analysis, results, origins, comparison)
    result.themes = reason_themes.by_vibe(result.pairs, [v.name for v in result.vibes])
    return result


def _discovery_estimates(builder: Builder, a: Analysis, pairs: list[Pair], judges: list[Judge]) -> None:
    """Estimates for work that discovery adds: its proposer's calls, and every judge's scoring of up to
    `max_vibes` discovered vibes on every pair of the analysis (the vibes are judged like declared ones)."""
    d = builder.spec.discovery
    assert d is not None
    note = f"estimate: score up to {d.max_vibes} discovered vibes on all {len(pairs)} pairs"
    if d.method == "llm":
        proposer = builder.spec.judges[d.proposer or ""]
        assert proposer.endpoint is not None
        per_batch = sum(t for _, _, t in pairs[: d.batch]) + d.batch * 200
        calls = (math.ceil(d.pairs_per_round / d.batch) * 2 + 1) * d.iterations
        builder.defer(replace(deferred_calls("discovery", a.name, proposer.endpoint, calls, per_batch, 512,
                                             "estimate: propose (both orders) and reduce vibes, per iteration"),
                              tasks=calls))
    offline = [j for j in judges if j.endpoint is None]
    # a discovered vibe with a metric goes to the offline judges that can measure it, one without to those
    # that place answers between its ends: count the larger group
    measured, placed = Vibe("", "", "", metric="length_words"), Vibe("", "", "")
    per_vibe = max(sum(scores(j, measured) for j in offline), sum(scores(j, placed) for j in offline))
    if per_vibe:
        builder.defer(Deferred("judge", a.name, "offline judges", 0, 0, 0, 0.0, note,
                               tasks=d.max_vibes * len(pairs) * per_vibe))
    for judge in judges:
        if judge.endpoint is not None:
            calls = d.max_vibes * len(pairs) * 2
            per_call = estimate_tokens(prompts.VIBE_SCORE.user) + pairs[0][2] if pairs else 0
            builder.defer(replace(deferred_calls("judge", a.name, judge.endpoint, calls, per_call,
                                                 judge.endpoint.params.max_tokens, note), tasks=calls))


def deferred_calls(stage: str, analysis: str, endpoint: Endpoint, calls: int, in_tokens: int, out_tokens: int,
                   note: str) -> Deferred:
    """Calls a stage will make only once earlier results exist (discovery's proposals, the judging of vibes not
    yet found): counted and priced in the plan, though their tasks cannot be listed yet."""
    return Deferred(stage, analysis, endpoint.name, calls, calls * in_tokens, calls * out_tokens,
                    endpoint.cost(calls * in_tokens, calls * out_tokens), note)
