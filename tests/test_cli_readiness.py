"""The CLI never leaves a user guessing: unset API keys, data missing on disk, the version, the site hint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from llm_server import LLMServer
from test_providers import make_spec

SPEC = """\
name: keys
models:
  a: {provider: recorded}
  b: {provider: recorded}
judges:
  grader: {kind: llm, provider: openai, model: gpt-4o-mini, api_key_env: VIBE_TEST_UNSET_KEY}
  m: {kind: metric}
datasets:
  d:
    source: {path: data.jsonl}
    fields: {id: id, prompt: q, outputs: {a: a, b: b}}
vibes:
  - {name: verbosity, low: short, high: long, metric: length_words}
analyses:
  vibecheck: {dataset: d, models: [a, b], judges: [grader, m]}
"""


# the spec with its metric judge alone: runs offline, with no key to set
METRIC_ONLY = SPEC.replace("judges: [grader, m]", "judges: [m]").replace(
    "  grader: {kind: llm, provider: openai, model: gpt-4o-mini, api_key_env: VIBE_TEST_UNSET_KEY}\n", "")


def recorded(tmp_path: Path, rows: list[dict[str, str]], spec: str = METRIC_ONLY) -> None:
    """data.jsonl with `rows` and spec.yaml reading it, in `tmp_path`."""
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "spec.yaml").write_text(spec, encoding="utf-8")


def vibe(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIBE_TEST_UNSET_KEY", "VIBE_DATA")}
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True, text=True, cwd=tmp_path,
                          env=env)


def write(tmp_path: Path, text: str = SPEC) -> Path:
    (tmp_path / "data.jsonl").write_text('{"id": "1", "q": "hi", "a": "hello", "b": "hello there"}\n')
    (tmp_path / "spec.yaml").write_text(text)
    return tmp_path / "spec.yaml"


def test_an_unset_key_warns_in_validate_and_plan_and_stops_run(tmp_path: Path) -> None:
    spec = write(tmp_path)
    message = (f"{spec}:6:74: judges.grader.api_key_env: VIBE_TEST_UNSET_KEY is not set: export "
               "VIBE_TEST_UNSET_KEY=…, or mark the judge 'optional: true' to leave it out when unset")
    validated = vibe(tmp_path, "validate", str(spec))
    assert validated.returncode == 0 and f"warning: {message}" in validated.stderr
    assert "valid (1 warning(s): it cannot run here as it stands)" in validated.stdout
    planned = vibe(tmp_path, "plan", str(spec), "--cache", str(tmp_path / "c.sqlite"))
    assert planned.returncode == 0 and f"warning: {message}" in planned.stderr
    ran = vibe(tmp_path, "run", str(spec), "--cache", str(tmp_path / "c.sqlite"), "--quiet")
    assert ran.returncode == 2 and message in ran.stderr and "error: not started" in ran.stderr
    assert not (tmp_path / "c.sqlite").exists() and not (tmp_path / "runs").exists()  # nothing ran
    optional = write(tmp_path, SPEC.replace("api_key_env: VIBE_TEST_UNSET_KEY}", "api_key_env: VIBE_TEST_UNSET_KEY, "
                                            "optional: true}"))
    assert "warning" not in vibe(tmp_path, "validate", str(optional)).stderr


def test_data_missing_on_disk_is_reported_by_validate_with_the_fix(tmp_path: Path) -> None:
    text = SPEC.replace("api_key_env: VIBE_TEST_UNSET_KEY", "api_key_env: VIBE_TEST_UNSET_KEY, optional: true")
    text = text.replace("source: {path: data.jsonl}", "source:\n      paths:\n        - ${VIBE_DATA:-missing}/one.csv\n"
                        "        - ${VIBE_DATA:-missing}/two.csv\n      urls: [https://example.org/one.csv, "
                        "https://example.org/two.csv]")
    spec = write(tmp_path, text)
    out = vibe(tmp_path, "validate", str(spec))
    assert out.returncode == 0
    lines = text.splitlines()
    for n, name in enumerate(("one", "two")):
        line = next(i for i, row in enumerate(lines, 1) if f"/{name}.csv" in row and row.lstrip().startswith("-"))
        assert (f"warning: {spec}:{line}:11: datasets.d.source.paths[{n}]: {tmp_path}/missing/{name}.csv is not "
                f"on disk: `vibe run` will try to download https://example.org/{name}.csv; offline, set VIBE_DATA to "
                f"the folder that holds the data (the path reads '${{VIBE_DATA:-missing}}/{name}.csv')") in out.stderr


def test_version(tmp_path: Path) -> None:
    out = vibe(tmp_path, "--version")
    assert out.returncode == 0 and out.stdout.strip() == "vibe 0.1.0"


def test_a_second_spec_with_the_same_name_does_not_overwrite_the_first_run(tmp_path: Path) -> None:
    """Two spec files both `name: same`: the second `vibe run` is refused before any work, naming both files and
    the ways out, and the first run's folder is as it was; the first spec runs there again."""

    rows = [{"id": f"p{i}", "q": f"q{i}", "a": "short", "b": "a much longer answer " * (i + 1)} for i in range(6)]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = METRIC_ONLY.replace("name: keys", "name: same")
    (tmp_path / "first.yaml").write_text(spec)
    (tmp_path / "second.yaml").write_text(spec.replace("short, high: long", "terse, high: long"))
    assert vibe(tmp_path, "run", "first.yaml", "--no-report", "--quiet").returncode == 0
    kept = {p.name: p.read_bytes() for p in (tmp_path / "runs" / "same").iterdir() if p.is_file()}
    done = vibe(tmp_path, "run", "second.yaml", "--no-report", "--quiet")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "error: runs/same holds the run of first.yaml, another spec named 'same': running second.yaml there " \
           "would overwrite its results. Give one of them another `name:`, pass --out DIR, or delete runs/same if " \
           "that run is no longer wanted" in done.stderr, done.stderr
    assert {p.name: p.read_bytes() for p in (tmp_path / "runs" / "same").iterdir() if p.is_file()} == kept
    assert vibe(tmp_path, "run", "first.yaml", "--no-report", "--quiet").returncode == 0


