"""Plan stage: a validated `Spec` plus its loaded items → a deterministic `Plan` of every call.

Each task carries the canonical form of its request and a content hash of it. That hash is the cache key:
a task whose hash is in the cache is done, and a spec change re-runs exactly the tasks whose request
changed. Tasks that consume other tasks' outputs (judges) name those outputs by their tasks' hashes, so a
changed generation invalidates the judgments made of it. Estimates are upper bounds (max_tokens for
unknown outputs, ~4 characters a token for known text) so a reviewer sees the worst case.

Each analysis method (`engine/builtin_plugins/methods/`) adds its tasks through `Builder`'s primitives, which
build the typed requests (`engine.requests`) and hash their canonical form. Compiling is pure: same spec and data →
byte-identical JSON."""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.judges import answers, prompts
from engine.judges.kinds import JudgeKind, kind_of
from engine.provider_table import is_recorded
from engine.records import OFFLINE_PROVIDER, Binding, Deferred, Measured, PairSet, Task, content_hash
from engine.requests import Chat, PairJudgment, Prompted, Rating, Recorded, Request, parse
from engine.spec.model import Endpoint, Judge, Spec, Vibe

if TYPE_CHECKING:
    from engine.datasets import Item

PairColumns = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]  # items, outputs A, outputs B


def estimate_tokens(text: str) -> int:
    """A rough token count for the plan's cost estimate: four characters a token."""
    return max(1, math.ceil(len(text) / 4))


