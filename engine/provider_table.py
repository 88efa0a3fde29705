"""Every provider a model or an LLM judge may name, declared once.

The spec's schema takes its provider lists from here, the spec checks and the planner read what each
provider can do, and the executor imports a provider's client module (which registers it) on first use.

Adding a provider: write its client module (`engine/builtin_plugins/providers/<name>/`, registering with
`@register("<name>")`), then add its line to `engine.plugin_tables.PROVIDERS`; or, from a package of your own,
publish its `ProviderInfo` under the `vibe.providers` entry-point group.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping

from engine import plugin_tables, settings
from engine.plugins import entry_point, entry_point_names, load_named
from engine.provider_info import ProviderInfo


class _Table(MutableMapping[str, ProviderInfo]):
    """The built-in providers, then those installed packages publish under ENTRY_POINTS: read on first use,
    since a package's module imports vibe's public API, which imports this module."""

    def __init__(self, builtin: dict[str, ProviderInfo]):
        self._table = builtin
        self._published = False

    def _all(self) -> dict[str, ProviderInfo]:
        if not self._published:
            self._published = True
            for name in entry_point_names(ENTRY_POINTS):
                self._table.setdefault(name, entry_point(ENTRY_POINTS, name).load())
        return self._table

    def __getitem__(self, name: str) -> ProviderInfo:
        # a built-in wins over a published name anyway, so finding one needs no installed package's metadata
        return self._table[name] if name in self._table else self._all()[name]

    def __setitem__(self, name: str, info: ProviderInfo) -> None:
        self._all()[name] = info

    def __delitem__(self, name: str) -> None:
        del self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


ENTRY_POINTS = "vibe.providers"  # a package publishes a ProviderInfo under its provider's name
PROVIDERS: MutableMapping[str, ProviderInfo] = _Table(dict(plugin_tables.PROVIDERS))


def is_recorded(provider: str | None) -> bool:
    """Whether a model of `provider` has its answers read from the dataset (unknown names: no)."""
    info = PROVIDERS.get(provider) if isinstance(provider, str) else None
    return info is not None and info.recorded


def engine_of(provider: str) -> str | None:
    """The engine that holds `provider`'s weights here or in the cluster (None: it is reached over HTTP)."""
    info = PROVIDERS.get(provider)
    return info.engine if info is not None else None


def batch_providers() -> tuple[str, ...]:
    """The providers with a batch API."""
    return tuple(name for name, p in PROVIDERS.items() if p.batches)


def in_cluster_providers() -> tuple[str, ...]:
    """The providers whose weights the Ray backend's own actors hold."""
    return tuple(name for name, p in PROVIDERS.items() if p.in_cluster)


def settings_record(provider: str | None) -> type | None:
    """The record of the entry fields `provider` declares of its own (`ProviderInfo.settings`), imported on first
    use; None where it declares none, or for an unknown name."""
    info = PROVIDERS.get(provider) if isinstance(provider, str) else None
    return load_named(info.settings) if info is not None and info.settings is not None else None


def provider_settings(provider: str | None) -> tuple[str, ...]:
    """The names of the entry fields `provider` declares of its own (none for an unknown name)."""
    record = settings_record(provider)
    return settings.names(record) if record is not None else ()


def setting_owners() -> dict[str, list[str]]:
    """Each entry field some provider declares of its own, with the providers that declare it."""
    owners: dict[str, list[str]] = {}
    for name in PROVIDERS:
        for field in provider_settings(name):
            owners.setdefault(field, []).append(name)
    return owners


def schema_form(provider: str) -> str:
    """How `provider` is held to a judge's answer schema, in the words `vibe plan` uses."""
    info = PROVIDERS.get(provider)
    return info.schema_form if info is not None else "response_format json_schema"
