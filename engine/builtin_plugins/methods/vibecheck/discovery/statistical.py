"""Statistical vibe discovery: propose vibes from measured differences, with no LLM.

Candidates are interpretable properties of a single response:
- every text metric (length, list density, exclamations, hedging, ...);
- phrase lexicons mined from the training pairs: the token n-grams most over-used by each model relative to
  the other (log-odds with add-one smoothing), grouped into a small lexicon per model, and that lexicon's
  habits: the groups of its phrases that appear in nearly the same answers (one habit's wording), each a lexicon
  of its own, so that a model with several habits gets a vibe per habit, not one vibe that mixes them;
- when the panel has an embedding judge, embedding clusters: k-means on the MiniLM embeddings of all
  training answers, each cluster a vibe defined by example answers (the members nearest its centroid at the
  high end, the non-members nearest theirs at the low end) and described by its most over-used terms; and
  measures of what sentences mean: groups of sentences one side over-uses, in any wording (`meaning`), each
  measured by the metric judge as a count of an answer's sentences near the group's examples. These are learned,
  screened and compared on one seeded sample of the training pairs (`meaning.sample_rows`): every sentence read
  is embedded, and embedding them all would cost more than the rest of discovery together.
Each candidate is scored per pair exactly as its judge will score it: metrics and lexicons as the metric
judge does (the sign of A − B beyond a relative tolerance), clusters as the embedding judge does with its
default margin. Only the training split is used. Clusters are found without the labels (which model wrote
an answer, which one people preferred), so they need no cross-fitting. Lexicons are cross-fitted for selection: the
training pairs are halved, each half is scored with the lexicon mined on the other half, so a lexicon is
never credited for fitting the pairs it was mined from; the vibe finally proposed uses the lexicon mined
on all training pairs. No lexicon is mined from the human preference: "uses the phrases preferred answers
use" restates the label it would predict, and its verdicts on the training pairs it was mined from would
inflate the preference regression fitted on those same pairs (on Arena it took a coefficient of 3 with
p = 3e-14 and held-out preference accuracy fell to 55%). A candidate is considered only when its training
verdicts separate the two models once every candidate screened is counted (exact sign tests, Benjamini–Hochberg
at 5%), so two sides that differ in nothing rarely get a vibe at all. Choice is greedy forward selection: at each step
the candidate that most improves the log-likelihood of the model-matching and preference logistic
regressions together, skipping near-duplicates of chosen ones. Each chosen candidate becomes a vibe whose
low/high text states the measured property (or, for a cluster, its terms and examples), for its judge to
score.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.api.analysis import stats
from engine.api.execution import cached
from engine.api.judging import METRICS, PHRASES_PREFIX, PairVerdict, judge_kind, sentence_meaning, tokens
from engine.api.methods import vibe_fields
from engine.api.records import PairJudgment
from engine.api.spec import Vibe, VibeExamples
from engine.builtin_plugins.methods.vibecheck.discovery import meaning, ngrams
from engine.builtin_plugins.methods.vibecheck.discovery.pairs import TOLERANCE, TrainingPair, metric_columns
from engine.builtin_plugins.methods.vibecheck.discovery.selection import select

if TYPE_CHECKING:
    from engine.api.execution import Cache

MARGIN = 0.02  # the embedding judge's default margin
LEXICON_SIZE = 25
# Two phrases are one habit's wording when the answers that use either nearly all use both (Jaccard index of
# their answers). Two habits a model shows independently, on shares r and s of its answers, reach
# rs / (r + s − rs): at most 0.7 unless one of them is in every answer, and two habits in every answer are the
# same answers, which no data can tell apart.
HABIT_JACCARD = 0.8
MAX_CLUSTERS = 12
ANSWERS_PER_CLUSTER = 20  # fewer clusters than that many answers each would be mostly noise
EXAMPLES_PER_END = 5
EXAMPLE_CHARS = 600  # an example is an answer's opening; MiniLM reads only its first 256 word pieces anyway


@dataclass(frozen=True)
class Candidate:
    vibe: Vibe
    origin: str  # "metric" | "phrases:<model>" | "embedding cluster" | "sentence meaning:<model>"
    members: tuple[int, int] | None = None  # a cluster's answers by model A, and all of them
    within: str | None = None  # a habit: the lexicon of its model that it is a part of (see `screened`)

    def one_sided(self) -> bool:
        """A cluster whose answers split between the models about evenly (two-sided binomial test of model A's
        share against ½, p ≥ 0.05) groups answers by something both models do, usually the prompt's topic:
        it is no vibe of either. Other candidates are judged by their verdicts alone."""
        from scipy.stats import binomtest

        return self.members is None or binomtest(*self.members, 0.5).pvalue < 0.05


def _judged(vibe: Vibe, pairs: Sequence[TrainingPair]) -> list[PairVerdict]:
    """Each pair's verdict record from the embedding judge (at its default margin), run here on the pairs: what
    scores a vibe defined by examples. The kind is looked up by name, as a spec's judge is."""
    texts = {f"{side}{i}": text for i, p in enumerate(pairs) for side, text in (("a", p.output_a), ("b", p.output_b))}
    requests = [PairJudgment("discovery", "embedding", vibe_fields(vibe), (f"a{i}", f"b{i}"),
                             config={"metric": "auto", "tolerance": TOLERANCE, "margin": MARGIN})
                for i in range(len(pairs))]
    return list(judge_kind("embedding_axis").judge_pairs(requests, texts))


