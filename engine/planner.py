"""The whole plan of a spec: every analysis method plans its tasks into one `Builder` (`engine.plan`), in spec
order. Apart from the builder, so that the builder's primitives, which the methods call, never name them."""

from __future__ import annotations

from engine.datasets import Item
from engine.plan import Builder, spec_hash
from engine.records import Plan
from engine.registry import get_method, stage_order
from engine.spec.model import Spec


def compile_plan(spec: Spec, items: dict[str, list[Item]], earlier: Plan | None = None) -> Plan:
    """Every task of every analysis, in spec order, de-duplicated by content hash. `earlier`: a plan compiled
    before from the same items (the run's first plan, when discovered vibes are added), whose generations
    are not hashed again where their requests are the same."""
    builder = Builder(spec, items, stage_order(a.method for a in spec.analyses.values()),
                      earlier.tasks if earlier is not None else ())
    for analysis in spec.analyses.values():
        get_method(analysis.method).plan(builder, analysis)
    order = {stage: n for n, stage in enumerate(builder.stages)}
    tasks = sorted(builder.tasks.values(), key=lambda t: order[t.stage])  # stable: keeps spec order within
    return Plan(spec.name, spec_hash(spec), tasks, builder.deferred, dict(builder.bindings), builder.measured(),
                builder.stages)
