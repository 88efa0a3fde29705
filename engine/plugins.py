"""One lazy registry mechanism for every plug-in kind registered by name (analysis methods, judge kinds,
provider and batch clients): a name maps to the module that registers it, which is imported the first time
the name is looked up, so listing and validating names never imports a plug-in's heavier dependencies."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Plugins(Generic[T]):
    """What is registered for one plug-in kind. `module_of` names the module that registers a name (None: no
    module does), read at each first lookup, so a line added to the registry's table later is seen;
    `unknown` is the error a name without one raises."""

    def __init__(self, what: str, module_of: Callable[[str], str | None], unknown: type[KeyError]):
        self.what = what
        self.module_of = module_of
        self.unknown = unknown
        self.loaded: dict[str, T] = {}

    def add(self, name: str, instance: T) -> None:
        """File `instance` under `name`; a second registration under a taken name is an error."""
        if name in self.loaded:
            raise ValueError(f"{self.what} {name!r} is registered twice: by {_origin(self.loaded[name])} "
                             f"and by {_origin(instance)}")
        self.loaded[name] = instance

    def get(self, name: str) -> T:
        """The instance registered as `name`, importing the module that registers it on first use."""
        if name not in self.loaded:
            module = self.module_of(name)
            if module is None:
                raise self.unknown(name)
            importlib.import_module(module)
            if name not in self.loaded:
                raise self.unknown(f"{module} registers no {self.what} {name!r}")
        return self.loaded[name]


def _origin(registered: object) -> str:
    """The module that defines what was registered (an instance's class, a class, a function)."""
    return str(getattr(registered, "__module__", type(registered).__module__))
