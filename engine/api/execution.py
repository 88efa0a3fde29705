"""What a method's analysis runs its work with: the task cache, answers' measures, the run's derived store,
parallel maps over parts of the data, background work, and discovery's records of vibes.

Part of the public API (see `engine.api`): plug-ins, built-in or not, import from here."""

from engine import derived
from engine.background import Background, cores
from engine.chunk_map import map_chunks, map_parts, release_workers, run_beside
from engine.discover.stage import vibe_from_record, with_vibes
from engine.execute.cache import Cache
from engine.execute.measures import SHARED, answer_measure_key, finished_results, measure_part
from engine.gzip_members import compress

__all__ = [
    "SHARED",
    "Background",
    "Cache",
    "answer_measure_key",
    "compress",
    "cores",
    "derived",
    "finished_results",
    "map_chunks",
    "map_parts",
    "measure_part",
    "release_workers",
    "run_beside",
    "vibe_from_record",
    "with_vibes",
]