class Builder:
    """The plan under construction. Analysis methods (`engine/builtin_plugins/methods/`) add their tasks through the
    primitives here, which build the typed requests, hash them and de-duplicate: a generation two analyses
    ask for is one task."""

    def __init__(self, spec: Spec, items: dict[str, list[Item]], stages: tuple[str, ...],
                 earlier: Iterable[Task] = ()):
        self.spec = spec
        self.items = items
        self.stages = stages  # the stages its tasks may run in: the spec's methods' (`engine.registry.stage_order`)
        self.tasks: dict[str, Task] = {}
        self.deferred: list[Deferred] = []
        self.bindings: dict[str, list[Binding]] = defaultdict(list)
        # a conversation turn's output (task id) -> what came before it, as its judges' context
        self.contexts: dict[str, dict[str, Any]] = {}
        # offline judgments measured per answer, gathered by (stage, analysis, judge, kind, question, measure):
        # the items and the two answers of every pair, in the order they were planned, as the column triples of
        # the pairs added (one triple for every vibe that judged the same list of pairs: see `judge_pairs`)
        self._measured: dict[tuple[Any, ...], list[PairColumns]] = {}
        self._columns: PairColumns = ((), (), ())  # the last pairs judged together, as columns
        # an offline judge's kind and hashed settings, by judge name
        self._pair_configs: dict[str, tuple[JudgeKind, dict[str, Any]]] = {}
        self._calls: dict[tuple[str, prompts.Template], tuple[Judge, Prompted]] = {}  # see `_prompted`
        self._last_definition: tuple[dict[str, Any], str] = ({}, _DEFINITION_KEY({}))  # see `_definition_key`
        # the generations of a plan compiled before from the same items, by (endpoint, item): see `_task_id`
        self._earlier: dict[tuple[str, str], list[Task]] = {}
        for task in earlier:
            if task.stage == "generation":
                self._earlier.setdefault((task.endpoint, task.item_id), []).append(task)

    def bind(self, analysis: str, item: Item, outputs: dict[str, list[str]], variant: str = "original") -> None:
        self.bindings[analysis].append(Binding(item.id, variant, outputs))

    def add(self, stage: str, analysis: str, endpoint_name: str, provider: str, item_id: str,
            request: Request, depends_on: Iterable[str] = (), input_tokens: int = 0,
            output_tokens: int = 0, endpoint: Endpoint | None = None) -> str:
        self._check_stage(stage, analysis)
        canonical = request.canonical()
        task_id = self._task_id(stage, endpoint_name, item_id, canonical)
        if task_id not in self.tasks:  # identical requests from two analyses run once
            cost = endpoint.cost(input_tokens, output_tokens) if endpoint else 0.0
            self.tasks[task_id] = Task(task_id, stage, analysis, endpoint_name, provider, item_id, canonical,
                                       tuple(depends_on), input_tokens, output_tokens, cost)
        return task_id

    def _task_id(self, stage: str, endpoint_name: str, item_id: str, canonical: dict[str, Any]) -> str:
        """The content hash of `canonical`, or the id of an earlier plan's generation whose request is the same:
        hashing is most of the cost of planning a generation, and a run that discovers vibes plans every
        generation twice. "The same" is the same repr, which tells 1, 1.0 and True apart as JSON does (== does
        not), at a fraction of the cost of the JSON."""
        for task in self._earlier.get((endpoint_name, item_id), ()) if stage == "generation" else ():
            if task.request == canonical and repr(task.request) == repr(canonical):
                return task.id
        return content_hash(canonical)

    # -- generations -------------------------------------------------------------------------------

    def generation(self, analysis: str, model_name: str, dataset: str, item: Item, *, sample: int = 0,
                   prompt: str | None = None, temperature: float | None = None,
                   prompt_from: str | None = None) -> tuple[str, int]:
        """Plan (or reuse) one output of `model_name` for `item`; returns (task id, estimated tokens).
        `prompt_from` names a rewrite task whose output becomes the user message at run time."""
        model = self.spec.models[model_name]
        if is_recorded(model.provider):
            text = item.outputs.get(model_name)
            if text is None:
                raise PlanError(f"dataset {dataset!r} item {item.id!r} has no recorded output for {model_name!r}")
            recorded = Recorded(dataset, item.id, model_name, hashlib.sha256(text.encode()).hexdigest())
            task_id = self.add("generation", analysis, model_name, "recorded", item.id, recorded)
            self._context(task_id, dataset, list(item.history.get(model_name, ())))
            return task_id, estimate_tokens(text)
        if item.conversation is not None and item.turn is None:
            raise PlanError(f"dataset {dataset!r}: unit: conversation judges recorded transcripts, and "
                            f"{model_name!r} is a model vibe calls; use unit: turn or final to have it answer turn "
                            "after turn")
        messages: list[dict[str, Any]] = []
        if model.system_prompt:
            messages.append({"role": "system", "content": model.system_prompt})
        params = model.params.request_fields()
        if temperature is not None:
            params["temperature"] = temperature
        offset_seed(params, sample)  # K samples must differ, yet stay reproducible: one seed per sample
        earlier: list[str] = []
        for turn, user in enumerate(item.earlier, 1):  # the model answers the earlier turns itself, in order
            messages.append({"role": "user", "content": user})
            earlier.append(self.add("generation", analysis, model_name, model.provider, f"{item.conversation}#{turn}",
                                    Chat(model.identity(), list(messages), params, sample), depends_on=earlier,
                                    input_tokens=_message_tokens(messages, model),
                                    output_tokens=model.params.max_tokens, endpoint=model))
            messages.append({"role": "assistant", "from": earlier[-1]})
        content: Any = prompt if prompt is not None else item.prompt
        if item.image:
            content = [_image_part(dataset, item), {"type": "text", "text": content}]
        messages.append({"role": "user", "content": content})
        request = Chat(model.identity(), messages, params, sample, prompt_from)
        depends = (prompt_from, *earlier) if prompt_from else tuple(earlier)
        task_id = self.add("generation", analysis, model_name, model.provider, item.id, request,
                           depends_on=depends, input_tokens=_message_tokens(messages, model),
                           output_tokens=model.params.max_tokens, endpoint=model)
        self._context(task_id, dataset, [m for m in messages[:-1] if m["role"] != "system"])
        return task_id, model.params.max_tokens

    def _context(self, task_id: str, dataset: str, history: list[dict[str, Any]]) -> None:
        """Keep what came before a conversation turn's output, for the LLM judges that read it."""
        if history:
            self.contexts[task_id] = {"messages": history, "tokens": self.spec.datasets[dataset].context_tokens}

    # -- judgments ---------------------------------------------------------------------------------

    def judge_pair(self, stage: str, analysis: str, judge: Judge, item: Item, template: prompts.Template,
                   fields: dict[str, Any], outputs: tuple[str, str], out_tokens: int,
                   extra_text: str = "", prompt_from: str | None = None, question: str | None = None) -> None:
        """One judgment of a pair: both orders for an LLM judge, one order-free task for offline judges.
        `prompt_from`: a rewrite task whose output is the request the judge is shown. `question`: what is
        asked of every pair alike (a vibe's name); given, an offline judge whose kind measures each answer alone
        (`JudgeKind.answer_measure`) adds the pair to its `Measured` record for that question instead of
        planning a task for it (see `measured`)."""
        if judge.endpoint is None:
            kind, config = self._offline(judge)
            if question is not None and self._measure_answers(stage, analysis, judge, fields, question,
                                                              ((item.id,), (outputs[0],), (outputs[1],))):
                return
            self.add(stage, analysis, judge.name, OFFLINE_PROVIDER, item.id,
                     PairJudgment(judge.name, kind.wire, fields, outputs, config=config), outputs)
            return
        kind = kind_of(judge)
        context = [self.contexts.get(output) for output in outputs]
        budget = max((c["tokens"] for c in context if c), default=0)
        if any(context):  # a conversation's turn: the judge reads the earlier turns behind each answer
            fields = {**fields, "context": {"tokens": budget, "answers": [c["messages"] if c else [] for c in context]}}
        in_tokens = (estimate_tokens(template.system + template.user + item.prompt + extra_text) + out_tokens
                     + 2 * budget)  # both answers' context, at most
        call = self._prompted(judge, template)
        earlier = [m["from"] for c in context if c for m in c["messages"] if "from" in m]  # answers it shows
        for order in ("ab", "ba"):
            shown = outputs if order == "ab" else (outputs[1], outputs[0])
            request = PairJudgment(judge.name, kind.wire, fields, shown, call=call, order=order,
                                   prompt_from=prompt_from)
            depends = (*outputs, prompt_from, *earlier) if prompt_from else (*outputs, *earlier)
            self.add(stage, analysis, judge.name, judge.endpoint.provider, item.id, request, depends,
                     input_tokens=in_tokens, output_tokens=call.params["max_tokens"], endpoint=judge.endpoint)

    def _prompted(self, judge: Judge, template: prompts.Template) -> Prompted:
        """`prompted(judge, template, its params)`, made once per judge and template of a plan: an LLM judge asks
        it of every pair (a judge of the same name that is another record is made afresh)."""
        found = self._calls.get((judge.name, template))
        if found is None or found[0] is not judge:
            assert judge.endpoint is not None
            found = self._calls[(judge.name, template)] = (
                judge, prompted(judge, template, judge.endpoint.params.request_fields()))
        return found[1]

    def judge_pairs(self, stage: str, analysis: str, judge: Judge, pairs: Sequence[tuple[Item, tuple[str, str], int]],
                    template: prompts.Template, fields: dict[str, Any], extra_text: str = "",
                    question: str | None = None) -> None:
        """`judge_pair` for each (item, its two outputs, their tokens) of `pairs`, asking every pair the same
        vibe `fields` with the item's prompt added. An offline judge whose kind measures each answer alone reads
        the vibe's fields once for them all (its measure reads no pair's prompt), instead of once a pair: a
        plan asks it on every pair of every vibe. A kind that `learns` is asked nothing (it is fitted later)."""
        if judge.endpoint is None and self._offline(judge)[0].learns:
            return
        if judge.endpoint is None and question is not None and self._measure_answers(
                stage, analysis, judge, fields, question, self._pair_columns(pairs)):
            return
        for item, outputs, tokens in pairs:
            self.judge_pair(stage, analysis, judge, item, template, {**fields, "prompt": item.prompt}, outputs, tokens,
                            extra_text=extra_text, question=question)

    def _offline(self, judge: Judge) -> tuple[JudgeKind, dict[str, Any]]:
        """An offline judge's kind and hashed settings, read once per plan: a plan asks for them on every pair
        and vibe (1,400,000 times for 100,000 pairs and 14 vibes)."""
        if judge.name not in self._pair_configs:
            kind = kind_of(judge)
            self._pair_configs[judge.name] = (kind, kind.pair_config(judge))
        return self._pair_configs[judge.name]

    def _pair_columns(self, pairs: Sequence[tuple[Item, tuple[str, str], int]]) -> PairColumns:
        """`pairs` as columns: their items' ids and their A and B outputs. A method judges one list of pairs on
        every vibe: columns equal to the last ones are that same triple, which every vibe's record then shares
        (`measured` hashes it once)."""
        columns = (tuple(item.id for item, _, _ in pairs), tuple(outputs[0] for _, outputs, _ in pairs),
                   tuple(outputs[1] for _, outputs, _ in pairs))
        if columns != self._columns:
            self._columns = columns
        return self._columns

    def _measure_answers(self, stage: str, analysis: str, judge: Judge, fields: dict[str, Any], question: str,
                         columns: PairColumns) -> bool:
        """Add the pairs of `columns` to the `Measured` record of `question` when the offline judge's kind
        measures each answer alone; False, adding nothing, when it does not. One record per (stage, analysis,
        judge, kind, question, measure)."""
        kind, config = self._offline(judge)
        per_answer = kind.answer_measure(fields, config)
        if per_answer is None:
            return False
        key = (stage, analysis, judge.name, kind.wire, question, self._definition_key(per_answer.definition),
               per_answer.tolerance, per_answer.relative)
        self._measured.setdefault(key, []).append(columns)
        return True

    def judge_single(self, stage: str, analysis: str, judge: Judge, item: Item, output: str, out_tokens: int,
                     repeat: int, corpus: str) -> None:
        """One rating of one output against the item's reference. `corpus` names the reference set the
        offline judge weighs words against (its idf)."""
        kind = kind_of(judge)
        if judge.endpoint is None:
            planned = kind.rating_input(judge, item, corpus, repeat)
            if planned is not None:
                fields, config = planned
                self.add(stage, analysis, judge.name, OFFLINE_PROVIDER, item.id,
                         Rating(judge.name, kind.wire, fields, output, config=config), (output,))
            return
        fields = {"prompt": item.prompt, "reference": item.reference}
        template = prompts.REFERENCE_RATING
        call = prompted(judge, template, offset_seed(judge.endpoint.params.request_fields(), repeat))  # repeats differ
        in_tokens = estimate_tokens(template.user + item.prompt + (item.reference or "")) + out_tokens
        self.add(stage, analysis, judge.name, judge.endpoint.provider, item.id,
                 Rating(judge.name, kind.wire, fields, output, call=call, repeat=repeat), (output,),
                 input_tokens=in_tokens, output_tokens=judge.endpoint.params.max_tokens, endpoint=judge.endpoint)

    def measured(self) -> list[Measured]:
        """The `Measured` records gathered by `judge_pair`, in planning order; records of the same pairs share one
        PairSet, and an identical record two analyses ask for is one."""
        sets: dict[str, PairSet] = {}
        shared: dict[int, tuple[PairColumns, PairSet]] = {}  # the records that share one triple hash it once
        out: dict[str, Measured] = {}
        for key, parts in self._measured.items():
            stage, analysis, judge, wire, question, definition, tolerance, relative = key
            if len(parts) == 1 and id(parts[0]) in shared:
                pairs = shared[id(parts[0])][1]
            else:
                pairs = PairSet.of(*(tuple(v for part in parts for v in part[column]) for column in range(3)))
                pairs = sets.setdefault(pairs.id, pairs)
                if len(parts) == 1:
                    shared[id(parts[0])] = (parts[0], pairs)
            measure = json.loads(definition)
            record_id = content_hash(Measured.content(judge, wire, question, measure, tolerance, relative, pairs.id))
            out.setdefault(record_id, Measured(record_id, stage, analysis, judge, wire, question, measure, tolerance,
                                               relative, pairs))
        return list(out.values())

    def _definition_key(self, definition: dict[str, Any]) -> str:
        """`_DEFINITION_KEY(definition)`, kept for the last definition: a plan asks for one vibe's on every pair
        in turn, and the equal dict is cheaper to compare than to write out again."""
        if definition != self._last_definition[0]:
            self._last_definition = (definition, _DEFINITION_KEY(definition))
        return self._last_definition[1]

    def defer(self, deferred: Deferred) -> None:
        """Work whose requests depend on results not yet known (discovered vibes), as an estimate."""
        self._check_stage(deferred.stage, deferred.analysis)
        self.deferred.append(deferred)

    def _check_stage(self, stage: str, analysis: str) -> None:
        """The executor runs the stages the spec's methods declare (`AnalysisMethod.stages`); a task of any other
        would never run."""
        if stage not in self.stages:
            raise PlanError(f"analysis {analysis!r}: its method planned a task of stage {stage!r}, which no method "
                            f"of the spec declares in its `stages` (this spec runs: {', '.join(self.stages)})")


