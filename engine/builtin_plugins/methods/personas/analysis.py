"""Persona vibe-testing: does the preferred model change with who is asking?

For each persona and prompt, the two models answer the original request, the persona's rewrites of it and
neutral control rewrites. Each judge compares the two answers on every dimension the persona weighs
(+1: model A's answer is better for this persona, −1: B's, 0: neither):

- an LLM judge is asked as the persona, in both orders. Agreeing orders keep their verdict; when they
  disagree, the more confident verdict stands (vibe-testing's rule) or, with `swap: tie`, neither does. An
  unparseable answer in either order leaves the dimension unscored (missing, never a tie) and is counted.
- a metric judge measures the dimension's text property (`DIMENSION_MEASURES`) on both answers, and the
  persona's `prefers` says which end that persona wants; it judges only dimensions with both.

A sample's verdict, per judge, is the sign of S = Σ_d w_d·o_d over the dimensions that judge scored (w_d the
persona's 1–5 weights). The correctness gate comes first: when a reference judge rates exactly one of the
two answers as passing, that answer wins whatever the dimensions say. Rewrites that are not similar to the
original (embedding cosine below `preservation_min`, or an LLM's "same task?" answered no when a verifier is
declared) are left out and counted. That screen is not vibe-testing's preservation rate, which needs unit
tests: where the gate runs them, the preservation rate is the paper's, per model, the share of rewrites whose
answer passes under both the original prompt and the rewrite (a lower bound: a rewrite can keep the task and
still lose a pass to a new constraint or format), with the share of originally passing ones kept beside.
Weights come from the spec or the profile file, or from a profile an LLM wrote from the description.

Per persona and prompt type (original, personalized, control) the result tallies every judge's vote on every
variant, and tests on prompts: the votes one prompt collects (several judges, several rewrites) share that
prompt and are not independent, so each prompt counts once, by the sign of its votes' sum (a tie when they
cancel). A two-sided binomial test of the prompts A won against those B won, p = 0.5 (the sign test): the
data are paired, the test needs no assumption about how much better an answer was, and ties say nothing
about direction. Holm's correction runs over every cell of the analysis. The personalized votes also become
ranking outcomes, so a persona's preference reads as a Bradley–Terry gap whose bootstrap interval resamples
prompts. Fleiss' κ (statsmodels) says how far the judges agree on each cell's samples.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any

from scipy.stats import binomtest

from engine.api.analysis import Outcome, TwoOrders, rank, reliability, stats
from engine.api.judging import (
    PairVerdict,
    PreservationCheck,
    kind_of,
    order_verdicts,
    rating_of,
)
from engine.api.records import PairJudgment, Prepared, Preservation, Profile, Rating, Result, SameTaskCheck
from engine.api.spec import (
    JUDGED_DIMENSIONS,
    Analysis,
    Judge,
    Persona,
)
from engine.builtin_plugins.methods.personas.dimensions import DIMENSION_MEASURES, persona_dimensions, persona_text
from engine.builtin_plugins.methods.personas.options import PersonasOptions
from engine.builtin_plugins.methods.personas.reading import parse_confidence, parse_profile, parse_same_task
from engine.builtin_plugins.methods.personas.records import (
    Cell,
    DimensionRate,
    DimensionVerdict,
    PersonaResult,
    PersonaSample,
    PersonaSummary,
    PreservationRate,
)

PROMPT_TYPES = ("original", "personalized", "control")


def llm_dimension_score(first: str, second: str, swap: str = "confidence") -> tuple[int, bool]:
    """(score, valid) from the two orders' answers: `first` shows A's answer as answer 1, `second` B's."""
    s1, s2 = order_verdicts(first, second)
    if s1 is None or s2 is None:
        return 0, False
    if s1 == s2:
        return s1, True
    if swap == "tie":
        return 0, True
    c1, c2 = parse_confidence(first), parse_confidence(second)
    if c1 is None or c2 is None or c1 == c2:
        return 0, True
    return (s1 if c1 > c2 else s2), True


def metric_dimension_score(verdict: dict[str, Any], prefers: str) -> int:
    """The metric judge's +1 means A measured higher; a persona preferring the low end reverses it."""
    return PairVerdict.from_json(verdict).score * (1 if prefers == "high" else -1)


def weighted_vote(scores: dict[str, int], weights: dict[str, int]) -> tuple[float, int]:
    """S = Σ w_d·o_d and its sign."""
    s = float(sum(weights.get(d, 1) * o for d, o in scores.items()))
    return s, (s > 0) - (s < 0)


def gate_verdict(passes_a: bool | None, passes_b: bool | None) -> int | None:
    """+1 / −1 when exactly one answer passes; None when both, neither, or either is unrated."""
    if passes_a is None or passes_b is None or passes_a == passes_b:
        return None
    return 1 if passes_a else -1


