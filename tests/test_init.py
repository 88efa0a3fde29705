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
    said: list[str] = []
    out = init_spec(tmp_path / "battles.csv", tmp_path / "vibe.yaml", say=said.append)
    assert said == ["took, in battles: prompt ← 'question'; id ← 'question_id'; preference ← 'winner'; "
                    "models: gpt-x, claude-y"]  # each model's column is its name
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
    said: list[str] = []
    out = init_spec(tmp_path / "long.jsonl", tmp_path / "spec.yaml", ["beta", "gamma"], say=said.append)
    assert said == ["took, in long: prompt ← 'prompt'; id ← 'id'; model ← 'model'; answer ← 'response'; "
                    "models: beta, gamma"]
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
    assert spec["datasets"]["gpt4_1106_preview-vs-mixtral-8x7b-instruct-v0-1"]["format"] == "alpaca-eval"
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


def _cli(*argv: str) -> tuple[int, str, str]:
    """`vibe ARGV` as a user runs it, in this process (the exit code, stdout, stderr)."""
    import contextlib
    import io

    from engine.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


DATA_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".parquet")


def test_init_on_every_tabular_file_writes_a_spec_that_plans_or_says_in_one_line_why_not(
        tmp_path: Path, shared_data: Path) -> None:
    """Every table in ../shared/data goes through `vibe init`: either the spec it writes validates and plans
    (the data read, every task compiled), or init exits 2 with one line that says what it could not decide and
    how to say it. Before, init took the Vibe-Eval results' 'generation' and 'evaluator_explanation' for two
    models, MT-Bench's judge prompts' template and description for two more, a topic column ('category_labels')
    for a third Arena model, and wrote an MT-Bench spec from question.jsonl that read no answers (its plan
    failed). VibeCheck's summaries also write 'TNLGv' for the TNLGv2 column and 'N/A' where nobody labelled:
    a label cut short to one model's prefix is that model, and 'N/A' no label."""
    files = sorted(p for p in shared_data.rglob("*") if p.suffix in DATA_SUFFIXES and p.is_file())
    assert len(files) > 70
    written = {}
    for n, data in enumerate(files):
        out = tmp_path / f"{n}" / "vibe.yaml"
        code, _, err = _cli("init", str(data), "--out", str(out))
        where = data.relative_to(shared_data)
        if code == 0:
            assert _cli("validate", str(out))[0] == 0, where
            planned = _cli("plan", str(out))
            assert planned[0] == 0, (where, planned[2])
            written[str(where)] = yaml.safe_load(out.read_text())
        else:
            assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, (where, err)
            assert not out.exists()
    assert len(written) >= 12
    models = {where: list(spec["models"]) for where, spec in written.items()}
    assert models["arena/vibecheck_llama3-70b_vs_not_llama_soft_questions.csv"] == ["llama-3-70b-instruct",
                                                                                    "not_llama"]
    assert "mt_bench/judge_prompts.jsonl" not in models
    assert not any(where.startswith("vibe_eval/results/") for where in models)
    assert written["mt_bench/question.jsonl"]["datasets"]["mt_bench"]["source"]["path"].endswith("mt_bench")
    assert next(iter(written["vibecheck/summ_cnndm_train_with_pref.csv"]["datasets"].values()))[
        "preference_values"] == {"TNLGv": "tnlgv2", "command_xlarge_beta": "command_xlarge_beta", "N/A": None}


