"""The documentation site: its generated pages match the code they describe, every schema field is in the spec
reference, and mkdocs builds it in strict mode (a broken link or a page missing from the nav fails)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import build_docs  # noqa: E402


def stale_pages(python: str = sys.executable, env: dict[str, str] | None = None) -> list[str]:
    """The generated pages that differ from what `scripts/build_docs.py` writes now, run as the docs say to run
    it (a process of its own, which reads the built-in plug-ins only, whatever else is installed) by `python`."""
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run([python, str(ROOT / "scripts" / "build_docs.py"), folder], capture_output=True,
                              text=True, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        written = [Path(line) for line in done.stdout.splitlines()]
        assert written
        return [str(committed.relative_to(ROOT)) for path in written
                if not (committed := ROOT / "site" / "docs" / path.relative_to(folder)).is_file()
                or committed.read_text() != path.read_text()]


def test_generated_pages_are_up_to_date() -> None:
    assert not stale_pages(), "stale: run python scripts/build_docs.py"


def test_every_schema_field_is_in_the_spec_reference() -> None:
    text = (ROOT / "site" / "docs" / "reference" / "spec.md").read_text()
    listed = set(re.findall(r"^\| `([^`]+)`", text, re.MULTILINE))
    document = json.loads((ROOT / "site" / "docs" / "schema" / "spec.json").read_text())  # the test above checks it
    assert build_docs.schema_paths(document) <= listed
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert all(line.count(" | ") >= 4 and not line.rstrip().endswith("|  |") for line in rows), "a field lacks a column"
    assert "`analyses.<name>.ties` *(method: rankings)*" in text  # a method's options, labelled with it


def test_cli_reference_lists_every_command() -> None:
    text = (ROOT / "site" / "docs" / "reference" / "cli.md").read_text()
    for command in ("init", "validate", "schema", "plan", "diff", "run", "discover", "report", "publish"):
        assert f"## `vibe {command}`" in text
    assert "--limit N" in text and "--changed BASE" in text


def test_site_builds_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(ROOT / "site", site, ignore=shutil.ignore_patterns("site"))
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(site / "mkdocs.yml")],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    built = site / "site"
    for page in ("getting-started.html", "reference/spec.html", "reference/cli.html", "methods.html", "limits.html",
                 "cluster.html", "measured.html", "schema/spec.json"):
        assert (built / page).is_file(), page
    assert "fonts.googleapis" not in (built / "index.html").read_text()


def test_the_guides_plug_in_examples_are_the_files_the_tests_run() -> None:
    """Each plug-in example in the guide is, word for word, a file the tests run end to end and `make test`
    holds to ruff and mypy (pyproject.toml's mypy `files`), so an example copied from the page passes the
    same gates (the method example once failed mypy and ruff)."""
    import re
    import tomllib

    text = (ROOT / "site" / "docs" / "methods.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "from engine.api." in b]
    checked = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]["files"]
    sources = {path: (ROOT / path).read_text(encoding="utf-8") for path in checked if path.startswith("tests/")}
    assert len(blocks) == 2
    for block in blocks:
        assert any(block in source for source in sources.values()), block[:200]
