"""Model calls from within an analysis (discovery proposing vibes, a profile written by a judge): the executor
the run uses, with its cache, concurrency and retries. Imported on first use: it loads every provider's
client machinery.

Part of the public API (see `engine.api`): plug-ins, built-in or not, import from here."""

from engine.execute.run import execute, run_calls

__all__ = [
    "execute",
    "run_calls",
]
