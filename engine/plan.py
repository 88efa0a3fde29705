"""Plan stage: a validated `Spec` plus its loaded items → a deterministic `Plan` of every call.

Each task carries the canonical form of its request and a content hash of it. That hash is the cache key:
a task whose hash is in the cache is done, and a spec change re-runs exactly the tasks whose request
changed. Tasks that consume other tasks' outputs (judges) name those outputs by their tasks' hashes, so a
changed generation invalidates the judgments made of it. Estimates are upper bounds (max_tokens for
unknown outputs, ~4 characters a token for known text) so a reviewer sees the worst case.

Compiling is pure: same spec and data → byte-identical JSON.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from engine.datasets import Item
from engine.judges import answers, prompts, unit_tests
from engine.records import OFFLINE_PROVIDER, STAGES, Binding, Deferred, Plan, Task, content_hash
from engine.spec.model import Analysis, Endpoint, Judge, Persona, Spec, Vibe
from engine.spec.profiles import JUDGED_DIMENSIONS

# The text property an offline metric judge measures for a dimension; the persona's `prefers` says which end
# of it that persona favours. Dimensions missing here need an LLM judge.
DIMENSION_MEASURES = {"clarity": "readability", "cognitive_load": "length_words",
                      "anthropomorphism": "warmth", "workflow_fit": "code_blocks"}
CONTROL_TEMPLATES = ("Perform the following task:\n\n{p}", "{p}\n\nPlease respond to the request above.")
DEFAULT_PRESERVATION = 0.6


def estimate_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4))


class _Builder:
    def __init__(self, spec: Spec, items: dict[str, list[Item]]):
        self.spec = spec
        self.items = items
        self.tasks: dict[str, Task] = {}
        self.deferred: list[Deferred] = []
        self.bindings: dict[str, list[Binding]] = defaultdict(list)

    def bind(self, analysis: str, item: Item, outputs: dict[str, list[str]], variant: str = "original") -> None:
        self.bindings[analysis].append(Binding(item.id, variant, outputs))

    def add(self, stage: str, analysis: str, endpoint_name: str, provider: str, item_id: str,
            request: dict[str, Any], depends_on: Iterable[str] = (), input_tokens: int = 0,
            output_tokens: int = 0, endpoint: Endpoint | None = None) -> str:
        task_id = content_hash(request)
        if task_id not in self.tasks:  # identical requests from two analyses run once
            cost = endpoint.price.cost(input_tokens, output_tokens) if endpoint else 0.0
            self.tasks[task_id] = Task(task_id, stage, analysis, endpoint_name, provider, item_id, request,
                                       tuple(depends_on), input_tokens, output_tokens, cost)
        return task_id

    # -- generations -------------------------------------------------------------------------------

    def generation(self, analysis: str, model_name: str, dataset: str, item: Item, *, sample: int = 0,
                   prompt: str | None = None, temperature: float | None = None,
                   prompt_from: str | None = None) -> tuple[str, int]:
        """Plan (or reuse) one output of `model_name` for `item`; returns (task id, estimated tokens).
        `prompt_from` names a rewrite task whose output becomes the user message at run time."""
        model = self.spec.models[model_name]
        if model.provider == "recorded":
            text = item.outputs.get(model_name)
            if text is None:
                raise PlanError(f"dataset {dataset!r} item {item.id!r} has no recorded output for {model_name!r}")
            request = {"kind": "recorded", "dataset": dataset, "item": item.id, "model": model_name,
                       "text_sha": hashlib.sha256(text.encode()).hexdigest()}
            task_id = self.add("generation", analysis, model_name, "recorded", item.id, request)
            return task_id, estimate_tokens(text)
        messages = []
        if model.system_prompt:
            messages.append({"role": "system", "content": model.system_prompt})
        content: Any = prompt if prompt is not None else item.prompt
        if item.image:
            content = [_image_part(dataset, item), {"type": "text", "text": content}]
        messages.append({"role": "user", "content": content})
        params = model.params.request_fields()
        if temperature is not None:
            params["temperature"] = temperature
        _offset_seed(params, sample)  # K samples must differ, yet stay reproducible: one seed per sample
        request = {"kind": "chat", "endpoint": model.identity(), "messages": messages, "params": params,
                   "sample": sample}
        if prompt_from:
            request["prompt_from"] = prompt_from
        in_tokens = sum(estimate_tokens(json.dumps(m["content"])) for m in messages)
        task_id = self.add("generation", analysis, model_name, model.provider, item.id, request,
                           depends_on=(prompt_from,) if prompt_from else (), input_tokens=in_tokens,
                           output_tokens=model.params.max_tokens, endpoint=model)
        return task_id, model.params.max_tokens

    # -- judgments ---------------------------------------------------------------------------------

    def judge_pair(self, stage: str, analysis: str, judge: Judge, item: Item, template: prompts.Template,
                   fields: dict[str, Any], outputs: tuple[str, str], out_tokens: int,
                   extra_text: str = "", prompt_from: str | None = None) -> None:
        """One judgment of a pair: both orders for an LLM judge, one order-free task for offline judges.
        `prompt_from`: a rewrite task whose output is the request the judge is shown."""
        base = {"kind": "judge", "judge": judge.name, "judge_kind": judge.kind, "fields": fields}
        if judge.kind != "llm":
            request = {**base, "config": {"metric": judge.metric, "tolerance": judge.tolerance,
                                          "margin": judge.margin}, "outputs": list(outputs)}
            self.add(stage, analysis, judge.name, OFFLINE_PROVIDER, item.id, request, outputs)
            return
        assert judge.endpoint is not None
        in_tokens = estimate_tokens(template.system + template.user + item.prompt + extra_text) + out_tokens
        params = judge.endpoint.params.request_fields()
        for order in ("ab", "ba"):
            shown = outputs if order == "ab" else outputs[::-1]
            request = {**base, "endpoint": judge.endpoint.identity(), "template": template.name,
                       "template_sha": template.digest, "params": params, "order": order,
                       "outputs": list(shown)}
            _answer_in_schema(request, judge, template)
            depends = outputs
            if prompt_from:
                request["prompt_from"] = prompt_from
                depends = (*outputs, prompt_from)
            self.add(stage, analysis, judge.name, judge.endpoint.provider, item.id, request, depends,
                     input_tokens=in_tokens, output_tokens=params["max_tokens"], endpoint=judge.endpoint)

    def judge_single(self, stage: str, analysis: str, judge: Judge, item: Item, output: str, out_tokens: int,
                     repeat: int, corpus: str) -> None:
        """One rating of one output against the item's reference. `corpus` names the reference set the
        offline judge weighs words against (its idf)."""
        fields = {"prompt": item.prompt, "reference": item.reference}
        base = {"kind": "rate", "judge": judge.name, "judge_kind": judge.kind, "fields": fields, "output": output}
        if judge.kind == "unit_tests":
            if item.tests:  # no tests, no verdict: the gate then leaves the prompt to the dimensions
                request = {**base, "fields": {"tests": item.tests},
                           "config": {"method": unit_tests.METHOD, "timeout_s": unit_tests.TIMEOUT_S}}
                self.add(stage, analysis, judge.name, OFFLINE_PROVIDER, item.id, request, (output,))
            return
        if judge.kind != "llm":
            if repeat == 0:  # offline judges are deterministic: one repeat says all
                self.add(stage, analysis, judge.name, OFFLINE_PROVIDER, item.id,
                         {**base, "config": {"method": "reference-similarity/v1", "corpus": corpus}}, (output,))
            return
        assert judge.endpoint is not None
        params = _offset_seed(judge.endpoint.params.request_fields(), repeat)  # repeats differ, reproducibly
        template = prompts.REFERENCE_RATING
        request = {**base, "endpoint": judge.endpoint.identity(), "template": template.name,
                   "template_sha": template.digest, "params": params, "repeat": repeat}
        _answer_in_schema(request, judge, template)
        in_tokens = estimate_tokens(template.user + item.prompt + (item.reference or "")) + out_tokens
        self.add(stage, analysis, judge.name, judge.endpoint.provider, item.id, request, (output,),
                 input_tokens=in_tokens, output_tokens=judge.endpoint.params.max_tokens, endpoint=judge.endpoint)

    # -- analyses ----------------------------------------------------------------------------------

    def vibecheck(self, a: Analysis) -> None:
        """Every model answers every prompt once; each comparison (a model and its reference, or the two
        models) is judged on every vibe, pair by pair."""
        comparisons = a.comparisons()
        reference = a.options.get("reference")
        by_comparison: dict[tuple[str, str], list[tuple[Item, tuple[str, str], int]]] = {c: [] for c in comparisons}
        for item in self.items[a.dataset]:
            models = a.models[:2] if reference is None else [  # many models: a recorded one may miss a prompt
                m for m in a.models if self.spec.models[m].provider != "recorded" or m in item.outputs]
            if reference is not None and reference not in models:
                continue  # a prompt the reference has no recorded answer to has nothing to compare
            made = {model: self.generation(a.name, model, a.dataset, item) for model in models}
            self.bind(a.name, item, {model: [task] for model, (task, _) in made.items()})
            for first, second in comparisons:
                if first in made and second in made:
                    by_comparison[(first, second)].append(
                        (item, (made[first][0], made[second][0]), made[first][1] + made[second][1]))
        pairs = [pair for comparison in comparisons for pair in by_comparison[comparison]]
        vibes = [v for v in self.spec.vibes if not a.options.get("vibes") or v.name in a.options["vibes"]]
        judges = [self.spec.judges[j] for j in a.options["judges"]]
        for vibe in vibes:
            vibe_judges = [self.spec.judges[j] for j in vibe.judges] if vibe.judges else judges
            fields = vibe_fields(vibe)
            # an LLM judge sees a vibe's example answers too, when it has them
            template = prompts.VIBE_SCORE_EXAMPLES if vibe.examples else prompts.VIBE_SCORE
            examples_text = "".join(vibe.examples.low + vibe.examples.high) if vibe.examples else ""
            for judge in (j for j in vibe_judges if j.can_score(vibe)):
                for item, outputs, tokens in pairs:
                    self.judge_pair("judge", a.name, judge, item, template, {**fields, "prompt": item.prompt},
                                    outputs, tokens, extra_text=examples_text)
        for name in a.options.get("preference_judges", []):  # every pair: labelled ones measure the judge
            for item, outputs, tokens in pairs:
                self.judge_pair("preference", a.name, self.spec.judges[name], item, prompts.PREFERENCE,
                                {"prompt": item.prompt}, outputs, tokens)
        if self.spec.discovery is not None:
            self._discovery(a, pairs, judges)

    def _discovery(self, a: Analysis, pairs: list[tuple[Item, tuple[str, str], int]], judges: list[Judge]) -> None:
        """Estimates for work that discovery adds: its proposer's calls, and every judge's scoring of up to
        `max_vibes` discovered vibes on every pair of the analysis (the vibes are judged like declared ones)."""
        d = self.spec.discovery
        assert d is not None
        note = f"estimate: score up to {d.max_vibes} discovered vibes on all {len(pairs)} pairs"
        if d.method == "llm":
            proposer = self.spec.judges[d.proposer or ""]
            assert proposer.endpoint is not None
            per_batch = sum(t for _, _, t in pairs[: d.batch]) + d.batch * 200
            calls = (math.ceil(d.pairs_per_round / d.batch) * 2 + 1) * d.iterations
            self.deferred.append(replace(_deferred("discovery", a.name, proposer.endpoint, calls, per_batch, 512,
                                                   "estimate: propose (both orders) and reduce vibes, per iteration"),
                                         tasks=calls))
        offline = [j for j in judges if j.kind != "llm"]
        # a discovered vibe is measured by the metric judge when it has a metric, else by the embedding judge
        per_vibe = max(sum(j.kind == "metric" for j in offline), sum(j.kind == "embedding" for j in offline))
        if per_vibe:
            self.deferred.append(Deferred("judge", a.name, "offline judges", 0, 0, 0, 0.0, note,
                                          tasks=d.max_vibes * len(pairs) * per_vibe))
        for judge in judges:
            if judge.kind == "llm" and judge.endpoint is not None:
                calls = d.max_vibes * len(pairs) * 2
                per_call = estimate_tokens(prompts.VIBE_SCORE.user) + pairs[0][2] if pairs else 0
                self.deferred.append(replace(_deferred("judge", a.name, judge.endpoint, calls, per_call,
                                                       judge.endpoint.params.max_tokens, note), tasks=calls))

    def separability(self, a: Analysis) -> None:
        """K samples per model and prompt; with a `preference_judge`, that judge compares the two models'
        j-th samples for every j (both orders), the outcomes sep-Elo weighs by the prompt's δ."""
        samples = a.options.get("samples", 5)
        temperature = a.options.get("temperature", 0.5)
        judge = self.spec.judges.get(a.options.get("preference_judge", ""))
        for item in self.items[a.dataset]:
            outputs = {model: [self.generation(a.name, model, a.dataset, item, sample=s, temperature=temperature)
                               for s in range(samples)] for model in a.models}
            self.bind(a.name, item, {model: [task for task, _ in made] for model, made in outputs.items()})
            if judge is None:
                continue
            for first, second in itertools.combinations(a.models, 2):
                for (ga, ta), (gb, tb) in zip(outputs[first], outputs[second], strict=True):
                    self.judge_pair("preference", a.name, judge, item, prompts.PREFERENCE, {"prompt": item.prompt},
                                    (ga, gb), ta + tb)

    def reference(self, a: Analysis) -> None:
        judge = self.spec.judges.get(a.options["judge"])
        if judge is None:  # the only way a validated name is missing: an optional judge without its key
            raise PlanError(f"analysis {a.name!r} rates with judge {a.options['judge']!r}, an optional judge whose "
                            "API key is not set; set the key or choose another judge")
        repeats = a.options.get("repeats", 3)
        items = [item for item in self.items[a.dataset] if item.reference]
        corpus, _ = reference_corpus(items)
        for item in items:
            outputs = {}
            for model in a.models:
                if self.spec.models[model].provider == "recorded" and model not in item.outputs:
                    continue  # pointwise: a missing recorded answer is unrated, and counted in the model's n
                output, tokens = self.generation(a.name, model, a.dataset, item)
                outputs[model] = [output]
                for r in range(repeats):
                    self.judge_single("reference", a.name, judge, item, output, tokens, r, corpus)
            self.bind(a.name, item, outputs)

    def personas(self, a: Analysis) -> None:
        """Per persona and prompt: the original, `variants` personalized rewrites (each with a preservation
        check) and `controls` neutral rewrites; both models answer each; every judge compares the two
        answers on each dimension the persona weighs; an optional reference judge rates answers for the
        correctness gate."""
        variants, controls = a.options.get("variants", 2), a.options.get("controls", 2)
        rewriter = self.spec.judges.get(a.options.get("rewriter", ""))
        gate = self.spec.judges.get(a.options.get("gate_judge", ""))
        judges = [self.spec.judges[j] for j in a.options["judges"]]
        threshold = a.options.get("preservation_min", DEFAULT_PRESERVATION)
        verifier = self.spec.judges.get(a.options.get("verifier", ""))
        items = self.items[a.dataset]
        corpus, _ = reference_corpus(items)
        for persona in (self.spec.personas[name] for name in a.options["personas"]):
            if persona.derive_with in self.spec.judges and not persona.dimensions:
                self._persona_profile(a, persona)
            for item in items:
                prompts_for_item: list[tuple[str, str, str | None]] = [("original", item.prompt, None)]
                for v in range(variants):
                    text, rewrite_task = self._persona_variant(a, persona, item, v, rewriter)
                    verify = {"kind": "verify", "persona": persona.name, "item": item.id, "variant": v,
                              "fields": {"original": item.prompt, "rewrite": None if rewrite_task else text},
                              "rewrite": rewrite_task, "config": {"min_cosine": threshold}}
                    self.add("persona_rewrite", a.name, "preservation", OFFLINE_PROVIDER, item.id, verify,
                             (rewrite_task,) if rewrite_task else ())
                    if verifier is not None and verifier.endpoint is not None:
                        self._persona_check(a, verifier, persona, item, v, text, rewrite_task)
                    prompts_for_item.append((f"persona{v}", text, rewrite_task))
                prompts_for_item += [(f"control{c}", CONTROL_TEMPLATES[c % len(CONTROL_TEMPLATES)].format(
                    p=item.prompt), None) for c in range(controls)]
                for label, text, rewrite_task in prompts_for_item:
                    (ga, ta), (gb, tb) = (self.generation(a.name, m, a.dataset, item, prompt=text,
                                                          prompt_from=rewrite_task) for m in a.models[:2])
                    self.bind(a.name, item, {a.models[0]: [ga], a.models[1]: [gb]}, variant=f"{persona.name}/{label}")
                    if gate is not None and (item.tests if gate.kind == "unit_tests" else item.reference):
                        for output, tokens in ((ga, ta), (gb, tb)):
                            self.judge_single("persona_judge", a.name, gate, item, output, tokens, 0, corpus)
                    self._persona_judgments(a, persona, item, text, rewrite_task, judges, (ga, gb), ta + tb)

    def _persona_variant(self, a: Analysis, persona: Persona, item: Item, v: int,
                         rewriter: Judge | None) -> tuple[str, str | None]:
        """(prompt text, rewrite task): an LLM rewrite when a rewriter is declared (its text is known only at
        run time; the text returned is the offline one, for estimates), else the offline prefix rewrite."""
        text = _persona_rewrite(persona.description, item.prompt, v)
        if rewriter is None or rewriter.endpoint is None:
            return text, None
        request = {"kind": "rewrite", "endpoint": rewriter.endpoint.identity(),
                   "template": prompts.PERSONA_REWRITE.name, "template_sha": prompts.PERSONA_REWRITE.digest,
                   "persona": persona_text(persona), "prompt": item.prompt, "variant": v,
                   "params": _offset_seed(rewriter.endpoint.params.request_fields(), v)}  # variants differ
        task = self.add("persona_rewrite", a.name, rewriter.name, rewriter.endpoint.provider, item.id, request,
                        input_tokens=estimate_tokens(persona.description + item.prompt) + 80,
                        output_tokens=rewriter.endpoint.params.max_tokens, endpoint=rewriter.endpoint)
        return text, task

    def _persona_profile(self, a: Analysis, persona: Persona) -> None:
        """An LLM writes the persona's dimension weights from its description (read at analysis time)."""
        judge = self.spec.judges[persona.derive_with or ""]
        assert judge.endpoint is not None
        template = prompts.PERSONA_PROFILE
        dimensions = "\n".join(f"- {d}: {text}" for d, text in JUDGED_DIMENSIONS.items())
        request = {"kind": "profile", "persona": persona.name, "endpoint": judge.endpoint.identity(),
                   "template": template.name, "template_sha": template.digest,
                   "fields": {"persona": persona.description, "dimensions": dimensions},
                   "params": judge.endpoint.params.request_fields()}
        self.add("persona_rewrite", a.name, judge.name, judge.endpoint.provider, persona.name, request,
                 input_tokens=estimate_tokens(template.user + persona.description + dimensions),
                 output_tokens=judge.endpoint.params.max_tokens, endpoint=judge.endpoint)

    def _persona_check(self, a: Analysis, verifier: Judge, persona: Persona, item: Item, v: int, text: str,
                       rewrite_task: str | None) -> None:
        """The LLM half of the preservation check: does the rewrite still ask for the same thing?"""
        assert verifier.endpoint is not None
        template = prompts.PRESERVATION_CHECK
        request = {"kind": "check", "persona": persona.name, "item": item.id, "variant": v,
                   "endpoint": verifier.endpoint.identity(), "template": template.name,
                   "template_sha": template.digest, "fields": {"original": item.prompt, "rewrite": text},
                   "params": verifier.endpoint.params.request_fields()}
        _answer_in_schema(request, verifier, template)
        if rewrite_task:
            request["prompt_from"] = rewrite_task
        self.add("persona_check", a.name, verifier.name, verifier.endpoint.provider, item.id, request,
                 (rewrite_task,) if rewrite_task else (),
                 input_tokens=estimate_tokens(template.user + item.prompt + text),
                 output_tokens=verifier.endpoint.params.max_tokens, endpoint=verifier.endpoint)

    def _persona_judgments(self, a: Analysis, persona: Persona, item: Item, text: str, rewrite_task: str | None,
                           judges: list[Judge], outputs: tuple[str, str], tokens: int) -> None:
        for dimension in persona_dimensions(persona):
            measure = DIMENSION_MEASURES.get(dimension)
            for judge in judges:
                if judge.kind == "llm":
                    fields = {"persona": persona_text(persona), "dimension": dimension,
                              "definition": JUDGED_DIMENSIONS[dimension],
                              "prompt": None if rewrite_task else text}
                    self.judge_pair("persona_judge", a.name, judge, item, prompts.PERSONA_PAIRWISE, fields,
                                    outputs, tokens, extra_text=persona_text(persona), prompt_from=rewrite_task)
                elif judge.kind == "metric" and judge.metric == "auto" and measure in persona.prefers:
                    # a measurement does not depend on who asks: one task serves every persona
                    self.judge_pair("persona_judge", a.name, judge, item, prompts.PERSONA_PAIRWISE,
                                    {"dimension": dimension, "metric": measure}, outputs, tokens)


