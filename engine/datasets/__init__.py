"""Datasets: the files a spec names, read into typed items (see `load`); one reader per format."""

from engine.datasets.files import read_rows
from engine.datasets.items import Battle, DatasetError, Item
from engine.datasets.load import check_labels, load_items

__all__ = ["Battle", "DatasetError", "Item", "check_labels", "load_items", "read_rows"]