def test_an_empty_data_file_is_refused_not_run_to_an_empty_page(tmp_path: Path) -> None:
    """A CSV with a header and no rows (or rows every filter drops) stops `vibe run` before any work, naming the
    dataset and the file; it used to exit 0 with a leaderboard of [-inf, inf] intervals."""
    (tmp_path / "data.csv").write_text("id,q,a,b\n", encoding="utf-8")
    spec = METRIC_ONLY.replace("data.jsonl", "data.csv")
    (tmp_path / "spec.yaml").write_text(spec, encoding="utf-8")
    done = vibe(tmp_path, "run", "spec.yaml", "--quiet")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "error: dataset 'd' (data.csv): it has no rows, so there is nothing to compare" in done.stderr, done.stderr
    assert not (tmp_path / "runs" / "keys").exists()


def test_a_csv_excel_saved_with_a_byte_order_mark_reads_its_first_column(tmp_path: Path) -> None:
    """Excel's "CSV UTF-8" starts the file with a byte-order mark, which used to stick to the first column's
    name: the spec's `id` column then had "no value". It is read as the column the user sees."""
    rows = "".join(f"p{i},q{i},short,{'a longer answer ' * (i + 1)}\n" for i in range(6))
    (tmp_path / "data.csv").write_bytes("\ufeffid,q,a,b\n".encode() + rows.encode())
    spec = METRIC_ONLY.replace("data.jsonl", "data.csv")
    (tmp_path / "spec.yaml").write_text(spec, encoding="utf-8")
    done = vibe(tmp_path, "run", "spec.yaml", "--quiet", "--no-report")
    assert done.returncode == 0, done.stderr
    from engine.execute.snapshot import read_items

    kept = read_items(tmp_path / "runs" / "keys")
    assert kept is not None and [item.id for item in kept["d"]] == [f"p{i}" for i in range(6)]


