"""The typed options of an agents analysis, with their defaults."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from engine.api.methods import Options, Setting


@dataclass(frozen=True)
class AgentOptions(Options):
    tools: Annotated[int, Setting("At most this many tools, the most called by all the agents together, get measures "
                                  "of their own (default 8).", minimum=0, maximum=50)] = 8
    min_calls: Annotated[int, Setting("A tool called fewer times than this, all the agents together, gets no measure "
                                      "of its own (default 5).", minimum=1)] = 5
    comparisons: Annotated[int, Setting("At most this many pairs of agents are compared (default 28, every pair of "
                                        "8 agents): those sharing the most conversations first, then the largest; "
                                        "the page names the pairs left out.", minimum=1)] = 28
