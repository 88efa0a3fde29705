"""A sixth analysis method, as small as one can be: mean words per answer. Its section's template is
`templates/sections/word_count.html.j2` beside this module."""

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from engine.api.methods import AnalysisMethod, Builder, Options, Page, Setting, analysis_method
from engine.api.records import Prepared, Result
from engine.api.spec import Analysis


@dataclass(frozen=True)
class WordCountOptions(Options):
    min_words: Annotated[int, Setting("answers shorter than this are left out of the mean.", minimum=0)] = 0


@analysis_method("word_count")
class WordCount(AnalysisMethod):
    options = WordCountOptions
    sections = ("word_count",)

    def plan(self, builder: Builder, a: Analysis) -> None:  # one answer per model and prompt
        for item in builder.items[a.dataset]:
            builder.bind(a.name, item, {m: [builder.generation(a.name, m, a.dataset, item)[0]] for m in a.models})

    def analyze(self, prepared: Prepared, a: Analysis, results: dict[str, Result], run_dir: Path,
                origins: dict[str, str]) -> dict[str, list[Any]]:
        least = WordCountOptions.of(a).min_words  # the options as this method's class, for a type checker
        counts = {m: [n for b in prepared.plan.bindings[a.name] if b.outputs[m][0] in results
                      for n in [len(str(results[b.outputs[m][0]].output).split())] if n >= least]
                  for m in a.models}
        return {"word_count": [{"analysis": a.name, "means": {m: sum(c) / len(c) for m, c in counts.items() if c}}]}

    def section(self, name: str, result: Any, page: Page) -> list[dict[str, Any]]:
        return [result]
