"""Every class of spec error, each from a real file, located by file, line and field."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from engine.judges.kinds import kind_of
from engine.spec.load import load_spec
from engine.spec.problems import SpecError

GOOD = """\
name: demo
models:
  a:
    provider: recorded
  b:
    provider: openai
    model: gpt-4o-mini
    api_key_env: OPENAI_API_KEY
judges:
  m:
    kind: metric
    metric: length_words
datasets:
  d:
    source: {path: data.jsonl}
    fields: {prompt: q, outputs: {a: out_a}}
vibes:
  - name: verbosity
    low: short answers
    high: long answers
analyses:
  vibecheck:
    dataset: d
    models: [a, b]
    judges: [m]
"""


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "data.jsonl").write_text('{"q": "hi", "out_a": "hello"}\n')
    return tmp_path


def problems_for(workdir: Path, text: str, name: str = "spec.yaml") -> list[str]:
    path = workdir / name
    path.write_text(textwrap.dedent(text))
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return [str(p) for p in info.value.problems]


def test_good_spec_loads(workdir: Path) -> None:
    (workdir / "spec.yaml").write_text(GOOD)
    spec = load_spec(workdir / "spec.yaml")
    assert spec.models["b"].model == "gpt-4o-mini"
    assert spec.analyses["vibecheck"].method == "vibecheck"


# (replacement applied to GOOD, expected line, expected field, expected message fragment)
CASES = [
    ("name: demo", "name: 'bad name!'", 1, "name", "does not match"),
    ("    judges: [m]\n", "    judges: [m]\nexecution:\n  resources:\n    smollm2: {replicas: 2}\n", 28,
     "execution.resources.smollm2", "no local model has weights 'smollm2'"),
    ("    judges: [m]\n", "    judges: [m]\nexecution: {backend: ray, resources: {x: {num_cpus: 0}}}\n", 26,
     "execution.resources.x.num_cpus", "less than or equal to the minimum of 0"),
    ("    judges: [m]\n", "    judges: [m]\nexecution: {backend: spark}\n", 26, "execution.backend",
     "is not one of"),
    ("    provider: recorded\n  b:", "    provider: vllm\n    base_url: http://x\n  b:", 5, "models.a.base_url",
     "provider: openai-compatible"),
    ("    provider: recorded\n  b:", "    provider: recordd\n  b:", 4, "models.a.provider", "is not one of"),
    ("    model: gpt-4o-mini\n", "    model: gpt-4o-mini\n    temprature: 0.2\n", 8, "models.b.temprature",
     "unknown field 'temprature'"),
    ("    api_key_env: OPENAI_API_KEY\n", "    api_key_env: OPENAI_API_KEY\n    params: {temperature: 3}\n", 9,
     "models.b.params.temperature", "maximum"),
    ("    api_key_env: OPENAI_API_KEY\n", "    api_key_env: OPENAI_API_KEY\n    params: {max_tokens: 0}\n", 9,
     "models.b.params.max_tokens", "minimum"),
    ("    api_key_env: OPENAI_API_KEY", "    api_key_env: lower_case", 8, "models.b.api_key_env",
     "takes the name of an environment variable"),
    ("    model: gpt-4o-mini\n", "", 5, "models.b", "'model' is required"),
    ("    provider: openai\n", "    provider: openai-compatible\n", 5, "models.b", "'base_url' is required"),
    ("name: demo\n", "name: demo\npersonas:\n  novice: {description: a beginner programmer}\n", 3, "personas.novice",
     "give 'dimensions'"),
    ("    provider: recorded\n  b:", "    provider: recorded\n    api_key_env: KEY\n  b:", 5, "models.a.api_key_env",
     "takes no API key"),
    ("    metric: length_words", "    metric: lenght", 12, "judges.m.metric", "unknown metric 'lenght'"),
    ("    kind: metric", "    kind: oracle", 11, "judges.m.kind", "is not one of"),
    ("{path: data.jsonl}", "{path: missing.jsonl}", 15, "datasets.d.source.path", "file not found"),
    ("    source: {path: data.jsonl}\n", "    source: {path: data.jsonl}\n    format: long\n", 17,
     "datasets.d.fields", "format: long needs fields.answer"),
    ("    source: {path: data.jsonl}\n", "    source: {path: data.jsonl}\n    format: long\n", 17,
     "datasets.d.fields.outputs", "fields.outputs is read by format: wide, not long"),
    ("{prompt: q, outputs: {a: out_a}}", "{prompt: q, model: m, outputs: {a: out_a}}", 16, "datasets.d.fields.model",
     "fields.model is read by format: long"),
    ("name: demo\n", "name: demo\nextends: vibe:offline-panle\n", 2, "extends",
     "no packaged spec 'vibe:offline-panle' (did you mean 'vibe:offline-panel'?)"),
    ("fields: {prompt: q, outputs: {a: out_a}}", "fields: {question: q}", 16, "datasets.d.fields.question",
     "unknown field 'question'"),
    ("outputs: {a: out_a}", "outputs: {a: out_a, c: out_c}", 16, "datasets.d.fields.outputs.c", "unknown model 'c'"),
    ("    low: short answers\n", "", 18, "vibes[0]", "'low' is required"),
    ("    high: long answers\n", "    high: long answers\n  - name: verbosity\n    low: terse\n    high: wordy\n",
     21, "vibes[1].name", "duplicate vibe 'verbosity'"),
    ("    dataset: d", "    dataset: dd", 23, "analyses.vibecheck.dataset", "unknown dataset 'dd'"),
    ("    models: [a, b]", "    models: [a, z]", 24, "analyses.vibecheck.models[1]", "unknown model 'z'"),
    ("    models: [a, b]", "    models: [a]", 24, "analyses.vibecheck.models", "at least 2 models"),
    ("    judges: [m]", "    judges: [m, gpt5]", 25, "analyses.vibecheck.judges[1]", "unknown judge 'gpt5'"),
    ("    judges: [m]", "    judges: [m]\n    split: {train: 1.5}", 26, "analyses.vibecheck.split.train",
     "maximum"),
    ("outputs: {a: out_a}", "outputs: {b: out_b}", 24, "analyses.vibecheck.models[0]",
     "recorded but dataset 'd' maps no output column"),
    ("analyses:\n  vibecheck:", "analyses:\n  compare:", 22, "analyses.compare", "missing 'method'"),
    ("  vibecheck:\n    dataset: d", "  vibecheck:\n    method: vibes\n    dataset: d", 23,
     "analyses.vibecheck.method", "is not one of"),
    ("name: demo\n", "name: demo\nmodel: {}\n", 2, "model", "unknown field 'model'"),
    ("vibes:\n", "vibes:\n  - discover: {method: llm}\n", 18, "vibes[0].discover", "needs a 'proposer'"),
    ("vibes:\n", "vibes:\n  - discover: {method: llm, proposer: m}\n", 18, "vibes[0].discover.proposer",
     "judge 'm' is a metric judge (kind: metric), which cannot read answers and write free text"),
    ("    kind: metric\n    metric: length_words\n", "    kind: metric\n", 17, "vibes[0]",
     "no judge of analysis 'vibecheck' can score vibe 'verbosity'"),
    ("analyses:\n  vibecheck:", "analyses:\n  charts:\n    method: vibecheck", 22, "analyses.charts",
     "is a folder of the report"),
    ("analyses:\n  vibecheck:", "analyses:\n  explore:\n    method: vibecheck", 22, "analyses.explore",
     "is a folder of the report (charts, assets, explore, profiles, vibes)"),  # a folder the method declares
    ("name: demo\n", "name: demo\npersonas:\n  novice: {dimensions: {clarity: 5}}\n", 3, "personas.novice",
     "needs a 'description'"),
    ("name: demo\n", "name: demo\npersonas:\n  novice:\n    description: a beginner\n    dimensions: {clarity: 5}\n"
     "    prefers: {lenght: high}\n", 6, "personas.novice.prefers.lenght", "unknown metric 'lenght'"),
    ("    judges: [m]", "    judges: [m]\n  ref:\n    method: reference\n    dataset: d\n    models: [a]\n"
     "    judge: m", 30, "analyses.ref.judge",
     "which cannot rate one answer against the dataset's reference answer; kinds that can: llm, reference_similarity"),
    ("    high: long answers\n",
     "    high: long answers\n    metric: length_words\n    examples: {low: [a], high: [b]}\n", 22,
     "vibes[0].examples", "give one or the other"),
    ("    high: long answers\n", "    high: long answers\n    examples: {high: [a long answer]}\n", 21,
     "vibes[0].examples", "'low' is required"),
    # judge kinds come from the registry: an unknown one, a field its kind does not take, a job it cannot do
    ("    kind: metric\n    metric: length_words\n", "    kind: metrc\n", 11, "judges.m.kind",
     "(did you mean 'metric'?)"),
    ("    metric: length_words\n", "    metric: length_words\n    margin: 0.1\n", 13, "judges.m.margin",
     "a metric judge (kind: metric) takes no 'margin' (it takes: metric, tolerance)"),
    ("    kind: metric\n    metric: length_words\n", "    kind: unit_tests\n", 24, "analyses.vibecheck.judges[0]",
     "judge 'm' is a unit-test judge (kind: unit_tests), which cannot score a pair of answers on a vibe; kinds "
     "that can: llm, metric, embedding_axis"),
    ("    kind: metric\n    metric: length_words\n", "    kind: reference_similarity\n", 17, "vibes[0]",
     "no judge of analysis 'vibecheck' can score vibe 'verbosity'"),
    # a method's own checks (`AnalysisMethod.check`), located like the rest
    ("    judges: [m]", "    judges: [m]\n    reference: c", 26, "analyses.vibecheck.reference",
     "reference 'c' is not one of the analysis' models"),
    ("    judges: [m]", "    judges: [m]\n    reference: a\n    validation:\n      columns: [{vibe: verbosity, "
     "column: v}]", 28, "analyses.vibecheck.validation.columns", "give the labels in files that name each label's"),
    # a typo in a closed set gets the near name
    ("name: demo\n", "name: demo\npersonas:\n  novice:\n    description: a beginner\n    dimensions: {clarty: 5}\n",
     5, "personas.novice.dimensions.clarty", "unknown dimension 'clarty' (did you mean 'clarity'?)"),
    ("    metric: length_words\n", "    metric: lenght_words\n", 12, "judges.m.metric",
     "(did you mean 'length_words'?)"),
    ("  vibecheck:\n    dataset: d", "  vibecheck:\n    method: vibecheks\n    dataset: d", 23,
     "analyses.vibecheck.method", "(did you mean 'vibecheck'?)"),
    ("analyses:\n  vibecheck:", "analyses:\n  vibechek:", 22, "analyses.vibechek",
     "(did you mean 'vibecheck'?)"),
    ("    judges: [m]", "    judges: [m]\n  sep:\n    method: separability\n    dataset: d\n    models: [b, b]\n"
     "    similarity: bertscore_length", 30, "analyses.sep.similarity",
     "(did you mean 'bertscore_length_adjusted'?)"),
    ("    judges: [m]", "    judges: [m]\n    preference_judges: [mm]", 26, "analyses.vibecheck.preference_judges[0]",
     "unknown judge 'mm' (did you mean 'm'?)"),
    ("    provider: recorded\n", "    provider: recordd\n", 4, "models.a.provider", "(did you mean 'recorded'?)"),
    ("    fields: {prompt: q,", "    feilds: {prompt: q,", 16, "datasets.d.feilds", "(did you mean 'fields'?)"),
    ("    judges: [m]", "    judges: [m]\n    vibes: [verbosty]", 26, "analyses.vibecheck.vibes[0]",
     "unknown vibe 'verbosty' (did you mean 'verbosity'?)"),
]


@pytest.mark.parametrize(("old", "new", "line", "field", "message"), CASES,
                         ids=[f"{c[3]}:{c[4][:20]}" for c in CASES])
def test_bad_spec(workdir: Path, old: str, new: str, line: int, field: str, message: str) -> None:
    assert old in GOOD
    found = problems_for(workdir, GOOD.replace(old, new, 1))
    expected_prefix = f"{workdir / 'spec.yaml'}:{line}:"
    matching = [p for p in found if p.startswith(expected_prefix) and f": {field}: " in p and message in p]
    assert matching, f"wanted line {line} {field} '{message}', got:\n" + "\n".join(found)




def test_no_suggestion_for_a_name_unlike_any(workdir: Path) -> None:
    found = problems_for(workdir, GOOD.replace("    metric: length_words\n", "    metric: zzzzzz\n"))
    assert found and "did you mean" not in found[0]


def test_duplicate_key_names_both_lines(workdir: Path) -> None:
    found = problems_for(workdir, GOOD.replace("    metric: length_words\n",
                                               "    metric: length_words\n    metric: hedging\n"))
    assert found == [f"{workdir / 'spec.yaml'}:13:5: judges.m.metric: duplicate key 'metric' "
                     "(first defined at line 12)"]


def test_yaml_syntax_error_is_located(workdir: Path) -> None:
    found = problems_for(workdir, "name: demo\nmodels: {a: [1, 2}\n")
    assert len(found) == 1 and found[0].startswith(f"{workdir / 'spec.yaml'}:2:") and "YAML syntax" in found[0]


def test_python_object_tag_refused(workdir: Path) -> None:
    found = problems_for(workdir, "name: !!python/object/apply:os.system ['echo pwned']\n")
    assert "unsupported YAML value" in found[0] and ":1:" in found[0]


def test_alias_bomb_refused_quickly(workdir: Path) -> None:
    """Nine levels of ten aliases each expand to 10^10 nodes: a loader that expanded them would run for hours.
    The bound is loose (30 s) so that a machine busy with the suite's other workers does not fail it; the bug it
    guards misses it by orders of magnitude."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    start = time.perf_counter()
    found = problems_for(workdir, "\n".join(lines) + "\nname: demo\n")
    assert time.perf_counter() - start < 30.0
    assert "alias bomb" in found[0]


