"""`python -m engine.execute.providers.llama_server --config_file F`: llama-cpp-python's OpenAI-compatible
server, with every chat completion computed from a fresh context.

llama-cpp-python keeps the previous request's tokens and re-evaluates only what differs, always at least the
prompt's last token on its own. A prompt's last token evaluated alone gives slightly different logits from the
same token evaluated with its whole prompt, so the same request with the same seed could answer differently
depending on which request the server had served before it: a resumed run, or one whose tasks ran in another
order or on other replicas, did not reproduce its samples. Starting each completion from an empty context makes
an answer a function of its request alone (the Ray backend's in-process engine does the same), at the cost of
evaluating shared prompt prefixes again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


def from_fresh_context(complete: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(complete)
    def fresh(llama: Any, *args: Any, **kwargs: Any) -> Any:
        llama.reset()
        return complete(llama, *args, **kwargs)

    return fresh


if __name__ == "__main__":
    import llama_cpp
    from llama_cpp.server.__main__ import main

    patched = from_fresh_context(llama_cpp.Llama.create_chat_completion)
    llama_cpp.Llama.create_chat_completion = patched  # type: ignore[method-assign]
    main()
