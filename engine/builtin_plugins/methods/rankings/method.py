"""Rankings from outcomes a dataset already holds: preference labels (people's votes between two models) or
per-item recorded scores, rated by Bradley–Terry, Elo or a style-controlled Bradley–Terry, each with
bootstrap intervals over the independent unit, the prompt (every battle on one prompt resampled together).
It plans no calls.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.api.data import dataset_format
from engine.api.methods import AnalysisMethod, Page, analysis_method
from engine.api.records import Prepared, Result
from engine.api.spec import Analysis, PathKey, SpecChecker, did_you_mean
from engine.builtin_plugins.methods.rankings.options import RankingsOptions

if TYPE_CHECKING:
    from engine.api.analysis import Ranking
    from engine.builtin_plugins.methods.rankings.vibe_control import VibeControl


TIE_WORDS = {"half": "ties count half a win for each model", "drop": "ties are left out of the fit"}


@analysis_method("rankings")
class Rankings(AnalysisMethod):
    options = RankingsOptions
    needs_models = False  # without `models`, every model of the battles or scores is ranked
    sections = ("rankings",)

    def check(self, c: SpecChecker, path: PathKey, analysis: dict[str, Any]) -> None:
        models = analysis.get("models", [])
        battles = dataset_format(c.dataset(analysis).get("format")).battles
        if analysis.get("outcomes", "labels") in ("labels", "human") and (len(models) < 2 if battles
                                                                          else len(models) != 2):
            c.report((*path, "models"), "a battle log's labels rank 2 or more models" if battles else
                     "a wide table's preference labels compare exactly 2 models (a battle log ranks more: "
                     "format: battles)")
        named = analysis.get("control", {}).get("vibes", "discover")
        if isinstance(named, list):
            self._check_control_vibes(c, (*path, "control", "vibes"), named)

    @staticmethod
    def _check_control_vibes(c: SpecChecker, path: PathKey, named: list[str]) -> None:
        """Each vibe a control names is measured from the answers' text: a built-in metric, or a declared vibe
        with a metric (a rankings analysis calls no judge, so a vibe a panel reads cannot be controlled for)."""
        from engine.api.judging import METRICS, is_metric

        declared = {v.get("name"): v for v in c.doc.get("vibes") or [] if isinstance(v, dict) and "name" in v}
        for i, name in enumerate(named):
            if name in declared and not is_metric(str(declared[name].get("metric", ""))):
                c.report((*path, i), f"vibe {name!r} is read by a judge panel, and a rankings analysis calls no "
                         "judge: control for vibes measured from the text (a declared vibe with metric:, or a "
                         "built-in metric)")
            elif name not in declared and name not in METRICS:
                c.report((*path, i), f"unknown vibe {name!r}{did_you_mean(name, [*declared, *METRICS])}: name a "
                         f"declared vibe with a metric, or a built-in metric ({', '.join(METRICS)})")

    def analyze(self, prepared: Prepared, analysis: Analysis, results: dict[str, Result], run_dir: Path,
                origins: dict[str, str]) -> dict[str, list[Any]]:
        result = rank_outcomes(prepared, analysis)
        write_rankings(result, run_dir)
        return {"rankings": [result]}

    def section(self, name: str, result: Any, page: Page) -> list[dict[str, Any]]:
        """One entry per rating method, each with its chart."""
        from engine.api.report import charts, slug

        out: list[dict[str, Any]] = []
        for ranking in (r for r in result.rankings if r.subset == "all"):
            spec = charts.ratings_chart([asdict(r) for r in ranking.ratings], f"{ranking.method} rating (95% CI)")
            charts.export(spec, page.run_dir / "charts" / f"{slug(result.analysis)}-{ranking.method}")
            out.append({"analysis": result.analysis, "source": result.outcomes, "ranking": ranking, "control": None,
                        "warnings": result.warnings, "subsets": [r for r in result.rankings if r.method ==
                                                                 ranking.method and r.subset != "all"],
                        "chart": spec, "chart_file": f"charts/{slug(result.analysis)}-{ranking.method}.svg"})
        control = result.control
        if control is not None and control.controlled is not None:
            spec = charts.ratings_chart([asdict(r) for r in control.controlled.ratings],
                                        "vibe-controlled rating, test prompts (95% CI)")
            charts.export(spec, page.run_dir / "charts" / f"{slug(result.analysis)}-vibe_controlled")
            out.append({"analysis": result.analysis, "source": result.outcomes, "control": control,
                        "warnings": [] if out else result.warnings, "chart": spec,
                        "chart_file": f"charts/{slug(result.analysis)}-vibe_controlled.svg"})
        if not out and result.warnings:  # nothing was ranked: the page still says why
            out.append({"analysis": result.analysis, "source": result.outcomes, "control": None, "ranking": None,
                        "warnings": result.warnings})
        return out

    def summary(self, section: str, result: Any) -> str | None:
        """The analysis' rankings in one line, then each of its warnings, as the page shows them."""
        if section != "rankings":
            return None
        methods = [r.method for r in result.rankings if r.subset == "all"]
        if result.control is not None and result.control.controlled is not None:
            methods.append("vibe_controlled")
        line = f"  {result.analysis}: {', '.join(methods) or 'no ranking'} ({result.outcomes.split(';')[0]})"
        return "\n".join([line, *(f"  warning: {w}" for w in result.warnings)])


