"""FastChat's MT-Bench files: `question.jsonl` (question_id, category, `turns`: the user's turns, an optional
per-turn `reference`) and one `model_answer/<model>.jsonl` per model (question_id, model_id, `choices[0].turns`:
its answer to each turn). A source path may be the folder holding both. Each model's conversation is rebuilt
by answering turn k with its k-th answer, as FastChat's generation asked it; with no answers, the questions
alone are read, for models vibe calls to answer turn after turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from engine.api.data import ConversationRows, Located, Sniffed, dataset_format_class, located_rows
from engine.api.records import DatasetError
from engine.api.spec import Dataset

QUESTIONS = "question.jsonl"
ANSWERS = "model_answer"


@dataset_format_class("mt-bench")
class MTBench(ConversationRows):
    description = ("FastChat MT-Bench: question.jsonl (turns) and model_answer/<model>.jsonl (choices[0].turns), "
                   "or the folder holding both; every turn of every model's conversation")
    fields: ClassVar[dict[str, str]] = {"id": "question_id", "prompt": "turns", "category": "category"}
    reads_folders = True

    def records(self, path: Path, ds: Dataset) -> Located:
        files = ([path / QUESTIONS] if (path / QUESTIONS).is_file() else []) + sorted(
            (path / ANSWERS).glob("*.jsonl")) if path.is_dir() else [path]
        if not files:
            raise DatasetError(f"{path}: a folder with neither {QUESTIONS} nor {ANSWERS}/*.jsonl in it")
        return [(where, row) for file in files for where, row in located_rows(file, "jsonl")]

    def rows(self, ds: Dataset, located: Located) -> list[dict[str, Any]]:
        """Questions first, whichever file order the spec gives: an answer is read against its question."""
        questions: dict[str, list[str]] = {}
        records: Located = []
        for where, row in located:
            key = row.get(ds.fields["id"])
            if key is None:
                raise DatasetError(f"{where}: field {ds.fields['id']!r} is missing")
            if "turns" in row:
                if not isinstance(row["turns"], list) or not all(isinstance(t, str) for t in row["turns"]):
                    raise DatasetError(f"{where}: field 'turns' is not a list of the user's turns (texts)")
                questions[str(key)] = row["turns"]
                records.append((where, {"id": str(key), "turns": row["turns"], "category": row.get("category"),
                                        "reference": row.get("reference")}))
        for where, row in located:
            if "turns" in row:
                continue
            key = str(row.get(ds.fields["id"]))
            if key not in questions:
                raise DatasetError(f"{where}: question_id {key} is in no question file of the dataset (add "
                                   f"{QUESTIONS} to its source paths)")
            choices = row.get("choices")
            answers = choices[0].get("turns") if isinstance(choices, list) and choices and isinstance(
                choices[0], dict) else None
            if not isinstance(answers, list) or "model_id" not in row:
                raise DatasetError(f"{where}: an answer needs model_id and choices.0.turns (FastChat's answer file)")
            messages = [m for user, answer in zip(questions[key], answers, strict=False)
                        for m in ({"role": "user", "content": user}, {"role": "assistant", "content": answer})]
            records.append((where, {"id": key, "model": str(row["model_id"]), "messages": messages}))
        return super().rows(ds, records)

    def sniff(self, path: Path, rows: list[dict[str, Any]] | None) -> Sniffed | None:
        """The folder holding question.jsonl and model_answer/, or a question file beside model_answer/."""
        folder = path if path.is_dir() else path.parent
        if (path.is_dir() and not (path / QUESTIONS).is_file()) or (
                not path.is_dir() and (path.name != QUESTIONS or not rows or "turns" not in rows[0])):
            return None
        models = sorted(p.stem for p in (folder / ANSWERS).glob("*.jsonl"))
        return Sniffed("turns", models, f"{len(models)} models' answers" if models else "questions only",
                       fields={"id": "question_id", "category": "category"},
                       source=folder if models and not path.is_dir() else None)  # the answers beside it too
