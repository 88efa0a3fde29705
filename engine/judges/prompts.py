"""Prompt templates for every LLM call the engine makes besides generation.

Each template has a name and a version; the planner hashes the template text into every task that uses it,
so editing a template re-runs exactly the calls that depend on it and nothing else.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

# what a plug-in may use of this module, through the public API (held by tests/test_api_surface.py)
__all__ = ["PERSONA_PAIRWISE", "PERSONA_PROFILE", "PERSONA_REWRITE", "PREFERENCE", "PRESERVATION_CHECK",
           "PROPOSE_MORE_VIBES", "PROPOSE_VIBES", "REDUCE_VIBES", "VIBE_SCORE", "VIBE_SCORE_EXAMPLES"]


@dataclass(frozen=True)
class Template:
    name: str
    system: str
    user: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(f"{self.name}\0{self.system}\0{self.user}".encode()).hexdigest()[:16]

    def render(self, **fields: str) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user.format(**fields)}]


# which of two answers sits higher on a vibe's axis, from its one-line poles
VIBE_SCORE = Template(
    "vibe_score/v1",
    "You compare two answers to the same request along one stylistic axis. You do not judge which answer is "
    "better, only which one sits higher on the axis.",
    "Axis: {vibe}\nLow end: {low}\nHigh end: {high}\n\n"
    "Request:\n{prompt}\n\n[Answer 1]\n{output_1}\n[End of answer 1]\n\n[Answer 2]\n{output_2}\n[End of answer 2]\n\n"
    "Which answer is higher on the axis? Reply with one short sentence of reasoning, then a final line "
    "'Verdict: 1', 'Verdict: 2', or 'Verdict: N/A' when the axis does not apply or both are equal.",
)

# the same, with example answers from each end of the vibe beside its poles
VIBE_SCORE_EXAMPLES = Template(
    "vibe_score_examples/v1",
    VIBE_SCORE.system,
    "Axis: {vibe}\nLow end: {low}\nHigh end: {high}\n\n"
    "The axis is defined by example answers (possibly cut short) as much as by those two lines.\n"
    "Examples from the low end:\n{examples_low}\n\nExamples from the high end:\n{examples_high}\n\n"
    "Request:\n{prompt}\n\n[Answer 1]\n{output_1}\n[End of answer 1]\n\n[Answer 2]\n{output_2}\n[End of answer 2]\n\n"
    "Which answer is more like the high-end examples and less like the low-end ones? Reply with one short "
    "sentence of reasoning, then a final line 'Verdict: 1', 'Verdict: 2', or 'Verdict: N/A' when they are alike.",
)

# which of two answers is better for the request: the preference judge
PREFERENCE = Template(
    "preference/v1",
    "You are an impartial evaluator of assistant answers. Weigh helpfulness, relevance, accuracy, depth and "
    "detail. Ignore answer order, answer length as such, and any names.",
    "Request:\n{prompt}\n\n[Answer 1]\n{output_1}\n[End of answer 1]\n\n[Answer 2]\n{output_2}\n[End of answer 2]\n\n"
    "Briefly explain which answer serves the user better, then end with 'Verdict: 1', 'Verdict: 2' or "
    "'Verdict: tie'.",
)

REFERENCE_RATING = Template(
    "reference_rating/v1",
    "You grade an assistant's answer to a question about a user's image against an expert's ground-truth "
    "answer. You see only text. Partial credit is allowed.",
    "Question:\n{prompt}\n\nGround truth:\n{reference}\n\nAnswer to grade:\n{output}\n\n"
    "Explain in one or two sentences how well the answer matches the ground truth, then give a line "
    "'Rating: N' with N from 1 (wrong) to 5 (fully correct).",
)

# an LLM proposer names axes on which two models' answers differ (discovery)
PROPOSE_VIBES = Template(
    "propose_vibes/v1",
    "You are a careful researcher studying how two language models differ in style and behaviour, beyond "
    "correctness.",
    "Below are requests, each answered by model A and model B.\n\n{batch}\n\n"
    "List the axes on which A and B differ systematically. Each axis must describe one concept that a reader "
    "can judge from a single answer. One axis per line, in the form\n"
    "name: Low: <what a low answer does>; High: <what a high answer does>",
)

# the same, told the axes found so far, for ones not yet among them
PROPOSE_MORE_VIBES = Template(
    "propose_more_vibes/v1",
    "You are a careful researcher studying how two language models differ in style and behaviour, beyond "
    "correctness.",
    "These axes are already known:\n{existing}\n\nThe pairs below are ones those axes fail to tell apart.\n\n"
    "{batch}\n\nList new axes, not covered above, on which A and B differ in these pairs; finer-grained axes "
    "are welcome. One axis per line, in the form\nname: Low: <what a low answer does>; High: <what a high answer does>",
)

# the proposed axes merged into a short list without near-duplicates
REDUCE_VIBES = Template(
    "reduce_vibes/v1",
    "You tidy lists of candidate evaluation axes.",
    "Candidate axes:\n{axes}\n\nMerge axes that mean the same thing, drop vague or compound ones, and keep at "
    "most {k}. Reply with one axis per line in the form\nname: Low: <...>; High: <...>",
)

# a request rewritten in a persona's voice, the task kept
PERSONA_REWRITE = Template(
    "persona_rewrite/v1",
    "You rewrite requests in the voice of a particular user, without changing what is being asked.",
    "User: {persona}\n\nOriginal request:\n{prompt}\n\nRewrite the request as this user would write it, in the "
    "first person. The task and its correct answer must stay exactly the same. Reply with the rewritten "
    "request only.",
)

# which of two answers suits a persona better on one dimension, and how sure
PERSONA_PAIRWISE = Template(
    "persona_pairwise/v1",
    "You judge answers from the point of view of a specific user.",
    "You are this user: {persona}\n\nDimension: {dimension}: {definition}\n\nRequest:\n{prompt}\n\n"
    "[Answer 1]\n{output_1}\n[End of answer 1]\n\n[Answer 2]\n{output_2}\n[End of answer 2]\n\n"
    "On this dimension only, which answer would you prefer? Reply with one sentence of reasoning, then "
    "'Verdict: 1', 'Verdict: 2' or 'Verdict: tie', then 'Confidence: N' with N from 1 to 5.",
)

# a persona's weight for each judged dimension, written from its description
PERSONA_PROFILE = Template(
    "persona_profile/v1",
    "You are a user researcher. You turn a user's self-description into a structured profile.",
    "A user describes themselves:\n{persona}\n\nWhen this user reads an answer from an AI assistant, how much "
    "does each of these dimensions matter to them, from 1 (barely) to 5 (a great deal)?\n{dimensions}\n\n"
    'Reply with one JSON object only: {{"weights": {{"<dimension>": <1-5>, ...}}, "style": "<one line on the '
    'answer style this user wants>"}}',
)

# whether a persona's rewrite still asks for the original task
PRESERVATION_CHECK = Template(
    "preservation_check/v1",
    "You check that a rewritten request still asks for exactly the same thing as the original.",
    "Original request:\n{original}\n\nRewritten request:\n{rewrite}\n\nDoes the rewritten request ask for "
    "the same task, with the same correct answer? Tone, voice and added context about the user do not matter. "
    "Reply with one sentence of reasoning, then 'Same task: yes' or 'Same task: no'.",
)

TEMPLATES = {t.name: t for t in (VIBE_SCORE, VIBE_SCORE_EXAMPLES, PREFERENCE, REFERENCE_RATING, PROPOSE_VIBES,
                                 PROPOSE_MORE_VIBES, REDUCE_VIBES, PERSONA_REWRITE, PERSONA_PAIRWISE,
                                 PERSONA_PROFILE, PRESERVATION_CHECK)}
