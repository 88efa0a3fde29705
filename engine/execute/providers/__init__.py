"""Provider registry: importing this package registers every provider module."""

from engine.execute.providers import anthropic_api, local, openai_api  # noqa: F401  (registration)
from engine.execute.providers.base import Completion, Provider, ProviderError, create_provider

__all__ = ["Completion", "Provider", "ProviderError", "create_provider"]
