"""Persona testing (vibe-testing, seed 004): per persona and prompt, the original request, `variants`
rewrites in the persona's voice (each checked to still ask the same thing) and `controls` neutral rewrites;
both models answer each, and every judge compares the two answers on each dimension the persona weighs. An
optional gate judge rates correctness first (the reference judge, or the dataset's unit tests).

The statistics live in this package's `analysis`, the pages in its `pages`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from engine.api.judging import is_recorded, kind_of, prompts
from engine.api.methods import (
    AnalysisMethod,
    Builder,
    Page,
    analysis_method,
    estimate_tokens,
    offset_seed,
    prompted,
    reference_corpus,
)
from engine.api.records import (
    OFFLINE_PROVIDER,
    Item,
    Prepared,
    Preservation,
    Profile,
    Prompted,
    Result,
    Rewrite,
    SameTaskCheck,
)
from engine.api.spec import (
    JUDGED_DIMENSIONS,
    Analysis,
    Judge,
    PathKey,
    Persona,
    SpecChecker,
)
from engine.builtin_plugins.methods.personas.dimensions import DIMENSION_MEASURES, persona_dimensions, persona_text
from engine.builtin_plugins.methods.personas.options import PersonasOptions

CONTROL_TEMPLATES = ("Perform the following task:\n\n{p}", "{p}\n\nPlease respond to the request above.")


@analysis_method("personas")
class Personas(AnalysisMethod):
    options = PersonasOptions
    sections = ("personas",)
    # prompts rewritten in each persona's voice and checked, before the models answer them; the dimensions judged
    stages: ClassVar[dict[str, str]] = {"persona_rewrite": "before generation", "persona_check": "before generation",
                                        "persona_judge": "after judging"}
    report_folders = ("answers",)

    def headline(self, folder: Path) -> list[str]:
        """Which model each persona prefers, from personas.json."""
        path = folder / "personas.json"
        if not path.is_file():
            return []
        return [f"{persona['persona']} prefers {persona['preferred'] or 'neither'}"
                for persona in json.loads(path.read_text(encoding="utf-8"))["personas"]]

    def check(self, c: SpecChecker, path: PathKey, analysis: dict[str, Any]) -> None:
        c.each_ref((*path, "personas"), analysis["personas"], "personas")
        for i, model in enumerate(analysis.get("models", [])):
            if is_recorded(c.section("models").get(model, {}).get("provider")):
                c.report((*path, "models", i), f"model {model!r} gives recorded answers, written to the dataset's "
                         "prompts as they are: a personas analysis asks each model its personas' rewritten prompts, "
                         "so its models must be ones vibe calls (a provider other than recorded)")
        for i, judge in enumerate(analysis.get("judges", [])):
            c.judge_for((*path, "judges", i), judge, "dimension")
        for key in ("rewriter", "verifier"):
            if key in analysis:
                c.judge_for((*path, key), analysis[key], "text")
        if "gate_judge" in analysis:
            kind = c.judge_for((*path, "gate_judge"), analysis["gate_judge"], "tests", "reference")
            needs = kind.dataset_field if kind is not None else None
            if needs and needs not in c.dataset(analysis).get("fields", {}):
                c.report((*path, "gate_judge"), f"gate_judge {analysis['gate_judge']!r} reads the dataset's {needs}: "
                         f"map the column that holds them as fields.{needs}")

    def plan(self, builder: Builder, a: Analysis) -> None:
        """Per persona and prompt: the original, `variants` personalized rewrites (each with a preservation
        check) and `controls` neutral rewrites; both models answer each; every judge compares the two
        answers on each dimension the persona weighs; an optional reference judge rates answers for the
        correctness gate."""
        opts, spec = PersonasOptions.of(a), builder.spec
        rewriter = spec.judges.get(opts.rewriter or "")
        gate = spec.judges.get(opts.gate_judge or "")
        judges = [spec.judges[j] for j in opts.judges]
        verifier = spec.judges.get(opts.verifier or "")
        items = builder.items[a.dataset]
        corpus, _ = reference_corpus(items)
        for persona in (spec.personas[name] for name in opts.personas):
            if persona.derive_with in spec.judges and not persona.dimensions:
                _profile(builder, a, persona)
            for item in items:
                prompts_for_item: list[tuple[str, str, str | None]] = [("original", item.prompt, None)]
                for v in range(opts.variants):
                    text, rewrite_task = _variant(builder, a, persona, item, v, rewriter)
                    verify = Preservation(persona.name, item.id, v,
                                          {"original": item.prompt, "rewrite": None if rewrite_task else text},
                                          rewrite_task, {"min_cosine": opts.preservation_min})
                    builder.add("persona_rewrite", a.name, "preservation", OFFLINE_PROVIDER, item.id, verify,
                                (rewrite_task,) if rewrite_task else ())
                    if verifier is not None and verifier.endpoint is not None:
                        _same_task_check(builder, a, verifier, persona, item, v, text, rewrite_task)
                    prompts_for_item.append((f"persona{v}", text, rewrite_task))
                prompts_for_item += [(f"control{c}", CONTROL_TEMPLATES[c % len(CONTROL_TEMPLATES)].format(
                    p=item.prompt), None) for c in range(opts.controls)]
                for label, text, rewrite_task in prompts_for_item:
                    (ga, ta), (gb, tb) = (builder.generation(a.name, m, a.dataset, item, prompt=text,
                                                             prompt_from=rewrite_task) for m in a.models[:2])
                    builder.bind(a.name, item, {a.models[0]: [ga], a.models[1]: [gb]},
                                 variant=f"{persona.name}/{label}")
                    if gate is not None and kind_of(gate).can_rate(item):
                        for output, tokens in ((ga, ta), (gb, tb)):
                            builder.judge_single("persona_judge", a.name, gate, item, output, tokens, 0, corpus)
                    _judgments(builder, a, persona, item, text, rewrite_task, judges, (ga, gb), ta + tb)

    def analyze(self, prepared: Prepared, analysis: Analysis, results: dict[str, Result], run_dir: Path,
                origins: dict[str, str]) -> dict[str, list[Any]]:
        from engine.builtin_plugins.methods.personas.analysis import analyze_personas
        from engine.builtin_plugins.methods.personas.tables import write_personas

        result = analyze_personas(prepared, analysis, results)
        write_personas(result, run_dir)
        return {"personas": [result]}

    def section(self, name: str, result: Any, page: Page) -> list[dict[str, Any]]:
        from engine.builtin_plugins.methods.personas.pages import persona_section

        return [persona_section(page.env, result, page.prepared, page.run_dir, page.outputs)]


def _variant(builder: Builder, a: Analysis, persona: Persona, item: Item, v: int,
             rewriter: Judge | None) -> tuple[str, str | None]:
    """(prompt text, rewrite task): an LLM rewrite when a rewriter is declared (its text is known only at
    run time; the text returned is the offline one, for estimates), else the offline prefix rewrite."""
    text = _prefix_rewrite(persona.description, item.prompt, v)
    if rewriter is None or rewriter.endpoint is None:
        return text, None
    params = offset_seed(rewriter.endpoint.params.request_fields(), v)  # variants differ
    call = Prompted(rewriter.endpoint.identity(), prompts.PERSONA_REWRITE.name, prompts.PERSONA_REWRITE.digest,
                    params)
    task = builder.add("persona_rewrite", a.name, rewriter.name, rewriter.endpoint.provider, item.id,
                       Rewrite(call, persona_text(persona), item.prompt, v),
                       input_tokens=estimate_tokens(persona.description + item.prompt) + 80,
                       output_tokens=rewriter.endpoint.params.max_tokens, endpoint=rewriter.endpoint)
    return text, task


def _profile(builder: Builder, a: Analysis, persona: Persona) -> None:
    """An LLM writes the persona's dimension weights from its description (read at analysis time)."""
    judge = builder.spec.judges[persona.derive_with or ""]
    assert judge.endpoint is not None
    template = prompts.PERSONA_PROFILE
    dimensions = "\n".join(f"- {d}: {text}" for d, text in JUDGED_DIMENSIONS.items())
    call = Prompted(judge.endpoint.identity(), template.name, template.digest, judge.endpoint.params.request_fields())
    request = Profile(persona.name, call, {"persona": persona.description, "dimensions": dimensions})
    builder.add("persona_rewrite", a.name, judge.name, judge.endpoint.provider, persona.name, request,
                input_tokens=estimate_tokens(template.user + persona.description + dimensions),
                output_tokens=judge.endpoint.params.max_tokens, endpoint=judge.endpoint)