@pytest.mark.slow
def test_a_file_per_model_goes_through_init_and_runs(tmp_path: Path, shared_data: Path) -> None:
    """Per-model files could not go through `vibe init` (it took one file, and its hint, --models, could not
    help). Several files (or their folder) are one dataset: AlpacaEval's model_outputs.json per model, whose
    rows name their generator; Vibe-Eval's results per model, whose rows name none, so each file's answers are
    the model it is named after. The second spec runs to a leaderboard; files of different columns are refused
    in one line."""
    alpaca = [shared_data / "alpaca_eval" / m / "model_outputs.json" for m in ("gpt4_1106_preview",
                                                                           "gpt-3.5-turbo-1106")]
    code, said, err = _cli("init", *map(str, alpaca), "--out", str(tmp_path / "alpaca.yaml"))
    assert code == 0, err
    assert "model ← 'generator'; answer ← 'output'; models: gpt4_1106_preview, gpt-3.5-turbo-1106" in said
    items = prepare(tmp_path / "alpaca.yaml").items["gpt4_1106_preview-vs-gpt-3-5-turbo-1106"]  # named by its models
    assert len(items) == 805 and set(items[0].outputs) == {"gpt4_1106_preview", "gpt-3.5-turbo-1106"}

    one = alpaca[0]
    code, _, err = _cli("init", str(one), "--out", str(tmp_path / "one.yaml"))
    assert code == 2 and "vibe init FILE FILE" in err

    results = shared_data / "vibe_eval" / "results" / "reka-core-20240415-evaluator"
    per_model = [results / f"{m}.jsonl" for m in ("gemini-1.5-pro-002", "reka-flash-20241127")]
    code, said, err = _cli("init", *map(str, per_model), "--out", str(tmp_path / "ve.yaml"))
    assert code == 0, err
    assert "id ← 'example_id'" in said
    assert "answer ← 'generation'; models: gemini-1.5-pro-002, reka-flash-20241127" in said
    code, _, err = _cli("init", str(results), "--out", str(tmp_path / "folder.yaml"))  # the summaries differ
    assert code == 2 and "do not have the same columns" in err and err.count("\n") == 1
    done = subprocess.run([sys.executable, "-m", "engine", "run", str(tmp_path / "ve.yaml"), "--limit", "6",
                           "--out", str(tmp_path / "run")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "run" / "index.html").is_file()


def test_an_agents_messages_per_file_are_one_dataset(tmp_path: Path) -> None:
    """The docs' "a file per model" form of OpenAI messages: one file per agent, the rows naming no model. Init
    takes both files as one dataset whose models are the files' names, and the conversations pair by id."""
    for agent, opening in (("old-agent", "Sure! "), ("new-agent", "")):
        rows = [{"id": f"c{i}", "messages": [{"role": "user", "content": f"Question {i}?"},
                                             {"role": "assistant", "content": f"{opening}Answer {i}, in words."}]}
                for i in range(6)]
        (tmp_path / f"{agent}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, _, err = _cli("init", str(tmp_path / "old-agent.jsonl"), str(tmp_path / "new-agent.jsonl"), "--out",
                        str(tmp_path / "vibe.yaml"))
    assert code == 0, err
    spec = yaml.safe_load((tmp_path / "vibe.yaml").read_text())
    (dataset,) = spec["datasets"].values()
    assert dataset["format"] == "openai-messages" and list(spec["models"]) == ["old-agent", "new-agent"]
    assert dataset["source"]["paths"] == ["old-agent.jsonl", "new-agent.jsonl"]
    (items,) = prepare(tmp_path / "vibe.yaml").items.values()
    assert len(items) == 6 and items[0].outputs == {"old-agent": "Sure! Answer 0, in words.",
                                                    "new-agent": "Answer 0, in words."}


def test_init_refusals_name_the_files(tmp_path: Path) -> None:
    """An empty data file and an --out that exists are refused naming the file each is about."""
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "d.csv").write_text("id,prompt,a,b\n1,hi,x,y\n")
    (tmp_path / "taken.yaml").write_text("x: 1\n")
    empty = subprocess.run([sys.executable, "-m", "engine", "init", "empty.csv"], cwd=tmp_path, capture_output=True,
                           text=True)
    assert empty.returncode == 2 and "empty.csv: it holds no rows" in empty.stderr, empty.stderr
    taken = subprocess.run([sys.executable, "-m", "engine", "init", "d.csv", "--out", "taken.yaml"], cwd=tmp_path,
                           capture_output=True, text=True)
    assert taken.returncode == 2 and "taken.yaml already exists and is kept" in taken.stderr, taken.stderr
    assert (tmp_path / "taken.yaml").read_text() == "x: 1\n"


def test_init_reads_alpaca_eval_as_it_ships(tmp_path: Path, shared_data: Path) -> None:
    """AlpacaEval's own layout, `<model>/model_outputs.json` and `<model>/<annotator>/annotations.json`: `vibe
    init .` found nothing there. It now reads the annotations (both answers and the vote), names the spec after
    the models it compares rather than the file, and says who voted from the file's annotator; with only the
    outputs files it reads those, and says how preferences would come in."""
    import shutil

    source = shared_data / "alpaca_eval"
    for model in ("Mixtral-8x7B-Instruct-v0.1", "gpt4_1106_preview"):
        shutil.copytree(source / model, tmp_path / "ae" / model)
    done = subprocess.run([sys.executable, "-m", "engine", "init", "."], cwd=tmp_path / "ae", capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    spec = (tmp_path / "ae" / "vibe.yaml").read_text()
    assert "name: gpt4_1106_preview-vs-mixtral-8x7b-instruct-v0-1" in spec
    assert "labels: {source: llm-judge, description: annotator alpaca_eval_gpt4_turbo_fn}" in spec
    assert "outcomes: labels" in spec
    for model in ("Qwen1.5-72B-Chat", "claude-3-opus-20240229"):
        (tmp_path / "outs" / model).mkdir(parents=True)
        shutil.copy(source / model / "model_outputs.json", tmp_path / "outs" / model)
    done = subprocess.run([sys.executable, "-m", "engine", "init", "."], cwd=tmp_path / "outs",
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    spec = (tmp_path / "outs" / "vibe.yaml").read_text()
    assert "name: qwen1-5-72b-chat-vs-claude-3-opus-20240229" in spec and "# no preference labels" in spec
    valid = subprocess.run([sys.executable, "-m", "engine", "validate", "vibe.yaml"], cwd=tmp_path / "outs",
                           capture_output=True, text=True)
    assert valid.returncode == 0, valid.stderr