class PlanError(Exception):
    pass


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


def _answer_in_schema(request: dict[str, Any], judge: Judge, template: prompts.Template) -> None:
    """Ask for the template's JSON schema when the judge answers in one. The schema joins the request, so
    it joins the task hash: a free-text judge (`structured: off`) keeps the hashes it always had."""
    if judge.answers_in_schema and template.name in answers.FOR_TEMPLATE:
        request["answer"] = answers.request_field(answers.FOR_TEMPLATE[template.name])


def _offset_seed(params: dict[str, Any], offset: int) -> dict[str, Any]:
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
        if t.request["kind"] == "rate" and t.provider == OFFLINE_PROVIDER and "corpus" in t.request["config"]:
            found[t.request["config"]["corpus"]].add(t.request["fields"]["reference"])
    return {corpus: tuple(sorted(refs)) for corpus, refs in found.items()}


def vibe_fields(vibe: Vibe) -> dict[str, Any]:
    out: dict[str, Any] = {"vibe": vibe.name, "low": vibe.low, "high": vibe.high}
    if vibe.metric:
        out["metric"] = vibe.metric
    if vibe.examples:
        out["examples"] = {"low": list(vibe.examples.low), "high": list(vibe.examples.high)}
    return out


def persona_dimensions(persona: Persona) -> dict[str, int]:
    """The dimensions a persona is judged on, with weights (all seven at weight 1 when none are given)."""
    return persona.dimensions or dict.fromkeys(JUDGED_DIMENSIONS, 1)


