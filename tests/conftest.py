from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
if "PYTEST_XDIST_WORKER" in os.environ:
    # Each of `make test`'s workers has a core: BLAS threads beyond it (and those of the runs it starts, which
    # inherit this) only spin against the other worker's tests. Set before anything imports NumPy.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Tests patch code in-process and rewrite files within a second: a plan kept from an earlier test's command
# (engine.prepared_memo) is checked by its own tests, which turn it back on; everywhere else plans are compiled.
os.environ["VIBE_NO_PLAN_CACHE"] = "1"

from llm_server import LLMServer

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow tests first. `make test` spreads the suite over the cores (pytest-xdist), each worker taking the next
    test as it finishes one: a long test handed out last would run alone at the end while the other cores idle.
    The order is the same in every worker, as xdist requires."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture
def llm_server() -> Iterator[LLMServer]:
    with LLMServer() as server:
        yield server


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA}")
    return SHARED_DATA