def vote(sample: PersonaSample, weights: dict[str, int]) -> None:
    """Each judge's vote on a sample: the correctness gate's where it decided, else the sign of the weighted sum
    over the dimensions that judge scored readably. An unreadable verdict is missing from the sum, not a 0 in
    it, so it neither pulls a vote toward a tie nor counts as the judge's opinion."""
    per_judge: dict[str, dict[str, int]] = defaultdict(dict)
    for verdict in sample.dimensions:
        if verdict.valid:
            per_judge[verdict.judge][verdict.dimension] = verdict.score
    for judge_name, scores in per_judge.items():
        sample.weighted[judge_name], sign = weighted_vote(scores, weights)
        sample.votes[judge_name] = sample.gate if sample.gate is not None else sign


def sign_test(a_wins: int, b_wins: int) -> float | None:
    n = a_wins + b_wins
    return float(binomtest(a_wins, n, 0.5).pvalue) if n else None


def cell(prompt_type: str, samples: list[PersonaSample], judges: list[str]) -> Cell:
    """Vote tallies, and the sign test over prompts (see the module docstring)."""
    votes = [v for s in samples for v in s.votes.values()]
    a, b = votes.count(1), votes.count(-1)
    n = len(votes)
    per_item: dict[str, int] = defaultdict(int)
    for s in samples:
        per_item[s.item_id] += sum(s.votes.values())
    a_items = sum(v > 0 for v in per_item.values())
    b_items = sum(v < 0 for v in per_item.values())
    return Cell(prompt_type, n, a, b, n - a - b, a / n if n else float("nan"), (n - a - b) / n if n else float("nan"),
                sign_test(a_items, b_items), len(per_item), a_items, b_items, None, judge_kappa(samples, judges))


def judge_kappa(samples: list[PersonaSample], judges: list[str]) -> float | None:
    """Fleiss' κ of the judges' votes over the samples every judge voted on and the correctness gate left to
    them; None with fewer than two judges. A gate-decided sample gives every judge the same vote, so counting
    it would report the gate's consistency with itself as the judges' agreement."""
    rows = [[s.votes[j] for j in judges] for s in samples
            if s.gate is None and all(j in s.votes for j in judges)]
    if len(judges) < 2 or not rows:
        return None
    return stats.fleiss_kappa(rows)


def _prompt_type(variant: str) -> str:
    if variant.startswith("persona"):
        return "personalized"
    return "control" if variant.startswith("control") else "original"


class _Index:
    """The plan's persona tasks, keyed the way the analysis looks them up."""

    def __init__(self, prepared: Prepared, results: dict[str, Result]):
        self.verify: dict[tuple[str, str, int], Any] = {}
        # (judge, dimension, persona text or None, output A, output B) -> {order: result}
        self.pairs: dict[tuple[str, str, str | None, str, str], dict[str, Result]] = defaultdict(dict)
        self.ratings: dict[tuple[str, str], Any] = {}
        self.checks: dict[tuple[str, str, int], Any] = {}
        self.profiles: dict[str, Any] = {}
        for task in prepared.plan.tasks:
            if task.id not in results or task.stage not in ("persona_rewrite", "persona_check", "persona_judge"):
                continue
            r, out = prepared.plan.requests[task.id], results[task.id].output
            if isinstance(r, Preservation):
                self.verify[(r.persona, r.item, r.variant)] = PreservationCheck.from_json(out)
            elif isinstance(r, SameTaskCheck):
                self.checks[(r.persona, r.item, r.variant)] = out
            elif isinstance(r, Profile):
                self.profiles[r.persona] = out
            elif isinstance(r, Rating):
                self.ratings[(r.judge, r.output)] = out
            elif isinstance(r, PairJudgment):
                order = r.order or "ab"
                a, b = r.outputs if order == "ab" else r.outputs[::-1]
                self.pairs[(r.judge, r.fields["dimension"], r.fields.get("persona"), a, b)][order] = results[task.id]


