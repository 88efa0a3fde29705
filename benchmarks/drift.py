"""Drift between runs on the embedded default: does `vibe compare` see a planted change, and only that?

The embedded default (SmolLM2 through llama.cpp, terse vs chatty system prompts, the offline panel) is run as
it ships (base), with the chatty system prompt reworded toward brevity (head: the planted change), with
another seed (re-run: at temperature 0 the same answers), and twice sampled at temperature 0.7 with two seeds
(two draws of one model). Each pair of runs is compared on the chatty slot through the CLI, `vibe compare
--gate`, with `gates: {verbosity: {max_shift: 0.1}}`; the table of each comparison is printed.

Expected: the planted change moves verbosity beyond the margin (the gate fails); the re-run moves nothing and
the gate passes (equivalence shown); the two sampled draws move nothing after Holm, and at 60 prompts their
verbosity gate cannot be decided (inconclusive, with the prompts that would decide it).

The smoke run (`--smoke`) keeps every code path on the fewest runs: base and head at 4 prompts, compared once
for all three comparisons' figures.

Last line: planted_shift=<f> planted_fails=<int> rerun_passes=<int> sampled_shift=<f> sampled_decided=<int>
  (1: the gate failed, passed, or was decided either way; 0: it was not)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from sizes import pick

PROMPTS = pick(None, 4)  # all 60 prompts, or a --limit trial
GATE = "gates:\n  verbosity: {max_shift: 0.1}\n"
VARIANTS = {
    "base": "",
    "head": "models:\n  chatty:\n    system_prompt: >-\n      You are a warm, cheerful friend, but brief: answer in "
            "one or two short sentences, with at most one exclamation mark and no follow-up question.\n",
    "rerun": "models:\n  chatty: {params: {temperature: 0.0, max_tokens: 128, seed: 8}}\n"
             "  terse: {params: {temperature: 0.0, max_tokens: 128, seed: 8}}\n",
    **{f"sampled{seed}": f"models:\n  chatty: {{params: {{temperature: 0.7, max_tokens: 128, seed: {seed}}}}}\n"
                         f"  terse: {{params: {{temperature: 0.7, max_tokens: 128, seed: {seed}}}}}\n"
       for seed in (7, 8)},
}


def vibe(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=folder, capture_output=True, text=True)


def run(folder: Path, name: str) -> Path:
    spec = folder / f"{name}.yaml"
    spec.write_text("name: smollm2-terse-vs-chatty\nextends: vibe:smollm2-terse-vs-chatty\n" + GATE + VARIANTS[name],
                    encoding="utf-8")
    limit = ["--limit", str(PROMPTS)] if PROMPTS else []
    done = vibe(folder, "run", str(spec), "--out", f"runs/{name}", "--cache", "cache.sqlite", "--quiet",
                "--no-report", *limit)
    if done.returncode != 0:
        sys.exit(f"vibe run {name} failed:\n{done.stderr[-2000:]}")
    return folder / "runs" / name


def compare(folder: Path, base: str, head: str) -> tuple[float, str]:
    """The verbosity shift and its gate's verdict (fail | pass | inconclusive)."""
    out = folder / f"cmp-{base}-{head}"
    done = vibe(folder, "compare", f"runs/{base}", f"runs/{head}", "--model", "chatty", "--panel", "base",
                "--out", str(out), "--cache", "cache.sqlite", "--gate", "--quiet")
    if done.returncode not in (0, 1):
        sys.exit(f"vibe compare {base} {head} failed:\n{done.stderr[-2000:]}")
    print((out / "compare.md").read_text(encoding="utf-8"), flush=True)
    (chatty,) = json.loads((out / "compare.json").read_text(encoding="utf-8"))["comparisons"]
    verbosity = next(s for s in chatty["shifts"] if s["vibe"] == "verbosity")
    return float(verbosity["shift"]), verbosity["verdict"]


# the three comparisons: planted, re-run, two sampled draws (smoke: one comparison of two runs stands for all
# three, which take the same code path)
COMPARISONS = pick([("base", "head"), ("base", "rerun"), ("sampled7", "sampled8")], [("base", "head")] * 3)


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="vibe-drift-"))
    for name in dict.fromkeys(name for pair in COMPARISONS for name in pair):
        run(folder, name)
    compared = {pair: compare(folder, *pair) for pair in dict.fromkeys(COMPARISONS)}
    (planted, planted_gate), (_, rerun_gate), (sampled, sampled_gate) = (compared[pair] for pair in COMPARISONS)
    print(f"planted_shift={planted:.4f} planted_fails={int(planted_gate == 'fail')} "
          f"rerun_passes={int(rerun_gate == 'pass')} sampled_shift={sampled:.4f} "
          f"sampled_decided={int(sampled_gate != 'inconclusive')}")


if __name__ == "__main__":
    main()
