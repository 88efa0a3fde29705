"""`python -m engine.builtin_plugins.providers.local.server --config_file F`: llama-cpp-python's OpenAI-compatible
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
import os
import threading
import time
from collections.abc import Callable
from typing import Any


def from_fresh_context(complete: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(complete)
    def fresh(llama: Any, *args: Any, **kwargs: Any) -> Any:
        llama.reset()
        return complete(llama, *args, **kwargs)

    return fresh


def exit_with_parent(parent: int, every_s: float = 1.0) -> threading.Thread:
    """Stop this process once `parent` (the run that started the server) is gone. A run stops its server on
    the way out, but one killed outright (SIGKILL, a crashed job, a killed benchmark script) cannot; its server
    would then hold its port, memory and a core until someone noticed."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every_s)
        os._exit(0)

    thread = threading.Thread(target=watch, name="exit-with-parent", daemon=True)
    thread.start()
    return thread


if __name__ == "__main__":
    exit_with_parent(os.getppid())
    import llama_cpp
    from llama_cpp.server.__main__ import main

    patched = from_fresh_context(llama_cpp.Llama.create_chat_completion)
    llama_cpp.Llama.create_chat_completion = patched  # type: ignore[method-assign]
    main()