def _same_task_check(builder: Builder, a: Analysis, verifier: Judge, persona: Persona, item: Item, v: int,
                     text: str, rewrite_task: str | None) -> None:
    """The LLM half of the preservation check: does the rewrite still ask for the same thing?"""
    assert verifier.endpoint is not None
    template = prompts.PRESERVATION_CHECK
    call = prompted(verifier, template, verifier.endpoint.params.request_fields())
    request = SameTaskCheck(persona.name, item.id, v, call, {"original": item.prompt, "rewrite": text},
                            rewrite_task or None)
    builder.add("persona_check", a.name, verifier.name, verifier.endpoint.provider, item.id, request,
                (rewrite_task,) if rewrite_task else (),
                input_tokens=estimate_tokens(template.user + item.prompt + text),
                output_tokens=verifier.endpoint.params.max_tokens, endpoint=verifier.endpoint)


def _judgments(builder: Builder, a: Analysis, persona: Persona, item: Item, text: str, rewrite_task: str | None,
               judges: list[Judge], outputs: tuple[str, str], tokens: int) -> None:
    for dimension in persona_dimensions(persona):
        measure = DIMENSION_MEASURES.get(dimension)
        for judge in judges:
            if not kind_of(judge).can_judge_dimension(judge, measure, persona):
                continue
            if judge.endpoint is not None:
                fields = {"persona": persona_text(persona), "dimension": dimension,
                          "definition": JUDGED_DIMENSIONS[dimension],
                          "prompt": None if rewrite_task else text}
                builder.judge_pair("persona_judge", a.name, judge, item, prompts.PERSONA_PAIRWISE, fields,
                                   outputs, tokens, extra_text=persona_text(persona), prompt_from=rewrite_task)
            else:
                # a measurement does not depend on who asks: one task serves every persona
                builder.judge_pair("persona_judge", a.name, judge, item, prompts.PERSONA_PAIRWISE,
                                   {"dimension": dimension, "metric": measure}, outputs, tokens)


def _prefix_rewrite(description: str, prompt: str, variant: int) -> str:
    """The offline personalization: the persona speaks before the unchanged request (a prefix rewrite, as
    vibe-testing does for code stubs). An LLM rewriter, when declared, replaces it at run time."""
    lead = ("About me: {d}\n\n{p}", "{p}\n\n(Context: {d})")[variant % 2]
    return lead.format(d=description.strip(), p=prompt)