def persona_text(persona: Persona) -> str:
    """What an LLM judge or rewriter is told about the user."""
    return " ".join([persona.description, *([f"What I ask for: {persona.asks_for}."] if persona.asks_for else []),
                     *([f"Answers I like: {persona.style}."] if persona.style else [])])


def _persona_rewrite(description: str, prompt: str, variant: int) -> str:
    """The offline personalization: the persona speaks before the unchanged request (a prefix rewrite, as
    vibe-testing does for code stubs). An LLM rewriter, when declared, replaces it at run time."""
    lead = ("About me: {d}\n\n{p}", "{p}\n\n(Context: {d})")[variant % 2]
    return lead.format(d=description.strip(), p=prompt)


def _deferred(stage: str, analysis: str, endpoint: Endpoint, calls: int, in_tokens: int, out_tokens: int,
              note: str) -> Deferred:
    return Deferred(stage, analysis, endpoint.name, calls, calls * in_tokens, calls * out_tokens,
                    endpoint.price.cost(calls * in_tokens, calls * out_tokens), note)


def spec_hash(spec: Spec) -> str:
    return content_hash(spec.document)


def compile_plan(spec: Spec, items: dict[str, list[Item]]) -> Plan:
    """Every task of every analysis, in spec order, de-duplicated by content hash."""
    builder = _Builder(spec, items)
    for analysis in spec.analyses.values():
        method = getattr(builder, analysis.method, None)
        if method is not None:  # rankings reads outcomes the other analyses produce; it plans no calls
            method(analysis)
    order = {stage: n for n, stage in enumerate(STAGES)}
    tasks = sorted(builder.tasks.values(), key=lambda t: order[t.stage])  # stable: keeps spec order within
    return Plan(spec.name, spec_hash(spec), tasks, builder.deferred, dict(builder.bindings))


