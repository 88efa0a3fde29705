"""Groups of wordings that stand in for one another, found from which answers carry them rather than from what
they mean: one behaviour said a different way in each answer puts one of its wordings in an answer, so each
wording's answers avoid the others', while two behaviours an answer shows independently overlap in the share
their rates multiply to (`meaning` offers each group as a candidate vibe).

A group is a set of wordings that
- avoid one another's answers improbably as a whole: sets of their sizes drawn at random would cover as many
  answers with p ≤ `SUBSTITUTE_P` (`pooled_p`). That pools the evidence of wordings too rare to show it two at a
  time: two in 9 of 120 answers miss each other by chance half the time, eight that never meet about once in 80
  billion times;
- each of which avoids the union of the others' answers improbably (the hypergeometric distribution of the
  overlap, p ≤ `MEMBER_P`) and shares at most `SHARED` of its answers with it: a wording of a second behaviour
  misses a group's answers at the rate the behaviours' shares multiply to, not almost always.

Such a group is searched for from each wording (`_searched`), the one least probable by chance kept, and the
search repeated on the wordings left.
"""

from __future__ import annotations

import functools

import numpy as np

SUBSTITUTE_P = 0.01  # how improbably, by chance, a group's wordings must avoid one another's answers, all together
MEMBER_P = 0.05  # how improbably each of them must avoid the others' answers
SHARED = 0.2  # the most of a wording's answers the rest of its group may have too (a sentence near two wordings)
GROW_P = 0.5  # a group grows by wordings overlapping its answers no more than chance gives half the time


def groups(answers: np.ndarray) -> list[list[int]]:
    """The groups among the wordings (rows of `answers`; its columns the answers, true where an answer has the
    wording), each as its rows in ascending order, the least probable by chance first.

    A start's search depends only on the wordings it gathers, so after a group is taken out it is searched
    again only where it gathered one of the group's wordings."""
    left = list(range(len(answers)))
    searched: dict[int, tuple[set[int], list[int], float]] = {}  # start -> (gathered, group, its pooled p)
    found: list[list[int]] = []
    while len(left) >= 2:
        rest = answers[left]
        for position, start in enumerate(left):
            if start not in searched:
                gathered, group, p = _searched(rest, position)
                searched[start] = ({left[k] for k in gathered}, sorted(left[k] for k in group), p)
        candidates = [(p, group) for _, group, p in searched.values() if group]
        if not candidates:
            break
        best = min(candidates)[1]
        found.append(best)
        taken = set(best)
        left = [w for w in left if w not in taken]
        searched = {s: v for s, v in searched.items() if s not in taken and not v[0] & taken}
    return found


def _searched(answers: np.ndarray, start: int) -> tuple[list[int], list[int], float]:
    """The wordings gathered from `start` (`_grown`), and of the two groups their two prunings leave
    (`_avoiding`), the one less probable by chance with that chance (`pooled_p`), or an empty group where
    neither reaches `SUBSTITUTE_P`. The wordings gathered last are those the group fits least, so where the
    wordings of two behaviours were gathered, dropping the last gathered of those that fail keeps the first
    behaviour's; dropping the one that avoids the others least improbably keeps a group whose wordings were
    gathered in another order."""
    order = _grown(answers, start)
    best: tuple[float, list[int]] = (np.inf, [])
    for members in {tuple(sorted(_avoiding(answers, order, latest))) for latest in (False, True)}:
        if members:
            rows = answers[list(members)]
            best = min(best, (pooled_p(rows.sum(axis=1), int(rows.any(axis=0).sum()), answers.shape[1]),
                              list(members)))
    return order, (best[1] if best[0] <= SUBSTITUTE_P else []), best[0]


def _grown(answers: np.ndarray, start: int) -> list[int]:
    """The wordings (rows of `answers`) gathered from `start` by adding, while one overlaps the group's answers
    no more than chance would give half the time, the one whose overlap is least likely."""
    members, union = [start], answers[start].copy()
    counts, sizes = answers.astype(int), answers.sum(axis=1)
    while True:
        p = _at_most(counts @ union, int(union.sum()), sizes, answers.shape[1])
        p[members] = np.inf
        best = int(np.argmin(p))
        if p[best] > GROW_P:
            return members
        members.append(best)
        union |= answers[best]


