"""The learned judge's kind (`kind: learned`): fitted to people's labels of a vibe's pairs (`pairs`), or to a
dataset's recorded ratings of answers against their references (`ratings`), when the method reads the run's
answers; the plan asks it nothing. Each fit is kept in the run's derived store under its inputs' content."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, ClassVar

from engine.api.execution import cached
from engine.api.judging import (
    AnswerToRate,
    FittedRatings,
    FittedVerdicts,
    JudgeKind,
    PairToFit,
    RatingInput,
    judge_kind_class,
)
from engine.builtin_plugins.judges.learned.pairs import LearnedSettings, PairFit, fit

if TYPE_CHECKING:
    from engine.api.records import Item
    from engine.api.spec import Judge, Vibe


@judge_kind_class("learned")
class LearnedJudge(JudgeKind):
    """Learns a vibe from people's development labels of the analysis' pairs (`pairs`), or ratings against a
    reference from the dataset's recorded ratings of other models' answers (`ratings`)."""

    label = "a learned judge"
    badge_colour = "#8250df"
    scores_which = "vibes the analysis has people's labels of"
    roles = frozenset({"vibe", "reference"})
    fields = ("min_labels", "folds")
    settings_record = LearnedSettings
    field_schemas: ClassVar[dict[str, dict[str, Any]]] = {
        "min_labels": {"type": "integer", "minimum": 2,
                       "description": "development-labelled prompts under which it gives a vibe no verdicts."},
        "folds": {"type": "integer", "minimum": 2, "maximum": 20,
                  "description": "cross-validation folds (of whole prompts) that choose its settings and give its "
                                 "cross-fitted verdicts."}}
    learns = True
    extra = "embeddings"

    def describe(self, judge: Judge, role: str) -> str:
        if role == "reference":
            return (f"learned judge ‘{judge.name}’, not an LLM: a ridge regression fitted to the dataset's recorded "
                    "ratings of other models' answers (MiniLM and TF-IDF similarity to the reference, the answer's "
                    "embedding and metrics), each model rated by a fit that never saw its ratings")
        return (f"learned judge ‘{judge.name}’, not an LLM: a regularized logistic regression fitted to people's "
                "development labels on MiniLM embedding differences, similarity to the prompt and reference, and "
                "metric differences")

    def rating_input(self, judge: Judge, item: Item, corpus: str, repeat: int) -> RatingInput | None:
        """None: it rates when the method reads the answers (`fit_ratings`), never task by task."""
        return None

    def fit_ratings(self, judge: Judge, answers: Sequence[AnswerToRate], seed: int) -> FittedRatings:
        from engine.builtin_plugins.judges.learned.ratings import fit_ratings

        inputs = {"seed": seed, "answers": [asdict(a) for a in answers]}
        return cached("learned-ratings", inputs, lambda: fit_ratings(answers, seed),
                              lambda f: json.dumps(asdict(f)).encode(), lambda raw: FittedRatings(**json.loads(raw)),
                              module="engine.builtin_plugins.judges.learned.ratings")

    def fit_verdicts(self, judge: Judge, vibe: Vibe, pairs: Sequence[PairToFit], seed: int) -> FittedVerdicts:
        settings = LearnedSettings.of(judge)
        inputs = {"settings": asdict(settings), "seed": seed, "pairs": [asdict(p) for p in pairs]}
        found = cached("learned", inputs, lambda: fit(pairs, seed, settings),
                               lambda f: json.dumps(asdict(f)).encode(), lambda raw: PairFit(**json.loads(raw)),
                               module="engine.builtin_plugins.judges.learned.pairs")
        if found.strength is None:
            said = f"no verdicts: {found.why_none}"
        else:
            penalty = "lasso" if found.lasso else "ridge"
            said = (f"fitted to {found.labels} development labels of {found.units} prompts ({penalty}, "
                    f"C = {found.strength:g}, embedding weight {found.embedding_weight:g}, a tie at |log-odds| ≤ "
                    f"{found.tie_below:.2f}, chosen by {settings.folds}-fold cross-validation by prompt); its "
                    f"cross-fitted agreement with those labels is {found.crossfit_agreement:.1%}")
        return FittedVerdicts(found.scores, found.probability, said)
