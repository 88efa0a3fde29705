"""Typed requests: `canonical()` is the dict a task is hashed by, so every record must read back from its
dict and give exactly that dict again (an added or dropped key would change every cache key)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.pipeline import prepare
from engine.requests import (
    Chat,
    PairJudgment,
    Preservation,
    Profile,
    Prompted,
    Rating,
    Recorded,
    Rewrite,
    SameTaskCheck,
    parse,
)

ROOT = Path(__file__).resolve().parent.parent
CALL = Prompted({"provider": "local", "model": "m"}, "t", "sha", {"temperature": 0.0, "max_tokens": 8},
                {"schema": "s/v1", "sha": "x"})
EVERY_KIND = [
    Recorded("d", "i", "m", "sha"),
    Chat({"model": "m"}, [{"role": "user", "content": "hi"}], {"seed": 1}, 2, prompt_from="rw", answer={"a": 1}),
    PairJudgment("j", "metric", {"vibe": "v"}, ("a", "b"), config={"metric": "auto"}),
    PairJudgment("j", "llm", {"vibe": "v"}, ("b", "a"), call=CALL, order="ba", prompt_from="rw"),
    Rating("j", "embedding", {"prompt": "p", "reference": "r"}, "g", config={"corpus": "c"}),
    Rating("j", "llm", {"prompt": "p", "reference": "r"}, "g", call=CALL, repeat=2),
    Preservation("p", "i", 0, {"original": "o", "rewrite": None}, "rw", {"min_cosine": 0.6}),
    Rewrite(CALL, "persona", "prompt", 1),
    Profile("p", CALL, {"persona": "d", "dimensions": "x"}),
    SameTaskCheck("p", "i", 1, CALL, {"original": "o", "rewrite": "r"}, prompt_from="rw"),
]


@pytest.mark.parametrize("request_", EVERY_KIND, ids=lambda r: f"{r.kind}-{getattr(r, 'judge_kind', '')}")
def test_every_kind_reads_back_from_its_canonical_dict(request_: object) -> None:
    canonical = request_.canonical()  # type: ignore[attr-defined]
    assert parse(canonical) == request_ and parse(canonical).canonical() == canonical
    assert None not in canonical.values() or canonical["kind"] == "verify"  # absent, not None: the hash


def test_every_task_of_the_example_specs_round_trips(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIBE_DATA", str(shared_data))
    kinds = set()
    for spec in ("vibe:smollm2-terse-vs-chatty", *(ROOT / "specs" / f"{name}.yaml" for name in (
            "personas-coding", "separability", "vibe-eval"))):
        for task in prepare(spec).plan.tasks:
            name = str(spec)
            assert parse(task.request).canonical() == task.request, (name, task.id)
            kinds.add(task.request["kind"])
    assert kinds >= {"recorded", "chat", "judge", "rate", "verify"}
