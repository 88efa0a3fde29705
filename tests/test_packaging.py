"""vibe as a user installs it: the wheel (not an editable checkout) in a fresh virtual environment, run from an
empty folder outside this repository.

The wheel and the sdist are built from this checkout with setuptools' own build backend; the fresh
environment reaches the dependencies already installed in the project's environment through a path file
(nothing is downloaded), so the only `engine` it can import is the wheel's. Everything a run reads (templates,
the schema, the packaged base and the embedded default with its prompts) must therefore come from the wheel.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import site
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("packaging")]  # the wheel is built once, on one worker


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel, built from a copy of the files git would commit (a build in the checkout would
    leave build folders behind and could pick up stray files)."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("dist")
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.splitlines()
    for name in files:
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    for hook in ("build_sdist", "build_wheel"):  # one process each: setuptools keeps state between the two
        build = f"from setuptools import build_meta as b; import sys; b.{hook}(sys.argv[1])"
        done = subprocess.run([sys.executable, "-c", build, str(out)], cwd=source, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
    return out


@pytest.fixture(scope="session")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], check=True, capture_output=True, text=True).stdout.strip()
    # the dependencies this environment already has; not its editable `engine`, whose finder a .pth line
    # pointing at site-packages does not load
    Path(purelib, "project-deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    (wheel,) = dist.glob("*.whl")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--no-deps",
                    "--no-index", "--disable-pip-version-check", "-q", str(wheel)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv / 'bin'}:{env['PATH']}", HF_HUB_OFFLINE="1")
    yield env


def vibe(env: dict[str, str], cwd: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["vibe", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_wheel_and_sdist_hold_what_runs_read(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = [str(p.relative_to(ROOT)) for p in (ROOT / "engine").glob("**/templates/**/*") if p.is_file()]
    # each method's own folder
    assert "engine/builtin_plugins/methods/vibecheck/templates/sections/vibecheck.html.j2" in templates
    shared = [f"engine/report/templates/{p.name}" for p in (ROOT / "templates").iterdir()]  # the top-level folder
    assert "engine/report/templates/base.html.j2" in shared
    for needed in ("engine/py.typed", "engine/spec/schema.json", *templates, *shared,
                   "engine/builtin/offline-panel.yaml", "engine/builtin/smollm2-terse-vs-chatty.yaml",
                   "engine/builtin/data/everyday-prompts.jsonl"):
        assert needed in names, needed
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = {m.split("/", 1)[1] for m in archive.getnames() if "/" in m}
    assert {"pyproject.toml", "templates/index.html.j2", "engine/builtin/offline-panel.yaml"} <= members


def test_init_validate_run_from_an_empty_folder(installed: dict[str, str], tmp_path: Path) -> None:
    where = subprocess.run(["python", "-c", "import engine; print(engine.__file__)"], env=installed,
                           capture_output=True, text=True, cwd=tmp_path, check=True).stdout
    assert str(ROOT) not in where and "site-packages" in where  # the wheel, not this checkout
    with (tmp_path / "answers.csv").open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["prompt", "model_one", "model_two", "preference"])
        for i in range(24):
            loud = "Great question!! " * (1 + i % 3) + f"Here is a long answer about topic {i}, with details."
            writer.writerow([f"Tell me about topic {i}.", loud, f"Topic {i}: a brief answer.",
                             "model_one" if i % 3 else "model_two"])
    done = vibe(installed, tmp_path, "init", "answers.csv")
    assert done.returncode == 0, done.stderr
    assert vibe(installed, tmp_path, "validate", "vibe.yaml").returncode == 0
    run = vibe(installed, tmp_path, "run", "vibe.yaml", "--quiet")
    assert run.returncode == 0, run.stderr[-3000:]
    out = tmp_path / "runs" / "answers"
    assert (out / "index.html").is_file() and "model_one" in (out / "index.html").read_text()
    assert list((out / "charts").glob("*.svg")) and list((out / "vibes").glob("*.html"))
    assert list((out / "explore").glob("*.html")) and (out / "assets" / "explorer.js").is_file()  # every pair
    assert json.loads((out / "manifest.json").read_text())["tasks"]["done"] > 0
    schema = vibe(installed, tmp_path, "schema", "--write", "schema/spec.json")
    assert schema.returncode == 0 and json.loads((tmp_path / "schema" / "spec.json").read_text())["$id"]


def test_a_spec_extending_the_packaged_base(installed: dict[str, str], tmp_path: Path) -> None:
    rows = [{"id": f"p{i}", "q": f"question {i}", "a": "Sure!! " * (i + 2), "b": f"Answer {i}."} for i in range(12)]
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "mine.yaml").write_text("""\
name: mine
extends: vibe:offline-panel
models: {a: {provider: recorded}, b: {provider: recorded}}
datasets: {d: {source: {path: pairs.jsonl}, fields: {id: id, prompt: q, outputs: {a: a, b: b}}}}
analyses: {vibecheck: {dataset: d, models: [a, b], judges: [metrics], vibes: [verbosity, enthusiasm]}}
""")
    run = vibe(installed, tmp_path, "run", "mine.yaml", "--quiet")
    assert run.returncode == 0, run.stderr[-3000:]
    assert (tmp_path / "runs" / "mine" / "index.html").is_file()
    (tmp_path / "typo.yaml").write_text("name: typo\nextends: vibe:offline-panle\n")
    bad = vibe(installed, tmp_path, "validate", "typo.yaml")
    assert bad.returncode == 2 and "typo.yaml:2:1: extends:" in bad.stderr
    assert "(did you mean 'vibe:offline-panel'?)" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_the_embedded_default_runs_from_the_wheel(installed: dict[str, str], tmp_path: Path) -> None:
    """`vibe init` with no data writes the embedded default; a --limit trial of it generates with llama.cpp."""
    assert vibe(installed, tmp_path, "init").returncode == 0
    run = vibe(installed, tmp_path, "run", "vibe.yaml", "--limit", "4", "--quiet", timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    out = tmp_path / "runs" / "smollm2-terse-vs-chatty-limit4"
    assert (out / "index.html").is_file()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["tasks"]["done"] == manifest["tasks"]["total"] > 0


PLUGIN_PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "vibe-example-plugins"
version = "0.1.0"

[project.entry-points."vibe.judge_kinds"]
exclamations = "vibe_example.judge"

[project.entry-points."vibe.dataset_formats"]
sharegpt = "vibe_example.chat"

[project.entry-points."vibe.analysis_methods"]
word_count = "vibe_example.word_count.method"

[project.entry-points."vibe.providers"]
azure-openai = "vibe_example.azure_info:AZURE"

[tool.setuptools.package-data]
"*" = ["templates/sections/*.j2"]
"""


