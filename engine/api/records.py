"""The records every stage passes on: a dataset's items, the requests a plan asks for, tasks and their
results, the prepared run.

Part of the public API (see `engine.api`): plug-ins, built-in or not, import from here."""

from engine.datasets.items import DatasetError, Item
from engine.records import OFFLINE_PROVIDER, Binding, Deferred, Measured, Prepared, Result, Task, content_hash
from engine.requests import Chat, PairJudgment, Preservation, Profile, Prompted, Rating, Request, Rewrite, SameTaskCheck

__all__ = [
    "OFFLINE_PROVIDER",
    "Binding",
    "Chat",
    "DatasetError",
    "Deferred",
    "Item",
    "Measured",
    "PairJudgment",
    "Prepared",
    "Preservation",
    "Profile",
    "Prompted",
    "Rating",
    "Request",
    "Result",
    "Rewrite",
    "SameTaskCheck",
    "Task",
    "content_hash",
]
