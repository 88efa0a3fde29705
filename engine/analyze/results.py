"""Analyze stage: every analysis of a spec over a finished run, as one typed `RunResults` the report reads."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from engine.analyze.outcomes import STYLE_FEATURES, human_outcomes, score_outcomes
from engine.analyze.personas import PersonaResult, analyze_personas, write_personas
from engine.analyze.profiles import ProfileResult, profile, write_profiles
from engine.analyze.rankings import Ranking, rank
from engine.analyze.reference import ReferenceResult, analyze_reference, write_reference
from engine.analyze.separability import SeparabilityResult, analyze_separability
from engine.analyze.vibecheck import VibeCheckResult, analyze_vibecheck, write_vibecheck
from engine.discover.splits import split_seed
from engine.records import Prepared, Result
from engine.spec.model import Analysis


@dataclass
class RankingResult:
    analysis: str
    outcomes: str  # where the pairwise outcomes came from
    rankings: list[Ranking]
    warnings: list[str] = field(default_factory=list)  # shown in red above the ratings


@dataclass
class RunResults:
    spec_name: str
    title: str
    description: str
    manifest: dict
    vibecheck: list[VibeCheckResult] = field(default_factory=list)
    rankings: list[RankingResult] = field(default_factory=list)
    separability: list[SeparabilityResult] = field(default_factory=list)
    reference: list[ReferenceResult] = field(default_factory=list)
    personas: list[PersonaResult] = field(default_factory=list)
    profiles: list[ProfileResult] = field(default_factory=list)  # many-model vibechecks (with a reference)


def analyze_run(prepared: Prepared, results: dict[str, Result], run_dir: Path,
                origins: dict[str, str] | None = None) -> RunResults:
    """`results`: the finished tasks' results (from the cache), read once by the caller and shared with the
    report stage."""
    spec = prepared.spec
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    out = RunResults(spec.name, spec.report.get("title") or spec.name, spec.description, manifest)
    for analysis in spec.analyses.values():
        if analysis.method == "vibecheck" and "reference" in analysis.options:
            out.profiles.append(_profiles(prepared, analysis, results, origins or {}, run_dir))
        elif analysis.method == "vibecheck":
            result = analyze_vibecheck(prepared, analysis, results, origins)
            write_vibecheck(result, run_dir)
            out.vibecheck.append(result)
        elif analysis.method == "separability":
            for sep in analyze_separability(prepared, analysis, results):
                out_dir = run_dir / analysis.name
                out_dir.mkdir(parents=True, exist_ok=True)
                (out_dir / f"delta-{sep.model_a}-vs-{sep.model_b}.json").write_text(
                    json.dumps(asdict(sep), indent=1), encoding="utf-8")
                out.separability.append(sep)
        elif analysis.method == "reference":
            reference = analyze_reference(prepared, analysis, results)
            write_reference(reference, run_dir)
            out.reference.append(reference)
        elif analysis.method == "personas":
            personas = analyze_personas(prepared, analysis, results)
            write_personas(personas, run_dir)
            out.personas.append(personas)
        elif analysis.method == "rankings":
            result = _rankings(prepared, analysis)
            _write_rankings(result, run_dir)
            out.rankings.append(result)
    return out


def _profiles(prepared: Prepared, analysis: Analysis, results: dict[str, Result], origins: dict[str, str],
              run_dir: Path) -> ProfileResult:
    """Each model's comparison with the reference (written under <analysis>/<model>/), then the profiles."""
    comparisons = []
    for comparison in analysis.comparisons():
        result = analyze_vibecheck(prepared, analysis, results, origins, comparison)
        write_vibecheck(result, run_dir / analysis.name, folder=comparison[0])
        comparisons.append(result)
    wanted = analysis.options.get("vibes")
    vibes = [v for v in prepared.spec.vibes if not wanted or v.name in wanted]
    result = profile(comparisons, analysis.options["reference"], vibes, origins,
                     prepared.spec.datasets[analysis.dataset].labels, seed=split_seed(analysis))
    write_profiles(result, run_dir)
    return result


def _rankings(prepared: Prepared, analysis: Analysis) -> RankingResult:
    opts = analysis.options
    items = prepared.items[analysis.dataset]
    warnings: list[str] = []
    if opts["outcomes"] in ("labels", "human"):  # "human" is the older name of the same choice
        outcomes = human_outcomes(items, *analysis.models)
        labels = prepared.spec.datasets[analysis.dataset].labels
        source = (f"preference labels written by {labels.who()}"
                  f"{f' ({labels.description})' if labels.description else ''}: {len(outcomes)} votes")
        warnings = _thin_outcomes(outcomes, analysis)
    else:
        models = list(analysis.models) or sorted(prepared.spec.datasets[analysis.dataset].scores)
        outcomes = score_outcomes(items, models, opts.get("tie_gap", 1.0))
        source = f"per-item comparisons of recorded scores ({len(outcomes)} pairs)"
    has_style = bool(outcomes) and all(len(o.style) == len(STYLE_FEATURES) for o in outcomes)
    rankings = []
    for method in opts.get("methods", ["bradley_terry", "elo"]):
        if method == "style_controlled" and not has_style:
            continue  # style control needs both outputs' text for every outcome
        rankings.append(rank(method, outcomes, list(analysis.models) or None, rounds=opts.get("bootstrap", 200),
                             seed=opts.get("seed", 0), ties=opts.get("ties", "half"), k=opts.get("k", 4.0),
                             style_names=STYLE_FEATURES if method == "style_controlled" else (),
                             unit="battle" if opts["outcomes"] in ("labels", "human") else "prompt"))
    return RankingResult(analysis.name, source, rankings, warnings)


MIN_VOTES = 30


def _thin_outcomes(outcomes: list, analysis: Analysis) -> list[str]:
    """What makes a label ranking unreadable, said in words: too few votes, or votes all one way."""
    out = []
    if len(outcomes) < MIN_VOTES:
        out.append(f"Only {len(outcomes)} labelled comparisons between {' and '.join(analysis.models)} (fewer than "
                   f"{MIN_VOTES}): these ratings and intervals say next to nothing. Check that the dataset's "
                   "preference values name these models (preference_values).")
    if outcomes and len({o.score for o in outcomes}) == 1:
        out.append("Every labelled comparison went the same way: the ratings only say which model always won, "
                   "and their gap is set by the prior, not by the data.")
    return out


def _write_rankings(result: RankingResult, run_dir: Path) -> None:
    out = run_dir / result.analysis
    out.mkdir(parents=True, exist_ok=True)
    (out / "rankings.json").write_text(json.dumps(asdict(result), indent=1), encoding="utf-8")
