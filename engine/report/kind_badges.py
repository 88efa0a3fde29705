"""Judge-kind badges: every verdict on a page is labelled with its judge's kind, so a reader tells a model's
opinion from a measurement. Each badge's colour and description come from the kind itself (`JudgeKind.label`,
`badge_colour`), built-in or plug-in alike: the pages name no kind, and a kind that sets no colour gets one
derived from its name, dark enough for the badge's white text."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Any

from engine.judges.kinds import UnknownJudgeKind, judge_kind

CLASS_SAFE = re.compile(r"^[A-Za-z0-9_-]+$")  # a kind's name as it appears in a CSS class


def derived_colour(name: str) -> str:
    """A colour of its own for a kind that sets none: a hue from the name's hash, at a saturation and
    lightness whose every hue keeps white text above WCAG's 4.5:1 contrast."""
    hue = int(hashlib.sha256(name.encode()).hexdigest()[:4], 16) % 360
    return f"hsl({hue}, 60%, 28%)"


def badges(names: Iterable[str]) -> list[dict[str, Any]]:
    """Each kind named (once, in order): its name, how pages describe it, whether it is a measurement (offline)
    and its badge colour. A name that is no installed kind (a run read where its plug-in is not installed)
    keeps its name as its description."""
    out = []
    for name in dict.fromkeys(names):
        if not CLASS_SAFE.match(name):
            continue
        try:
            kind = judge_kind(name)
        except (UnknownJudgeKind, ImportError):
            out.append({"name": name, "label": name, "offline": True, "colour": derived_colour(name)})
            continue
        out.append({"name": name, "label": kind.label, "offline": kind.offline,
                    "colour": kind.badge_colour or derived_colour(name)})
    return out


def badge_css(kinds: list[dict[str, Any]]) -> str:
    """The stylesheet rule of every badge in `kinds` (`badges`)."""
    return "".join(f".kind-{k['name']} {{ background: {k['colour']}; }}\n" for k in kinds)
