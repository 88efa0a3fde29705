"""Generation separability (Ghosh et al.): how distinguishable two models' outputs are on each input.

For an item with K samples per model: self-alignment Â_AA is the mean similarity over the K(K−1) pairs of
A's distinct samples, cross-alignment Â_AB the mean over all K² pairs, and
δ = max(Â_AA, Â_BB) − Â_AB. Alignments are min-max normalized over all items of one (dataset, model pair,
similarity) before δ is taken, as the authors' code does; the raw δ is kept beside it. High δ: each
model is more like itself than like the other, so a comparison on that item says something; low δ: the
two are interchangeable there and preferences between them are noise.

With a `preference_judge`, the judge compares the two models' j-th samples on every prompt (both orders; a
verdict that follows the position is a tie), and the outcomes are ranked three ways: Bradley–Terry, Elo, and
the paper's separability-weighted Elo, whose K grows with the prompt's δ (K·α / (1 + e^(−β(δ − T))), T = 0.4,
α = 2, β = 6 unless the spec's `elo` block says otherwise), so comparisons on prompts where the two models
are distinguishable move the ratings more. As the paper does, each fit reads one of a prompt's K comparisons,
drawn at random: the ratings are the mean over 200 such draws, and their intervals resample prompts with one
comparison drawn from each.

The paper's T = 0.4 was set on BERTScore from roberta-large; offline δ comes from all-MiniLM-L6-v2 (6 layers),
whose scores sit on another scale. The page says so beside every δ, and `encoder: {path, num_layers}` runs
BERTScore on any local model (roberta-large with 17 layers reproduces bert-score's default).
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field

import numpy as np

from engine.api.analysis import JudgeReliability, Outcome, Ranking, rank, reliability
from engine.api.embeddings import MODEL_NAME, TokenEncoder, token_encoder
from engine.api.records import PairJudgment, Prepared, Result
from engine.api.spec import Analysis
from engine.builtin_plugins.methods.separability.options import SeparabilityOptions
from engine.builtin_plugins.methods.separability.similarity import group_similarity

PAPER_ENCODER = "roberta-large"


@dataclass(frozen=True)
class ItemSeparability:
    item_id: str
    self_a: float  # raw alignments
    self_b: float
    cross: float
    delta: float  # max(self_a_norm, self_b_norm) − cross_norm
    delta_raw: float  # max(self_a, self_b) − cross
    self_a_norm: float = 0.0  # min-max normalized over the items, as δ reads them
    self_b_norm: float = 0.0
    cross_norm: float = 0.0


@dataclass
class SeparabilityResult:
    analysis: str
    model_a: str
    model_b: str
    similarity: str
    samples: int
    items: list[ItemSeparability]  # highest δ first
    mean_delta: float
    quantiles: dict[str, float]
    encoder: str = ""  # the model BERTScore ran on, and its layers
    scale_note: str = ""  # how δ on this encoder compares with the paper's threshold
    preference_judge: str | None = None
    rankings: list[Ranking] = field(default_factory=list)  # BT, Elo and sep-Elo on the judge's sample verdicts
    invalid: int = 0  # the judge's unparseable answers
    sep_elo: dict[str, float] = field(default_factory=dict)  # k, threshold, alpha, beta used
    reliability: list[JudgeReliability] = field(default_factory=list)  # the preference judge's, when there is one


def alignments(sim: np.ndarray, self_pairs: bool) -> float:
    """Mean of a K×K similarity matrix; for self-alignment the diagonal (a sample with itself) is left out."""
    k = sim.shape[0]
    if self_pairs:
        return float((sim.sum() - np.trace(sim)) / (k * (k - 1)))
    return float(sim.mean())


def item_alignments(sim: np.ndarray, k: int) -> tuple[float, float, float]:
    """(Â_AA, Â_BB, Â_AB) from the similarity matrix over an item's 2K texts (A's K first)."""
    return alignments(sim[:k, :k], True), alignments(sim[k:, k:], True), alignments(sim[:k, k:], False)


def separability_from_alignments(item_ids: list[str], raw: np.ndarray) -> list[ItemSeparability]:
    """`raw` rows are (self_a, self_b, cross); normalize the pooled values to [0, 1] and take δ."""
    low, high = float(raw.min()), float(raw.max())
    norm = (raw - low) / (high - low) if high > low else np.zeros_like(raw)
    out = [ItemSeparability(i, float(r[0]), float(r[1]), float(r[2]), float(max(n[0], n[1]) - n[2]),
                            float(max(r[0], r[1]) - r[2]), float(n[0]), float(n[1]), float(n[2]))
           for i, r, n in zip(item_ids, raw, norm, strict=True)]
    return sorted(out, key=lambda s: -s.delta)


def _encoder(analysis: Analysis) -> tuple[TokenEncoder | None, str, str]:
    """(encoder, its label, the scale note) for the analysis' BERTScore."""
    chosen = SeparabilityOptions.of(analysis).encoder
    if chosen:
        path, layers = chosen.path, chosen.num_layers
        label = f"{path} ({layers} layers)"
        note = ("" if PAPER_ENCODER in path else f"δ from BERTScore on {label}; the paper's T = 0.4 was set on "
                f"{PAPER_ENCODER}, so compare δ with it only on that encoder")
        return token_encoder(path, layers), label, note
    label = f"{MODEL_NAME} (6 layers)"
    return None, label, (f"δ from BERTScore on {label}, not the paper's {PAPER_ENCODER}: its scores sit on another "
                         "scale, so the paper's T = 0.4 is a rough guide here (encoder: {path, num_layers} runs any "
                         "local model)")