def analyze_personas(prepared: Prepared, analysis: Analysis, results: dict[str, Result]) -> PersonaResult:
    spec = prepared.spec
    opts = PersonasOptions.of(analysis)
    judges = [spec.judges[j] for j in opts.judges]
    swap = opts.swap
    gate = spec.judges.get(opts.gate_judge or "")
    threshold = float(opts.gate_threshold)
    index = _Index(prepared, results)
    model_a, model_b = analysis.models[0], analysis.models[1]
    weights = {name: persona_weights(spec.personas[name], index.profiles.get(name)) for name in opts.personas}
    samples, invalid = [], 0
    two_orders: list[TwoOrders] = []  # each LLM judge's answers in both orders, for its reliability
    verdicts: dict[str, dict[tuple[str, str], int]] = defaultdict(dict)  # judge -> (sample, dimension) -> score
    for binding in prepared.plan.bindings.get(analysis.name, []):
        persona_name, variant = binding.variant.split("/", 1)
        persona = spec.personas[persona_name]
        (ga,), (gb,) = binding.outputs[model_a], binding.outputs[model_b]
        key = (persona.name, binding.item, int(variant[7:])) if variant.startswith("persona") else None
        check, llm_check = index.verify.get(key) if key else None, index.checks.get(key) if key else None
        same_task = None if llm_check is None else parse_same_task(str(llm_check))
        similar = None if check is None else check.passed and same_task is not False
        sample = PersonaSample(persona.name, binding.item, variant, _prompt_type(variant), similar,
                               None if check is None else check.cosine, None, same_task)
        if gate is not None:
            sample.passes = [_passes(index.ratings.get((gate.name, g)), threshold) for g in (ga, gb)]
            sample.gate = gate_verdict(*sample.passes)
        for dimension in persona_dimensions(persona):
            for judge in judges:
                verdict = _dimension(judge, dimension, persona, ga, gb, index, swap)
                if verdict is None:
                    continue
                invalid += not verdict.valid
                sample.dimensions.append(verdict)
                if verdict.valid:
                    verdicts[judge.name][(f"{persona.name}/{variant}/{binding.item}", dimension)] = verdict.score
                orders = index.pairs.get((judge.name, dimension, persona_text(persona), ga, gb), {})
                if judge.endpoint is not None and len(orders) == 2:
                    two_orders.append(reliability.two_orders(judge.name, binding.item, f"{persona.name}/{variant}/"
                                                             f"{dimension}", orders["ab"], orders["ba"]))
        vote(sample, weights[persona.name][0])
        samples.append(sample)
    summaries = _adjusted([_summarize(spec.personas[name], [s for s in samples if s.persona == name], judges, model_a,
                                      model_b, *weights[name]) for name in opts.personas])
    if gate is not None and kind_of(gate).does("tests"):
        for summary in summaries:
            summary.preservation = preservation([s for s in samples if s.persona == summary.persona],
                                                (model_a, model_b))
    notes = _notes(spec.personas, opts.personas, judges, gate)
    return PersonaResult(analysis.name, model_a, model_b, {j.name: j.kind for j in judges}, swap, summaries,
                         samples, invalid, f"{gate.name} rating ≥ {threshold:g}" if gate else None, notes,
                         reliability.reliability(two_orders, "persona dimensions"),
                         reliability.agreements(verdicts, "persona dimensions"))


def _adjusted(summaries: list[PersonaSummary]) -> list[PersonaSummary]:
    """Holm-adjusted sign-test p-values over every persona × prompt-type cell tested."""
    adjusted = iter(stats.holm([c.p_value for p in summaries for c in p.cells]))
    for p in summaries:
        p.cells = [replace(c, p_adjusted=next(adjusted)) for c in p.cells]
    return summaries


def preservation(samples: list[PersonaSample], models: tuple[str, str]) -> list[PreservationRate]:
    """Vibe-testing's preservation rate from the unit tests, per model as the paper reports it: over every
    personalized rewrite (similar or not: the rate is what checks the similarity screen), whether the model's
    answer passes under both the original prompt and the rewrite."""
    originals = {s.item_id: s.passes for s in samples if s.prompt_type == "original"}
    out = []
    for side, model in enumerate(models):
        both = solved_originally = n = 0
        for s in samples:
            original = originals.get(s.item_id)
            if s.prompt_type != "personalized" or not original or not s.passes:
                continue
            before, after = original[side], s.passes[side]
            if before is None or after is None:
                continue
            n += 1
            both += before and after
            solved_originally += before
        if n:
            out.append(PreservationRate(model, both / n, both / solved_originally if solved_originally else None, n))
    return out


def _passes(out: Any, threshold: float) -> bool | None:
    rating = None if out is None else rating_of(out)
    return None if rating is None else rating >= threshold


def _dimension(of: Judge, dimension: str, persona: Persona, ga: str, gb: str, index: _Index,
               swap: str) -> DimensionVerdict | None:
    judge, kind = of.name, of.kind
    if not kind_of(of).offline:
        orders = index.pairs.get((judge, dimension, persona_text(persona), ga, gb), {})
        if len(orders) < 2:
            return None
        score, valid = llm_dimension_score(str(orders["ab"].output), str(orders["ba"].output), swap)
        return DimensionVerdict(dimension, judge, kind, score, valid)
    measure = DIMENSION_MEASURES.get(dimension)
    result = index.pairs.get((judge, dimension, None, ga, gb), {}).get("ab")
    if result is None or measure not in persona.prefers:
        return None
    verdict = result.output
    prefers = persona.prefers[measure]
    detail = f"{measure}: {verdict['value_a']:.2f} vs {verdict['value_b']:.2f}, prefers {prefers}"
    return DimensionVerdict(dimension, judge, kind, metric_dimension_score(verdict, prefers), True, detail)


