"""The verdicts of a comparison's learning judges (`JudgeKind.learns`): each fitted, vibe by vibe, to the
development labels of the analysis' `validation:` and given on every pair the comparison has answers for.
The pair table reads them where it reads other judges' results from the cache."""

from __future__ import annotations

from collections.abc import Sequence

from engine.api.judging import JudgeKind, PairToFit
from engine.api.records import Binding, Item, Prepared, Result
from engine.api.spec import Analysis, Vibe
from engine.builtin_plugins.methods.vibecheck.discovery.splits import split_seed
from engine.builtin_plugins.methods.vibecheck.validation import people_labels

# (judge, vibe) -> a verdict per row, the probability per row that people put A higher, how it was fitted
Fitted = dict[tuple[str, str], tuple[list[int | None], list[float | None], str]]


def fitted_verdicts(prepared: Prepared, analysis: Analysis, results: dict[str, Result], bindings: Sequence[Binding],
                    answers: Sequence[tuple[str, str]], models: tuple[str, str], vibes: Sequence[Vibe],
                    panels: dict[str, list[tuple[str, JudgeKind]]], items: dict[str, Item]) -> Fitted:
    """Every learning judge's verdicts on the rows of `bindings` (`answers`: each row's two answer tasks), for the
    vibes whose panel holds one; a row without both answers gets none."""
    wanted = [(name, kind, vibe) for vibe in vibes for name, kind in panels[vibe.name] if kind.learns]
    if not wanted:
        return {}
    units = {b.item: items[b.item].conversation or b.item for b in bindings}
    read = people_labels(prepared, analysis, models, [v.name for v in vibes], units)
    labels = read[0] if read is not None else []
    rows = [row for row, (a, b) in enumerate(answers) if a in results and b in results]
    out: Fitted = {}
    for name, kind, vibe in wanted:
        taught: dict[str, list[int]] = {}
        for label in labels:
            if label.vibe == vibe.name and label.split == "dev":
                taught.setdefault(label.pair, []).append(label.verdict)
        pairs = []
        for row in rows:
            item = items[bindings[row].item]
            ga, gb = answers[row]
            pairs.append(PairToFit(item.prompt, str(results[ga].output), str(results[gb].output), item.reference,
                                   units[item.id], tuple(taught.get(item.id, ()))))
        fitted = kind.fit_verdicts(prepared.spec.judges[name], vibe, pairs, split_seed(analysis))
        scores: list[int | None] = [None] * len(bindings)
        leans: list[float | None] = [None] * len(bindings)
        for row, score, lean in zip(rows, fitted.scores, fitted.probability, strict=True):
            scores[row], leans[row] = score, lean
        out[(name, vibe.name)] = (scores, leans, fitted.description)
    return out
