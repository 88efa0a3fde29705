"""An LLM Comparator JSON file: its two models, and the sign of each example's score as the winner."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from engine.api.data import BattleRows, Located, Sniffed, dataset_format_class, json_document, json_object_with
from engine.api.records import DatasetError
from engine.api.spec import Dataset


@dataset_format_class("llm-comparator")
class LLMComparator(BattleRows):
    description = "an LLM Comparator JSON file (its two models, and score's sign as the winner)"
    fields: ClassVar[dict[str, str]] = {
        "prompt": "input_text", "category": "tags.0", "model_a": "model_a", "answer_a": "output_text_a",
        "model_b": "model_b", "answer_b": "output_text_b", "winner": "score"}
    winners = "sign"

    def records(self, path: Path, ds: Dataset) -> Located:
        return _examples(path)

    def sniff(self, path: Path, rows: list[dict[str, Any]] | None) -> Sniffed | None:
        if not json_object_with(path, "examples", "models"):
            return None
        examples = _examples(path)
        models = [examples[0][1]["model_a"], examples[0][1]["model_b"]] if examples else []
        return Sniffed("input_text", models, f"{len(examples)} examples", votes=True)


def _examples(path: Path) -> Located:
    """The file's examples as battle rows, its two models named on every row."""
    data = json_document(path)
    if not isinstance(data, dict) or not isinstance(data.get("examples"), list):
        raise DatasetError(f"{path}: not an LLM Comparator file (a JSON object with 'models' and 'examples')")
    models = data.get("models")
    if not isinstance(models, list) or len(models) != 2 or not all(isinstance(m, dict) and m.get("name")
                                                                  for m in models):
        raise DatasetError(f"{path}: field 'models' must list exactly two models, each with a 'name'")
    names = {"model_a": str(models[0]["name"]), "model_b": str(models[1]["name"])}
    out = []
    for i, example in enumerate(data["examples"]):
        if not isinstance(example, dict):
            raise DatasetError(f"{path}: examples.{i} is not an object")
        out.append((f"{path}: examples.{i}", {**example, **names}))
    return out
