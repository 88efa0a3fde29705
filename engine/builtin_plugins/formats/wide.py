"""The default format: one row per prompt, one column per model's answer."""

from __future__ import annotations

from engine.api.data import WideRows, dataset_format_class


@dataset_format_class("wide")
class Wide(WideRows):
    description = "one row per prompt, one column per model's answer (fields.outputs)"
    reads = ("outputs", "scores", "preferences", "preference")