@pytest.mark.parametrize(("field", "wrong", "said"), [
    ("outputs: {a: a, b: b}", "outputs: {a: a, b: answr}", "spec.yaml:10:52: datasets.d.fields.outputs.b: data.jsonl: "
     "column 'answr' is not in the file (its columns: id, q, a, b)"),
    ("prompt: q", "prompt: question", "spec.yaml:10:30: datasets.d.fields.prompt: data.jsonl: column 'question' is "
     "not in the file (its columns: id, q, a, b)"),
])
def test_a_column_the_file_does_not_have_is_located_at_the_field(tmp_path: Path, field: str, wrong: str,
                                                                 said: str) -> None:
    """A misspelt answer column passed validation and failed the run naming neither column nor file; a misspelt
    prompt column was reported at `preference:` as a field with no value. Both are located at the field that
    maps them by `vibe validate`, and `vibe run` names the file and the column."""
    rows = [{"id": f"p{i}", "q": f"q{i}", "a": "short", "b": "longer " * (i + 1)} for i in range(4)]
    recorded(tmp_path, rows, METRIC_ONLY.replace(field, wrong))
    done = vibe(tmp_path, "validate", "spec.yaml")
    assert done.returncode == 2 and said in done.stderr, done.stderr
    run = vibe(tmp_path, "run", "spec.yaml", "--quiet")
    column = wrong.split(": ")[-1].strip("}").split()[-1]
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert f"data.jsonl: column {column!r} is not in the file" in run.stderr, run.stderr


def test_a_folder_format_s_folder_on_disk_is_not_reported_missing(shared_data: Path) -> None:
    """specs/mt-bench-vibes.yaml reads the MT-Bench folder in ../shared/data: `vibe validate` used to warn that
    it was not on disk because it looked for a file."""
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-m", "engine", "validate", "specs/mt-bench-vibes.yaml"], cwd=root,
                          capture_output=True, text=True)
    assert done.returncode == 0 and "not on disk" not in done.stderr, done.stderr
    assert done.stdout.strip() == "specs/mt-bench-vibes.yaml: valid"


def test_empty_answers_and_repeated_rows_are_left_out_and_said(tmp_path: Path) -> None:
    """A row whose answer cell is empty and a row that repeats an earlier one (same prompt, same answers) were
    accepted without a word, the first compared as an empty answer and the second counted twice. Both are left
    out, counted and named on the console and in the manifest."""
    rows = [{"id": f"p{i}", "q": f"q{i}", "a": "short", "b": "a longer answer " * (i + 1)} for i in range(6)]
    rows[2]["b"] = "  "
    rows.append({**rows[4], "id": "p4-again"})
    recorded(tmp_path, rows)
    done = vibe(tmp_path, "run", "spec.yaml", "--no-report")
    assert done.returncode == 0, done.stderr
    said = ["data.jsonl:3: b's answer is empty", "data.jsonl:7: the same prompt and answers as data.jsonl:5"]
    assert f"dataset 'd': 2 left out: {said[0]}; {said[1]}" in done.stderr, done.stderr
    manifest = json.loads((tmp_path / "runs" / "keys" / "manifest.json").read_text())
    assert manifest["excluded"] == {"d": said} and manifest["tasks"]["total"] > 0


def test_piped_output_says_what_starts_and_how_far_each_stage_is(tmp_path: Path) -> None:
    """Without a terminal (CI, a notebook, `| tee`) a run says each phase as it starts and, while a stage runs,
    a line at each tenth of its tasks (or after 30 s without one), where it used to stay silent until the end.
    The stage's 20 tasks are calls to a model on the loopback server (answers read from a dataset are no task
    that runs: they are done before the stage starts)."""
    with LLMServer() as server:
        make_spec(tmp_path, server, [f"prompt {i}" for i in range(20)])
        done = vibe(tmp_path, "run", "spec.yaml", "--no-report", "--cache", str(tmp_path / "c.sqlite"))
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == "plan …" and "execute …" in lines and "analyze …" in lines
    progress = [line.split(" tasks")[0] for line in lines if line.startswith("generation: ")]
    assert progress == [f"generation: {n}/20" for n in range(2, 20, 2)] + ["generation: 20"], lines