def judged_columns(vibe: Vibe, pairs: Sequence[TrainingPair]) -> tuple[np.ndarray, np.ndarray]:
    """From one run of the vibe's judge over the pairs: each pair's ternary verdict (what separability
    averages) and what the regressions read, the measured, signed strength (a − b) / (|a| + |b|) for a
    metric vibe (see `metric_columns`) and the verdict for any other."""
    if vibe.metric is not None and sentence_meaning.is_measure(vibe.metric):
        return meaning.columns(vibe.metric, pairs)  # here, where the sentences are embedded already
    if vibe.metric is not None:
        return metric_columns([vibe.metric], pairs)[vibe.metric]
    verdicts = np.array([v.score for v in _judged(vibe, pairs)], dtype=float)
    return verdicts, verdicts


def pair_scores(vibe: Vibe, pairs: Sequence[TrainingPair]) -> np.ndarray:
    """The verdicts alone (see `judged_columns`)."""
    return judged_columns(vibe, pairs)[0]


DISCOVERY_FDR = 0.05


def separating(verdicts: dict[str, np.ndarray], fdr: float = DISCOVERY_FDR) -> set[str]:
    """The candidates whose training verdicts lean one way beyond chance, with every candidate screened
    counted: exact sign tests (two-sided: discovery has no direction to confirm), Benjamini–Hochberg over all
    of them at `fdr`. Each of twenty-odd properties tested at 5% on its own proposed about one vibe per
    analysis between two sides that differ in nothing; with nothing to find, this proposes one in about twenty
    analyses, and among real differences at most `fdr` of those proposed are expected to be noise."""
    names = list(verdicts)
    adjusted = stats.benjamini_hochberg([stats.sign_test(verdicts[name]) for name in names])
    return {name for name, q in zip(names, adjusted, strict=True) if q is not None and q < fdr}


def screened(verdicts: dict[str, np.ndarray], within: dict[str, str], apart: Collection[str] = ()) -> set[str]:
    """`separating`, with a lexicon's habits (`within`: habit -> its lexicon) screened apart: only those of a
    lexicon that passed, in a family of their own. A lexicon of 25 phrases that are not one another's wording
    falls into 25 habits, and counted with the rest they would raise every candidate's bar: AlpacaEval's verbose
    lexicon no longer passed among 45 candidates. The measures of sentences' meaning (`apart`) are a family of
    their own for the same reason. Every vibe proposed is tested again on the test pairs, which no screen saw, so
    screening in steps costs the test no validity."""
    passed = separating({name: v for name, v in verdicts.items() if name not in within and name not in apart})
    habits = {name: v for name, v in verdicts.items() if within.get(name) in passed}
    sentences = {name: v for name, v in verdicts.items() if name in apart}
    return (passed | (separating(habits) if habits else set())
            | (separating(sentences) if sentences else set()))