def test_all_problems_reported_not_just_first(workdir: Path) -> None:
    text = GOOD.replace("    dataset: d", "    dataset: dd").replace("    judges: [m]", "    judges: [x]")
    found = problems_for(workdir, text)
    assert any("unknown dataset 'dd'" in p for p in found)
    assert any("unknown judge 'x'" in p for p in found)


def test_error_in_base_spec_points_at_base_file(workdir: Path) -> None:
    (workdir / "base.yaml").write_text(GOOD.replace("    metric: length_words", "    metric: nope"))
    found = problems_for(workdir, "name: child\nextends: base.yaml\n", name="child.yaml")
    assert found == [f"{workdir / 'base.yaml'}:12:13: judges.m.metric: unknown metric 'nope' (known: auto, "
                     + found[0].split("(known: auto, ")[1]]


def test_error_deep_in_an_extends_chain_points_where_it_is_written(workdir: Path) -> None:
    """Vibes merge by name, so a vibe's index in the merged list is not its index in any file."""
    (workdir / "base.yaml").write_text(GOOD.replace("""  - name: verbosity
    low: short answers
    high: long answers
""", """  - name: humor
    low: dry
    high: jokes
  - name: verbosity
    low: short answers
    high: long answers
    metric: words_per_sentnce
"""))
    (workdir / "middle.yaml").write_text(
        "name: middle\nextends: base.yaml\nvibes:\n  - name: formality\n    low: casual\n    high: formal\n"
        "  - name: humor\n    high: [not, text]\n")
    found = problems_for(workdir, "name: child\nextends: middle.yaml\nvibes:\n  - name: tone\n    low: flat\n"
                         "    high: warm\n", name="child.yaml")
    # the merged list is humor, verbosity, formality, tone; the bad metric is written in base.yaml line 24,
    # the bad `high` in middle.yaml line 8
    assert any(p.startswith(f"{workdir / 'middle.yaml'}:8:11: vibes[0].high: ") for p in found), found
    assert len(found) == 1
    (workdir / "middle.yaml").write_text("name: middle\nextends: base.yaml\nvibes:\n  - name: formality\n"
                                         "    low: casual\n    high: formal\n")
    found = problems_for(workdir, "name: child\nextends: middle.yaml\n", name="child.yaml")
    assert found[0].startswith(f"{workdir / 'base.yaml'}:24:13: vibes[1].metric: unknown metric "
                               "'words_per_sentnce'"), found