# a measure's definition as `json.dumps(definition, sort_keys=True)` writes it, with one encoder for every pair
# and vibe: `dumps` with options builds a new encoder each call
_DEFINITION_KEY = json.JSONEncoder(sort_keys=True).encode


class PlanError(Exception):
    """A spec that validates but cannot be planned against its data (an item missing a model's recorded answer,
    an image that cannot be read); the message names what and where."""


def _message_tokens(messages: list[dict[str, Any]], model: Endpoint) -> int:
    """Estimated input tokens of a chat: an earlier answer not yet written counts as its max_tokens."""
    return sum(estimate_tokens(json.dumps(m["content"])) if "content" in m else model.params.max_tokens
               for m in messages)


def _image_part(dataset: str, item: Item) -> dict[str, str]:
    """An image message part. A local file is named by path and content hash, so replacing the image
    re-runs the generations that showed it; a missing file stops planning with its path."""
    assert item.image is not None
    if "://" in item.image or item.image.startswith("data:"):
        return {"type": "image", "source": item.image}
    try:
        digest = hashlib.sha256(Path(item.image).read_bytes()).hexdigest()
    except OSError as exc:
        raise PlanError(f"dataset {dataset!r} item {item.id!r}: image {item.image} cannot be read "
                        f"({exc.strerror or exc})") from None
    return {"type": "image", "source": item.image, "sha256": digest}


