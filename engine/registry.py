"""The analysis methods a spec may name, behind a small lazy registry.

One analysis method lives in one package (`engine/builtin_plugins/methods/<name>/`): its typed options and spec
checks, the tasks it plans, the analysis it runs over finished results, the report sections and pages it renders
and their templates (`templates/` beside its modules). The module that registers it is named by its import path
in `engine.plugin_tables.METHODS`, so the spec layer can list and validate method names without importing the
heavier stages, and a stage reaches a method by name without importing the layer above it. That module is
imported the first time its name is looked up; its class registers itself with `@analysis_method`.

Adding a method: write its package (or, for a small one, a module), add its line to
`engine.plugin_tables.METHODS`, or publish it under the `vibe.analysis_methods` entry-point group from a package
of your own.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from engine.options import Options, PairOptions
from engine.plugin_tables import METHODS
from engine.plugins import Plugins, names_with_published

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np
    from jinja2 import Environment

    from engine.execute.cache import Cache
    from engine.plan import Builder
    from engine.records import Prepared, Result
    from engine.spec.checker import SpecChecker
    from engine.spec.model import Analysis, Vibe
    from engine.spec.yaml_source import PathKey


@dataclass
class Page:
    """What a report section is rendered with: the Jinja environment, the run, its folder and its results."""

    env: Environment
    prepared: Prepared
    run_dir: Path
    outputs: dict[str, Result]


class AnalysisMethod:
    """One analysis method. Subclasses set `name`, `options` and `sections`, and implement the three steps.

    `options`: its options record, the one declaration of its options: the spec schema's block for its
    analyses is read off it (`engine.settings`). `needs_models`: an analysis of it lists its `models` (False: one
    that lists none takes every model its data holds). `sections`: the report
    sections the method fills, in page order; each is rendered by `templates/sections/<section>.html.j2` in the
    method's own `templates/` folder (or, when the method gives one, by `templates` inline). `assets`: files of
    that folder every report copies into its assets/ (scripts its pages load)."""

    name: ClassVar[str]
    options: ClassVar[type[Options]] = Options
    needs_models: ClassVar[bool] = True
    sections: ClassVar[tuple[str, ...]] = ()
    templates: ClassVar[dict[str, str]] = {}
    assets: ClassVar[tuple[str, ...]] = ()
    report_folders: ClassVar[tuple[str, ...]] = ()  # the run folder's subfolders its pages are written into
    # The stages of its own that its tasks run in, beyond every run's `generation` and `judge`, each with the
    # phase it runs in (one of PHASES). A task of a stage no method of the spec declares is a plan error.
    stages: ClassVar[dict[str, str]] = {}
    # Its analyses read vibes, and a spec's `discover` block finds more from their training pairs before they
    # are judged (`propose_vibes`); `with_discovered` then adds the found vibes to an analysis. Such a
    # method's options are `PairOptions`, which discovery reads.
    discovers: ClassVar[bool] = False

    def with_discovered(self, analysis: Analysis, names: list[str]) -> Analysis:
        """The analysis once vibes `names` were discovered on its pairs (unchanged unless it lists its vibes)."""
        return analysis

    def template_folder(self) -> Path | None:
        """The `templates/` folder beside the module that defines the method, when it has one."""
        from pathlib import Path

        folder = Path(inspect.getfile(type(self))).parent / "templates"
        return folder if folder.is_dir() else None

    def train_verdicts(self, prepared: Prepared, analysis: Analysis, results: dict[str, Result],
                       vibes: list[Vibe]) -> np.ndarray:
        """For a method that `discovers`: the panel's verdicts on the training pairs of candidate `vibes`, which
        decide which candidates it keeps."""
        raise NotImplementedError

    def propose_vibes(self, prepared: Prepared, analysis: Analysis, cache: Cache) -> list[tuple[Vibe, str]]:
        """For a method that `discovers`: the vibes the spec's `discover` block proposes from the analysis'
        training pairs, each with where it came from (`engine.discover.stage` adds them to the spec)."""
        raise NotImplementedError

    def start_ahead(self, prepared: Prepared, analysis: Analysis, cache: Cache) -> None:
        """For a method that `discovers`: start work its analysis will read that needs no discovered vibe, on a
        core discovery leaves idle (`run_beside`); `vibe run` calls it as its discovery starts. Nothing by
        default."""

    def pair_verdicts(self, prepared: Prepared, analysis: Analysis, results: dict[str, Result],
                      vibes: list[Vibe]) -> tuple[list[str], np.ndarray]:
        """For a method that `discovers`: the panel's verdicts ν of `vibes` on every pair of the analysis
        (rows: the pairs' items; +1 when the first model sits higher), which `vibe compare` reads."""
        raise NotImplementedError

    def headline(self, folder: Path) -> list[str]:
        """The run's headline figures from an analysis' output folder, as `vibe publish` lists them (none by
        default; a folder of another method gives none either)."""
        return []

    def boards(self, folder: Path) -> list[Path]:
        """The files of an analysis' output folder that `vibe publish` adds to the site's cross-run leaderboards,
        each a board record (`reference`, `vibes`, `labels`, `models`, per-model `cells` of separability with
        their interval, `winrates`); none by default."""
        return []

    def summary(self, section: str, result: Any) -> str | None:
        """The line `vibe run` prints for one result of section `section`, or None."""
        return None

    def judge_notes(self, section: str, result: Any) -> dict[str, list[str]]:
        """Sentences about a judge that the leaderboard's list of judges shows under it (judge name → lines),
        e.g. how often it agreed with people's labels; none by default."""
        return {}

    def check(self, checker: SpecChecker, path: PathKey, analysis: dict[str, Any]) -> None:
        """Report what is wrong with an analysis block of this method that the schema cannot see (through
        `checker.report`, which locates it in the spec file). Called by `vibe validate` after the generic
        checks: the dataset and models exist."""

    def plan(self, builder: Builder, analysis: Analysis) -> None:
        """Add the analysis' tasks to the plan builder (`engine.plan.Builder`). Planning nothing is allowed:
        a method may read what other analyses produce."""

    def analyze(self, prepared: Prepared, analysis: Analysis, results: dict[str, Result], run_dir: Path,
                origins: dict[str, str]) -> dict[str, list[Any]]:
        """The analysis' typed results by report section; data files it writes go under `run_dir`."""
        raise NotImplementedError

    def section(self, name: str, result: Any, page: Page) -> list[dict[str, Any]]:
        """The entries section `name`'s template shows for one result, usually one (rankings give one per
        rating method); charts and drill-down pages are written here."""
        raise NotImplementedError


class UnknownMethod(KeyError):
    pass


ENTRY_POINTS = "vibe.analysis_methods"
# Every run's two stages (the models' answers, then the judges' verdicts on vibes), and where a method's own
# stage may run around them.
GENERATION, JUDGE = "generation", "judge"
PHASES = ("before generation", "before judging", "after judging")


def stage_order(methods: Iterable[str]) -> tuple[str, ...]:
    """The stages a run of analyses of `methods` executes, in order: each method's own at the phase it declares
    (methods in the registry's order within a phase, a stage two declare once), around generation and judge."""
    used = set(methods)
    declared = [(phase, stage) for name in method_names() if name in used
                for stage, phase in get_method(name).stages.items()]
    at = {phase: list(dict.fromkeys(stage for p, stage in declared if p == phase)) for phase in PHASES}
    return (*at["before generation"], GENERATION, *at["before judging"], JUDGE, *at["after judging"])


_METHODS: Plugins[AnalysisMethod] = Plugins("analysis method", METHODS.get, UnknownMethod, ENTRY_POINTS)


def analysis_method(name: str) -> Callable[[type[AnalysisMethod]], type[AnalysisMethod]]:
    """Class decorator: register an analysis method under `name` (a second registration is an error)."""
    def register(cls: type[AnalysisMethod]) -> type[AnalysisMethod]:
        if cls.discovers and not issubclass(cls.options, PairOptions):
            raise TypeError(f"analysis method {name!r} discovers vibes, so its options must extend PairOptions")
        _METHODS.add(name, cls())
        cls.name = name
        return cls
    return register


def method_source(name: str) -> str | None:
    """The module that registers method `name`, not imported (`Plugins.source`)."""
    return _METHODS.source(name)


def method_names() -> list[str]:
    """The methods a spec may name: the table's, then those installed packages publish."""
    return names_with_published(METHODS, ENTRY_POINTS)


def get_method(name: str) -> AnalysisMethod:
    """The registered method, importing its module on first use."""
    return _METHODS.get(name)
