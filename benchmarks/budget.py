"""The landing guard for speed and memory: `vibe run` of `scale.py`'s spec on a few thousand real-length pairs
(answers resampled from the shared Arena files), held to stated budgets, so that a change which doubles what a
pair costs fails `make test` instead of waiting for someone to run `scale.py` at 100,000 pairs.

Two budgets, each measured against something taken in the same process or the same run, never against seconds:
- wall over floor: the run's wall time (a child process of its own) over the floor `scale.floor_s` times here
  on the same answers, at most `WALL_OVER_FLOOR`. At this size the run's fixed costs (imports, the pages'
  JavaScript engine, the ceiling's classifier) are most of it, so the budget is loose: it catches a phase that
  turns quadratic, not a few percent.
- memory by phase: the run's peak resident memory (the manifest's `peak_rss_mb`, the peak by the end of each
  phase) in KB a pair, at most `PHASE_KB_PER_PAIR[phase]`: up to discovery, the peak by its end (those phases
  import most of what a run uses, in an order that moves between runs: 59 MB by the plan's end in one run, 103
  in the next); for each later phase, how far it raised the peak over the phases before it. Each budget is
  about 1.3 times what the phase took when it was set, plus room for its fixed part. On 554a847 the analysis
  raised the peak by 19.7 KB a pair here (its length-controlled bootstrap kept every GLM fit's arrays until a
  full collection: 3.8 GB at 100,000 pairs); after the fix, 1.8 to 2.5.

A run that breaks a budget is reported by phase: `tests/test_budget.py` fails with those lines.

Last line: budget_pairs=<n> wall_over_floor=<f> worst_phase_share_of_budget=<f> phases_over_budget=<n>
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import scale
from sizes import pick

PAIRS = pick(3_000, 300)
WALL_OVER_FLOOR = 15.0  # 7.3× alone; `make test` runs it beside another worker, which may slow the run, not the floor
# KB a pair at `PAIRS` pairs (at 3,000 pairs, 1 KB a pair is 2.9 MB): the peak by the end of discovery, then what
# each later phase adds to it; set from the runs after the fix (89–90, 5–7, 1.8–2.5, 52), with room for the fixed
# part of each
EARLY = ("plan", "execute", "discover")
UP_TO_DISCOVERY = "up to discovery"
PHASE_KB_PER_PAIR = {UP_TO_DISCOVERY: 120.0, "execute discovered": 12.0, "analyze": 8.0, "report": 75.0}


@dataclass(frozen=True)
class Measured:
    pairs: int
    wall_s: float
    floor_s: float
    peaks_mb: dict[str, float]  # the run's peak resident memory by the end of each phase

    def phase_kb_per_pair(self) -> dict[str, float]:
        """The peak by the end of discovery, then how far each later phase raised it, in KB a pair."""
        early = [peak for phase, peak in self.peaks_mb.items() if phase in EARLY]
        before = max(early, default=0.0)
        out = {UP_TO_DISCOVERY: before * 1024 / self.pairs}
        for phase, peak in self.peaks_mb.items():
            if phase not in EARLY:
                out[phase] = max(peak - before, 0.0) * 1024 / self.pairs
                before = max(before, peak)
        return out

    def broken(self) -> list[str]:
        """A line for each budget the run broke, naming the phase."""
        lines = []
        if self.wall_s > WALL_OVER_FLOOR * self.floor_s:
            lines.append(f"wall: {self.wall_s:.1f} s is {self.wall_s / self.floor_s:.1f}× the floor's "
                         f"{self.floor_s:.1f} s (budget {WALL_OVER_FLOOR}×)")
        for phase, kb in self.phase_kb_per_pair().items():
            budget = PHASE_KB_PER_PAIR.get(phase)
            if budget is None:
                lines.append(f"phase {phase!r}: no budget stated for it (add one to PHASE_KB_PER_PAIR)")
            elif kb > budget:
                what = "peaked at" if phase == UP_TO_DISCOVERY else "raised the peak by"
                lines.append(f"phase {phase!r}: {what} {kb:.1f} KB a pair at {self.pairs:,} pairs (budget {budget})")
        return lines

    def worst_share(self) -> float:
        """The largest share of its budget any phase used."""
        return max(kb / PHASE_KB_PER_PAIR.get(phase, kb or 1.0) for phase, kb in self.phase_kb_per_pair().items())


def measure(folder: Path, pairs: int = PAIRS) -> Measured:
    """`scale.py`'s spec on `pairs` pairs in `folder`: the floor timed here, the run in a child process."""
    scale.write_pairs(folder, pairs, scale.arena_pool())
    floor = scale.floor_s(folder)
    wall, _, code = scale.run(folder)
    if code:
        raise RuntimeError(f"vibe run exited {code}")
    manifest = json.loads((folder / "run" / "manifest.json").read_text(encoding="utf-8"))
    return Measured(pairs, wall, floor, {k: float(v) for k, v in manifest["peak_rss_mb"].items()})


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="vibe-budget-") as tmp:
        found = measure(Path(tmp))
    for phase, kb in found.phase_kb_per_pair().items():
        print(f"{phase}: {kb:.1f} KB a pair (budget {PHASE_KB_PER_PAIR.get(phase)})")
    broken = found.broken()
    for line in broken:
        print("over budget:", line, file=sys.stderr)
    print(f"budget_pairs={found.pairs} wall_over_floor={found.wall_s / found.floor_s:.2f} "
          f"worst_phase_share_of_budget={found.worst_share():.2f} phases_over_budget={len(broken)}")


if __name__ == "__main__":
    main()
