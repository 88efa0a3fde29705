"""Candidate vibes from what answers' sentences mean, not from the words they use: a behaviour worded a new way
in each answer ("explains with an analogy", "reassures the user") shares no phrase a lexicon could mine, but its
sentences lie near one another among MiniLM's sentence embeddings.

How they are found, on the training pairs alone (a seeded sample of at most `MAX_PAIRS`, whole conversations,
`sample_rows`: the same sample they are then screened and compared on, so their cost stops growing with the data):
1. Every answer is cut into sentences (`sentence_meaning.split`) and each distinct sentence embedded once.
2. Each sentence is tried as a seed: an answer's count is the number of its sentences within cosine `SEED_COSINE`
   of the seed, and a pair's verdict the sign of the difference of the two answers' counts. The seeds whose
   verdicts lean one way (a sign test's z of at least `SEED_Z`) are the sentences over-used by one side.
   Both answers of a pair reply to one prompt, so sentences about its topic sit on both sides and cancel.
3. The over-used seeds of each side are grouped by average-linkage clustering on cosine distance, the tree cut
   at each of `GROUP_COSINES`: the several wordings of one behaviour fall in one group of the loose cut, and two
   behaviours the loose cut joins fall apart in the tight one; each group is a candidate. So is each group of
   wordings that stand in for one another, whatever their cosines (`_substitutes`): an answer has one wording of
   a behaviour, so each of its wordings' answers avoid the others' more than chance allows (an analogy told with
   a recipe, a map or a toolbox: three topics to MiniLM, one behaviour to the answers).
4. A group's candidate is the measure `sentences:<threshold>|<examples>` (`sentence_meaning`): its examples are
   the group's `EXAMPLES` sentences nearest the group's mean direction, one per wording (`SAME_WORDING`), and an
   answer's value is how many of its sentences lie within the threshold of the examples' mean direction. The
   threshold is the one of `THRESHOLDS` at which the measure's training verdicts lean furthest to the side (so
   the training pairs choose it, as they choose everything here; the test pairs then judge it).

The candidates are then screened as every other family is (`statistical.screened`: sign tests of their training
verdicts, their own Benjamini–Hochberg family) and chosen by the same forward selection; every claim is tested
again on the test pairs. Named by the content words their examples share and other sentences rarely use, and
described by the examples themselves.

What they cannot find: a behaviour spread over many sentences that none says alone (a tone, a structure), one
shorter than `sentence_meaning.MIN_WORDS` words, one both sides show about as often, and one whose wordings lie
apart in meaning and are each too rare for their answers' lack of overlap to show (with 200 of a side's answers,
a wording in 10 answers must miss the rest of its behaviour's 51 or more, one in 6 answers 78 or more).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from engine.api.analysis import stats
from engine.api.judging import sentence_meaning
from engine.api.spec import Vibe
from engine.builtin_plugins.methods.vibecheck.discovery import substitutes
from engine.builtin_plugins.methods.vibecheck.discovery.pairs import TrainingPair, judged

MAX_PAIRS = 400  # training pairs whose sentences are read (a seeded sample beyond)
SEED_COSINE = 0.5  # how near a sentence must be to a seed to count for it
SEED_Z = 2.0  # a seed's sign-test z from which it is over-used by one side
MAX_SEEDS = 400  # the most over-used seeds grouped per side
# average cosines within a group of seeds at which the tree of over-used seeds is cut, each cut's groups a candidate:
# MiniLM puts one behaviour's wordings at 0.15–0.33 of one another on average and two behaviours' at 0.15–0.19, so
# the loose cut joins a behaviour's far-apart wordings and the tight one keeps apart most pairs of behaviours the
# loose one joins (selection then chooses among them)
GROUP_COSINES = (0.1, 0.2)
MIN_GROUP = 2  # seeds a group needs (one sentence alone is a phrase a lexicon finds)
EXAMPLES = 8
THRESHOLDS = (0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7)  # the cosines a measure's threshold is chosen from
SAME_WORDING = 0.85  # examples nearer each other than this are one wording (with a word or two around it)
# average cosine within which over-used seeds are one wording when wordings are joined by what the answers show
# (`_substitutes`): one wording glued to a heading, a citation mark or a table row lies at 0.70–0.96 of it, two
# wordings of one behaviour at most about 0.6
SAME_WORDING_COSINE = 0.65
MAX_CANDIDATES = 12
_CHUNK = 2048  # seed rows compared at a time (a 2,048 × sentences block of cosines)


def sample_rows(pairs: Sequence[TrainingPair], seed: int) -> list[int]:
    """The rows of at most `MAX_PAIRS` of the pairs, whole units (a conversation's turns together), drawn with
    `seed`, in order."""
    if len(pairs) <= MAX_PAIRS:
        return list(range(len(pairs)))
    unit_of = stats.cluster_index([p.unit or i for i, p in enumerate(pairs)])
    order = np.random.default_rng(seed).permutation(int(unit_of.max()) + 1)
    chosen: list[int] = []
    by_unit: dict[int, list[int]] = {}
    for i, u in enumerate(unit_of.tolist()):
        by_unit.setdefault(u, []).append(i)
    for u in order.tolist():
        if len(chosen) + len(by_unit[u]) <= MAX_PAIRS:
            chosen += by_unit[u]
    return sorted(chosen)


def meaning_candidates(pairs: Sequence[TrainingPair], model_a: str, model_b: str) -> list[tuple[Vibe, str]]:
    """Each candidate vibe learned from every sentence of `pairs` (the sample, `sample_rows`), with the side whose
    answers over-use it (`model_a` or `model_b`)."""
    from scipy import sparse

    from engine.api.embeddings import embed

    n = len(pairs)
    pieces = [sentence_meaning.split(p.output_a) for p in pairs] + [sentence_meaning.split(p.output_b) for p in pairs]
    distinct = list(dict.fromkeys(s for sentences in pieces for s in sentences))
    if n < 10 or len(distinct) < 2:
        return []
    index = {s: i for i, s in enumerate(distinct)}
    rows = [index[s] for sentences in pieces for s in sentences]
    answers = np.repeat(np.arange(2 * n), [len(p) for p in pieces])
    incidence = sparse.csr_matrix((np.ones(len(rows)), (rows, answers)), shape=(len(distinct), 2 * n))
    vectors = embed(distinct)
    z = np.zeros(len(distinct))
    carried: dict[int, np.ndarray] = {}  # a leaning seed -> which answers have its wording (for `_substitutes`)
    for start in range(0, len(distinct), _CHUNK):
        cosines = vectors[start:start + _CHUNK] @ vectors.T
        counted = (sparse.csr_matrix(cosines >= SEED_COSINE) @ incidence).toarray()
        z[start:start + _CHUNK] = _lean(counted, n)
        leaning = np.flatnonzero(np.abs(z[start:start + _CHUNK]) >= SEED_Z)
        worded = (sparse.csr_matrix(cosines[leaning] >= SAME_WORDING_COSINE) @ incidence).toarray() > 0
        carried.update(zip((start + leaning).tolist(), worded, strict=True))
    background: dict[str, int] = {}  # content word -> the sentences that use it
    for sentence in distinct:
        for word in _words(sentence):
            background[word] = background.get(word, 0) + 1
    found: list[tuple[float, Vibe, str]] = []
    for side, model, other in ((1, model_a, model_b), (-1, model_b, model_a)):
        over = np.flatnonzero(side * z >= SEED_Z)
        over = over[np.argsort(-side * z[over])][:MAX_SEEDS]  # most over-used first
        if len(over) < MIN_GROUP:
            continue
        tree = _tree(vectors[over])
        own = slice(0, n) if side == 1 else slice(n, 2 * n)  # the side's answers
        carriers = np.array([carried[i][own] for i in over.tolist()])
        for group in _groups(tree) + _substitutes(tree, carriers):
            examples, direction = _examples([distinct[i] for i in over[group]], vectors[over[group]])
            threshold, strength = _threshold(vectors @ direction, incidence, n, side)
            vibe = _vibe(examples, threshold, model, other, len(found), background, len(distinct))
            if all(vibe.metric != f[1].metric for f in found):  # two groups can give one measure: it counts once
                taken, suffix = {f[1].name for f in found}, 1
                while (name := vibe.name + (f"_{suffix}" if suffix > 1 else "")) in taken:
                    suffix += 1  # two measures whose examples share their words: the names stay apart
                found.append((strength, replace(vibe, name=name), model))
    found.sort(key=lambda f: -f[0])  # those whose training verdicts lean furthest first
    return [(vibe, model) for _, vibe, model in found[:MAX_CANDIDATES]]


def columns(metric: str, pairs: Sequence[TrainingPair],
            rows: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A measure's (verdicts, strengths) on the pairs as the metric judge gives them (`pairs.metric_columns`),
    measured here, in this process, where the sentences discovery embedded are at hand. With `rows` (the sample
    whose sentences discovery read), measured on those pairs alone and NaN on the others: the screen's sign test
    counts only the pairs measured, and selection compares a candidate on the pairs it was measured on."""
    measured = [pairs[i] for i in rows] if rows is not None else pairs
    values = sentence_meaning.counts(metric, [p.output_a for p in measured] + [p.output_b for p in measured])
    verdicts, strengths = judged(values[:len(measured)], values[len(measured):])
    if rows is None:
        return verdicts, strengths
    out = np.full((2, len(pairs)), np.nan)
    out[:, list(rows)] = verdicts, strengths
    return out[0], out[1]


def _lean(counted: np.ndarray, n: int) -> np.ndarray:
    """Per row of per-answer counts (model A's n answers, then model B's), the sign test's z of the pairs' verdicts:
    positive where A's answers count more."""
    difference = counted[:, :n] - counted[:, n:]
    a_more, b_more = (difference > 0).sum(axis=1), (difference < 0).sum(axis=1)
    return np.asarray((a_more - b_more) / np.sqrt(np.maximum(a_more + b_more, 1)), dtype=float)


def _tree(vectors: np.ndarray) -> np.ndarray:
    """The average-linkage tree of the rows of `vectors` on cosine distance."""
    from scipy.cluster.hierarchy import linkage

    distances = np.clip(1.0 - vectors @ vectors.T, 0.0, 2.0)
    return np.asarray(linkage(distances[np.triu_indices(len(vectors), k=1)], method="average"))


def _cut(tree: np.ndarray, cosine: float) -> list[np.ndarray]:
    """The tree's groups where the average cosine between two groups falls under `cosine`."""
    from scipy.cluster.hierarchy import fcluster

    labels = fcluster(tree, t=1.0 - cosine, criterion="distance")
    return [np.flatnonzero(labels == label) for label in np.unique(labels)]


def _groups(tree: np.ndarray) -> list[np.ndarray]:
    """The seeds' groups at each of `GROUP_COSINES` (a group both cuts make, once) of at least `MIN_GROUP`, largest
    first."""
    groups = {tuple(g.tolist()): g for cosine in GROUP_COSINES for g in _cut(tree, cosine)}
    return sorted((g for g in groups.values() if len(g) >= MIN_GROUP), key=len, reverse=True)


def _substitutes(tree: np.ndarray, carriers: np.ndarray) -> list[np.ndarray]:
    """Groups of wordings that stand in for one another, whatever their cosines (`substitutes`), each as each
    wording's most over-used seed.

    The seeds (rows of `carriers`, most over-used first; its columns the over-using side's answers, true where an
    answer has a sentence within `SAME_WORDING_COSINE` of the seed: the seed's own wording, not the looser
    neighbourhood that counts for its lean, where another wording or a sentence on the answer's topic would
    stand in) are first cut into wordings at `SAME_WORDING_COSINE` (a wording with a word or two around it is
    one wording), each wording's answers those of any of its seeds."""
    wordings = _cut(tree, SAME_WORDING_COSINE)
    answers = np.array([carriers[w].any(axis=0) for w in wordings])
    return [np.array(sorted(int(wordings[w].min()) for w in group)) for group in substitutes.groups(answers)]


def _examples(sentences: list[str], vectors: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The group's most typical wordings (nearest its mean direction, one per wording) and their own mean
    direction, which the measure is written from."""
    centre = vectors.mean(axis=0)
    nearest: list[int] = []
    for i in np.argsort(-(vectors @ centre)).tolist():
        if all(float(vectors[i] @ vectors[j]) < SAME_WORDING for j in nearest):
            nearest.append(i)
        if len(nearest) == EXAMPLES:
            break
    direction = vectors[nearest].mean(axis=0)
    return [sentences[i] for i in nearest], direction / max(float(np.linalg.norm(direction)), 1e-12)


def _threshold(cosines: np.ndarray, incidence: object, n: int, side: int) -> tuple[float, float]:
    """Of `THRESHOLDS`, the one at which the measure's training verdicts lean furthest to `side` (a sign test's
    z), with that z: where a behaviour's wordings lie loosely around their mean, a lower threshold takes in more
    of them, and where other sentences crowd it, a higher one keeps them out."""
    best = (THRESHOLDS[0], -np.inf)
    for threshold in THRESHOLDS:
        counted = np.asarray(incidence.T @ (cosines >= threshold).astype(float)).ravel()  # type: ignore[attr-defined]
        z = side * float(_lean(counted[None, :], n)[0])
        if z > best[1]:
            best = (threshold, z)
    return best


def _vibe(examples: list[str], threshold: float, model: str, other: str, number: int,
          background: dict[str, int], sentences: int) -> Vibe:
    """The vibe that names a group's measure (see the module docstring, step 4)."""
    words = _label(examples, background, sentences) or _rarest(examples[0], background)
    name = "meaning_" + ("_".join(words) if words else str(number))
    shown = "; ".join(f"'{e}'" for e in examples[:3])
    return Vibe(name=name, low=f"Rarely says anything like {shown}.",
                high=f"Often says something like {shown} (sentences of this meaning, in any wording: more typical "
                     f"of {model} than of {other}).",
                metric=sentence_meaning.definition(threshold, examples))


def _rarest(example: str, background: dict[str, int]) -> list[str]:
    """Where no word is shared by two examples, the first example's three rarest content words: a name a reader
    can place, where a number (`meaning_12`) says nothing."""
    return sorted(_words(example), key=lambda w: (background.get(w, 0), w))[:3]


def _words(sentence: str) -> set[str]:
    """A sentence's content words, each once."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    found = {w.lower().strip(".,;:!?'\"()") for w in sentence.split()}
    return {w for w in found if w.isascii() and w.isalpha() and len(w) > 2 and w not in ENGLISH_STOP_WORDS}


def _label(examples: list[str], background: dict[str, int], sentences: int) -> list[str]:
    """Up to three content words that two or more examples use and the other sentences rarely do (examples
    using the word × its inverse document frequency among all the sentences read)."""
    counts: dict[str, int] = {}
    for example in examples:
        for word in _words(example):
            counts[word] = counts.get(word, 0) + 1
    score = {w: c * np.log(sentences / (1 + background.get(w, 0))) for w, c in counts.items() if c > 1}
    return sorted(score, key=lambda w: (-score[w], w))[:3]
