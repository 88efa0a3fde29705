"""Plan compilation: determinism, hash stability, de-duplication, estimates, `extends` merge, and the diff."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from engine.diff import diff_plans, to_markdown
from engine.pipeline import prepare
from engine.plan import estimate_tokens
from engine.plan_view import outline_of
from engine.records import Plan, Task, content_hash
from engine.spec.load import load_document

ROOT = Path(__file__).parent.parent
DEFAULT_SPEC = "vibe:smollm2-terse-vs-chatty"

SPEC = """\
name: priced
models:
  a:
    provider: openai
    model: gpt-4o-mini
    params: {max_tokens: 100}
    price: {input: 1.0, output: 2.0}
  b:
    provider: anthropic
    model: claude-3-5-haiku
    params: {max_tokens: 50}
    price: {input: 10.0, output: 20.0}
judges:
  j:
    kind: llm
    provider: openai
    model: gpt-4o-mini
    params: {max_tokens: 10}
    price: {input: 1.0, output: 1.0}
datasets:
  d:
    source: {path: data.jsonl}
    fields: {id: id, prompt: q}
vibes:
  - {name: verbosity, low: brief answers, high: long answers}
  - {name: humor, low: serious tone, high: jokes and playfulness}
analyses:
  vibecheck:
    dataset: d
    models: [a, b]
    judges: [j]
