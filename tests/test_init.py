"""`vibe init` writes a valid spec for a user's own file, and long tables are read by the dataset stage."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from engine.pipeline import prepare
from engine.scaffold import InitError, detect, init_spec

PROMPTS = ["How do I boil an egg?", "Write a haiku about rain.", "What is a prime number?", "Explain DNS briefly.",
           "Suggest a name for a cat.", "How far is the Moon?"]


def _wide(path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["question_id", "question", "gpt-x", "claude-y", "winner"])
        for i, prompt in enumerate(PROMPTS):
            writer.writerow([f"q{i}", prompt, f"Sure! Here is a long and friendly answer number {i}!!",
                             f"Answer {i}.", ["gpt-x", "claude-y", "tie"][i % 3]])


def test_wide_csv_is_recognised_and_the_spec_runs_plan(tmp_path: Path) -> None:
    _wide(tmp_path / "battles.csv")
    out = init_spec(tmp_path / "battles.csv", tmp_path / "vibe.yaml")
    text = out.read_text()
    assert text.startswith("# Written by `vibe init` from battles.csv (6 rows)")
    spec = yaml.safe_load(text)
    fields = spec["datasets"]["battles"]["fields"]
    assert fields == {"prompt": "question", "id": "question_id", "preference": "winner",
                      "outputs": {"gpt-x": "gpt-x", "claude-y": "claude-y"}}
    assert spec["datasets"]["battles"]["preference_values"] == {"gpt-x": "gpt-x", "claude-y": "claude-y",
                                                                "tie": "tie"}
    assert spec["extends"] == "vibe:offline-panel" and spec["analyses"]["vibecheck"]["models"] == ["gpt-x", "claude-y"]
    prepared = prepare(out)
    items = prepared.items["battles"]
    assert [it.id for it in items] == [f"q{i}" for i in range(6)]
    assert items[0].preference == "gpt-x" and items[2].preference == "tie"
    assert sum(t.stage == "generation" for t in prepared.plan.tasks) == 12  # recorded, read from the file


def test_long_jsonl_is_paired_by_id(tmp_path: Path) -> None:
    rows = [{"id": f"p{i}", "prompt": p, "model": m, "response": f"{m} says {i}: " + "words " * (3 + i)}
            for i, p in enumerate(PROMPTS) for m in ("alpha", "beta", "gamma")]
    (tmp_path / "long.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = init_spec(tmp_path / "long.jsonl", tmp_path / "spec.yaml", ["beta", "gamma"])
    spec = yaml.safe_load(out.read_text())
    dataset = spec["datasets"]["long"]
    assert dataset["format"] == "long"
    assert dataset["fields"] == {"prompt": "prompt", "id": "id", "model": "model", "answer": "response"}
    assert spec["analyses"]["vibecheck"]["models"] == ["beta", "gamma"]
    items = prepare(out).items["long"]
    assert len(items) == 6 and items[3].outputs["gamma"] == "gamma says 3: " + "words " * 6


def test_three_models_compare_against_the_first(tmp_path: Path) -> None:
    rows = [{"prompt": p, "a": f"first {i} " * 3, "b": f"second {i} " * 3, "c": f"third {i} " * 3}
            for i, p in enumerate(PROMPTS)]
    (tmp_path / "three.json").write_text(json.dumps(rows))
    spec = yaml.safe_load(init_spec(tmp_path / "three.json", tmp_path / "s.yaml").read_text())
    assert spec["analyses"]["vibecheck"]["reference"] == "a"
    assert prepare(tmp_path / "s.yaml").spec.analyses["vibecheck"].comparisons() == [("b", "a"), ("c", "a")]


def test_parquet_is_read(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"instruction": PROMPTS, "m1": [f"one {p}" for p in PROMPTS], "m2": [f"two {p}" for p in PROMPTS]})
    pq.write_table(table, tmp_path / "outs.parquet")
    init_spec(tmp_path / "outs.parquet", tmp_path / "vibe.yaml")
    assert len(prepare(tmp_path / "vibe.yaml").items["outs"]) == 6


def test_what_cannot_be_inferred_is_said(tmp_path: Path) -> None:
    with pytest.raises(InitError, match="at least two models"):
        detect([{"prompt": "hello there, how are you", "only": "one answer column here"}])
    with pytest.raises(InitError, match="--models names nope"):
        detect([{"prompt": "hello there, how are you", "a": "an answer text", "b": "another answer"}], ["nope"])
    (tmp_path / "bad.jsonl").write_text('{"prompt": "x"}\n{not json\n')
    with pytest.raises(InitError, match=r"bad\.jsonl:2: invalid JSON"):
        init_spec(tmp_path / "bad.jsonl", tmp_path / "vibe.yaml")
    (tmp_path / "vibe.yaml").write_text("taken")
    with pytest.raises(InitError, match="already exists"):
        init_spec(tmp_path / "bad.jsonl", tmp_path / "vibe.yaml")


def test_init_command_writes_the_embedded_default(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "engine", "init"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "data" / "everyday-prompts.jsonl").is_file()
    spec = prepare(tmp_path / "vibe.yaml").spec
    assert spec.name == "smollm2-terse-vs-chatty" and set(spec.models) == {"terse", "chatty"}
    again = subprocess.run([sys.executable, "-m", "engine", "init"], cwd=tmp_path, capture_output=True, text=True)
    assert again.returncode == 2 and "already exists" in again.stderr


def test_keys_links_and_constant_columns_are_not_answers() -> None:
    """An AlpacaEval-style annotations row: the generators' names are constant, the ids and links are keys. Only
    the two outputs read as answers."""
    rows = [{"instruction": f"Explain topic {i} to me.", "output_1": f"Topic {i} is about many things at once.",
             "generator_1": "gpt4_1106_preview", "output_2": f"Short take on {i}, with words.", "annotator": "judge",
             "example_id": f"ex {i}", "media_url": f"https://example.org/{i} x.png", "preference": 1.0 + i % 2}
            for i in range(10)]
    layout = detect(rows)
    assert layout.prompt == "instruction" and layout.models == {"output_1": "output_1", "output_2": "output_2"}
    assert layout.label == "preference" and layout.label_values == {"1.0": "output_1", "2.0": "output_2"}


def test_other_tools_files_are_recognised(shared_data: Path, tmp_path: Path) -> None:
    """LLM Comparator's file, AlpacaEval's annotations, an Arena-style battle log and Inspect logs: each gets
    its format, its models as the file names them (renamed where the spec needs), and a spec that reads it."""
    comparator = init_spec(shared_data / "interop" / "llm_comparator" / "example_tiny.json", tmp_path / "lc.yaml")
    spec = yaml.safe_load(comparator.read_text())
    dataset = spec["datasets"]["example_tiny"]
    assert dataset["format"] == "llm-comparator"
    assert dataset["model_names"] == {"ABC v0.6": "ABC-v0.6", "ABC v0.5": "ABC-v0.5"}
    assert spec["analyses"]["rankings"]["outcomes"] == "labels"
    assert len(prepare(comparator).items["example_tiny"]) == 5

    annotations = (shared_data / "alpaca_eval" / "Mixtral-8x7B-Instruct-v0.1" / "alpaca_eval_gpt4_turbo_fn"
                   / "annotations.json")
    out = init_spec(annotations, tmp_path / "ae.yaml")
    spec = yaml.safe_load(out.read_text())
    assert spec["datasets"]["annotations"]["format"] == "alpaca-eval"
    assert set(spec["models"]) == {"gpt4_1106_preview", "Mixtral-8x7B-Instruct-v0.1"}

    rows = [{"question_id": f"b{i}", "prompt": p, "model_a": m, "model_b": n, "response_a": f"{m}: {p} " * 2,
             "response_b": f"{n} on {p}", "winner": "model_a" if i % 2 else "tie"}
            for i, (p, (m, n)) in enumerate(zip(PROMPTS, [("x", "y"), ("y", "z"), ("z", "x")] * 2, strict=True))]
    (tmp_path / "arena.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = init_spec(tmp_path / "arena.jsonl", tmp_path / "arena.yaml")
    spec = yaml.safe_load(out.read_text())
    assert spec["datasets"]["arena"]["fields"] == {
        "prompt": "prompt", "id": "question_id", "model_a": "model_a", "model_b": "model_b",
        "answer_a": "response_a", "answer_b": "response_b", "winner": "winner"}
    assert sorted(spec["analyses"]["rankings"]["models"]) == ["x", "y", "z"]
    assert spec["analyses"]["vibecheck"]["reference"] in ("x", "y", "z")
    items = prepare(out).items["arena"]
    assert [it.battles[0].winner for it in items[:2]] == ["tie", "y"]

    logs = shared_data / "interop" / "inspect_logs"
    out = init_spec(logs, tmp_path / "inspect.yaml")
    spec = yaml.safe_load(out.read_text())
    assert spec["datasets"]["inspect_logs"]["format"] == "inspect"
    assert set(spec["models"]) == {"gpt-4o-mini", "llama3.1"}  # openai/… and ollama/… after their prefix


def test_a_column_of_scores_is_not_taken_for_a_model(tmp_path: Path, shared_data: Path) -> None:
    """The CNN/DailyMail summaries file holds two judges' scores as lists ("[1.0, -1.0]") beside the two
    models' summaries: init took a score column for a third model, and the page then reported a model that
    "writes 0× as many words". Only the two summary columns are models, and init says what it took for what."""
    data = shared_data / "vibecheck" / "summ_cnndm_train_with_pref.csv"
    done = subprocess.run([sys.executable, "-m", "engine", "init", str(data)], cwd=tmp_path, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    spec = yaml.safe_load((tmp_path / "vibe.yaml").read_text())
    (dataset,) = spec["datasets"].values()
    assert dataset["fields"]["outputs"] == {"command_xlarge_beta": "command_xlarge_beta", "tnlgv2": "TNLGv2"}
    assert done.stdout.splitlines()[0] == ("took, in summ_cnndm_train_with_pref: prompt ← 'question'; preference ← "
                                           "'preference'; models: command_xlarge_beta, tnlgv2 ← 'TNLGv2'")


def test_the_spec_init_writes_for_the_vibecheck_files_validates(tmp_path: Path, shared_data: Path) -> None:
    """The docs promise that the spec `vibe init` writes validates unchanged. On VibeCheck's own files it did not:
    the summaries' labels write 'TNLGv' for the TNLGv2 column and 'N/A' for rows nobody labelled. A label cut
    short to a prefix of one model alone is that model, and 'N/A' gives no label (written as null)."""
    for data in sorted((shared_data / "vibecheck").glob("*.csv")):
        folder = tmp_path / data.stem
        folder.mkdir()
        made = subprocess.run([sys.executable, "-m", "engine", "init", str(data)], cwd=folder, capture_output=True,
                              text=True)
        assert made.returncode == 0, (data.name, made.stderr)
        checked = subprocess.run([sys.executable, "-m", "engine", "validate", "vibe.yaml"], cwd=folder,
                                 capture_output=True, text=True)
        assert checked.returncode == 0, (data.name, checked.stderr)
    values = yaml.safe_load((tmp_path / "summ_cnndm_train_with_pref" / "vibe.yaml").read_text())
    assert next(iter(values["datasets"].values()))["preference_values"] == {
        "TNLGv": "tnlgv2", "command_xlarge_beta": "command_xlarge_beta", "N/A": None}