def persona_weights(persona: Persona, derived: Any) -> tuple[dict[str, int], str]:
    """(weights, where they came from): the spec's or profile file's, else the LLM-written profile's (a
    dimension it left out weighs 1), else every dimension 1."""
    if persona.dimensions:
        return dict(persona.dimensions), "profile file" if persona.profile else "spec"
    parsed = parse_profile(str(derived), JUDGED_DIMENSIONS) if derived is not None else None
    if parsed is not None:
        return {d: parsed[0].get(d, 1) for d in JUDGED_DIMENSIONS}, f"written by {persona.derive_with}"
    if persona.derive_with:
        return persona_dimensions(persona), f"all 1: {persona.derive_with}'s profile was missing or unreadable"
    return persona_dimensions(persona), "all 1 (none given)"


def _summarize(persona: Persona, samples: list[PersonaSample], judges: list[Any], model_a: str, model_b: str,
               weights: dict[str, int], weights_source: str) -> PersonaSummary:
    kept = [s for s in samples if s.similar is not False]
    names = [j.name for j in judges]
    cells = [cell(t, [s for s in kept if s.prompt_type == t], names) for t in PROMPT_TYPES]
    tallies: dict[tuple[str, str], list[int]] = defaultdict(list)
    for s in kept:
        for d in s.dimensions:
            if d.valid:  # unreadable: counted in `invalid`, never a tie
                tallies[(d.dimension, d.judge)].append(d.score)
    by_name = {j.name: j for j in judges}
    dimensions = []
    for (dim, judge), scores in sorted(tallies.items()):
        measure = DIMENSION_MEASURES.get(dim) if kind_of(by_name[judge]).measures else None
        dimensions.append(DimensionRate(dim, judge, by_name[judge].kind, weights.get(dim, 1), measure,
                                        persona.prefers.get(measure) if measure else None, scores.count(1),
                                        scores.count(-1), scores.count(0)))
    personalized = cells[PROMPT_TYPES.index("personalized")]
    preferred = None
    if personalized.a_items != personalized.b_items:  # the direction the p-value beside it tests
        preferred = model_a if personalized.a_items > personalized.b_items else model_b
    outcomes = [Outcome(model_a, model_b, (v + 1) / 2, unit=s.item_id) for s in kept
                if s.prompt_type == "personalized" for v in s.votes.values()]
    ranking = rank("bradley_terry", outcomes, [model_a, model_b], rounds=200, unit="prompt") if outcomes else None
    checked = [s for s in samples if s.similar is not None]
    return PersonaSummary(persona.name, persona.description, weights, weights_source, dict(persona.prefers), cells,
                          dimensions, sum(s.similar is False for s in samples), sum(s.gate is not None for s in kept),
                          preferred, ranking, len(checked),
                          gate_prompts=len({s.item_id for s in kept if s.gate is not None}),
                          similar_rate=sum(bool(s.similar) for s in checked) / len(checked) if checked else None)


def _notes(personas: dict[str, Persona], wanted: list[str], judges: list[Any], gate: Any) -> list[str]:
    notes = []
    if gate is None:
        notes.append("No correctness gate: the analysis names no gate_judge.")
    elif kind_of(gate).does("tests"):
        notes.append(f"Correctness gate: pass@1 on the dataset's unit tests ({gate.name} runs each answer's code with "
                     "them in a subprocess with a time limit), as vibe-testing gates; prompts without tests are "
                     "left to the dimensions.")
    else:
        notes.append(f"The correctness gate is a stand-in: vibe-testing gates on pass@1 against the benchmark's unit "
                     f"tests, and here the {gate.kind} judge {gate.name}'s rating against the reference answer decides "
                     "whether an answer counts as correct. It measures closeness to one correct answer, not whether "
                     "the code runs (a unit_tests gate_judge runs the dataset's tests where it has them).")
    for name in wanted:
        persona = personas[name]
        unjudged = [d for d in persona_dimensions(persona)
                    if not any(kind_of(j).can_judge_dimension(j, DIMENSION_MEASURES.get(d), persona) for j in judges)]
        if unjudged:
            notes.append(f"{name}: no judge here can score {', '.join(unjudged)} (they need an LLM judge, or a "
                         "measured property the persona states a preference on).")
    return notes
