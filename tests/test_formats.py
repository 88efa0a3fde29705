"""The formats other tools write, read from the real samples in ../shared/data (AlpacaEval, Inspect AI, LLM
Comparator) and from hand-made files with each error; and a run exported back to them."""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from llm_server import LLMServer

from engine.datasets import DatasetError, load_items
from engine.export import export
from engine.pipeline import prepare, run_spec
from engine.spec.load import load_spec

PANEL = """\
judges: {m: {kind: metric}}
vibes:
  - {name: verbosity, low: short, high: long, metric: length_words}
  - {name: enthusiasm, low: calm, high: excited, metric: exclamations}
"""


def _spec(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(body + PANEL)
    return path


def _items(spec: Path, dataset: str = "d") -> list:
    loaded = load_spec(spec)
    return load_items(loaded.datasets[dataset])


@pytest.mark.slow
def test_alpaca_eval_reader_gives_the_join_specs_items_and_numbers(shared_data: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """specs/alpaca-eval-vibes.yaml (format: alpaca-eval) against the nine-join spec it replaced: the same
    answers and labels on all 805 prompts, and the same profiles.csv and winrates.csv on a 120-prompt sample."""
    monkeypatch.setenv("VIBE_DATA", str(shared_data))
    new_spec = Path(__file__).parents[1] / "specs" / "alpaca-eval-vibes.yaml"
    models = ["gpt4_1106_preview", "Meta-Llama-3-70B-Instruct", "Mixtral-8x7B-Instruct-v0.1", "Qwen1.5-72B-Chat",
              "claude-3-opus-20240229", "gpt-3.5-turbo-1106", "gpt-3.5-turbo-1106_concise",
              "gpt-3.5-turbo-1106_verbose"]
    data = f"{shared_data}/alpaca_eval"
    joins = "\n".join(f"        {m}-answer: {{path: {data}/{m}/model_outputs.json, field: output}}" for m in models[1:])
    outputs = "\n".join(f"        {m}: {m}-answer" for m in models[1:])
    labels = {"Mixtral-8x7B-Instruct-v0.1": "alpaca_eval_gpt4_turbo_fn",
              "gpt-3.5-turbo-1106": "weighted_alpaca_eval_gpt4_turbo"}
    label_joins = "\n".join(f"        {m}-label: {{path: {data}/{m}/{a}/annotations.json, field: preference}}"
                            for m, a in labels.items())
    preferences = "\n".join(f"        {m}: {{column: {m}-label, values: {{'1': gpt4_1106_preview, '2': {m}}}}}"
                            for m in labels)
    analysis = """
analyses:
  vibe-profiles:
    method: vibecheck
    dataset: alpaca-eval
    reference: gpt4_1106_preview
    models: [{models}]
    judges: [m]
    vibes: [verbosity, enthusiasm]
    split: {{train: 0.5, seed: 0}}
""".format(models=", ".join(models))
    old = tmp_path / "old"
    old.mkdir()
    (old / "spec.yaml").write_text(f"""\
name: alpaca-join
models:
{chr(10).join(f"  {m}: {{provider: recorded}}" for m in models)}
datasets:
  alpaca-eval:
    limit: 120
    source:
      path: {data}/gpt4_1106_preview/model_outputs.json
      join:
{joins}
{label_joins}
    fields:
      id: instruction
      prompt: instruction
      category: dataset
      outputs:
        gpt4_1106_preview: output
{outputs}
      preferences:
{preferences}
    labels: {{source: llm-judge}}
{analysis}""" + PANEL)
    new = tmp_path / "new"
    new.mkdir()
    text = new_spec.read_text().replace("${VIBE_DATA:-../../shared/data}", str(shared_data))
    dataset = text[text.index("datasets:"):text.index("vibes:\n")].replace("    format: alpaca-eval",
                                                                             "    format: alpaca-eval\n    limit: 120")
    (new / "spec.yaml").write_text("name: alpaca-battles\nmodels:\n"
                                   + "".join(f"  {m}: {{provider: recorded}}\n" for m in models)
                                   + dataset + analysis + PANEL)
    before = {it.id: it for it in prepare(old / "spec.yaml").items["alpaca-eval"]}
    after = {it.id: it for it in prepare(new / "spec.yaml").items["alpaca-eval"]}
    assert list(before) == list(after) and len(after) == 120
    for item_id, item in after.items():
        assert item.outputs == before[item_id].outputs and item.category == before[item_id].category
        for model in models[1:]:
            assert item.label(model, "gpt4_1106_preview") == before[item_id].label(model, "gpt4_1106_preview")
    for name, spec in (("old", old), ("new", new)):
        run_spec(spec / "spec.yaml", tmp_path / f"run-{name}", tmp_path / "cache.sqlite", quiet=True, report=False)
    assert (tmp_path / "run-old" / "vibe-profiles" / "profiles.csv").read_bytes() == \
        (tmp_path / "run-new" / "vibe-profiles" / "profiles.csv").read_bytes()
    # the win rates agree, but for the model the weighted annotator graded: the battle reader keeps each
    # graded label's share of the win (the joined table reads only its nearest end), and that model's win
    # rate is the mean share, as AlpacaEval 2 counts it
    rates = {name: {r["model"]: r for r in csv.DictReader((tmp_path / f"run-{name}" / "vibe-profiles" /
                                                            "winrates.csv").open())} for name in ("old", "new")}
    graded = "gpt-3.5-turbo-1106"
    assert {m: r for m, r in rates["old"].items() if m != graded} == \
        {m: r for m, r in rates["new"].items() if m != graded}
    annotations = json.loads((shared_data / "alpaca_eval" / graded / labels[graded] / "annotations.json").read_text())
    share = {r["instruction"]: float(r["preference"]) - 1 for r in annotations if r["preference"] is not None}
    assert float(rates["new"][graded]["win_rate"]) == pytest.approx(np.mean([share[i] for i in after]))
    assert float(rates["new"][graded]["win_rate"]) != pytest.approx(float(rates["old"][graded]["win_rate"]))


def test_alpaca_eval_annotations_read_as_battles(shared_data: Path, tmp_path: Path) -> None:
    """The weighted annotator's values in [1, 2] go to their nearest end; 1.5 is a tie."""
    path = shared_data / "alpaca_eval" / "gpt-3.5-turbo-1106" / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json"
    spec = _spec(tmp_path, f"""\
name: ae
models: {{gpt4_1106_preview: {{provider: recorded}}, gpt-3.5-turbo-1106: {{provider: recorded}}}}
datasets: {{d: {{format: alpaca-eval, source: {{path: {path}}}}}}}
analyses: {{v: {{method: vibecheck, dataset: d, models: [gpt-3.5-turbo-1106, gpt4_1106_preview], judges: [m]}}}}
""")
    items = _items(spec)
    rows = json.loads(path.read_text())
    assert len(items) == len(rows) == 805
    for item, row in zip(items, rows, strict=True):
        value = float(row["preference"])
        expected = ("tie" if math.isclose(value, 1.5) else "gpt4_1106_preview" if value < 1.5
                    else "gpt-3.5-turbo-1106")
        assert item.label("gpt-3.5-turbo-1106", "gpt4_1106_preview") == expected
        assert item.outputs == {"gpt4_1106_preview": row["output_1"], "gpt-3.5-turbo-1106": row["output_2"]}


def test_llm_comparator_file_reads_as_battles(shared_data: Path, tmp_path: Path) -> None:
    path = shared_data / "interop" / "llm_comparator" / "example_tiny.json"
    spec = _spec(tmp_path, f"""\
name: lc
models: {{ABC-v0.6: {{provider: recorded}}, ABC-v0.5: {{provider: recorded}}}}
datasets:
  d: {{format: llm-comparator, source: {{path: {path}}}, model_names: {{ABC v0.6: ABC-v0.6, ABC v0.5: ABC-v0.5}}}}
analyses: {{v: {{method: vibecheck, dataset: d, models: [ABC-v0.6, ABC-v0.5], judges: [m]}}}}
""")
    items = _items(spec)
    examples = json.loads(path.read_text())["examples"]
    assert [it.prompt for it in items] == [e["input_text"] for e in examples]
    winners = [it.label("ABC-v0.6", "ABC-v0.5") for it in items]
    assert winners == ["ABC-v0.6", "ABC-v0.5", "ABC-v0.6", "tie", "ABC-v0.6"]  # scores 0.5, -1, 0.5, 0, 1.5
    assert [it.category for it in items] == ["Technology", "Technology", "Travel", None, None]
    assert items[4].outputs["ABC-v0.6"] == "안녕하세요?"


INSPECT = "interop/inspect_logs"


def test_inspect_logs_of_both_forms(shared_data: Path, tmp_path: Path) -> None:
    logs = shared_data / INSPECT
    first, second = sorted(p.name for p in logs.glob("2025-02-11*.eval"))
    spec = _spec(tmp_path, f"""\
name: inspect
models: {{run1: {{provider: recorded}}, run2: {{provider: recorded}}}}
datasets:
  d: {{format: inspect, source: {{path: {logs}}}, model_names: {{{first}: run1, {second}: run2}}}}
analyses: {{v: {{method: vibecheck, dataset: d, models: [run1, run2], judges: [m]}}}}
""")
    # the folder holds three other logs too (gpt-4o-mini and llama3.1): their models are not this spec's
    items = _items(spec)
    assert [it.id for it in items] == [str(i) for i in range(1, 11)]
    assert all(set(it.outputs) == {"run1", "run2"} and it.outputs["run1"] in ("Yes", "No") for it in items)
    assert items[0].reference == " Yes"  # the sample's target, as the log writes it
    assert all(set(it.scores) == {"run2"} for it in items)  # only the second run was scored (by `match`)
    assert [it.scores["run2"] for it in items[:3]] == [1.0, 1.0, 0.0]  # C, C, I

    guide = logs / "2025-05-12T20-28-26-04-00_security-guide.json"  # the .json form, a chat input
    spec = _spec(tmp_path, f"""\
name: inspect-json
models: {{gpt-4o-mini: {{provider: recorded}}, other: {{provider: openai-compatible, model: x, base_url: http://127.0.0.1:9/v1}}}}
datasets: {{d: {{format: inspect, source: {{path: {guide}}}, fields: {{score: scores.model_graded_fact}}}}}}
analyses: {{v: {{method: vibecheck, dataset: d, models: [gpt-4o-mini, other], judges: [m]}}}}
""")
    items = _items(spec)
    assert items[0].prompt == "How do I prevent SQL Injection attacks?"
    assert items[0].outputs["gpt-4o-mini"].startswith("Use parameterized queries")
    assert items[0].scores == {"gpt-4o-mini": 1.0}

    spec = _spec(tmp_path, f"""\
name: inspect-pair
models: {{gpt-4o-mini: {{provider: recorded}}, llama3.1: {{provider: recorded}}}}
datasets:
  d:
    format: inspect
    source: {{paths: [{logs}/2025-05-12T20-28-13-04-00_popularity.json, {logs}/log_formats.eval]}}
analyses: {{v: {{method: vibecheck, dataset: d, models: [gpt-4o-mini, llama3.1], judges: [m]}}}}
""")
    # openai/gpt-4o-mini and ollama/llama3.1 match the spec's names after their provider prefix; llama3.1 ran
    # one of the three prompts
    with pytest.raises(DatasetError, match=r"popularity\.json: samples\.1: prompt '2' is answered by model "
                                           r"'openai/gpt-4o-mini' only"):
        _items(spec)


BATTLES = [
    {"q": "Say hi", "model_a": "a", "model_b": "b", "ra": "Hi!", "rb": "Hello there, friend.", "w": "model_a"},
    {"q": "Say hi", "model_a": "c", "model_b": "a", "ra": "Hey.", "rb": "Hi!", "w": "model_b"},
    {"q": "Name a colour", "model_a": "b", "model_b": "c", "ra": "Blue, like the sky.", "rb": "Red.", "w": "tie"},
    {"q": "Name a colour", "model_a": "a", "model_b": "b", "ra": "Green!", "rb": "Blue, like the sky.", "w": ""},
]
BATTLE_SPEC = """\
name: arena
models: {a: {provider: recorded}, b: {provider: recorded}, c: {provider: recorded}}
datasets:
  d:
    format: battles
    source: {path: battles.jsonl}
    fields: {prompt: q, model_a: model_a, model_b: model_b, answer_a: ra, answer_b: rb, winner: w}
    labels: {source: human}
analyses:
  ranks: {method: rankings, dataset: d, models: [a, b, c], outcomes: labels, methods: [bradley_terry], bootstrap: 20}
"""


def _write_rows(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_battle_log_with_three_models(tmp_path: Path) -> None:
    _write_rows(tmp_path / "battles.jsonl", BATTLES)
    spec = _spec(tmp_path, BATTLE_SPEC)
    items = _items(spec)
    assert [it.prompt for it in items] == ["Say hi", "Name a colour"]  # battles gathered per prompt
    assert items[0].outputs == {"a": "Hi!", "b": "Hello there, friend.", "c": "Hey."}
    assert items[0].label("a", "b") == "a" and items[0].label("c", "a") == "a" and items[0].label("b", "c") is None
    assert items[1].label("c", "b") == "tie" and items[1].label("a", "b") is None  # unlabelled battle
    run_spec(spec, tmp_path / "run", tmp_path / "c.sqlite", quiet=True, report=False)
    ranking = json.loads((tmp_path / "run" / "ranks" / "rankings.json").read_text())
    assert "3 votes" in ranking["outcomes"]
    assert {r["model"] for r in ranking["rankings"][0]["ratings"]} == {"a", "b", "c"}


@pytest.mark.parametrize(("rows", "spec_change", "message"), [
    ([{**BATTLES[0], "rb": None}], None, r"battles\.jsonl:1: field 'rb' is missing"),
    ([{**BATTLES[0], "w": "gpt-4"}], None,
     r"battles\.jsonl:1: field 'w' holds 'gpt-4', which names neither model of this battle \(a, b\)"),
    ([{**BATTLES[0], "w": "c"}], None, r"battles\.jsonl:1: field 'w' holds 'c', which names neither model"),
    ([BATTLES[0], BATTLES[1], {**BATTLES[0], "w": "model_b"}], None,
     r"battles\.jsonl:3: a second battle of 'a' and 'b' on prompt 'Say hi' \(the first is .*battles\.jsonl:1\)"),
    ([BATTLES[0], {**BATTLES[1], "ra": "Hey.", "rb": "Hi again!"}], None,
     r"battles\.jsonl:2: another answer of model 'a' to prompt 'Say hi' \(the first is .*battles\.jsonl:1\)"),
    ([BATTLES[0], {**BATTLES[0], "model_b": "c", "rb": "Yo"}, {"q": "Lonely", "model_a": "a", "model_b": "zed",
                                                                  "ra": "x", "rb": "y", "w": "tie"}], None,
     r"battles\.jsonl:3: prompt 'Lonely' is answered by model 'a' only"),
    ([BATTLES[0]], ("model_a: model_a", "model_a: first_model"),  # in no row: the column, for the whole file
     r"battles\.jsonl: column 'first_model' is not in the file \(its columns: q, model_a, .*fields\.model_a"),
    ([{**BATTLES[0], "id": 1}, {**BATTLES[2], "id": 1}], ("prompt: q,", "id: id, prompt: q,"),
     r"battles\.jsonl:2: prompt '1' has another text in .*battles\.jsonl:1"),
])
def test_battle_errors_are_located(tmp_path: Path, rows: list[dict], spec_change: tuple[str, str] | None,
                                   message: str) -> None:
    _write_rows(tmp_path / "battles.jsonl", rows)
    text = BATTLE_SPEC if spec_change is None else BATTLE_SPEC.replace(*spec_change)
    with pytest.raises(DatasetError, match=message):
        _items(_spec(tmp_path, text))


def test_long_table_errors_are_located(tmp_path: Path) -> None:
    base = [{"id": "p0", "prompt": "Say hi", "model": "a", "answer": "hi"},
            {"id": "p0", "prompt": "Say hi", "model": "b", "answer": "hello"}]
    spec = _spec(tmp_path, """\
name: long
models: {a: {provider: recorded}, b: {provider: recorded}}
datasets:
  d: {source: {path: rows.jsonl}, format: long, fields: {id: id, prompt: prompt, model: model, answer: answer}}
analyses: {vibecheck: {dataset: d, models: [a, b], judges: [m]}}
""")
    cases = {
        r"rows\.jsonl:3: a second answer of model 'b' to prompt 'p0' \(the first is .*rows\.jsonl:2\)":
            [*base, {"id": "p0", "prompt": "Say hi", "model": "b", "answer": "again"}],
        r"rows\.jsonl:2: field 'model' is missing": [base[0], {"id": "p0", "prompt": "Say hi", "answer": "x"}],
        r"recorded model\(s\) b have no answer in the data, whose models are: a": [base[0]],
        r"rows\.jsonl:2: prompt 'p0' has another text in .*rows\.jsonl:1 \(field 'prompt' differs\)":
            [base[0], {**base[1], "prompt": "Say bye"}],
    }
    for message, rows in cases.items():
        _write_rows(tmp_path / "rows.jsonl", rows)
        with pytest.raises(DatasetError, match=message):
            prepare(spec)


def _check_llm_comparator(document: dict) -> None:
    """The field rules of LLM Comparator's types.ts: required fields, two models, score in [-1.5, 1.5] or
    null, every custom field of the declared type (per-model ones a list with a value per model)."""
    assert set(document) >= {"metadata", "models", "examples"}
    assert isinstance(document["metadata"]["source_path"], str)
    assert len(document["models"]) == 2 and all(isinstance(m["name"], str) for m in document["models"])
    types = {f["name"]: f["type"] for f in document["metadata"]["custom_fields_schema"]}
    for example in document["examples"]:
        assert {"input_text", "tags", "output_text_a", "output_text_b", "score", "individual_rater_scores",
                "custom_fields"} <= set(example)
        assert all(isinstance(t, str) for t in example["tags"])
        assert example["score"] is None or -1.5 <= example["score"] <= 1.5
        for name, value in example["custom_fields"].items():
            kind = types[name]
            if kind.startswith("per_model_"):
                assert isinstance(value, list) and len(value) == 2
                assert all(v is None or isinstance(v, int | float) for v in value) if kind == "per_model_number" \
                    else True
            elif kind == "number":
                assert value is None or isinstance(value, int | float)
            else:
                assert isinstance(value, str)
        for rating in example["individual_rater_scores"]:
            assert rating["score"] is None or -1.5 <= rating["score"] <= 1.5
            assert rating["is_flipped"] in (True, False, None)
            assert all(types[k] == "per_rating_string" and isinstance(v, str)
                       for k, v in rating["custom_fields"].items())


def test_a_run_exports_and_reads_back(tmp_path: Path) -> None:
    """A battle log judged by an LLM judge (both orders) and a preference judge over real HTTP, with a third
    model generated: the LLM Comparator export keeps the rules and reads back as the same battles; the
    Parquet table holds every verdict; AlpacaEval gets the generated model's answers."""
    rows = [{"q": f"Question {i}?", "model_a": "a", "model_b": "b", "ra": f"Short {i}.",
             "rb": f"A much longer answer to question {i}, with detail!", "w": "model_a" if i % 3 else "model_b"}
            for i in range(12)]
    _write_rows(tmp_path / "battles.jsonl", rows)
    with LLMServer() as server:
        server.state.replies = {"serves the user better": "The first is clearer.\nVerdict: 1",
                                "higher on the axis": "It is warmer.\nVerdict: 2"}
        spec = tmp_path / "spec.yaml"
        spec.write_text(f"""\
name: exported
models:
  a: {{provider: recorded}}
  b: {{provider: recorded}}
  c: {{provider: openai-compatible, model: gen, base_url: {server.base_url}}}
judges:
  m: {{kind: metric}}
  judge: {{kind: llm, provider: openai-compatible, model: j, base_url: {server.base_url}}}
vibes:
  - {{name: verbosity, low: short, high: long, metric: length_words}}
  - {{name: warmth, low: cold, high: warm, judges: [judge]}}
datasets:
  d:
    format: battles
    source: {{path: battles.jsonl}}
    fields: {{prompt: q, model_a: model_a, model_b: model_b, answer_a: ra, answer_b: rb, winner: w}}
    labels: {{source: human}}
analyses:
  pair: {{method: vibecheck, dataset: d, models: [a, b], judges: [m], preference_judges: [judge]}}
  third: {{method: vibecheck, dataset: d, models: [c, a], judges: [m], vibes: [verbosity]}}
""")
        run_spec(spec, tmp_path / "run", tmp_path / "c.sqlite", quiet=True, report=False)
    (comparator,) = [p for p in export(tmp_path / "run", "llm-comparator", spec=spec) if "pair-a-vs-b" in p.name]
    document = json.loads(comparator.read_text())
    _check_llm_comparator(document)
    assert len(document["examples"]) == 12
    first = document["examples"][0]
    # the preference judge names the first position in both orders (A, then B): position bias, a tie
    assert first["score"] == 0.0
    flipped = [r for r in first["individual_rater_scores"] if r["is_flipped"] is not None]
    assert {r["custom_fields"]["question"] for r in flipped} == {"preference", "warmth"}
    assert {r["is_flipped"] for r in flipped} == {True, False}
    assert all(r["rationale"] in ("The first is clearer.", "It is warmer.") for r in flipped)

    back = tmp_path / "back"
    back.mkdir()
    shutil.copy(comparator, back / "export.json")
    spec_back = _spec(back, """\
name: back
models: {a: {provider: recorded}, b: {provider: recorded}}
datasets: {d: {format: llm-comparator, source: {path: export.json}}}
analyses: {v: {method: vibecheck, dataset: d, models: [a, b], judges: [m]}}
""")
    items = _items(spec_back)
    for item, example in zip(items, document["examples"], strict=True):
        score = example["score"]
        assert item.label("a", "b") == ("a" if score > 0 else "b" if score < 0 else "tie")
        assert item.outputs == {"a": example["output_text_a"], "b": example["output_text_b"]}

    (table,) = export(tmp_path / "run", "parquet", spec=spec)
    verdicts = pq.read_table(table).to_pylist()
    pairs = [json.loads(line) for line in (tmp_path / "run" / "pair" / "pairs.jsonl").read_text().splitlines()]
    assert len([v for v in verdicts if v["analysis"] == "pair"]) == sum(
        len(judges) for p in pairs for judges in p["by_judge"].values()) + len(pairs)
    warm = [v for v in verdicts if v["analysis"] == "pair" and v["question"] == "warmth"]
    assert all((v["verdict_a_first"], v["verdict_b_first"]) == (-1, 1) for v in warm)  # "2" in both orders

    (outputs,) = export(tmp_path / "run", "alpaca-eval", spec=spec)
    records = json.loads(outputs.read_text())
    assert outputs.parent.name == "c" and len(records) == 12
    assert records[0] == {"instruction": "Question 0?", "output": "echo: Question 0?", "generator": "c",
                          "dataset": "d"}
    assert re.search(r"score: the preference judges' panel verdict", document["metadata"]["source_path"])


def test_export_command_refuses_what_is_not_a_run(tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "engine", "export", str(tmp_path), "--to", "parquet"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "no manifest.json" in done.stderr and "Traceback" not in done.stderr


def test_a_graded_annotation_keeps_its_share_of_the_win_for_the_win_rate(tmp_path: Path) -> None:
    """AlpacaEval's weighted annotator writes a value between 1 (output_1 wins) and 2 (output_2 wins). The
    label is the nearest end, as before, and the value's share of the win is kept: 1.75 gives output_2 three
    quarters. The profile's win rate counts the shares, as AlpacaEval 2 does (its published 9.178% for
    gpt-3.5-turbo-1106 is the mean share; counting nearest ends gives its discrete 8.199%): here
    (0 + 1 + 0.75 + 0.9) / 4 where nearest ends would say 3 of 4."""
    from engine.builtin_plugins.methods.vibecheck.profiles import _labelled_rows
    from engine.builtin_plugins.methods.vibecheck.records import PairVerdicts, VibeCheckResult

    rows = [{"instruction": f"Q{i}", "generator_1": "ref", "output_1": "reference answer", "generator_2": "m",
             "output_2": "model answer", "preference": value} for i, value in enumerate([1.0, 2.0, 1.75, 1.9])]
    (tmp_path / "annotations.json").write_text(json.dumps(rows))
    spec = _spec(tmp_path, """\
name: graded
models: {ref: {provider: recorded}, m: {provider: recorded}}
datasets:
  d: {format: alpaca-eval, source: {path: annotations.json}}
analyses:
  ranks: {method: rankings, dataset: d, models: [m, ref], outcomes: labels, methods: [bradley_terry]}
""")
    items = _items(spec)
    assert [it.label("m", "ref") for it in items] == ["ref", "m", "m", "m"]
    assert [it.label_share("m", "ref") for it in items] == [None, None, pytest.approx(0.75), pytest.approx(0.9)]
    assert items[2].label_share("ref", "m") == pytest.approx(0.25)
    pairs = [PairVerdicts(it.id, "test", it.label("m", "ref"), "x", "y", {}, {}, chars=[10, 10],
                          share=it.label_share("m", "ref")) for it in items]
    y, *_ = _labelled_rows(VibeCheckResult("p", "m", "ref", [], pairs, None, None, 0, []))
    assert y.tolist() == [0.0, 1.0, pytest.approx(0.75), pytest.approx(0.9)]
    assert y.mean() == pytest.approx((0 + 1 + 0.75 + 0.9) / 4)
