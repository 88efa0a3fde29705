"""Compile and diff a 10,000-task spec (target: under 1 s each).

Spec: 1,000 prompts, two API models, one LLM judge scoring 4 vibes in both orders:
2 x 1,000 generations + 4 x 1,000 x 2 judgments = 10,000 tasks. The diff changes one vibe's wording.
Last line: plan_s=<float> diff_s=<float>
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from sizes import pick

from engine.diff import diff_plans, to_markdown
from engine.pipeline import prepare
from engine.plan_view import outline_of

PROMPTS = pick(1000, 20)  # 10 tasks per prompt

SPEC = """\
name: bench
models:
  a: {provider: openai, model: gpt-4o-mini, price: {input: 0.15, output: 0.6}}
  b: {provider: anthropic, model: claude-3-5-haiku-20241022, price: {input: 0.8, output: 4.0}}
judges:
  j: {kind: llm, provider: openai, model: gpt-4o-mini, price: {input: 0.15, output: 0.6}}
datasets:
  d: {source: {path: prompts.jsonl}, fields: {id: id, prompt: prompt}}
vibes:
  - {name: verbosity, low: brief answers, high: long detailed answers}
  - {name: formality, low: casual wording, high: formal wording}
  - {name: humor, low: serious, high: playful and joking}
  - {name: caution, low: confident claims, high: hedged and careful claims}
analyses:
  vibecheck: {dataset: d, models: [a, b], judges: [j]}
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with (root / "prompts.jsonl").open("w") as fh:
            for i in range(PROMPTS):
                row = {"id": f"p{i}", "prompt": f"Question {i}: explain topic number {i} briefly."}
                fh.write(json.dumps(row) + "\n")
        (root / "base.yaml").write_text(SPEC)
        (root / "new.yaml").write_text(SPEC.replace("playful and joking", "witty and full of jokes"))

        start = time.perf_counter()
        base = prepare(root / "base.yaml")
        plan_s = time.perf_counter() - start
        base.plan.to_json()
        assert len(base.plan.tasks) == 10 * PROMPTS, len(base.plan.tasks)

        start = time.perf_counter()
        old, new = prepare(root / "base.yaml"), prepare(root / "new.yaml")
        markdown = to_markdown(diff_plans(old.spec.document, outline_of(old), new.spec.document, outline_of(new)),
                               "base.yaml", "new.yaml")
        diff_s = time.perf_counter() - start
    print(f"tasks={len(base.plan.tasks)}")
    print(markdown)
    print(f"plan_s={plan_s:.3f} diff_s={diff_s:.3f}")


if __name__ == "__main__":
    main()
