"""Inspect AI eval logs as long rows: one per sample, naming the model the log's header names. Two logs of one
task by two models are a recorded comparison, and the samples' scores become per-answer scores.

Both forms are read: `.eval` (a ZIP holding `header.json` and `samples/<id>_epoch_<n>.json`) and `.json` (one
object with `eval` and `samples`). A folder stands for every log in it. A sample's prompt is its input (the
last user message of a chat input), its answer the output's completion (or its first choice's text); its
scores are read as Inspect reads them (C 1, P 0.5, I and N 0, yes/true 1, no/false 0, numbers as they are).
Samples are paired across logs by id, and by epoch where a task ran several. A log that was cancelled or is
still running gives the samples it finished. `model_names` may name a log's file to give its model a name
of its own: two runs of one model (another system prompt, another day) are then two models to compare.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from engine.datasets.column_names import json_object_with
from engine.datasets.items import DatasetError

LOG_SUFFIXES = (".eval", ".json")  # the files of a folder that may hold Inspect logs
SCORE_WORDS = {"c": 1.0, "p": 0.5, "i": 0.0, "n": 0.0, "yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0}


def holds_logs(path: Path) -> bool:
    """Whether a path is an Inspect log (`.eval`, or a JSON object with `eval` and `samples`) or a folder with
    one in it: what both Inspect formats' `sniff` asks first."""
    return (path.suffix == ".eval" or json_object_with(path, "eval", "samples")
            or (path.is_dir() and any(p.suffix == ".eval" or json_object_with(p, "eval", "samples")
                                      for p in path.iterdir())))


def log_files(path: Path) -> list[Path]:
    """The logs a source path names: the file, or every log in the folder (sorted by name)."""
    if path.is_dir():
        logs = sorted(p for p in path.iterdir() if p.suffix in LOG_SUFFIXES and p.is_file())
        if not logs:
            raise DatasetError(f"{path}: a folder with no Inspect log in it (.eval or .json)")
        return logs
    return [path]


def log_rows(path: Path, pick_scorer: bool, names: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """Every sample of one log as a located row: id, input, output, model (the header's, or the log's file
    name where `names` maps that), epoch, target, scores (scorer → number, or name → number for a scorer with
    several values) and metadata. With `pick_scorer` (the spec
    names no score), `score` holds the log's only scorer's value; a log with several must be told which."""
    header, samples = _read(path)
    model = path.name if path.name in names else _model(path, header)
    rows = [(where, _row(where, sample, model)) for where, sample in samples]
    scorers = sorted({name for _, row in rows for name in row["scores"]})
    if pick_scorer and len(scorers) > 1:
        raise DatasetError(f"{path}: samples carry several scores ({', '.join(scorers)}); choose one with "
                           f"fields.score: scores.{scorers[0]}")
    for _, row in rows:
        row["score"] = row["scores"].get(scorers[0]) if pick_scorer and scorers else None
    return rows


def log_model(path: Path) -> str:
    """The model a log ran, as its header names it; a .eval log's samples are not read."""
    return _model(path, _read(path, samples=False)[0])


def _model(path: Path, header: dict[str, Any]) -> str:
    model = (header.get("eval") or {}).get("model")
    if not model:
        raise DatasetError(f"{path}: header field 'eval.model' is missing (the model this log ran)")
    return str(model)


def _read(path: Path, samples: bool = True) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """The log's header and (with `samples`) its samples, each located."""
    if path.suffix == ".eval":
        try:
            with zipfile.ZipFile(path) as archive:
                names = archive.namelist()
                if "header.json" not in names:
                    raise DatasetError(f"{path}: no header.json in this .eval archive (is the log still running?)")
                header = json.loads(archive.read("header.json"))
                read = [(f"{path}:{name}", json.loads(archive.read(name)))
                        for name in sorted(names, key=_sample_order) if samples and name.startswith("samples/")]
        except (zipfile.BadZipFile, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DatasetError(f"{path}: not a readable Inspect .eval log ({exc})") from None
        return header, read
    try:
        log = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: not a readable Inspect .json log ({exc})") from None
    if not isinstance(log, dict) or "eval" not in log:
        raise DatasetError(f"{path}: not an Inspect log (a JSON object with 'eval' and 'samples')")
    return log, [(f"{path}: samples.{i}", s) for i, s in enumerate(log.get("samples") or [])]


def _sample_order(name: str) -> tuple[int, int | str, int]:
    """samples/<id>_epoch_<n>.json in id order (numbers as numbers), then epoch."""
    stem = name.rsplit("/", 1)[-1].removesuffix(".json")
    sample, _, epoch = stem.rpartition("_epoch_")
    number = int(epoch) if epoch.isdigit() else 0
    return (0, int(sample), number) if sample.isdigit() else (1, sample, number)


def _row(where: str, sample: dict[str, Any], model: str) -> dict[str, Any]:
    if "id" not in sample:
        raise DatasetError(f"{where}: field 'id' is missing")
    if sample.get("error"):
        message = (sample["error"] or {}).get("message", "") if isinstance(sample["error"], dict) else sample["error"]
        raise DatasetError(f"{where}: field 'error': the sample failed ({str(message)[:200]}), so it has no answer to "
                           "compare; retry it (inspect eval-retry) or keep this log out of the dataset")
    epoch = int(sample.get("epoch") or 1)
    return {"id": str(sample["id"]) if epoch == 1 else f"{sample['id']}@{epoch}", "input": _prompt(where, sample),
            "output": _answer(sample.get("output") or {}), "model": model, "epoch": epoch,
            "target": _target(sample.get("target")),
            "scores": {name: _score_value(value) for name, value in (sample.get("scores") or {}).items()},
            "metadata": sample.get("metadata") or {}, "messages": sample.get("messages")}


def _text(content: Any) -> str:
    """A message's content: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content
                         if isinstance(part, dict) and part.get("type") == "text")
    return ""


def _prompt(where: str, sample: dict[str, Any]) -> str:
    given = sample.get("input")
    if isinstance(given, str):
        return given
    if isinstance(given, list):
        users = [m for m in given if isinstance(m, dict) and m.get("role") == "user"]
        if users:
            return _text(users[-1].get("content"))
    raise DatasetError(f"{where}: field 'input' holds no user message")


def _answer(output: dict[str, Any]) -> str | None:
    if isinstance(output.get("completion"), str) and output["completion"]:
        return str(output["completion"])
    choices = output.get("choices") or []
    if choices and isinstance(choices[0], dict):
        return _text((choices[0].get("message") or {}).get("content")) or None
    return None


def _target(target: Any) -> str | None:
    if isinstance(target, list):
        return "\n".join(str(t) for t in target) or None
    return None if target in (None, "") else str(target)


def _score_value(score: Any) -> Any:
    """A score's value as a number (a dict of numbers for a scorer that gives several); None where Inspect's
    own conversion reads none."""
    value = score.get("value") if isinstance(score, dict) else score
    if isinstance(value, dict):
        return {k: _number(v) for k, v in value.items()}
    return _number(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in SCORE_WORDS:
            return SCORE_WORDS[word]
        try:
            return float(word)
        except ValueError:
            return None
    return None