def _doc_terms(texts: list[str] | ngrams.Tokenized, min_docs: int) -> tuple[Any, np.ndarray]:
    """Which token n-grams (1 to 3) each text contains: a binary document-term matrix and its vocabulary (see
    `ngrams`). Fewer texts than `min_docs`, or no n-gram in that many of them (a trial on a handful of prompts),
    give an empty vocabulary: nothing to mine, rather than an error."""
    from scipy.sparse import csr_matrix

    n_texts = texts.texts if isinstance(texts, ngrams.Tokenized) else len(texts)
    if n_texts < min_docs:
        return csr_matrix((n_texts, 0), dtype=np.int8), np.array([], dtype=object)
    return ngrams.doc_terms(texts, min_docs, tokens)


def _tokenized(pairs: Sequence[TrainingPair]) -> ngrams.Tokenized:
    """Model A's answers, then model B's, tokenized once for the n-gram index of these pairs and of any subset."""
    return ngrams.tokenize([p.output_a for p in pairs] + [p.output_b for p in pairs], tokens)


def _ranked(matrix: Any, vocabulary: np.ndarray, positive: np.ndarray,
            min_positive: int = 0) -> list[tuple[str, float]]:
    """N-grams by log-odds of appearing in the positive texts rather than the others (add-one smoothed),
    leaving out those in fewer than `min_positive` positive texts."""
    in_pos = np.asarray(matrix[positive].sum(axis=0)).ravel() + 1.0
    in_neg = np.asarray(matrix[~positive].sum(axis=0)).ravel() + 1.0
    score = np.log(in_pos / (positive.sum() + 1)) - np.log(in_neg / ((~positive).sum() + 1))
    order = [i for i in np.argsort(-score) if in_pos[i] > min_positive]
    return [(vocabulary[i], float(score[i])) for i in order]


def is_readable(phrase: str) -> bool:
    """A phrase a reader recognises: words only (no markdown marks, digits or punctuation), and no stray
    letter left over from splitting a contraction or an emphasis mark ('here s', '* key', '? s')."""
    return all(w.isalpha() and (len(w) > 1 or w in ("a", "i")) for w in phrase.split())


def _lexicon(ranked: list[tuple[str, float]]) -> list[str]:
    """The strongest phrases, skipping ones contained in a phrase already taken (so 'what a' does not
    double-count 'what a fascinating')."""
    chosen: list[str] = []
    for phrase, score in ranked:
        if score <= 0 or len(chosen) == LEXICON_SIZE:
            break
        if not any(f" {phrase} " in f" {c} " or f" {c} " in f" {phrase} " for c in chosen):
            chosen.append(phrase)
    return chosen


def _phrase_vibe(name: str, phrases: list[str], who: str) -> Vibe:
    shown = ", ".join(f"'{p}'" for p in phrases[:6])
    return Vibe(name=name, low=f"Rarely uses phrasing typical of {who} (such as {shown}).",
                high=f"Often uses phrasing typical of {who} (such as {shown}).",
                metric=PHRASES_PREFIX + "|".join(phrases))


