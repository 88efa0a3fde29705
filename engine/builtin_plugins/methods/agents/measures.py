"""What an agent did in each conversation, as numbers: pure functions of the turns' messages (the assistant's
messages with their tool calls, the tools' results), one value per conversation, so that a conversation's turns
are one unit for every test.

Every measure is a mean over the conversation's turns (or a share over its tool calls), so a long session and
a short one weigh the same. Beside the tool habits, every built-in metric measures the turns' answers (the
agent's text), so that two agents' prose is compared even where their sessions share no prompt, which the
pairwise comparison of answers needs. A value that does not exist (the share of failed calls in a conversation
with no call) is NaN and leaves that conversation out of that measure's test only."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.api import judging
from engine.api.judging import METRICS

Turn = Sequence[dict[str, Any]]  # a turn's assistant and tool messages

GENERAL = {
    "tool calls per turn": "tool calls the agent made in a turn",
    "assistant messages per turn": "assistant messages in a turn (with tool calls, or the answer; a log that "
                                   "writes each of a response's tool calls apart counts each)",
    "distinct tools per turn": "different tools called in a turn",
    "failed tool calls": "share of tool results that report a failure (an error flag, a non-zero exit code), of "
                         "those whose log says whether the call failed",
    "failed calls retried": "share of failed tool calls that the agent called the same tool again after, in the "
                            "same turn",
    "output tokens per turn": "tokens the model wrote in a turn, over all its calls (where the log counts them)",
    "seconds per turn": "from the prompt to the turn's last message (where the log gives times)",
}


def calls(turn: Turn) -> list[str]:
    return [str(c["name"]) for m in turn if m["role"] == "assistant" for c in m.get("tool_calls", ())]


def tool_counts(conversations: Sequence[Sequence[Turn]]) -> Counter[str]:
    return Counter(name for turns in conversations for turn in turns for name in calls(turn))


def chosen_tools(counts: Counter[str], most: int, least: int) -> list[str]:
    """The tools measured one by one: the `most` called at least `least` times, by all the agents together. The
    choice reads how often a tool is called, not by whom, so it cannot favour a difference between the agents."""
    return [name for name, n in counts.most_common() if n >= least][:most]


ANSWERS = "answers: "  # the prefix of a measure of the answers' text: one per built-in metric


def names(tools: Sequence[str]) -> list[str]:
    return [*GENERAL, *(f"share of calls to {t}" for t in tools), *(f"turns opening with {t}" for t in tools),
            *(ANSWERS + metric for metric in METRICS)]


def describe(name: str) -> str:
    if name in GENERAL:
        return GENERAL[name]
    if name.startswith(ANSWERS):
        metric = name.removeprefix(ANSWERS)
        return (f"the turns' answers (the agent's text in the turn) measured by {metric}, a mean over the turns "
                f"with text; higher: {METRICS[metric][2].rstrip('.').lower()}")
    if name.startswith("share of calls to "):
        return f"share of the conversation's tool calls that call {name.removeprefix('share of calls to ')}"
    return f"share of turns with tool calls whose first call is to {name.removeprefix('turns opening with ')}"


def measure(turns: Sequence[Turn], tools: Sequence[str]) -> np.ndarray:
    """The conversation's value of every measure `names(tools)` lists, in that order."""
    made = [calls(turn) for turn in turns]
    flat = [name for names_ in made for name in names_]
    results = [m for turn in turns for m in turn if m["role"] == "tool"]
    n = max(1, len(turns))
    tokens = [[m["tokens"] for m in turn if m["role"] == "assistant" and "tokens" in m] for turn in turns]
    seconds = [max((m["elapsed"] for m in turn if "elapsed" in m), default=None) for turn in turns]
    counted, timed = [sum(t) for t in tokens if t], [s for s in seconds if s is not None]
    values = [sum(map(len, made)) / n,
              sum(m["role"] == "assistant" for turn in turns for m in turn) / n,
              sum(len(set(c)) for c in made) / n,
              _share_failed(results),
              _share_retried(turns),
              float(np.mean(counted)) if counted else np.nan,
              float(np.mean(timed)) if timed else np.nan]
    opened = [c[0] for c in made if c]
    values += [flat.count(t) / len(flat) if flat else np.nan for t in tools]
    values += [opened.count(t) / len(opened) if opened else np.nan for t in tools]
    answers = [text for turn in turns if (text := answer(turn))]
    values += [float(np.mean([judging.measure(metric, text) for text in answers])) if answers else np.nan
               for metric in METRICS]
    return np.array(values, dtype=float)


def answer(turn: Turn) -> str:
    """What the agent wrote in a turn: its messages' text, tool calls aside."""
    return "\n\n".join(text for m in turn if m["role"] == "assistant"
                        and isinstance(text := m.get("content"), str) and text.strip())


def _share_failed(results: Sequence[dict[str, Any]]) -> float:
    """Failed calls over the results whose log says whether they failed (ATIF's, for one, does not: a format
    that cannot tell must not read as an agent that never fails)."""
    told = [m["error"] for m in results if isinstance(m.get("error"), bool)]
    return sum(told) / len(told) if told else np.nan


def _share_retried(turns: Sequence[Turn]) -> float:
    """Of the failed calls (where the log says), the share followed in their turn by another call to the same
    tool: an agent that tries again rather than changing course."""
    failed = retried = 0
    for turn in turns:
        for k, message in enumerate(turn):
            if message["role"] == "tool" and message.get("error") is True:
                failed += 1
                retried += any(message.get("name") in calls([later]) for later in turn[k + 1:])
    return retried / failed if failed else np.nan