def _avoiding(answers: np.ndarray, members: list[int], latest: bool = False) -> list[int]:
    """`members` (in the order gathered) less, one at a time, a wording that fails, until each avoids the
    others' answers with p ≤ `MEMBER_P` and shares at most `SHARED` of its answers with them; empty when fewer
    than two are left. The wording dropped is the one whose answers avoid the others' least improbably, or with
    `latest` the last of those that fail."""
    members = list(members)
    while len(members) >= 2:
        rows = answers[members].astype(int)
        per_answer, sizes = rows.sum(axis=0), rows.sum(axis=1)
        overlap = rows @ (per_answer >= 2)  # each member's answers that another member has too
        others = int((per_answer >= 1).sum()) - rows @ (per_answer == 1)  # the other members' answers
        p = np.full(len(members), np.inf)  # one meeting the others too often is no part of their behaviour
        few = overlap <= SHARED * sizes
        p[few] = _at_most(overlap[few], others[few], sizes[few], answers.shape[1])
        if p.max() <= MEMBER_P:
            return members
        members.pop(int(np.flatnonzero(p > MEMBER_P)[-1]) if latest else int(np.argmax(p)))
    return []


def _at_most(overlap: np.ndarray, marked: np.ndarray | int, sizes: np.ndarray, answers: int) -> np.ndarray:
    """Per set, the hypergeometric chance that a set of its size drawn from `answers`, `marked` of them marked,
    holds at most `overlap` marked ones (numpy's own sums of the probabilities: scipy's `hypergeom.cdf` costs
    more to call than to compute here, and this is called for every wording at every step of every search)."""
    drawn = np.arange(int(overlap.max(initial=0)) + 1)[None, :]
    marked = np.broadcast_to(np.asarray(marked), np.shape(overlap))[:, None]
    chance = _hypergeometric(marked, drawn, sizes[:, None], answers)
    return np.asarray(np.where(drawn <= overlap[:, None], chance, 0.0).sum(axis=1))


def pooled_p(sizes: np.ndarray, union: int, answers: int) -> float:
    """How often sets of `sizes` answers, each drawn at random from `answers` and independently of the others,
    cover `union` answers or more: the chance that wordings with nothing in common avoid one another as much as
    a group's do. The distribution of the union is built one set at a time (each set's overlap with the union so
    far is hypergeometric), exactly."""
    so_far = np.arange(answers + 1)[:, None]  # answers covered so far
    covered = np.zeros(answers + 1)
    covered[0] = 1.0
    for size in sizes.tolist():
        step = covered[:, None] * _hypergeometric(so_far, np.arange(size + 1)[None, :], size, answers)
        after = np.zeros(answers + 1)
        for met in range(size + 1):  # covered so far u, `met` of the set among them: u + size - met after
            after[size - met:] += step[:answers + 1 - (size - met), met]
        covered = after
    return float(min(1.0, covered[union:].sum()))


def _hypergeometric(marked: np.ndarray, drawn: np.ndarray, size: np.ndarray | int, answers: int) -> np.ndarray:
    """The chance that a set of `size` answers drawn from `answers`, `marked` of them marked, holds exactly
    `drawn` marked ones (the arguments broadcast together); 0 where that cannot happen."""
    log_factorial = _log_factorials(answers)
    k, o, n = np.broadcast_arrays(marked, drawn, size)
    possible = (o <= k) & (o <= n) & (n - o <= answers - k)
    k, o, n = (np.where(possible, x, 0) for x in (k, o, n))
    log_p = (log_factorial[k] - log_factorial[o] - log_factorial[k - o] + log_factorial[answers - k]
             - log_factorial[n - o] - log_factorial[answers - k - n + o] - log_factorial[answers]
             + log_factorial[n] + log_factorial[answers - n])
    return np.where(possible, np.exp(log_p), 0.0)


@functools.lru_cache(maxsize=8)
def _log_factorials(answers: int) -> np.ndarray:
    """log n! for n = 0 … answers."""
    from scipy.special import gammaln

    return np.asarray(gammaln(np.arange(answers + 1) + 1.0))
