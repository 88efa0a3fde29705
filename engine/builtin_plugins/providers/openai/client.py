"""The `openai` and `openai-compatible` providers: OpenAI's chat completions, and any server that speaks them
at a `base_url`. The client is the public API's (`OpenAIProvider`), which other providers whose servers speak
the same wire format reuse; this module registers it under the two names."""

from engine.api.providers import OpenAIProvider, register
from engine.api.spec import Endpoint

KEY_ENV = "OPENAI_API_KEY"  # OpenAI's key, where the spec names no `api_key_env`; a compatible server needs none


def live_client(endpoint: Endpoint) -> OpenAIProvider:
    return OpenAIProvider(endpoint, key_env=KEY_ENV if endpoint.provider == "openai" else None)


register("openai", "openai-compatible")(live_client)
