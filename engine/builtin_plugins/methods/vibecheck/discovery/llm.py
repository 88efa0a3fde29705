"""LLM vibe discovery, as VibeCheck does it: propose → reduce → score → iterate on what is still confused.

1. The proposer sees batches of training pairs, each batch in both orders (A/B labels swapped, so a
   position preference cannot masquerade as a vibe), and lists axes as `name: Low: ...; High: ...`.
2. The reducer merges duplicates and keeps at most `max_vibes`.
3. Every round the vibes are scored on the training pairs by the panel, and only those that separate the
   models (and do not repeat an earlier vibe's verdicts) stay.
4. Iteration: a model-matching regression is fitted on the current vibes, and the training pairs it gets
   wrong are shown to the proposer again, asking for new axes only. It stops when no more than
   `pairs_per_round` pairs remain wrong, as the paper does, or after `iterations` rounds.
Every call is a content-hashed task through the shared scheduler and cache, so discovery resumes too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from engine.api.calls import run_calls
from engine.api.execution import Cache
from engine.api.judging import answers, kind_of, prompts
from engine.api.records import Chat, Task, content_hash
from engine.api.spec import Discovery, Judge, Vibe
from engine.builtin_plugins.methods.vibecheck.discovery import statistical as discovery
from engine.builtin_plugins.methods.vibecheck.discovery.selection import too_similar

AXIS_LINE = re.compile(
    r"^[\s>*\-\d.)]*\**([^:*\n]{2,60}?)\**\s*:\s*\**low\**\s*:\s*(.+?)\s*;\s*\**high\**\s*:\s*(.+?)\s*$",
    re.IGNORECASE | re.MULTILINE)
OUTPUT_CHARS = 1500


def parse_axes(text: str) -> list[Vibe]:
    """Every axis of a JSON answer's `axes` list, or every `name: Low: ...; High: ...` line of a free-text
    one; anything else is ignored."""
    doc = answers.read(text)
    listed = doc.get("axes") if doc is not None else None
    if isinstance(listed, list):
        found = [(a["name"], a["low"], a["high"]) for a in listed
                 if isinstance(a, dict) and all(isinstance(a.get(k), str) for k in ("name", "low", "high"))]
    else:
        found = AXIS_LINE.findall(text or "")
    vibes = []
    for name, low, high in found:
        slug = re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")[:60]
        if slug and len(low) >= 3 and len(high) >= 3:
            vibes.append(Vibe(slug, low.strip(), high.strip()))
    return vibes


def _batch_text(pairs: Sequence[discovery.TrainingPair], swap: bool) -> str:
    blocks = []
    for n, pair in enumerate(pairs, 1):
        a, b = (pair.output_b, pair.output_a) if swap else (pair.output_a, pair.output_b)
        blocks.append(f"### Pair {n}\n[Model A]\n{a[:OUTPUT_CHARS]}\n[Model B]\n{b[:OUTPUT_CHARS]}")
    return "\n\n".join(blocks)


@dataclass
class Caller:
    """A judge asked during discovery: each request (its messages) a content-hashed task through the shared
    scheduler and cache, so a re-run asks nothing again; the answers' texts in order, "" where a call failed.
    With `axes` (every proposer and reducer prompt), a judge that answers in a schema is asked for a list of axes;
    without, for free text (the namer's one line)."""

    judge: Judge
    cache: Cache
    axes: bool = True

    def __call__(self, requests: list[list[dict[str, str]]]) -> list[str]:
        endpoint = self.judge.endpoint
        assert endpoint is not None
        tasks = []
        for messages in requests:
            answer = (answers.request_field(answers.AXES)
                      if self.axes and kind_of(self.judge).answers_in_schema(self.judge) else None)
            request = Chat(endpoint.identity(), messages, endpoint.params.request_fields(), answer=answer).canonical()
            tasks.append(Task(content_hash(request), "discovery", "discovery", endpoint.name, endpoint.provider, "",
                              request))
        results = run_calls(tasks, {endpoint.name: endpoint}, self.cache)
        return [str(results[t.id].output) if t.id in results else "" for t in tasks]


def _propose(call: Caller, pairs: Sequence[discovery.TrainingPair], d: Discovery,
             existing: list[Vibe]) -> list[Vibe]:
    batches = [pairs[i:i + d.batch] for i in range(0, len(pairs), d.batch)]
    requests = []
    for batch in batches:
        for swap in (False, True):
            if existing:
                known = "\n".join(f"{v.name}: Low: {v.low}; High: {v.high}" for v in existing)
                requests.append(prompts.PROPOSE_MORE_VIBES.render(existing=known, batch=_batch_text(batch, swap)))
            else:
                requests.append(prompts.PROPOSE_VIBES.render(batch=_batch_text(batch, swap)))
    return [v for answer in call(requests) for v in parse_axes(answer)]


def _reduce(call: Caller, proposed: list[Vibe], keep: int) -> list[Vibe]:
    if not proposed:
        return []
    axes = "\n".join(f"{v.name}: Low: {v.low}; High: {v.high}" for v in proposed)
    (answer,) = call([prompts.REDUCE_VIBES.render(axes=axes, k=str(keep))])
    reduced = parse_axes(answer) or proposed
    unique: dict[str, Vibe] = {}
    for vibe in reduced:
        unique.setdefault(vibe.name, vibe)
    return list(unique.values())[:keep]


def _validated(vibes: list[Vibe], nu: np.ndarray, d: Discovery) -> tuple[list[Vibe], np.ndarray]:
    """The vibes that separate the models on the training pairs (|sep| ≥ separability_min, and an exact sign
    test that survives Benjamini–Hochberg over every candidate of the round, as statistical discovery screens
    its candidates), less any whose verdicts repeat an earlier one's (correlation above discovery's
    MAX_CORRELATION), with their verdict columns: VibeCheck's filter and dedup, applied every round. The BH step
    here is a screen, not a false-discovery-rate guarantee: the proposer read these same training pairs before
    naming the vibes it tests, so the p-values are not those of hypotheses fixed in advance; the guarantee a
    reader gets is the headline's one-sided test on the test pairs, which neither the proposer nor this screen
    saw. Judge
    agreement (κ) needs every judge's score and is checked by the analysis. A pair with no readable verdict
    (NaN) is missing from the columns it lacks, never a 0."""
    columns = [nu[np.isfinite(nu[:, j]), j] for j in range(len(vibes))]
    separating = discovery.separating({str(j): column for j, column in enumerate(columns) if len(column)})
    kept: list[int] = []
    for j, column in enumerate(columns):
        if not len(column) or abs(float(column.mean())) < d.separability_min or str(j) not in separating:
            continue
        both = [np.isfinite(nu[:, j]) & np.isfinite(nu[:, k]) for k in kept]
        if any(too_similar(nu[rows, j], nu[rows, k]) for rows, k in zip(both, kept, strict=True)):
            continue
        kept.append(j)
    return [vibes[j] for j in kept], nu[:, kept]


def _misclassified(nu: np.ndarray, seed: int) -> list[int]:
    """Training pairs that model matching on the current vibes gets wrong: each pair once, no intercept (the
    display order carries no information), a seeded random order so both labels occur. Only chooses which
    pairs the proposer sees next, so a missing verdict counts as no evidence either way (0) here."""
    from sklearn.linear_model import LogisticRegression

    nu = np.nan_to_num(nu)
    if not np.any(nu):
        return list(range(len(nu)))
    flip = np.where(np.random.default_rng(seed).random(len(nu)) < 0.5, -1.0, 1.0)
    model = LogisticRegression(fit_intercept=False, max_iter=2000).fit(nu * flip[:, None], flip > 0)
    return [i for i, d in enumerate(nu @ model.coef_[0]) if d <= 0]


def discover_with_llm(pairs: Sequence[discovery.TrainingPair], d: Discovery, proposer: Judge, cache: Cache,
                      score: Callable[[list[Vibe]], np.ndarray], seed: int = 0) -> list[Vibe]:
    """`score(vibes)` returns the panel verdicts ν (pairs × vibes) of the given vibes on `pairs`. Rounds go on
    while model matching still gets more than `pairs_per_round` training pairs wrong (the paper's stop:
    |E| ≤ d), for at most `iterations` rounds."""
    call = Caller(proposer, cache)
    rng = np.random.default_rng(seed)
    sample = [pairs[i] for i in sorted(rng.permutation(len(pairs))[: d.pairs_per_round])]
    proposed = _reduce(call, _propose(call, sample, d, []), d.max_vibes)
    if not proposed:
        return []
    vibes, nu = _validated(proposed, score(proposed), d)  # nu: the kept vibes' verdicts, reused below
    for _ in range(d.iterations - 1):
        if not vibes:
            break
        wrong = _misclassified(nu, seed)
        if len(wrong) <= d.pairs_per_round:
            break
        chosen = [pairs[i] for i in sorted(rng.permutation(wrong)[: d.pairs_per_round])]
        fresh = [v for v in _reduce(call, _propose(call, chosen, d, vibes), d.max_vibes)
                 if v.name not in {old.name for old in vibes}]
        if not fresh:
            break
        candidates = vibes + fresh
        validated, columns = _validated(candidates, score(candidates), d)  # earlier vibes first: they win a dedup
        if validated == vibes:
            break
        vibes, nu = validated[: 2 * d.max_vibes], columns[:, : 2 * d.max_vibes]
    return vibes
