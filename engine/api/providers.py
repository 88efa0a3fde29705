"""What a provider is built from (`register`, `register_batches`, `ProviderInfo`, the completion and error
records), the HTTP helpers every client shares, the OpenAI chat wire format and its client (for any server
that speaks it), and the engines the Ray backend holds weights in.

Part of the public API (see `engine.api`): plug-ins, built-in or not, import from here."""

from engine.execute.batch_http import BatchHTTP
from engine.execute.engines import Call, Outcome
from engine.execute.openai_chat import OpenAIProvider, completion_from, to_openai_messages
from engine.execute.providers.base import (
    BatchFailure,
    BatchState,
    Completion,
    Messages,
    Provider,
    ProviderError,
    ResponseSchema,
    api_key,
    error_from_status,
    html_instead_of_json,
    limits,
    read_image,
    register,
    register_batches,
    sdk_errors,
    within,
)
from engine.provider_info import ProviderInfo, ProviderSettings
from engine.settings import Setting

__all__ = [
    "BatchFailure",
    "BatchHTTP",
    "BatchState",
    "Call",
    "Completion",
    "Messages",
    "OpenAIProvider",
    "Outcome",
    "Provider",
    "ProviderError",
    "ProviderInfo",
    "ProviderSettings",
    "ResponseSchema",
    "Setting",
    "api_key",
    "completion_from",
    "error_from_status",
    "html_instead_of_json",
    "limits",
    "read_image",
    "register",
    "register_batches",
    "sdk_errors",
    "to_openai_messages",
    "within",
]