def test_lone_surrogate_escapes_in_a_spec_are_located(workdir: Path) -> None:
    found = problems_for(workdir, GOOD.replace("    low: short answers", '    low: "short \\udc80 answers"'))
    assert found == [f"{workdir / 'spec.yaml'}:19:10: vibes[0].low: holds a lone UTF-16 surrogate escape (such as "
                     "\\ud800 without its pair), which is not text: write the character itself or its full pair"]
    profile = workdir / "p.yaml"
    profile.write_text('description: "I code \\ud800"\noutput_dimensions: {}\n')
    found = problems_for(workdir, GOOD.replace("name: demo\n", "name: demo\npersonas:\n  dev: {profile: p.yaml}\n"))
    assert any(":3:18:" in p and "personas.dev.profile" in p and "lone UTF-16 surrogate" in p for p in found), found


@pytest.mark.parametrize("depth", [80, 5000])
def test_deep_nesting_is_refused_at_its_line(workdir: Path, depth: int) -> None:
    found = problems_for(workdir, "name: demo\ndescription: " + "[" * depth + "x" + "]" * depth + "\n")
    assert len(found) == 1 and found[0].startswith(f"{workdir / 'spec.yaml'}:")
    assert "nested deeper than 64 levels" in found[0] or "nested too deeply to read" in found[0]