"""


def write_spec(tmp_path: Path, text: str = SPEC, name: str = "spec.yaml") -> Path:
    rows = (json.dumps({"id": f"p{i}", "q": f"question {i:02d} " + "x" * 28}) for i in range(3))
    (tmp_path / "data.jsonl").write_text("".join(row + "\n" for row in rows))
    path = tmp_path / name
    path.write_text(text)
    return path


def test_same_spec_gives_byte_identical_plan(tmp_path: Path) -> None:
    path = write_spec(tmp_path)
    first, second = prepare(path).plan.to_json(), prepare(path).plan.to_json()
    assert first == second
    assert Plan.from_json(first).to_json() == first


def test_hash_is_canonical_and_pinned() -> None:
    # Key order must not matter, and the function must not drift: cached results depend on it.
    assert content_hash({"b": 1, "a": [1, "é"]}) == content_hash({"a": [1, "é"], "b": 1})
    assert content_hash({"a": 1}) == "015abd7f5cc57a2dd94b7590f04ad808"


def test_a_plan_compiled_again_takes_earlier_generations_ids_only_for_the_same_request(tmp_path: Path) -> None:
    """Discovery compiles the plan a second time from the same items: a generation whose request is the one an
    earlier plan holds keeps that plan's id rather than being hashed again. Marked ids show which were taken:
    all of them for the same requests, none where a number changed type (JSON writes 100 and 100.0 apart, so
    their hashes differ, though 100 == 100.0); and a plan compiled with the real earlier plan is the plan."""
    from dataclasses import replace

    from engine.planner import compile_plan

    prepared = prepare(write_spec(tmp_path))
    plan = prepared.plan
    generations = [t for t in plan.tasks if t.stage == "generation"]
    marked = {t.id: f"{n:032d}" for n, t in enumerate(generations)}
    earlier = replace(plan, tasks=[replace(t, id=marked[t.id]) for t in generations])
    again = compile_plan(prepared.spec, prepared.items, earlier=earlier)
    assert sorted(t.id for t in again.tasks if t.stage == "generation") == sorted(marked.values())

    def as_float(task: Task) -> Task:
        request = json.loads(json.dumps(task.request))
        request["params"]["max_tokens"] = float(request["params"]["max_tokens"])
        return replace(task, id=marked[task.id], request=request)

    retyped = compile_plan(prepared.spec, prepared.items, earlier=replace(plan, tasks=list(map(as_float, generations))))
    assert {t.id for t in retyped.tasks} == {t.id for t in plan.tasks}
    assert compile_plan(prepared.spec, prepared.items, earlier=plan).to_json() == plan.to_json()


def test_identical_requests_share_one_task_and_stay_bound(tmp_path: Path) -> None:
    path = write_spec(tmp_path)
    (tmp_path / "data.jsonl").write_text('{"id": "p0", "q": "same"}\n{"id": "p1", "q": "same"}\n')
    plan = prepare(path).plan
    assert sum(t.stage == "generation" for t in plan.tasks) == 2  # one per model, not per item
    bindings = plan.bindings["vibecheck"]
    assert [b.item for b in bindings] == ["p0", "p1"]
    assert bindings[0].outputs == bindings[1].outputs


def test_task_counts_and_estimates(tmp_path: Path) -> None:
    plan = prepare(write_spec(tmp_path)).plan
    stages = [t.stage for t in plan.tasks]
    # 3 items x 2 models; 3 items x 2 vibes x 1 judge x 2 orders
    assert stages.count("generation") == 6 and stages.count("judge") == 12
    gen_a = next(t for t in plan.tasks if t.endpoint == "a")
    assert gen_a.input_tokens == estimate_tokens(json.dumps("x" * 40)) == 11
    assert gen_a.output_tokens == 100
    assert abs(gen_a.cost - (11 * 1.0 + 100 * 2.0) / 1e6) < 1e-12
    judge = next(t for t in plan.tasks if t.stage == "judge")
    assert judge.output_tokens == 10
    assert set(judge.depends_on) <= {t.id for t in plan.tasks if t.stage == "generation"}
    orders = {t.request["order"] for t in plan.tasks if t.stage == "judge"}
    assert orders == {"ab", "ba"}


def test_changing_one_model_changes_only_its_tasks_and_judgments(tmp_path: Path) -> None:
    base = prepare(write_spec(tmp_path)).plan
    changed = prepare(write_spec(tmp_path, SPEC.replace("max_tokens: 50", "max_tokens: 60"))).plan
    base_ids = {t.id: t for t in base.tasks}
    new_only = [t for t in changed.tasks if t.id not in base_ids]
    # b's 3 generations change, and so does every judgment that reads one of them (all 12)
    assert sorted({(t.stage, t.endpoint) for t in new_only}) == [("generation", "b"), ("judge", "j")]
    assert sum(t.stage == "generation" for t in new_only) == 3
    assert all(t.id in base_ids for t in changed.tasks if t.endpoint == "a")


def test_extends_deep_merges_and_child_wins(tmp_path: Path) -> None:
    write_spec(tmp_path, name="base.yaml")
    child = tmp_path / "child.yaml"
    child.write_text("name: child\nextends: base.yaml\nmodels:\n  b:\n    params: {max_tokens: 7}\n"
                     "vibes:\n  - {name: humor, low: dry and serious, high: joking}\n"
                     "  - {name: warmth, low: cold tone, high: warm tone}\n")
    doc, _ = load_document(child)
    assert doc["name"] == "child"
    assert doc["models"]["b"] == {"provider": "anthropic", "model": "claude-3-5-haiku", "params": {"max_tokens": 7},
                                  "price": {"input": 10.0, "output": 20.0}}
    assert [v["name"] for v in doc["vibes"]] == ["verbosity", "humor", "warmth"]
    assert doc["vibes"][1]["low"] == "dry and serious"
    assert "j" in doc["judges"]
    child.write_text(child.read_text() + "judges: {j: null}\n")
    assert "j" not in load_document(child)[0]["judges"]  # null removes an inherited entry
    assert "extends" not in doc


def test_extends_from_another_folder_keeps_data_paths(tmp_path: Path) -> None:
    write_spec(tmp_path, name="base.yaml")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "child.yaml").write_text("name: child\nextends: ../base.yaml\n")
    prepared = prepare(tmp_path / "sub" / "child.yaml")
    assert len(prepared.items["d"]) == 3


def test_diff_markdown_on_real_specs(tmp_path: Path) -> None:
    base_path = write_spec(tmp_path, name="base.yaml")
    new_text = (SPEC.replace("max_tokens: 50", "max_tokens: 60")
                .replace("  - {name: humor, low: serious tone, high: jokes and playfulness}\n",
                         "  - {name: caution, low: bold claims, high: careful caveats}\n"))
    new_path = write_spec(tmp_path, new_text, name="new.yaml")
    base, new = prepare(base_path), prepare(new_path)
    markdown = to_markdown(diff_plans(base.spec.document, outline_of(base), new.spec.document, outline_of(new)),
                           "base.yaml", "new.yaml")
    assert "- changed: `b (params.max_tokens)`" in markdown
    assert "- added: `caution`" in markdown and "- removed: `humor`" in markdown
    # generation: b's 3 re-run; judge: all 6 caution tasks and the 6 verbosity ones that read b's outputs
    assert "| generation | 3 | 3 | 3 |" in markdown
    assert "| judge | 12 | 12 | 0 |" in markdown
    added = [t for t in new.plan.tasks if t.id not in {b.id for b in base.plan.tasks}]
    assert f"costs at most ${sum(t.cost for t in added):,.2f}" in markdown


def test_diff_against_git_revision(tmp_path: Path) -> None:
    path = write_spec(tmp_path)
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=tmp_path, check=True)
    path.write_text(SPEC.replace("max_tokens: 10", "max_tokens: 20"))
    out = subprocess.run([sys.executable, "-m", "engine", "diff", "--git", "HEAD", str(path)], cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "- changed: `j (params.max_tokens)`" in out.stdout
    assert "| judge | 12 | 12 | 0 |" in out.stdout
    assert not list(tmp_path.glob(".spec@*")), "temporary base spec left behind"


def test_plan_cli_writes_json_and_table(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "engine", "plan", str(DEFAULT_SPEC), "--json",
                          str(tmp_path / "plan.json"), "--cache", str(tmp_path / "none.sqlite")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    plan = Plan.from_json((tmp_path / "plan.json").read_text())
    assert sum(t.stage == "generation" for t in plan.tasks) == 2 * 60  # two models, sixty prompts
    assert "total" in out.stdout and "generation" in out.stdout


def test_separability_samples_get_distinct_seeds(tmp_path: Path) -> None:
    text = SPEC.replace("params: {max_tokens: 100}", "params: {max_tokens: 100, seed: 7}").replace(
        "analyses:\n  vibecheck:\n    dataset: d\n    models: [a, b]\n    judges: [j]\n",
        "analyses:\n  separability: {dataset: d, models: [a, b], samples: 3, temperature: 0.5}\n")
    plan = prepare(write_spec(tmp_path, text)).plan
    seeds = sorted(t.request["params"].get("seed") for t in plan.tasks if t.endpoint == "a" and t.item_id == "p0")
    assert seeds == [7, 8, 9]
    assert {t.request["params"]["temperature"] for t in plan.tasks} == {0.5}
    assert len(plan.bindings["separability"][0].outputs["a"]) == 3


def test_plan_counts_the_work_discovery_will_add(tmp_path: Path) -> None:
    """With discovery on, the judgments of up to max_vibes discovered vibes are estimated beside the exact
    rows: 4 vibes × 3 pairs for the offline panel (one offline judge scores each vibe), 4 × 3 × 2 orders for
    the LLM judge, and the plan says which rows are estimates."""
    from engine.plan_view import summarize

    text = SPEC.replace("judges:\n  j:\n", "judges:\n  m: {kind: metric}\n  e: {kind: embedding}\n  j:\n").replace(
        "  - {name: humor, low: serious tone, high: jokes and playfulness}\n",
        "  - {name: humor, low: serious tone, high: jokes and playfulness}\n  - discover: {max_vibes: 4}\n").replace(
        "    judges: [j]\n", "    judges: [j, m, e]\n")
    rows = {(r["stage"], r["endpoint"]): r for r in summarize(outline_of(prepare(write_spec(tmp_path, text))))}
    assert rows[("judge (estimate)", "offline judges")]["tasks"] == 4 * 3
    assert rows[("judge (estimate)", "j")]["tasks"] == rows[("judge (estimate)", "j")]["calls"] == 4 * 3 * 2
    out = subprocess.run([sys.executable, "-m", "engine", "plan", str(tmp_path / "spec.yaml"), "--cache",
                          str(tmp_path / "none.sqlite")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "judge (estimate)" in out.stdout and "upper bounds" in out.stdout


def test_limit_samples_prompts_and_keeps_their_tasks(tmp_path: Path) -> None:
    """`vibe run --limit N`: a seeded sample of N prompts per dataset, whose tasks are the full plan's tasks
    (same hashes, so a trial's answers are reused by the full run), in a run folder of its own."""
    from engine.pipeline import default_run_dir

    full = prepare(DEFAULT_SPEC)
    trial = prepare(DEFAULT_SPEC, limit=3)
    assert len(trial.items["everyday"]) == 3 and trial.items["everyday"] == prepare(DEFAULT_SPEC, 3).items["everyday"]
    assert {t.id for t in trial.plan.tasks} <= {t.id for t in full.plan.tasks}
    assert default_run_dir(trial.spec, 3) == Path("runs") / "smollm2-terse-vs-chatty-limit3"
    assert default_run_dir(full.spec) == Path("runs") / "smollm2-terse-vs-chatty"
    bad = subprocess.run([sys.executable, "-m", "engine", "run", DEFAULT_SPEC, "--limit", "0"], capture_output=True,
                         text=True, cwd=tmp_path)
    assert bad.returncode == 2 and "'0' is not a positive whole number" in bad.stderr


RECORDED_SPEC = """\
name: recorded
models: {a: {provider: recorded}, b: {provider: recorded}}
judges: {j: {kind: llm, provider: openai, model: gpt-4o-mini, api_key_env: VIBE_TEST_NO_KEY, params: {max_tokens: 10}}}
vibes: [{name: tone, low: flat, high: warm}]
datasets:
  d:
    source: {path: data/answers.jsonl}
    fields: {id: id, prompt: q, outputs: {a: a, b: b}}
analyses:
  vc: {method: vibecheck, dataset: d, models: [a, b], judges: [j]}
"""


def _committed(tmp_path: Path, spec: str, rows: list[dict[str, str]]) -> None:
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "data" / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "spec.yaml").write_text(spec)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=tmp_path, check=True)


