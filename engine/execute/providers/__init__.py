"""Provider registry. Provider modules are imported on first use: the SDKs are slow to import, and a run
that only needs one of them should not pay for the others."""

from engine.execute.providers.base import (
    Completion,
    Provider,
    ProviderError,
    ResponseSchema,
    create_provider,
    refuses_schema,
)

__all__ = ["Completion", "Provider", "ProviderError", "ResponseSchema", "create_provider", "refuses_schema"]