def test_control_characters_are_located(workdir: Path) -> None:
    found = problems_for(workdir, "name: demo\ndescription: a\x07b\n")
    assert found == [f"{workdir / 'spec.yaml'}:2:15: <root>: character U+0007 is a control character, which YAML "
                     "does not allow in a file (write it as an escape in a double-quoted string)"]


def test_extends_cycle_rejected(workdir: Path) -> None:
    (workdir / "a.yaml").write_text("name: a\nextends: b.yaml\n")
    (workdir / "b.yaml").write_text("name: b\nextends: a.yaml\n")
    with pytest.raises(SpecError) as info:
        load_spec(workdir / "a.yaml")
    (problem,) = info.value.problems
    assert problem.file.endswith("b.yaml") and problem.line == 2 and problem.field == "extends"
    assert "extends cycle" in problem.message


def test_missing_base_rejected(workdir: Path) -> None:
    found = problems_for(workdir, "name: a\nextends: nowhere.yaml\n")
    assert found[0].startswith(f"{workdir / 'spec.yaml'}:2:1: extends: base spec not found")


def test_cli_validate_exit_codes_and_format(workdir: Path) -> None:
    (workdir / "good.yaml").write_text(GOOD)
    (workdir / "bad.yaml").write_text(GOOD.replace("dataset: d", "dataset: nope"))
    ok = subprocess.run([sys.executable, "-m", "engine", "validate", str(workdir / "good.yaml")],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "valid" in ok.stdout
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    bad = subprocess.run([sys.executable, "-m", "engine", "validate", str(workdir / "good.yaml"),
                          str(workdir / "bad.yaml")], capture_output=True, text=True, env=env)
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr
    problems = [line for line in bad.stderr.splitlines() if not line.startswith("warning: ")]
    assert problems == [f"{workdir / 'bad.yaml'}:23:14: analyses.vibecheck.dataset: unknown dataset 'nope' "
                        "(declared: d)"]
    # good.yaml is valid, but its openai model could not run here: a warning, not a problem
    assert f"warning: {workdir / 'good.yaml'}:8:18: models.b.api_key_env: OPENAI_API_KEY is not set" in bad.stderr


def test_example_specs_validate() -> None:
    specs = sorted(Path(__file__).parent.parent.joinpath("specs").glob("*.yaml"))
    assert len(specs) >= 3
    for spec in specs:
        text = spec.read_text()
        assert text.startswith("# yaml-language-server: $schema=https://vibe-bench.github.io/schema/spec.json"), spec
        load_spec(spec)


def _validate(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine", "validate", str(path)], capture_output=True, text=True)


def test_an_empty_spec_names_its_file(workdir: Path) -> None:
    (workdir / "empty.yaml").write_text("")
    done = _validate(workdir / "empty.yaml")
    assert done.returncode == 2 and f"{workdir / 'empty.yaml'}:1:1: <root>: 'name' is required" in done.stderr


def test_a_tagged_key_is_refused_at_its_line(workdir: Path) -> None:
    (workdir / "tagged.yaml").write_text(GOOD.replace("judges:\n  m:", "judges:\n  !!python/name:os.system x: 1\n  m:"))
    done = _validate(workdir / "tagged.yaml")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{workdir / 'tagged.yaml'}:10:3: judges: unsupported YAML key" in done.stderr


@pytest.mark.parametrize(("data", "where", "message"), [
    (GOOD.encode().replace(b"short answers", b"short \xe9 answers"), ":19:16:", "byte 0xe9 is not UTF-8"),
    ("\ufeff".encode("utf-16-le") + GOOD.encode("utf-16-le"), ":1:1:", "the file is UTF-16"),
])
def test_text_that_is_not_utf8_is_located(workdir: Path, data: bytes, where: str, message: str) -> None:
    (workdir / "latin.yaml").write_bytes(data)
    done = _validate(workdir / "latin.yaml")
    assert done.returncode == 2 and f"latin.yaml{where}" in done.stderr and message in done.stderr


def test_an_unset_variable_without_default_names_itself(workdir: Path) -> None:
    (workdir / "var.yaml").write_text(GOOD.replace("{path: data.jsonl}", '{path: "${VIBE_TEST_UNSET_DIR}/data.jsonl"}'))
    env = {k: v for k, v in os.environ.items() if k != "VIBE_TEST_UNSET_DIR"}
    done = subprocess.run([sys.executable, "-m", "engine", "validate", str(workdir / "var.yaml")],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 2
    assert "var.yaml:15:20: datasets.d.source.path: ${VIBE_TEST_UNSET_DIR} is not set and gives no default" \
        in done.stderr


def test_a_dataset_path_that_is_a_folder_fails_validation(workdir: Path) -> None:
    (workdir / "folder").mkdir()
    (workdir / "dir.yaml").write_text(GOOD.replace("{path: data.jsonl}", "{path: folder}"))
    done = _validate(workdir / "dir.yaml")
    assert done.returncode == 2 and "dir.yaml:15:20: datasets.d.source.path:" in done.stderr
    assert "is a folder; give the data file inside it" in done.stderr
    plan = subprocess.run([sys.executable, "-m", "engine", "plan", str(workdir / "dir.yaml")], capture_output=True,
                          text=True)
    assert plan.returncode == 2 and "Traceback" not in plan.stderr


def test_a_bad_name_is_reported_on_its_own_line(workdir: Path) -> None:
    (workdir / "name.yaml").write_text(GOOD.replace("  b:\n    provider: openai", "  b c:\n    provider: recorded\n"
                                                                                 "  b:\n    provider: openai"))
    done = _validate(workdir / "name.yaml")
    assert done.returncode == 2 and "name.yaml:5:3: models['b c']: invalid name 'b c'" in done.stderr


def test_yaml_11_booleans_stay_names(workdir: Path) -> None:
    text = GOOD.replace("  a:\n    provider: recorded", "  yes:\n    provider: recorded").replace(
        "{a: out_a}", "{yes: out_a}").replace("models: [a, b]", "models: ['yes', b]")
    (workdir / "yes.yaml").write_text(text)
    spec = load_spec(workdir / "yes.yaml")
    assert "yes" in spec.models and spec.analyses["vibecheck"].models == ("yes", "b")


def test_a_pasted_key_is_never_echoed(workdir: Path) -> None:
    secret = "sk-proj-Ab3dE5fG7hJ9kL1mN3pQ5rS7"
    (workdir / "key.yaml").write_text(GOOD.replace("api_key_env: OPENAI_API_KEY", f"api_key_env: {secret}"))
    done = _validate(workdir / "key.yaml")
    assert done.returncode == 2 and secret not in done.stderr + done.stdout
    assert "key.yaml:8:18: models.b.api_key_env: takes the name of an environment variable" in done.stderr
    assert "looks like a key, so it is not shown" in done.stderr


def test_a_lone_surrogate_in_a_row_is_refused_with_its_row_and_field(workdir: Path) -> None:
    (workdir / "data.jsonl").write_text('{"q": "fine \\ud83d\\ude00", "out_a": "ok"}\n'
                                        '{"q": "broken \\ud800 text", "out_a": "ok"}\n')
    (workdir / "spec.yaml").write_text(GOOD)
    done = subprocess.run([sys.executable, "-m", "engine", "plan", str(workdir / "spec.yaml")], capture_output=True,
                          text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{workdir / 'data.jsonl'}:2: field 'q' holds a lone UTF-16 surrogate" in done.stderr


@pytest.mark.parametrize(("name", "content", "where"), [
    ("data.jsonl", b'{"q": "hi", "out_a": "ok"}\n{"q": "caf\xe9", "out_a": "ok"}\n', "data.jsonl:2:11"),
    ("data.csv", b"q,out_a\nhi,ok\nna\xefve,ok\n", "data.csv:3:3"),
    ("data.json", b'[{"q": "hi",\n  "out_a": "\xff"}]', "data.json:2:13"),
])
def test_a_dataset_that_is_not_utf8_is_refused_at_its_line(workdir: Path, name: str, content: bytes,
                                                            where: str) -> None:
    (workdir / name).write_bytes(content)
    (workdir / "spec.yaml").write_text(GOOD.replace("path: data.jsonl", f"path: {name}"))
    done = subprocess.run([sys.executable, "-m", "engine", "plan", str(workdir / "spec.yaml")], capture_output=True,
                          text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{workdir / where}: byte 0x" in done.stderr and "the file must be UTF-8 text" in done.stderr


def test_the_older_embedding_kind_is_read_as_before_with_a_note(workdir: Path) -> None:
    """`kind: embedding` named both offline embedding judges: still valid, and validate names the new kinds."""
    path = workdir / "spec.yaml"
    path.write_text(GOOD.replace("    kind: metric\n    metric: length_words\n", "    kind: embedding\n"))
    spec = load_spec(path)
    assert kind_of(spec.judges["m"]).does("vibe") and kind_of(spec.judges["m"]).does("reference")
    out = subprocess.run([sys.executable, "-m", "engine", "validate", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert (f"warning: {path}:11:11: judges.m.kind: kind 'embedding' is an older name: write `embedding_axis` (to "
            "score a pair of answers on a vibe) or `reference_similarity`") in out.stderr


def test_a_problem_quoting_a_line_break_stays_one_line(workdir: Path) -> None:
    """A message quotes the spec (here a base path holding a form feed): the printed problem is still one line."""
    found = problems_for(workdir, GOOD.replace("name: demo\n", 'name: demo\nextends: "\\f"\n', 1))
    assert found == [f"{workdir / 'spec.yaml'}:2:1: extends: base spec not found: {workdir}/\\x0c"]
    assert all(len(p.splitlines()) == 1 for p in found)


def test_a_mistake_of_ones_own_comes_first_and_its_echoes_in_the_base_are_not_reported(tmp_path: Path) -> None:
    """`judges: [metrics, minlm]` on a spec extending the offline panel: the misspelt judge is the one problem
    (it made the base's tone vibes look unscorable, which was printed first); a panel of the metric judge alone
    gets the way out named: the vibes it can score."""
    body = """\
name: t
extends: vibe:offline-panel
models: {a: {provider: recorded}, b: {provider: recorded}}
datasets:
  d:
    source: {path: d.csv}
    fields: {id: id, prompt: prompt, outputs: {a: a, b: b}}
analyses:
  vc: {method: vibecheck, dataset: d, models: [a, b], judges: JUDGES}
"""
    (tmp_path / "d.csv").write_text("id,prompt,a,b\n1,hi,x,y\n")
    (tmp_path / "spec.yaml").write_text(body.replace("JUDGES", "[metrics, minlm]"))
    with pytest.raises(SpecError) as raised:
        load_spec(tmp_path / "spec.yaml")
    (only,) = raised.value.problems
    assert "unknown judge 'minlm' (did you mean 'minilm'?)" in str(only) and only.file.endswith("spec.yaml")
    (tmp_path / "spec.yaml").write_text(body.replace("JUDGES", "[metrics]"))
    with pytest.raises(SpecError) as raised:
        load_spec(tmp_path / "spec.yaml")
    assert all("name the vibes this analysis measures under analyses.vc.vibes (its panel scores: verbosity, "
               "formatting" in str(p) for p in raised.value.problems)