def prompted(judge: Judge, template: prompts.Template, params: dict[str, Any]) -> Prompted:
    """The LLM call of a templated request. When the judge answers in a JSON schema, the template's schema
    joins the request, and so its hash: a free-text judge (`structured: off`) keeps the hashes it always had."""
    assert judge.endpoint is not None
    answer = (answers.request_field(answers.FOR_TEMPLATE[template.name])
              if kind_of(judge).answers_in_schema(judge) and template.name in answers.FOR_TEMPLATE else None)
    return Prompted(judge.endpoint.identity(), template.name, template.digest, params, answer)


def offset_seed(params: dict[str, Any], offset: int) -> dict[str, Any]:
    """Samples, repeats and variants of one request differ yet stay reproducible: seed + their index (no seed,
    no change)."""
    if "seed" in params:
        params["seed"] += offset
    return params


def reference_corpus(items: Iterable[Item]) -> tuple[str, tuple[str, ...]]:
    """The distinct references of a dataset, sorted, and their hash."""
    references = tuple(sorted({item.reference for item in items if item.reference}))
    return content_hash({"references": list(references)}), references


def reference_corpora(tasks: Iterable[Task]) -> dict[str, tuple[str, ...]]:
    """Corpus hash → references, gathered from every offline rating task of a plan (pending or not)."""
    found: dict[str, set[str]] = defaultdict(set)
    for t in tasks:
        if t.provider != OFFLINE_PROVIDER:
            continue
        request = parse(t.request)
        if isinstance(request, Rating) and request.config is not None and "corpus" in request.config:
            found[request.config["corpus"]].add(request.fields["reference"])
    return {corpus: tuple(sorted(refs)) for corpus, refs in found.items()}


def spec_hash(spec: Spec) -> str:
    """What the spec asks for; where it runs (`execution:`) is left out, as it changes no result."""
    return content_hash({k: v for k, v in spec.document.items() if k != "execution"})


def vibe_fields(vibe: Vibe) -> dict[str, Any]:
    """A vibe as a judge's request holds it (name, poles, metric, examples): what its task hash is taken of."""
    out: dict[str, Any] = {"vibe": vibe.name, "low": vibe.low, "high": vibe.high}
    if vibe.metric:
        out["metric"] = vibe.metric
    if vibe.examples:
        out["examples"] = {"low": list(vibe.examples.low), "high": list(vibe.examples.high)}
    return out