@dataclass
class RankingResult:
    analysis: str
    outcomes: str  # where the pairwise outcomes came from
    rankings: list[Ranking]
    warnings: list[str] = field(default_factory=list)  # shown in red above the ratings
    control: VibeControl | None = None  # the vibe_controlled method's fits, on the held-out prompts


def rank_outcomes(prepared: Prepared, analysis: Analysis) -> RankingResult:
    """The outcomes the analysis names (labels or recorded scores), rated by every method it asks for."""
    from engine.api.analysis import (
        STYLE_FEATURES,
        arena_style,
        human_outcomes,
        rank,
        score_outcomes,
        style_vector,
        subset_of,
    )
    from engine.builtin_plugins.methods.rankings import vibe_control

    opts = RankingsOptions.of(analysis)
    items = prepared.items[analysis.dataset]
    warnings: list[str] = []
    controlled = "vibe_controlled" in opts.methods
    candidates = vibe_control.covariates(opts.control.vibes, {v.name: v.metric for v in prepared.spec.vibes
                                                              if v.metric}) if controlled else []
    features = (vibe_control.feature_function(candidates) if controlled
                else style_vector if "style_controlled" in opts.methods else None)
    if features is not None:  # Arena's counts of every answer, once per content
        arena_style.count_all(text for item in items for text in item.outputs.values())
    if opts.outcomes in ("labels", "human"):  # "human" is the older name of the same choice
        outcomes = human_outcomes(items, list(analysis.models), features)
        labels = prepared.spec.datasets[analysis.dataset].labels
        source = (f"preference labels written by {labels.who()}"
                  f"{f' ({labels.description})' if labels.description else ''}: {len(outcomes)} votes")
        warnings = _thin_outcomes(outcomes, analysis)
    else:
        models = list(analysis.models) or sorted(prepared.spec.datasets[analysis.dataset].scores)
        outcomes = score_outcomes(items, models, opts.tie_gap, features)
        source = (f"per-item comparisons of recorded scores ({len(outcomes)} pairs; a gap below {opts.tie_gap:g} "
                  "is a tie)")
    source += f"; {TIE_WORDS[opts.tie_rule()]}" + ("" if opts.ties else " (the default for these outcomes)")
    has_style = bool(outcomes) and all(len(o.style) >= len(STYLE_FEATURES) for o in outcomes)
    # as Vibe-Eval's tables do: all prompts, then each difficulty the dataset labels
    difficulty = {item.cluster: subset_of(item.difficulty) for item in items if item.difficulty}
    unit = "conversation" if any(item.conversation for item in items) else "prompt"
    subsets = [("all", outcomes)] + [(name, [o for o in outcomes if difficulty.get(o.unit) == name])
                                     for name in sorted(set(difficulty.values()))]
    rankings = []
    for method in (m for m in opts.methods if m != "vibe_controlled"):
        if method == "style_controlled" and not has_style:
            continue  # style control needs both outputs' text for every outcome
        for subset, chosen in subsets:
            if chosen:  # both kinds of outcome carry their item: a prompt's battles resample together
                styled = method == "style_controlled"
                rankings.append(replace(rank(method, chosen, list(analysis.models) or None, rounds=opts.bootstrap,
                                             seed=opts.seed, ties=opts.tie_rule(), k=opts.k,
                                             style_names=STYLE_FEATURES if styled else (), unit=unit),
                                        subset=subset))
    result = RankingResult(analysis.name, source, rankings, warnings)
    if controlled and has_style:
        models = list(analysis.models) or sorted({o.model_a for o in outcomes} | {o.model_b for o in outcomes})
        result.control = vibe_control.control(outcomes, models, candidates, opts.control, ties=opts.tie_rule(),
                                              rounds=opts.bootstrap, seed=opts.seed, unit=unit)
        if result.control is None and (why := vibe_control.too_few(outcomes, opts.control, ties=opts.tie_rule(),
                                                                    seed=opts.seed, unit=unit)):
            result.warnings.append(why)
    elif controlled:
        result.warnings.append("vibe control needs both answers' text for every comparison, and some have none: "
                               "no controlled ranking.")
    return result


MIN_VOTES = 30


def _thin_outcomes(outcomes: list[Any], analysis: Analysis) -> list[str]:
    """What makes a label ranking unreadable, said in words: too few votes, or votes all one way."""
    out = []
    if len(outcomes) < MIN_VOTES:
        out.append(f"Only {len(outcomes)} labelled comparisons among {', '.join(analysis.models)} (fewer than "
                   f"{MIN_VOTES}): these ratings and intervals say next to nothing. Check that the dataset's "
                   "preference values name these models (preference_values).")
    if outcomes and len({o.score for o in outcomes}) == 1:
        out.append("Every labelled comparison went the same way: the ratings only say which model always won, "
                   "and their gap is set by the prior, not by the data.")
    return out


def write_rankings(result: RankingResult, run_dir: Path) -> None:
    out = run_dir / result.analysis
    out.mkdir(parents=True, exist_ok=True)
    (out / "rankings.json").write_text(json.dumps(asdict(result), indent=1), encoding="utf-8")
