"""Unit-test judge: runs a dataset's tests against the code in an answer, as vibe-testing's correctness gate
does (pass@1 on the benchmark's tests).

The answer's code is its last fenced code block (or the whole answer when it has none). Code and tests run
together in a fresh Python subprocess, isolated from the user's site packages and environment, in an empty
temporary folder, with a wall-clock limit and a memory cap; exit status 0 is a pass. It is a sandbox in the
sense of "cannot hang or exhaust the run", not a security boundary: run untrusted models' code on a
machine you can afford to lose. A pass is recorded as rating 5 and a failure as 1, so the gate reads it
like any other rating (threshold 4 by default).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from engine.api.judging import JudgeKind, RatingInput, RatingScore, judge_kind_class
from engine.api.records import Rating

if TYPE_CHECKING:
    from engine.api.records import Item
    from engine.api.spec import Judge

FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.S)
TIMEOUT_S = 10.0
MEMORY_BYTES = 1 << 30
METHOD = "unit-tests/v1"


def extract_code(answer: str) -> str:
    """The last fenced block tagged python (or untagged), else the last fenced block, else the answer."""
    blocks = FENCE.findall(answer)
    python = [code for tag, code in blocks if tag.lower() in ("", "python", "py", "python3")]
    if python:
        return str(python[-1])
    return blocks[-1][1] if blocks else answer


def _limit_memory() -> None:  # runs in the child before exec
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def run_tests(code: str, tests: str, timeout_s: float = TIMEOUT_S) -> tuple[bool, str]:
    """(passed, why) for the code with the tests appended, run in a subprocess."""
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "solution_test.py"
        script.write_text(f"{code}\n\n# --- tests ---\n{tests}\n", encoding="utf-8")
        try:
            done = subprocess.run([sys.executable, "-I", "-S", str(script)], cwd=folder, capture_output=True,
                                  text=True, timeout=timeout_s, env={"PATH": "/usr/bin:/bin"},
                                  preexec_fn=_limit_memory, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return False, f"timed out after {timeout_s:g} s"
    if done.returncode == 0:
        return True, "all tests passed"
    last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return False, last[:300]


def rate(requests: Sequence[Rating], texts: dict[str, str]) -> list[RatingScore]:
    """One rating per request: 5 when the answer's code passes the item's tests, 1 when it does not."""
    out = []
    for request in requests:
        assert request.config is not None
        code = extract_code(texts[request.output])
        passed, why = run_tests(code, request.fields["tests"], float(request.config["timeout_s"]))
        out.append(RatingScore("unit_tests", 5.0 if passed else 1.0, why, {"passed": float(passed)}))
    return out


@judge_kind_class("unit_tests")
class UnitTestJudge(JudgeKind):
    """Runs the dataset's tests on an answer's code: a correctness gate, with no view on a vibe."""

    label = "a unit-test judge"
    badge_colour = "#bc4c00"
    roles = frozenset({"tests"})
    dataset_field = "tests"

    def can_rate(self, item: Item) -> bool:
        return bool(item.tests)

    def rating_input(self, judge: Judge, item: Item, corpus: str, repeat: int) -> RatingInput | None:
        """No tests, no verdict: the gate then leaves the prompt to the dimensions."""
        if not item.tests:
            return None
        return {"tests": item.tests}, {"method": METHOD, "timeout_s": TIMEOUT_S}

    def rate(self, requests: Sequence[Rating], texts: dict[str, str],
             corpora: dict[str, tuple[str, ...]]) -> Sequence[RatingScore]:
        return rate(requests, texts)