def test_a_trial_too_small_to_show_a_vibe_says_so(tmp_path: Path) -> None:
    """A `--limit 5` trial leaves two or three test pairs, on which no vibe can be confirmed however strongly the
    answers differ: the headline says that those pairs could show nothing, and how many test pairs a typical
    vibe needs, instead of reading as "no difference". Here the family holds two claims (the vibe's sign test and
    a coefficient), so the test faces α = 0.025: 90 pairs all leaning one way detect a separability of 0.3 with
    80% power (69 at α = 0.05, 101 at 0.05 / 3)."""
    rows = [{"id": f"p{i}", "q": f"q{i}", "a": "Short.", "b": "A much, much longer answer " * 9} for i in range(40)]
    recorded(tmp_path, rows)
    done = vibe(tmp_path, "run", "spec.yaml", "--limit", "5")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "runs" / "keys-limit5" / "index.html").read_text(encoding="utf-8")
    assert "No vibe separates a from b" in page
    assert "3 test pairs cannot show any vibe at that level, however far they lean; a typical vibe (separability " \
           "0.3) needs about 90 test pairs." in page


THREE_MODELS = """\
name: three
models: {a: {provider: recorded}, b: {provider: recorded}, c: {provider: recorded}}
judges: {m: {kind: metric}}
vibes: [{name: wordy, low: few words, high: many words, metric: length_words}]
datasets:
  d:
    source: {path: data.jsonl}
    fields: {id: id, prompt: q, outputs: {a: a, b: b, c: c}}
analyses:
  ab: {method: vibecheck, dataset: d, models: [a, b], judges: [m]}
  vs-c: {method: vibecheck, dataset: d, models: [a, b, c], reference: c, judges: [m]}
"""


def test_an_empty_answer_leaves_out_only_the_comparisons_it_is_in(tmp_path: Path) -> None:
    """Three models on eight prompts; c's answer to p2 is empty. p2 was dropped whole, taking a and b's
    comparison with it: now only c is left out of p2, and the console says what was kept. A row left with one
    answer (p5: b's and c's empty) is still left out whole. So a vs b compares seven prompts, p2 among them,
    and a vs c six."""
    rows = [{"id": f"p{i}", "q": f"q{i}", "a": "short", "b": "a longer answer " * (i + 1), "c": "mid size"}
            for i in range(8)]
    rows[2]["c"] = ""
    rows[5]["b"] = rows[5]["c"] = " "
    recorded(tmp_path, rows, THREE_MODELS)
    done = vibe(tmp_path, "run", "spec.yaml", "--no-report", "--quiet")  # --quiet hides progress, not data left out
    assert done.returncode == 0, done.stderr
    assert ("data.jsonl:3: c's answer is empty: left out of this prompt's comparisons (the other 2 answers kept)"
            in done.stderr), done.stderr
    assert "data.jsonl:6: b, c's answer is empty" in done.stderr
    run = tmp_path / "runs" / "three"
    ab = [json.loads(line)["item_id"] for line in (run / "ab" / "pairs.jsonl").read_text().splitlines()]
    ac = [json.loads(line)["item_id"] for line in (run / "vs-c" / "a" / "pairs.jsonl").read_text().splitlines()]
    assert sorted(ab) == [f"p{i}" for i in range(8) if i != 5] and sorted(ac) == [f"p{i}" for i in (0, 1, 3, 4, 6, 7)]


def test_a_second_run_into_a_folder_being_written_is_refused_naming_the_holder(tmp_path: Path) -> None:
    """Two runs of one spec at once wrote the same folder together. While one process holds the folder, a
    `vibe run` into it stops before any work, saying which process holds it; once released, it runs."""
    import os

    from engine.run_lock import holding

    recorded(tmp_path, [{"id": f"p{i}", "q": f"q{i}", "a": "short", "b": "longer answer"} for i in range(4)])
    with holding(tmp_path / "out"):
        done = vibe(tmp_path, "run", "spec.yaml", "--no-report", "--out", "out")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"is being written by another vibe run (pid {os.getpid()} on " in done.stderr, done.stderr
    assert not (tmp_path / "out" / "manifest.json").exists()
    again = vibe(tmp_path, "run", "spec.yaml", "--no-report", "--out", "out")
    assert again.returncode == 0, again.stderr
