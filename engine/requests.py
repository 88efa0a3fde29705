"""Typed requests: one frozen record per kind of task, each with the canonical dict its task is hashed by.

A task's id is the content hash of `canonical()`, and the cache is keyed by that id, so `canonical()` is a
contract with every cache already written: it must yield, field for field, the dict the planner has always
built. Optional fields that were absent stay absent (a key with None would change the hash); `parse` reads a
canonical dict back, and `parse(d).canonical() == d` for every kind (tested over every example spec's plan).

Stages build these records and read them back with `parse`, so a typo in a field name fails where it is made
rather than as a missing key three stages later. Mappings inside a record (messages, sampling parameters,
the fields a template is filled with) stay plain JSON values: they are passed through to providers and
templates as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

JSON = Mapping[str, Any]


@dataclass(frozen=True)
class Prompted:
    """The LLM half of a templated call: who answers, which template (by name and digest), how it samples
    and, when the judge answers in a JSON schema, which one."""

    endpoint: JSON
    template: str
    template_sha: str
    params: JSON
    answer: JSON | None = None

    def canonical(self) -> dict[str, Any]:
        out = {"endpoint": self.endpoint, "template": self.template, "template_sha": self.template_sha,
               "params": self.params}
        return out if self.answer is None else {**out, "answer": self.answer}

    @classmethod
    def parse(cls, d: JSON) -> Prompted | None:
        if "template" not in d:
            return None
        return cls(d["endpoint"], d["template"], d["template_sha"], d["params"], d.get("answer"))


def _with_source(out: dict[str, Any], prompt_from: str | None) -> dict[str, Any]:
    """`prompt_from` names a rewrite task whose output replaces the request text at run time."""
    return out if prompt_from is None else {**out, "prompt_from": prompt_from}


def _judgment(kind: str, judge: str, judge_kind: str, fields: JSON, judged: dict[str, Any], config: JSON | None,
              call: Prompted | None, asked: dict[str, Any]) -> dict[str, Any]:
    """A judgment's dict: what is judged, and either an offline judge's `config` or an LLM judge's call with
    what tells its repeats or orders apart (`asked`)."""
    out = {"kind": kind, "judge": judge, "judge_kind": judge_kind, "fields": fields, **judged}
    if config is not None:
        out["config"] = config
    if call is not None:
        out.update(call.canonical(), **asked)
    return out


@dataclass(frozen=True)
class Recorded:
    """An answer read from a dataset; hashed by its text so an edited answer re-runs what judged it."""

    kind = "recorded"
    dataset: str
    item: str
    model: str
    text_sha: str

    def canonical(self) -> dict[str, Any]:
        return {"kind": self.kind, "dataset": self.dataset, "item": self.item, "model": self.model,
                "text_sha": self.text_sha}


@dataclass(frozen=True)
class Chat:
    """A model's answer to messages (a generation, or a discovery proposer's call)."""

    kind = "chat"
    endpoint: JSON
    messages: Sequence[JSON]
    params: JSON
    sample: int = 0
    prompt_from: str | None = None
    answer: JSON | None = None

    def canonical(self) -> dict[str, Any]:
        out = {"kind": self.kind, "endpoint": self.endpoint, "messages": self.messages, "params": self.params,
               "sample": self.sample}
        if self.answer is not None:
            out["answer"] = self.answer
        return _with_source(out, self.prompt_from)


@dataclass(frozen=True)
class PairJudgment:
    """One judge's verdict on a pair of outputs (task ids, in the order shown). An LLM judge carries its
    call and the order; an offline judge (metric, embedding) carries its `config` and sees one order."""

    kind = "judge"
    judge: str
    judge_kind: str
    fields: JSON
    outputs: tuple[str, str]
    config: JSON | None = None
    call: Prompted | None = None
    order: str | None = None
    prompt_from: str | None = None

    def canonical(self) -> dict[str, Any]:
        out = _judgment(self.kind, self.judge, self.judge_kind, self.fields, {"outputs": list(self.outputs)},
                        self.config, self.call, {"order": self.order})
        return _with_source(out, self.prompt_from)


@dataclass(frozen=True)
class Rating:
    """One judge's rating of one output (a task id): against a reference (LLM or offline similarity), or by
    running the item's tests. `repeat` numbers an LLM judge's independent repeats."""

    kind = "rate"
    judge: str
    judge_kind: str
    fields: JSON
    output: str
    config: JSON | None = None
    call: Prompted | None = None
    repeat: int | None = None

    def canonical(self) -> dict[str, Any]:
        return _judgment(self.kind, self.judge, self.judge_kind, self.fields, {"output": self.output}, self.config,
                         self.call, {"repeat": self.repeat})


@dataclass(frozen=True)
class Preservation:
    """The embedding check that a persona's rewrite keeps the request: the rewrite's text, or the task
    whose output it is."""

    kind = "verify"
    persona: str
    item: str
    variant: int
    fields: JSON
    rewrite: str | None
    config: JSON

    def canonical(self) -> dict[str, Any]:
        return {"kind": self.kind, "persona": self.persona, "item": self.item, "variant": self.variant,
                "fields": self.fields, "rewrite": self.rewrite, "config": self.config}


@dataclass(frozen=True)
class Rewrite:
    """An LLM's rewrite of a prompt in a persona's voice (variant `variant`)."""

    kind = "rewrite"
    call: Prompted
    persona: str
    prompt: str
    variant: int

    def canonical(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.call.canonical(), "persona": self.persona, "prompt": self.prompt,
                "variant": self.variant}


@dataclass(frozen=True)
class Profile:
    """An LLM's dimension weights for a persona, written from its description."""

    kind = "profile"
    persona: str
    call: Prompted
    fields: JSON

    def canonical(self) -> dict[str, Any]:
        return {"kind": self.kind, "persona": self.persona, **self.call.canonical(), "fields": self.fields}


