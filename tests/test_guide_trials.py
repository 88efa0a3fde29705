"""The guide's plug-ins, written as the guide gives them, placed where it says and registered with the line it
gives, pass the gates `make test` runs on vibe's own code: ruff, lint-imports (a built-in reaches vibe only
through `engine.api`), mypy and the contract suite. Run on a copy of the tree, so the suite's other tests never
see them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "site" / "docs" / "methods.md"
TABLES = {"METHODS": "methods", "JUDGE_KINDS": "judges", "DATASET_FORMATS": "formats", "PROVIDERS": "providers"}


def _guide() -> tuple[dict[str, str], dict[str, str]]:
    """The guide's example blocks by the name they register, and its registry lines by table."""
    text = GUIDE.read_text(encoding="utf-8")
    blocks = {re.search(r'@\w+\("([\w-]+)"\)', b).group(1): b  # type: ignore[union-attr]
              for b in re.findall(r"```python\n(.*?)```", text, re.S) if "from engine.api." in b}
    lines = {table: line for line, table in re.findall(r'`("[\w-]+": [^`]+,)` in\s+`(\w+)`', text)}
    return blocks, lines


def _place(tree: Path) -> dict[str, Path]:
    """Each plug-in where the guide puts it, with its line in the copy's `engine/plugin_tables.py`: the guide's
    own text for the method and the judge kind, the tested file it names for the format and the provider."""
    blocks, lines = _guide()
    assert set(lines) == set(TABLES), lines
    built_ins = tree / "engine" / "builtin_plugins"
    method = built_ins / "methods" / "word_count"
    (method / "templates").mkdir(parents=True)
    (method / "__init__.py").write_text("")
    shutil.copytree(ROOT / "tests" / "word_count" / "templates" / "sections", method / "templates" / "sections")
    provider = built_ins / "providers" / "azure"
    provider.mkdir()
    (provider / "__init__.py").write_text("")
    files = {"word_count": method / "method.py", "exclamations": built_ins / "judges" / "exclamations.py",
             "sharegpt": built_ins / "formats" / "sharegpt.py", "azure-openai": provider / "client.py"}
    files["word_count"].write_text(blocks["word_count"], encoding="utf-8")
    files["exclamations"].write_text(blocks["exclamations"], encoding="utf-8")
    shutil.copy(ROOT / "tests" / "sharegpt_format.py", files["sharegpt"])
    shutil.copy(ROOT / "tests" / "azure_provider.py", files["azure-openai"])
    tables = tree / "engine" / "plugin_tables.py"
    text = tables.read_text(encoding="utf-8")
    for table, line in lines.items():
        text, added = re.subn(rf"^({table}: dict\[str, \w+\] = \{{\n)", rf"\g<1>    {line}\n", text, flags=re.M)
        assert added == 1, table
    tables.write_text(text, encoding="utf-8")
    return files


def _gate(tree: Path, *command: str) -> subprocess.CompletedProcess[str]:
    # the copy's engine, not the checkout's; mypy's cache is the one `make test` keeps (warm, it takes seconds)
    env = {**os.environ, "PYTHONPATH": str(tree),
           "MYPY_CACHE_DIR": os.environ.get("MYPY_CACHE_DIR", str(Path.home() / ".cache" / "vibe-mypy"))}
    return subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_guides_plug_ins_placed_in_the_tree_pass_every_gate(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copytree(ROOT / "engine", tree / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree)
    files = [str(p.relative_to(tree)) for p in _place(tree).values()]
    bin_dir = Path(sys.executable).parent
    ruff = _gate(tree, str(bin_dir / "ruff"), "check", *files)
    assert ruff.returncode == 0, ruff.stdout
    lint = _gate(tree, str(bin_dir / "lint-imports"))
    assert lint.returncode == 0 and "Contracts: 3 kept, 0 broken." in lint.stdout, lint.stdout[-3000:]
    typed = _gate(tree, sys.executable, "-m", "mypy", *files)
    assert typed.returncode == 0, typed.stdout[-3000:]
    checked = _gate(tree, sys.executable, "-m", "engine.contract", *(f"--plugin={name}" for name in
                                                                    ("word_count", "exclamations", "sharegpt",
                                                                     "azure-openai")))
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
    assert all(name in checked.stdout for name in ("word_count", "exclamations", "sharegpt", "azure-openai"))
