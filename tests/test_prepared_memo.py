"""A compiled plan kept between commands (`engine.prepared_memo`): read back while every input is as it was,
compiled afresh when a file it read, an environment variable it read or the code changes. The suite turns the
memo off elsewhere (`conftest.py`), since tests patch code in-process; these turn it on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_plan import SPEC, write_spec

from engine import pipeline, prepared_memo
from engine.records import Prepared

ROOT = Path(__file__).parent.parent


@pytest.fixture(autouse=True)
def memo_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(prepared_memo.OFF, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))


def counting(spec: Path, limit: int | None = None) -> tuple[Callable[[], Prepared], list[int]]:
    calls: list[int] = []

    def compute() -> Prepared:
        calls.append(1)
        return pipeline._compiled(spec, limit)

    return compute, calls


def test_an_unchanged_spec_is_read_back_and_a_changed_file_compiles_again(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    compute, calls = counting(spec)
    first = prepared_memo.prepared(spec, None, compute)
    again = prepared_memo.prepared(spec, None, compute)
    assert calls == [1]
    assert again.plan.to_json() == first.plan.to_json() and again.spec.document == first.spec.document
    with (tmp_path / "data.jsonl").open("a") as fh:  # one more prompt: the data file was read, so it is an input
        fh.write(json.dumps({"id": "p9", "q": "a new question " + "x" * 28}) + "\n")
    grown = prepared_memo.prepared(spec, None, compute)
    assert calls == [1, 1] and len(grown.items["d"]) == len(first.items["d"]) + 1
    spec.write_text(SPEC.replace("humor", "wit"))  # the spec itself
    renamed = prepared_memo.prepared(spec, None, compute)
    assert calls == [1, 1, 1] and "wit" in [vibe.name for vibe in renamed.spec.vibes]
    assert prepared_memo.prepared(spec, 2, compute) is not None and calls == [1, 1, 1, 1]  # another --limit


def test_an_environment_variable_it_read_is_an_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_spec(tmp_path)
    (tmp_path / "other.jsonl").write_text(json.dumps({"id": "o1", "q": "elsewhere " + "x" * 30}) + "\n")
    spec = tmp_path / "env.yaml"
    spec.write_text(SPEC.replace("path: data.jsonl", 'path: "${VIBE_TEST_DATA}"'))
    monkeypatch.setenv("VIBE_TEST_DATA", str(tmp_path / "data.jsonl"))
    compute, calls = counting(spec)
    assert len(prepared_memo.prepared(spec, None, compute).items["d"]) == 3
    monkeypatch.setenv("UNRELATED_VARIABLE", "changed")  # not read: still a hit
    prepared_memo.prepared(spec, None, compute)
    assert calls == [1]
    monkeypatch.setenv("VIBE_TEST_DATA", str(tmp_path / "other.jsonl"))
    assert [item.id for item in prepared_memo.prepared(spec, None, compute).items["d"]] == ["o1"]
    assert calls == [1, 1]


def test_a_change_of_code_compiles_again_and_what_was_said_is_said_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A plug-in module beside the spec stands for any code a plan is compiled with: its file edited (here only
    its time moves on, as an edit or an upgrade moves it) compiles the plan again. Not one of vibe's own modules:
    other tests, in other workers, keep plans on them at the same time."""
    spec = write_spec(tmp_path)
    (tmp_path / "plan_helper_module.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    calls: list[int] = []

    def compute() -> Prepared:
        calls.append(1)
        import plan_helper_module  # noqa: F401  # imported while the plan compiles, as a plug-in's module is

        print("dataset 'd': 1 left out", file=sys.stderr)
        return pipeline._compiled(spec, None)

    prepared_memo.prepared(spec, None, compute)
    prepared_memo.prepared(spec, None, compute)
    assert calls == [1] and capsys.readouterr().err == "dataset 'd': 1 left out\n" * 2
    helper = tmp_path / "plan_helper_module.py"
    stat = helper.stat()
    os.utime(helper, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    prepared_memo.prepared(spec, None, compute)
    assert calls == [1, 1]
    sys.modules.pop("plan_helper_module", None)  # no other test keeps a plan on it


def test_a_kept_plan_that_cannot_be_read_is_compiled_again(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    compute, calls = counting(spec)
    prepared_memo.prepared(spec, None, compute)
    for kept in (tmp_path / "user-cache" / "vibe" / prepared_memo.KIND).glob("*.pickle"):
        kept.write_bytes(b"not a pickle")
    assert prepared_memo.prepared(spec, None, compute).plan.tasks and calls == [1, 1]


def test_vibe_plan_twice_prints_the_same_plan_the_second_time_from_the_kept_one(tmp_path: Path) -> None:
    spec = write_spec(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != prepared_memo.OFF}
    env["XDG_CACHE_HOME"] = str(tmp_path / "user-cache")

    def plan() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "engine", "--timings", "plan", str(spec), "--cache",
                               str(tmp_path / "cache.sqlite")], capture_output=True, text=True, cwd=ROOT, env=env,
                              check=True)

    first, second = plan(), plan()
    assert first.stdout == second.stdout and "plan for priced" in first.stdout
    assert "compile the plan" in first.stderr and "read the plan kept" not in first.stderr
    assert "read the plan kept from the last command" in second.stderr and "compile the plan" not in second.stderr


def test_a_folder_it_listed_is_an_input(tmp_path: Path) -> None:
    """A folder of logs is read by listing it: a file added there is a new input, though no file the plan read
    changed."""
    folder = tmp_path / "logs"
    (folder / "deep").mkdir(parents=True)
    (folder / "a.jsonl").write_text("{}\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: listed\n")
    calls: list[int] = []

    def compute() -> list[str]:
        calls.append(1)
        return sorted(str(p.relative_to(folder)) for p in folder.rglob("*.jsonl"))

    assert prepared_memo.prepared(spec, None, compute) == ["a.jsonl"]
    assert prepared_memo.prepared(spec, None, compute) == ["a.jsonl"] and calls == [1]
    (folder / "deep" / "b.jsonl").write_text("{}\n")  # in a folder below: its listing changed
    assert prepared_memo.prepared(spec, None, compute) == ["a.jsonl", "deep/b.jsonl"] and calls == [1, 1]


def test_the_user_cache_keeps_its_most_recently_used_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept plan per spec path (a benchmark's temporary folder makes a new one each run): a kind holds at most
    KEEP_FILES files and KEEP_BYTES bytes, and what was read last is removed last."""
    from engine import user_cache

    monkeypatch.setattr(user_cache, "KEEP_FILES", 3)
    monkeypatch.setattr(user_cache, "KEEP_BYTES", 250)
    kind = user_cache.folder() / "prepared"
    for n in range(3):
        user_cache.write_bytes("prepared", f"p{n}", b"x" * 50)
        os.utime(kind / f"p{n}", ns=(n * 10**9, n * 10**9))  # written one second apart
    assert user_cache.read_bytes("prepared", "p0") == b"x" * 50  # read: now the most recently used
    user_cache.write_bytes("prepared", "p3", b"x" * 50)
    assert sorted(p.name for p in kind.iterdir()) == ["p0", "p2", "p3"]  # the fourth file: p1, least used, goes
    user_cache.write_bytes("prepared", "p4", b"x" * 200)
    assert sorted(p.name for p in kind.iterdir()) == ["p3", "p4"]  # p4, p3 and p0 hold 300 bytes: over 250


def test_a_view_of_the_plan_is_read_back_on_its_own_and_worked_out_again_with_it(tmp_path: Path) -> None:
    """What a command shows of a plan (its outline) is kept beside the plan and read back without it while the
    plan's inputs hold; a data row added makes both anew."""
    spec = write_spec(tmp_path)
    compute, calls = counting(spec)
    views: list[int] = []

    def tasks(prepared: Prepared) -> list[str]:
        views.append(1)
        return [t.id for t in prepared.plan.tasks]

    first = prepared_memo.view(spec, None, compute, tasks, "ids")
    assert prepared_memo.view(spec, None, compute, tasks, "ids") == first and calls == [1] and views == [1]
    with (tmp_path / "data.jsonl").open("a") as fh:
        fh.write(json.dumps({"id": "p9", "q": "a new question " + "x" * 28}) + "\n")
    grown = prepared_memo.view(spec, None, compute, tasks, "ids")
    assert len(grown) > len(first) and calls == [1, 1] and views == [1, 1]
    assert prepared_memo.view(spec, None, compute, tasks, "ids") == grown and views == [1, 1]


def test_only_the_compiling_threads_reads_are_inputs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A server or a cluster left running in the process reads files and the environment as it pleases: its
    reads, even of the whole environment, are not the compilation's inputs (they had made a plan depend on every
    variable)."""
    import threading

    from engine import recorded_reads

    monkeypatch.setenv("VIBE_READ_HERE", "1")
    (tmp_path / "here.txt").write_text("read by the compilation")
    (tmp_path / "there.txt").write_text("read by a server")
    with recorded_reads.recorded(this_thread=True) as reads:
        elsewhere = threading.Thread(target=lambda: (dict(os.environ), os.environ.get("VIBE_READ_THERE"),
                                                     (tmp_path / "there.txt").read_text()))
        elsewhere.start()
        elsewhere.join()
        os.environ.get("VIBE_READ_HERE")
        (tmp_path / "here.txt").read_text()
    assert reads.env == {"VIBE_READ_HERE"} and not reads.whole_env
    assert list(reads.consulted()) == [str(tmp_path / "here.txt")]
