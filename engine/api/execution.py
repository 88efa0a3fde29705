"""What a method's analysis runs its work with: the task cache, answers' measures, derived work kept in the run cache,
parallel maps over parts of the data, background work, and discovery's records of vibes.

Part of the public API (see `engine.api`): plug-ins, built-in or not, import from here."""

from engine.background import Background, cores
from engine.chunk_map import map_chunks, map_parts, map_threads, release_workers, run_beside
from engine.derived import active as run_store
from engine.derived import cached, cached_each, holds
from engine.discover.stage import vibe_from_record, with_vibes
from engine.execute.cache import Cache
from engine.execute.measures import SHARED, answer_measure_key, finished_results, measure_part
from engine.gzip_members import compress

__all__ = [
    "SHARED",
    "Background",
    "Cache",
    "answer_measure_key",
    "cached",
    "cached_each",
    "compress",
    "cores",
    "finished_results",
    "holds",
    "map_chunks",
    "map_parts",
    "map_threads",
    "measure_part",
    "release_workers",
    "run_beside",
    "run_store",
    "vibe_from_record",
    "with_vibes",
]