def test_diff_against_git_sees_recorded_answers_that_changed(tmp_path: Path) -> None:
    """A commit that edits 3 of 10 recorded answers left the spec as it was: the diff said "No change" and
    called every task unchanged, cached, in a folder with no cache. It now reads the data as it was at the
    revision, names the file that changed, and counts b's 3 answers and their 3 × 2 judgments as added and
    removed."""
    rows = [{"id": f"p{i}", "q": f"q{i}", "a": f"answer a{i}", "b": f"answer b{i}"} for i in range(10)]
    _committed(tmp_path, RECORDED_SPEC, rows)
    for row in rows[:3]:
        row["b"] += " (edited)"
    (tmp_path / "data" / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = subprocess.run([sys.executable, "-m", "engine", "diff", "--git", "HEAD", "spec.yaml"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "the data they read changed (below)" in out.stdout and "**data** changed: `data/answers.jsonl`" in out.stdout
    assert "| generation | 3 | 3 | 17 |" in out.stdout and "| judge | 6 | 6 | 14 |" in out.stdout, out.stdout
    assert "cached" not in out.stdout
    assert not list(tmp_path.glob(".spec@*")) and not list(Path(tempfile.gettempdir()).glob("answers@*.jsonl"))


def test_diff_against_git_locates_a_mistake_in_the_revision(tmp_path: Path) -> None:
    """A spec whose committed revision holds a mapping as a key ended `vibe diff --git` in a traceback; it is
    located at the revision's line, named as the revision, as `vibe validate` locates it today."""
    _committed(tmp_path, RECORDED_SPEC.replace("models: {a: {provider: recorded}, b:",
                                               "models: {a: {provider: recorded}, {b: 1}:"),
               [{"id": "p0", "q": "q", "a": "x", "b": "y"}])
    (tmp_path / "spec.yaml").write_text(RECORDED_SPEC)
    out = subprocess.run([sys.executable, "-m", "engine", "diff", "--git", "HEAD", "spec.yaml"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.startswith("spec.yaml@HEAD:2:"), out.stderr