def summarize(plan: Plan, cached: set[str] | frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """One row per (stage, endpoint): calls, cached, tokens and cost still to spend."""
    rows: dict[tuple[str, str], dict[str, Any]] = defaultdict(
        lambda: {"tasks": 0, "calls": 0, "cached": 0, "input_tokens": 0, "output_tokens": 0, "cost": 0.0})
    for t in plan.tasks:
        row = rows[(t.stage, t.endpoint)]
        row["tasks"] += 1
        row["calls"] += int(t.is_call)
        if t.id in cached:
            row["cached"] += 1
            continue
        row["input_tokens"] += t.input_tokens
        row["output_tokens"] += t.output_tokens
        row["cost"] += t.cost
    for d in plan.deferred:
        row = rows[(d.stage + " (estimate)", d.endpoint)]
        row["tasks"] += d.tasks
        row["calls"] += d.calls
        row["input_tokens"] += d.input_tokens
        row["output_tokens"] += d.output_tokens
        row["cost"] += d.cost
    order = {stage: n for n, stage in enumerate(STAGES)}
    keys = sorted(rows, key=lambda k: (order.get(k[0].split(" ")[0], 99), k[0], k[1]))
    return [{"stage": s, "endpoint": e, **rows[(s, e)]} for s, e in keys]
