"""One lazy registry mechanism for every plug-in kind registered by name (analysis methods, judge kinds,
dataset formats, provider and batch clients): a name maps to the module that registers it, which is imported
the first time the name is looked up, so listing and validating names never imports a plug-in's heavier
dependencies. A name the built-in table lacks is looked up among the entry points installed packages publish
under the kind's group (`vibe.analysis_methods`, `vibe.judge_kinds`, `vibe.dataset_formats`,
`vibe.providers`): `pip install` adds a plug-in without touching `engine/`. With `VIBE_DISABLE_PLUGIN_AUTOLOAD` set
(as pytest's `PYTEST_DISABLE_PLUGIN_AUTOLOAD`), no entry point is read and vibe sees its built-ins only: for
output that must not depend on what else the machine has installed (the generated reference), and to tell a
problem of vibe's from one of a plug-in's."""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Callable, Iterable
from functools import cache
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from importlib import metadata

T = TypeVar("T")


class Plugins(Generic[T]):
    """What is registered for one plug-in kind. `module_of` names the module that registers a name (None: no
    module does), read at each first lookup, so a line added to the registry's table later is seen;
    `unknown` is the error a name without one raises."""

    def __init__(self, what: str, module_of: Callable[[str], str | None], unknown: type[KeyError],
                 group: str | None = None):
        self.what = what
        self.module_of = module_of
        self.unknown = unknown
        self.group = group  # the entry-point group packages publish this kind under
        self.loaded: dict[str, T] = {}

    def add(self, name: str, instance: T) -> None:
        """File `instance` under `name`; a second registration under a taken name is an error."""
        if name in self.loaded:
            raise ValueError(f"{self.what} {name!r} is registered twice: by {_origin(self.loaded[name])} "
                             f"and by {_origin(instance)}")
        self.loaded[name] = instance

    def source(self, name: str) -> str | None:
        """The module that registers `name` (or the entry point's `module:attr`), without importing it; None
        for a name registered in this process without one (`add` alone)."""
        module = self.module_of(name)
        if module is None and self.group is not None and name in entry_point_names(self.group):
            module = entry_point(self.group, name).value
        return module

    def get(self, name: str) -> T:
        """The instance registered as `name`, importing the module that registers it on first use."""
        if name not in self.loaded:
            module = self.module_of(name)
            if module is not None:
                importlib.import_module(module)
            elif self.group is not None and name in entry_point_names(self.group):
                published = entry_point(self.group, name)
                module = published.value
                published.load()  # importing the module registers what it defines
            else:
                raise self.unknown(name)
            if name not in self.loaded:
                raise self.unknown(f"{module} registers no {self.what} {name!r}")
        return self.loaded[name]


def load_named(path: str) -> Any:
    """What a `module:name` path names (a registry entry that names a class or a function, not a module),
    its module imported on first use."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


DISABLE_AUTOLOAD = "VIBE_DISABLE_PLUGIN_AUTOLOAD"


@cache
def _entry_points(group: str) -> dict[str, metadata.EntryPoint]:
    """What installed packages publish under `group`, read once per process (none with `DISABLE_AUTOLOAD` set)."""
    if os.environ.get(DISABLE_AUTOLOAD):
        return {}
    from importlib import metadata  # on first use: a command that reads only built-ins never pays its 20 ms

    return {ep.name: ep for ep in metadata.entry_points(group=group)}


def entry_point(group: str, name: str) -> metadata.EntryPoint:
    return _entry_points(group)[name]


def names_with_published(table: Iterable[str], group: str) -> list[str]:
    """A plug-in kind's names: its built-in table's, in order, then those installed packages publish under
    `group` that the table lacks. A published name that a built-in holds is not used, and a warning says so
    (once per process): the package's author would otherwise never learn why their plug-in does nothing."""
    listed = list(table)
    for name in entry_point_names(group):
        if name in listed:
            _warn_shadowed(group, name)
    return [*listed, *(n for n in entry_point_names(group) if n not in listed)]


@cache
def _warn_shadowed(group: str, name: str) -> None:
    published = entry_point(group, name)
    package = published.dist.name if published.dist is not None else "an installed package"
    warnings.warn(f"{package} publishes {name!r} under {group} ({published.value}), a name vibe's built-in "
                  "holds: the built-in is used; give the plug-in a name of its own", stacklevel=3)


def entry_point_names(group: str) -> list[str]:
    """The names installed packages publish under `group`, sorted (read once per process)."""
    return sorted(_entry_points(group))


def _origin(registered: object) -> str:
    """The module that defines what was registered (an instance's class, a class, a function)."""
    return str(getattr(registered, "__module__", type(registered).__module__))