@dataclass(frozen=True)
class SameTaskCheck:
    """An LLM's yes/no: does a persona's rewrite still ask for the original task?"""

    kind = "check"
    persona: str
    item: str
    variant: int
    call: Prompted
    fields: JSON
    prompt_from: str | None = None

    def canonical(self) -> dict[str, Any]:
        out = {"kind": self.kind, "persona": self.persona, "item": self.item, "variant": self.variant,
               **self.call.canonical(), "fields": self.fields}
        return _with_source(out, self.prompt_from)


# every kind of request a task holds, the content its hash is taken of
Request = Recorded | Chat | PairJudgment | Rating | Preservation | Rewrite | Profile | SameTaskCheck


def answer_format(request: Request) -> JSON | None:
    """The JSON schema (by name) the request's model must answer in, when it is asked for one."""
    if isinstance(request, Chat):
        return request.answer
    if isinstance(request, PairJudgment | Rating | Rewrite | Profile | SameTaskCheck) and request.call is not None:
        return request.call.answer
    return None


def parse(d: JSON) -> Request:
    """The typed record of a canonical request dict (as stored in a plan)."""
    kind = d["kind"]
    if kind == "recorded":
        return Recorded(d["dataset"], d["item"], d["model"], d["text_sha"])
    if kind == "chat":
        return Chat(d["endpoint"], d["messages"], d["params"], d["sample"], d.get("prompt_from"), d.get("answer"))
    if kind == "judge":
        first, second = d["outputs"]
        return PairJudgment(d["judge"], d["judge_kind"], d["fields"], (first, second), d.get("config"),
                            Prompted.parse(d), d.get("order"), d.get("prompt_from"))
    if kind == "rate":
        return Rating(d["judge"], d["judge_kind"], d["fields"], d["output"], d.get("config"), Prompted.parse(d),
                      d.get("repeat"))
    if kind == "verify":
        return Preservation(d["persona"], d["item"], d["variant"], d["fields"], d["rewrite"], d["config"])
    call = Prompted.parse(d)
    assert call is not None, f"a {kind!r} request without a template"
    if kind == "rewrite":
        return Rewrite(call, d["persona"], d["prompt"], d["variant"])
    if kind == "profile":
        return Profile(d["persona"], call, d["fields"])
    if kind == "check":
        return SameTaskCheck(d["persona"], d["item"], d["variant"], call, d["fields"], d.get("prompt_from"))
    raise ValueError(f"unknown request kind {kind!r}")
