"""One lazy registry mechanism for the plug-in kinds that register an instance by name (analysis methods,
judge kinds): a name maps to the module that registers it, which is imported the first time the name is
looked up, so listing and validating names never imports a plug-in's heavier dependencies."""

from __future__ import annotations

import importlib
from typing import Generic, TypeVar

T = TypeVar("T")


class Plugins(Generic[T]):
    """The registered instances of one plug-in kind. `modules` is the registry's own name -> module table
    (shared, not copied: a line added to it later is seen); `unknown` is the error a name without one raises."""

    def __init__(self, what: str, modules: dict[str, str], unknown: type[KeyError]):
        self.what = what
        self.modules = modules
        self.unknown = unknown
        self.loaded: dict[str, T] = {}

    def add(self, name: str, instance: T) -> None:
        """File `instance` under `name`; a second registration under a taken name is an error."""
        if name in self.loaded:
            raise ValueError(f"{self.what} {name!r} is registered twice: by {type(self.loaded[name]).__module__} "
                             f"and by {type(instance).__module__}")
        self.loaded[name] = instance

    def get(self, name: str) -> T:
        """The instance registered as `name`, importing the module that registers it on first use."""
        if name not in self.loaded:
            if name not in self.modules:
                raise self.unknown(name)
            importlib.import_module(self.modules[name])
            if name not in self.loaded:
                raise self.unknown(f"{self.modules[name]} registers no {self.what} {name!r}")
        return self.loaded[name]