def candidates(pairs: Sequence[TrainingPair], model_a: str, model_b: str,
               corpus: ngrams.Tokenized | None = None) -> list[Candidate]:
    """Every metric, and a phrase lexicon mined for each model; `corpus`: the pairs already `_tokenized`."""
    out = [Candidate(Vibe(name, low, high, metric=name), "metric") for name, (_, low, high) in METRICS.items()]
    min_docs = max(3, len(pairs) // 100)
    # one matrix for both: which texts are mined for (model A's, then model B's) changes no n-gram's counts
    matrix, vocabulary = _doc_terms(_tokenized(pairs) if corpus is None else corpus, min_docs)
    first = np.arange(2 * len(pairs)) < len(pairs)
    for model, positive in ((model_a, first), (model_b, ~first)):
        phrases = _lexicon([(p, score) for p, score in _ranked(matrix, vocabulary, positive) if is_readable(p)])
        if not phrases:
            continue
        lexicon = f"phrasing_{_slug(model)}"
        out.append(Candidate(_phrase_vibe(lexicon, phrases, model), f"phrases:{model}"))
        habits = _habits(matrix, vocabulary, positive, phrases)
        out += [Candidate(_phrase_vibe(f"{lexicon}_{_slug(habit[0])}", habit, model), f"phrases:{model}",
                          within=lexicon) for habit in habits if len(habits) > 1]
    return out


def _habits(matrix: Any, vocabulary: np.ndarray, positive: np.ndarray, phrases: list[str]) -> list[list[str]]:
    """A lexicon's phrases in groups that appear in nearly the same of the model's answers (`HABIT_JACCARD`):
    each phrase, strongest first, joins the first group whose first phrase it appears with, or starts one. The
    phrases of one sentence a model keeps writing come out as one group; two habits the model shows in different
    answers as two."""
    index = {phrase: i for i, phrase in enumerate(vocabulary)}
    used = np.asarray(matrix[positive][:, [index[p] for p in phrases]].todense()) > 0  # answers x phrases
    together = used.T.astype(np.int64) @ used.astype(np.int64)
    alone = np.diag(together)
    groups: list[list[int]] = []
    for i in range(len(phrases)):
        joined = next((g for g in groups if together[g[0], i] >= HABIT_JACCARD * (alone[g[0]] + alone[i]
                                                                                   - together[g[0], i])), None)
        if joined is None:
            groups.append([i])
        else:
            joined.append(i)
    return [[phrases[i] for i in group] for group in groups]


def _is_content(phrase: str) -> bool:
    """A phrase that says what a cluster is about: words only, at least one of them not a stop word."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    words = phrase.split()
    return all(w.isalpha() for w in words) and any(len(w) > 2 and w not in ENGLISH_STOP_WORDS for w in words)


def _excerpt(text: str) -> str:
    text = text.strip()
    if len(text) <= EXAMPLE_CHARS:
        return text
    cut = text[:EXAMPLE_CHARS]
    return cut[: cut.rfind(" ")] if " " in cut else cut


def _nearest(vectors: np.ndarray, rows: np.ndarray, texts: list[str]) -> tuple[str, ...]:
    """Excerpts of the distinct answers among `rows` nearest to those rows' mean direction."""
    centre = vectors[rows].mean(axis=0)
    chosen: list[str] = []
    for row in rows[np.argsort(-(vectors[rows] @ centre))]:
        excerpt = _excerpt(texts[row])
        if excerpt and excerpt not in chosen:
            chosen.append(excerpt)
        if len(chosen) == EXAMPLES_PER_END:
            break
    return tuple(chosen)


def cluster_candidates(pairs: Sequence[TrainingPair], model_a: str, model_b: str, seed: int = 0) -> list[Candidate]:
    """One vibe per k-means cluster of the training answers' embeddings (see the module docstring)."""
    from sklearn.cluster import KMeans

    from engine.api.embeddings import embed

    texts = [p.output_a for p in pairs] + [p.output_b for p in pairs]
    k = min(MAX_CLUSTERS, len(texts) // ANSWERS_PER_CLUSTER)
    if k < 2:
        return []
    vectors = embed(texts)
    if len(np.unique(vectors.round(6), axis=0)) < k:
        return []  # fewer distinct answers than clusters: nothing to group
    labels = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(vectors)
    matrix, vocabulary = _doc_terms(texts, min_docs=2)  # no n-gram in two answers: clusters go unnamed
    content = np.array([_is_content(term) for term in vocabulary], dtype=bool)
    matrix, vocabulary = (matrix[:, content], vocabulary[content]) if content.any() else (None, vocabulary)
    out: list[Candidate] = []
    names: set[str] = set()
    for cluster in range(k):
        inside = labels == cluster
        members, others = np.flatnonzero(inside), np.flatnonzero(~inside)
        # terms common in the cluster (a tenth of its answers), not just rare words it happens to hold
        terms = [] if matrix is None else _lexicon(_ranked(matrix, vocabulary, inside,
                                                           min_positive=max(2, len(members) // 10)))[:6]
        words = [t for t in terms if " " not in t] or terms[:1]  # two words name it, or one phrase
        slugs = [slug[:20] for slug in map(_slug, words) if slug][:2]
        name = "cluster_" + "_".join(slugs) if slugs else f"cluster_{cluster}"
        while name in names:
            name += "_"
        names.add(name)
        share = float(np.mean(members < len(pairs)))
        shown = ", ".join(f"'{t}'" for t in terms) or "no distinctive terms"
        high = (f"Close to a group of answers marked by {shown} (an embedding cluster of {len(members)} training "
                f"answers, {share:.0%} by {model_a} and {1 - share:.0%} by {model_b}).")
        low = "Unlike that group: closer to the other answers."
        examples = VibeExamples(low=_nearest(vectors, others, texts), high=_nearest(vectors, members, texts))
        out.append(Candidate(Vibe(name, low, high, examples=examples), "embedding cluster",
                             (int((members < len(pairs)).sum()), len(members))))
    return out


def _slug(text: str) -> str:
    """ASCII letters, digits and underscores: what a vibe name may hold."""
    return "".join(c if c.isascii() and c.isalnum() else "_" for c in text.lower()).strip("_")


def crossfit_lexicons(pairs: Sequence[TrainingPair], model_a: str, model_b: str, seed: int = 0,
                      corpus: ngrams.Tokenized | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each mined lexicon's (strength, verdict) on every pair, from the lexicon mined on the other half of the
    pairs (the halves drawn with `seed`): how a lexicon is judged without credit for the pairs it was mined
    from."""
    pairs = list(pairs)
    corpus = _tokenized(pairs) if corpus is None else corpus
    halves = _halves(pairs, seed)
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for mine, score in ((halves[0], halves[1]), (halves[1], halves[0])):
        half = corpus.subset([*mine, *(len(pairs) + i for i in mine)])  # their A answers, then their B's
        lexicons = [c.vibe for c in candidates([pairs[i] for i in mine], model_a, model_b, half)
                    if c.origin != "metric"]
        columns = metric_columns([str(v.metric) for v in lexicons], [pairs[i] for i in score])
        for vibe in lexicons:
            strengths, verdicts = out.setdefault(vibe.name, (np.zeros(len(pairs)), np.zeros(len(pairs))))
            verdicts[score], strengths[score] = columns[str(vibe.metric)]
    return out


def _halves(pairs: list[TrainingPair], seed: int) -> list[list[int]]:
    """Two halves of the pairs' indices, drawn with `seed`, each conversation's turns in one half: a phrase
    mined from one turn would otherwise score its sibling turns in the other half as if they were new pairs.
    Pairs that are each their own unit get the halves they always had."""
    unit_of = stats.cluster_index([p.unit or i for i, p in enumerate(pairs)])
    units = int(unit_of.max()) + 1 if len(pairs) else 0
    order = np.random.default_rng(seed).permutation(units)
    first = np.zeros(units, dtype=bool)
    first[order[: units // 2]] = True
    return [np.flatnonzero(first[unit_of]).tolist(), np.flatnonzero(~first[unit_of]).tolist()]


def crossfit_lexicon_scores(pairs: Sequence[TrainingPair], model_a: str, model_b: str, seed: int = 0,
                            corpus: ngrams.Tokenized | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """`crossfit_lexicons`, read back from the run cache when the same pairs were cross-fitted before: discovery
    computes it, and the analysis of the same training pairs reads the strengths its regressions need."""
    def compute() -> dict[str, tuple[np.ndarray, np.ndarray]]:
        return crossfit_lexicons(pairs, model_a, model_b, seed, corpus)

    inputs = {"pairs": [[p.output_a, p.output_b] for p in pairs], "models": [model_a, model_b], "seed": seed,
              "units": [p.unit for p in pairs]}
    return cached("crossfit", inputs, compute,
                          lambda columns: json.dumps({k: [s.tolist(), v.tolist()] for k, (s, v) in columns.items()}
                                                     ).encode("utf-8"),
                          lambda data: {k: (np.array(s), np.array(v)) for k, (s, v) in json.loads(data).items()})


def discover(pairs: Sequence[TrainingPair], model_a: str, model_b: str, max_vibes: int, *,
             exclude_metrics: frozenset[str] = frozenset(), clusters: bool = False, sentences: bool = False,
             seed: int = 0, store: Cache | None = None) -> list[Candidate]:
    """Propose and choose at most `max_vibes` vibes from training pairs (none measuring an excluded metric,
    e.g. one a declared vibe already measures; embedding clusters only with `clusters`, for a panel with an
    embedding judge to score them, and measures of sentences' meaning only with `sentences`). Only candidates
    that separate the two models on these pairs are considered (`separating`: every candidate screened is
    counted), and a phrase lexicon only when its cross-fitted verdicts lean to the model it was mined for.
    `store`: the run's cache, which the metrics' values are shared through (`metric_columns`)."""
    pairs = list(pairs)
    corpus = _tokenized(pairs)
    final = [c for c in candidates(pairs, model_a, model_b, corpus) if c.vibe.metric not in exclude_metrics]
    if clusters:
        final += [c for c in cluster_candidates(pairs, model_a, model_b, seed) if c.one_sided()]
    read = meaning.sample_rows(pairs, seed) if sentences else []
    if sentences:
        final += [Candidate(vibe, f"sentence meaning:{model}")
                  for vibe, model in meaning.meaning_candidates([pairs[i] for i in read], model_a, model_b)]
    verdicts: dict[str, np.ndarray] = {}
    features: dict[str, np.ndarray] = {}
    measured = metric_columns([str(c.vibe.metric) for c in final if c.origin == "metric"], pairs, store)
    for c in final:
        if c.origin == "metric":
            verdicts[c.vibe.name], features[c.vibe.name] = measured[str(c.vibe.metric)]
        elif c.origin == "embedding cluster":
            verdicts[c.vibe.name], features[c.vibe.name] = judged_columns(c.vibe, pairs)
        elif c.origin.startswith("sentence meaning:"):  # on the sample whose sentences were read, NaN elsewhere
            verdicts[c.vibe.name], features[c.vibe.name] = meaning.columns(str(c.vibe.metric), pairs, read)
    own_side = {c.vibe.name: 1 if c.origin == f"phrases:{model_a}" else -1 for c in final
                if c.origin.startswith("phrases:")}
    for name, (column, verdict) in crossfit_lexicon_scores(pairs, model_a, model_b, seed, corpus).items():
        if name in own_side:
            features[name], verdicts[name] = column, verdict
    # a lexicon of A's phrasing that marks B's answers on the pairs it was not mined from does not carry over
    carries = {name for name in features if name not in own_side or float(np.mean(verdicts[name])) * own_side[name] > 0}
    passed = screened(verdicts, {c.vibe.name: c.within for c in final if c.within},
                      {c.vibe.name for c in final if c.origin.startswith("sentence meaning:")}) & carries
    features = {name: column for name, column in features.items() if name in passed}
    a_preferred = np.array([np.nan if p.a_preferred is None else float(p.a_preferred) for p in pairs])
    length = stats.length_covariate(np.array([len(p.output_a) for p in pairs]),
                                      np.array([len(p.output_b) for p in pairs]))
    chosen = select(features, a_preferred if not np.isnan(a_preferred).all() else None, max_vibes, length)
    by_name = {c.vibe.name: c for c in final}
    return [by_name[name] for name in chosen]