def test_a_plug_in_package_registers_one_of_each_kind_through_entry_points(installed: dict[str, str],
                                                                           tmp_path: Path) -> None:
    """The guide's four examples as a package of their own, built into a wheel and installed beside vibe's:
    nothing in `engine/` names them. Each is registered through its entry point, the contract suite passes over
    them with the built-in plug-ins, and a run reads the format and uses the judge kind and the method."""
    package = tmp_path / "plugin" / "vibe_example"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for source, target in (("exclamation_judge.py", "judge.py"), ("sharegpt_format.py", "chat.py"),
                           ("azure_provider.py", "azure.py")):
        shutil.copy(ROOT / "tests" / source, package / target)
    shutil.copytree(ROOT / "tests" / "word_count", package / "word_count", ignore=shutil.ignore_patterns("__pycache__"))
    (package / "azure_info.py").write_text(
        "from engine.api.providers import ProviderInfo\n\n"
        "AZURE = ProviderInfo('vibe_example.azure', needs=('base_url', 'model'),\n"
        "                     settings='vibe_example.azure:AzureSettings')\n")
    (tmp_path / "plugin" / "pyproject.toml").write_text(PLUGIN_PYPROJECT)
    wheels = tmp_path / "wheels"
    build = "from setuptools import build_meta as b; import sys; b.build_wheel(sys.argv[1])"
    done = subprocess.run([sys.executable, "-c", build, str(wheels)], cwd=tmp_path / "plugin", capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = wheels.glob("*.whl")
    subprocess.run([sys.executable, "-m", "pip", "--python", shutil.which("python", path=installed["PATH"]) or "",
                    "install", "--no-deps", "--no-index", "--disable-pip-version-check", "-q", str(wheel)], check=True)
    suite = subprocess.run(["python", "-m", "engine.contract"], env=installed, cwd=tmp_path, capture_output=True,
                           text=True, timeout=600)
    assert suite.returncode == 0, suite.stdout[-3000:] + suite.stderr[-3000:]
    for check in ("judge kind:exclamations:vibe", "dataset format:sharegpt", "analysis method:word_count",
                  "provider:azure-openai"):
        assert f"ok   {check}" in suite.stdout
    rows = [{"id": f"c{i}", "model": model, "conversations": [{"from": "human", "value": f"Question {i}?"},
                                                               {"from": "gpt", "value": answer}]}
            for i in range(8) for model, answer in (("calm", "Fine."), ("loud", "Great!! Wonderful!"))]
    (tmp_path / "chats.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "spec.yaml").write_text(
        "name: plugged\nmodels: {calm: {provider: recorded}, loud: {provider: recorded}}\n"
        "judges: {shouts: {kind: exclamations, mark: '!', tolerance: 0}}\n"
        "datasets: {d: {format: sharegpt, source: {path: chats.jsonl}}}\n"
        "vibes: [{name: enthusiasm, low: calm, high: excited}]\n"
        "analyses:\n  vibecheck: {dataset: d, models: [calm, loud], judges: [shouts]}\n"
        "  words: {method: word_count, dataset: d, models: [calm, loud]}\n")
    run = vibe(installed, tmp_path, "run", "spec.yaml", "--quiet")
    assert run.returncode == 0, run.stderr[-3000:]
    pairs = [json.loads(line) for line in (tmp_path / "runs" / "plugged" / "vibecheck" / "pairs.jsonl").read_text()
             .splitlines()]
    assert len(pairs) == 8 and {p["by_judge"]["enthusiasm"]["shouts"] for p in pairs} == {-1}  # loud has more '!'
    page = (tmp_path / "runs" / "plugged" / "index.html").read_text()
    assert "words per answer</h2><p>calm: 1.0</p><p>loud: 2.0</p>" in page  # the method's own template
    # type-checked as its author would, against the installed wheel (which ships py.typed): the package passes,
    # and a wrong keyword to an API record is caught
    (tmp_path / "wrong.py").write_text("from engine.api.providers import ProviderInfo\n\n"
                                       "INFO = ProviderInfo('vibe_example.azure', structured='json')\n")
    typed = subprocess.run([python := shutil.which("python", path=installed["PATH"]) or "", "-m", "mypy",
                            "--cache-dir", str(tmp_path / "mypy"), str(package), str(tmp_path / "wrong.py")],
                           env=installed, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert typed.stdout.splitlines()[:-1] == [
        'wrong.py:3: error: Unexpected keyword argument "structured" for "ProviderInfo"  [call-arg]'
    ], typed.stdout[-3000:] + typed.stderr[-3000:]
    # vibe's own docs and architecture tests hold with the package installed: they are about the built-ins only
    own = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not site_builds",
                          "tests/test_docs.py", "tests/test_architecture.py"], cwd=ROOT,
                         env={**installed, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=600)
    assert own.returncode == 0, own.stdout[-3000:]