def analyze_separability(prepared: Prepared, analysis: Analysis,
                         results: dict[str, Result]) -> list[SeparabilityResult]:
    opts = SeparabilityOptions.of(analysis)
    metric = opts.similarity
    bertscore = metric.startswith("bertscore")
    encoder, label, note = _encoder(analysis) if bertscore else (None, "", "")
    bindings = [b for b in prepared.plan.bindings.get(analysis.name, []) if b.variant == "original"]
    judged = _preference_index(prepared, analysis, results)
    out = []
    for model_a, model_b in itertools.combinations(analysis.models, 2):
        groups = []
        for binding in bindings:
            a = [str(results[t].output) for t in binding.outputs[model_a] if t in results]
            b = [str(results[t].output) for t in binding.outputs[model_b] if t in results]
            if len(a) >= 2 and len(b) >= 2:
                groups.append((binding.item, a, b))
        if not groups:
            continue
        matrices = group_similarity(metric, [a + b for _, a, b in groups], encoder)
        raw = np.array([item_alignments(sim, len(a)) for sim, (_, a, _) in zip(matrices, groups, strict=True)])
        items = separability_from_alignments([g[0] for g in groups], raw)
        deltas = np.array([s.delta for s in items])
        result = SeparabilityResult(
            analysis.name, model_a, model_b, metric, opts.samples, items,
            float(deltas.mean()),
            {q: float(np.quantile(deltas, float(q))) for q in ("0.1", "0.25", "0.5", "0.75", "0.9")}, label, note)
        if judged is not None:
            _rank_samples(result, bindings, judged, analysis)
        out.append(result)
    return out


def _preference_index(prepared: Prepared, analysis: Analysis,
                      results: dict[str, Result]) -> dict[tuple[str, str], dict[str, Result]] | None:
    """(A's sample task, B's sample task) → {order: the judge's answer}; None without a preference judge."""
    judge = SeparabilityOptions.of(analysis).preference_judge
    if not judge:
        return None
    index: dict[tuple[str, str], dict[str, Result]] = {}
    for task in prepared.plan.tasks:
        if task.stage != "preference" or task.id not in results:
            continue
        request = prepared.plan.requests[task.id]
        if not isinstance(request, PairJudgment) or request.judge != judge:
            continue
        first, second = request.outputs
        key = (second, first) if request.order == "ba" else (first, second)
        index.setdefault(key, {})[request.order or "ab"] = results[task.id]
    return index


def _rank_samples(result: SeparabilityResult, bindings: list, judged: dict[tuple[str, str], dict[str, Result]],
                  analysis: Analysis) -> None:
    """The judge's verdict on every (A sample j, B sample j) pair as an outcome carrying its prompt's δ."""
    opts = SeparabilityOptions.of(analysis)
    judge = opts.preference_judge
    assert judge is not None  # samples are judged only where the analysis names a preference judge
    delta = {s.item_id: s.delta for s in result.items}
    outcomes, invalid, answers = [], 0, []
    for binding in bindings:
        if binding.item not in delta:
            continue
        for ga, gb in zip(binding.outputs[result.model_a], binding.outputs[result.model_b], strict=True):
            orders = judged.get((ga, gb), {})
            if len(orders) < 2:
                continue
            pair = reliability.two_orders(judge, binding.item, f"{ga}/{gb}", orders["ab"], orders["ba"])
            answers.append(pair)
            score = pair.verdict
            invalid += (pair.first is None) + (pair.second is None)
            if score is None:  # unanswered: missing, never a tie
                continue
            outcomes.append(Outcome(result.model_a, result.model_b, (score + 1) / 2, delta=delta[binding.item],
                                    unit=binding.item))
    params = asdict(opts.elo)
    sep = {k: params[k] for k in ("threshold", "alpha", "beta")}
    seed = opts.seed
    models = [result.model_a, result.model_b]
    result.preference_judge = judge
    result.invalid = invalid
    result.reliability = reliability.reliability(answers, "preference between samples", seed=seed)
    result.sep_elo = params
    if outcomes:
        result.rankings = [rank(method, outcomes, models, rounds=200, seed=seed, k=params["k"], sep=sep,
                                unit="prompt", one_per_unit=True) for method in ("bradley_terry", "elo", "sep_elo")]
