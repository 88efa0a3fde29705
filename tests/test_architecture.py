"""Generic code reaches analysis methods, judge kinds, providers and dataset formats through their registries,
never by name."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import engine
from engine import plugin_tables
from engine.judges.kinds import ALIASES

ENGINE = Path(engine.__file__).parent
BUILT_INS = ENGINE / "builtin_plugins"
# The registries and their tables may name what they register, and the built-in plug-ins themselves.
PLUG_INS = (str(ENGINE / "registry.py"), str(ENGINE / "judges" / "kinds.py"), str(ENGINE / "formats.py"),
            str(ENGINE / "provider_table.py"), str(ENGINE / "plugin_tables.py"), f"{BUILT_INS}/")


def _named(node: ast.AST) -> str:
    """The last name of what is compared: `a.options.method` -> method, `judge.kind` -> kind,
    `entry.get("provider")` -> provider."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args
            and isinstance(node.args[0], ast.Constant)):  # entry.get("provider")
        return str(node.args[0].value)
    return ""


def _literals(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [v for e in node.elts for v in _literals(e)]
    return []


def findings(source: str, path: str) -> list[str]:
    """Comparisons of a method, a judge kind, a provider or a dataset format with a literal name, and sections
    looked up by a method's name."""
    # the built-ins' names (whatever else is installed on the machine the test runs on)
    registered = {"method": set(plugin_tables.METHODS), "kind": {*plugin_tables.JUDGE_KINDS, *ALIASES},
                  "provider": set(plugin_tables.PROVIDERS), "format": set(plugin_tables.DATASET_FORMATS)}
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            subject = " ".join(_named(s) for s in sides)
            names = {v for s in sides for v in _literals(s)}
            named = sorted({n for what, known in registered.items() if what in subject for n in names & known})
            if named:
                out.append(f"{path}:{node.lineno}: compares with {named}")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "of"
                and any(v in registered["method"] for a in node.args for v in _literals(a))):
            out.append(f"{path}:{node.lineno}: looks up a method's results by name")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and len(node.args) == 2 and (what := _named(node)) in registered
                and (named := sorted(set(_literals(node.args[1])) & registered[what]))):
            out.append(f"{path}:{node.lineno}: defaults a {what} to {named}")
        if isinstance(node, ast.Dict):
            keys = {v for k in node.keys if k is not None for v in _literals(k)}
            for what, known in registered.items():
                if len(keyed := keys & known) > 1:  # a table of built-ins: {"local": 4, "vllm": 256}
                    out.append(f"{path}:{node.lineno}: a table keyed by {what}s {sorted(keyed)}")
    return out


def test_generic_code_names_no_plug_in() -> None:
    found = [f for path in sorted(ENGINE.rglob("*.py")) if not str(path).startswith(PLUG_INS)
             for f in findings(path.read_text(encoding="utf-8"), str(path.relative_to(ENGINE)))]
    assert not found, "\n".join(found)


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module a file imports, deferred and type-only imports included (`from x import y` gives x and
    x.y, since y may be a module)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out += [(node.lineno, node.module), *((node.lineno, f"{node.module}.{a.name}") for a in node.names)]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
    return out


def test_generic_code_imports_no_plug_in() -> None:
    """Names are not the only way to reach a plug-in: generic code that imports a built-in's module depends on
    it as much as code that compares with its name (the report once imported the LLM judge's module for a text
    filter, and the executor the local provider's server and three providers' engines). import-linter's layers
    put the built-ins above everything, but it skips type-only imports; this reads deferred and type-only ones
    too."""
    found = [f"{path.relative_to(ENGINE)}:{line}: imports {module}"
             for path in sorted(ENGINE.rglob("*.py")) if not str(path).startswith(f"{BUILT_INS}/")
             for line, module in _imports(path) if module.startswith("engine.builtin_plugins")]
    assert found == []


def _built_in_modules() -> dict[str, str]:
    """Every module a table names for a built-in (a provider's clients, replica engine and server included),
    each with the table it is listed in."""
    out = {m: "methods" for m in plugin_tables.METHODS.values()}
    out |= {m: "judges" for m in plugin_tables.JUDGE_KINDS.values()}
    out |= {m: "formats" for m in plugin_tables.DATASET_FORMATS.values()}
    out |= {m: "exporters" for m in plugin_tables.EXPORTERS.values()}
    out |= {path.partition(":")[0]: "providers" for info in plugin_tables.PROVIDERS.values()
            for path in (info.client, info.batches, info.replica, info.serves) if path}
    return out


def test_every_built_in_sits_in_its_kinds_folder() -> None:
    """The import-linter contracts that keep a plug-in to the public API and apart from every other plug-in
    match `engine.builtin_plugins.*.*`: one module or package per plug-in in its kind's folder. A built-in
    listed anywhere else would fall outside both without a word."""
    misplaced = {m: kind for m, kind in _built_in_modules().items()
                 if m.split(".")[:3] != ["engine", "builtin_plugins", kind] or len(m.split(".")) < 4}
    assert misplaced == {}
    folders = {path.parent.name for path in BUILT_INS.glob("*/__init__.py")}
    assert folders == {"methods", "judges", "formats", "exporters", "providers"}


def _past_the_api(path: Path, own: str) -> list[str]:
    """What `path` (a module of the plug-in `own`) imports of vibe beyond the public API and itself."""
    return [f"{path.name}:{line}: imports {module}" for line, module in _imports(path)
            if module.split(".")[0] == "engine" and not module.startswith("engine.api")
            and module != own and not module.startswith(own + ".")]


def test_built_in_plug_ins_import_only_the_public_api_and_themselves() -> None:
    """A built-in is written as an outside plug-in is: of vibe, it imports `engine.api` and its own module or
    package, deferred and type-only imports included (which import-linter does not read), so what a built-in
    can do an outside plug-in can."""
    found = []
    for path in sorted(BUILT_INS.rglob("*.py")):
        parts = path.relative_to(ENGINE.parent).with_suffix("").parts
        if len(parts) > 3 and parts[3] != "__init__":
            found += _past_the_api(path, ".".join(parts[:4]))
    assert found == []


def test_the_import_check_finds_what_it_looks_for(tmp_path: Path) -> None:
    """The check above is only worth its silence if it speaks: a type-only import of an internal module and a
    deferred import of another plug-in are found; the API and the plug-in's own package are not."""
    plug_in = tmp_path / "x.py"
    plug_in.write_text("from typing import TYPE_CHECKING\n\nfrom engine.api.spec import Judge\n"
                       "from engine.builtin_plugins.methods.x.options import XOptions\n"
                       "if TYPE_CHECKING:\n    from engine.stats import holm\n\n\n"
                       "def f():\n    from engine.builtin_plugins.judges import llm\n", encoding="utf-8")
    assert [f.split(": ", 1)[1] for f in _past_the_api(plug_in, "engine.builtin_plugins.methods.x")] == [
        "imports engine.stats", "imports engine.stats.holm", "imports engine.builtin_plugins.judges",
        "imports engine.builtin_plugins.judges.llm"]


def test_the_check_finds_what_it_looks_for() -> None:
    """The grep above is only worth its silence if it speaks on the shapes it forbids."""
    bad = ('if judge.kind == "llm": pass\nif a.method != "vibecheck": pass\n'
           'ok = kind in ("metric", "embedding")\nrows = results.of("vibecheck")\n'
           'if model.provider == "recorded": pass\nif ds.get("format") in ("inspect", "long"): pass\n'
           'if d.method == "llm": pass\n'  # a discovery method, not an analysis method
           'kind = record.get("kind", "metric")\nBATCH = {"local": 4, "vllm": 256}\n')
    assert [f.split(": ", 1)[1] for f in findings(bad, "x.py")] == [
        "compares with ['llm']", "compares with ['vibecheck']", "compares with ['embedding', 'metric']",
        "looks up a method's results by name", "compares with ['recorded']", "compares with ['inspect', 'long']",
        "defaults a kind to ['metric']", "a table keyed by providers ['local', 'vllm']"]


def test_no_engine_module_over_400_lines() -> None:
    """Short modules: a newcomer reads one in a sitting."""
    long = {str(p.relative_to(ENGINE)): n for p in ENGINE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert not long, long


def _user(path: Path, root: Path) -> str:
    """Who a file of the engine at `root` is: a built-in plug-in (`plugin:methods/vibecheck`), or its dotted path."""
    parts = path.relative_to(root).with_suffix("").parts
    if parts[0] == "builtin_plugins" and len(parts) > 2:
        return f"plugin:{parts[1]}/{parts[2]}"
    return ".".join(("engine", *parts))


@cache
def _import_statements(root: Path) -> list[tuple[str, str, frozenset[str]]]:
    """Every import of the engine at `root`, deferred and type-only ones included: (who, the module named, the names
    taken from it; for `import a.b`, the module `a.b` and the name `*`)."""
    out = []
    for path in root.rglob("*.py"):
        user = _user(path, root)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                out.append((user, node.module, frozenset(a.name for a in node.names)))
            elif isinstance(node, ast.Import):
                out += [(user, a.name, frozenset("*")) for a in node.names]
    return out


def _importers(module: str, root: Path, names: set[str] | None = None) -> dict[str, set[str]]:
    """Who imports `module` (or, given `names`, any of those names from it), each with the names it imports
    (`*` for the module itself: `import engine.x.y`, or `from engine.x import y`)."""
    out: dict[str, set[str]] = {}
    parent, _, leaf = module.rpartition(".")
    for user, named, taken in _import_statements(root):
        if named == parent and leaf in taken:
            taken = frozenset("*")
        elif named != module:
            continue
        if user != module and (names is None or taken & names):
            out.setdefault(user, set()).update(taken)
    return out


def _users(module: str, root: Path = ENGINE) -> set[str]:
    """Who uses `module`: its importers, where a built-in reaches it through the public API (as built-ins must)
    the plug-ins that import the names the API re-exports from it."""
    out: set[str] = set()
    for user, names in _importers(module, root).items():
        out |= set(_importers(user, root, names)) if user.startswith("engine.api.") else {user}
    return out


def _lonely(root: Path = ENGINE) -> list[str]:
    """The modules of the shared stages that serve one built-in plug-in alone."""
    out = []
    for folder in ("analyze", "report", "discover"):
        for path in sorted((root / folder).glob("*.py")):
            if path.name != "__init__.py" and len(users := _users(f"engine.{folder}.{path.stem}", root)) == 1:
                (user,) = users
                if user.startswith("plugin:"):
                    out.append(f"engine/{folder}/{path.name}: used only by {user}")
    return out


def test_shared_folders_hold_no_code_of_a_single_method() -> None:
    """A module of the shared stages (analyze, report, discover) that serves one plug-in alone belongs in that
    plug-in's package, where a reader looks for it."""
    lonely = _lonely()
    assert not lonely, "\n".join(lonely)


def test_the_lonely_module_check_finds_what_it_looks_for(tmp_path: Path) -> None:
    """Built-ins reach shared code only through the public API, so the check follows the API's re-exports: a
    shared module one method reaches that way is found, one two plug-ins reach is not."""
    files = {"analyze/alone.py": "", "analyze/shared.py": "",
             "api/analysis.py": "from engine.analyze.alone import a\nfrom engine.analyze.shared import b\n",
             "builtin_plugins/methods/m/method.py": "from engine.api.analysis import a, b\n",
             "builtin_plugins/judges/j.py": "def f():\n    from engine.api.analysis import b\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert _lonely(tmp_path) == ["engine/analyze/alone.py: used only by plugin:methods/m"]


# Names one built-in uses and vibe's own code does not, kept in the API because any plug-in of that kind may need
# them: the fields a judged vibe's request holds (so two methods judging one vibe share its tasks), a row shape, the
# SDK error translation, the comparison's colours, a method's own model calls, work beside the run and what the run
# cache holds of derived work, the check that every vibe has a judge, the ranking toolkit (Bradley-Terry, Arena's
# style features and the outcomes of battles and scores), people's labels split and read from columns, a rating's
# repeats read together, and the lookup of the installed format that owns an agent log.
KEPT_FOR_ANY = {
    "data": {"WideRows", "log_format"}, "providers": {"sdk_errors"}, "report": {"model_scale"},
    "calls": {"run_calls"}, "methods": {"vibe_fields"}, "execution": {"run_beside", "holds", "run_store"},
    "spec": {"check_vibes_have_judges"},
    "analysis": {"STYLE_FEATURES", "arena_style", "bradley_terry", "human_outcomes", "score_outcomes",
                 "assign_splits", "read_columns"},
    "judging": {"item_rating"},
}


def _lonely_names(root: Path = ENGINE) -> list[str]:
    """API names only one built-in imports and vibe's own code never uses by name, less `KEPT_FOR_ANY`."""
    importers: dict[tuple[str, str], set[str]] = {}
    for user, module, names in _import_statements(root):
        if user.startswith("plugin:") and module.startswith("engine.api."):
            for name in names:
                importers.setdefault((module.rpartition(".")[2], name), set()).add(user)
    used = set()
    for path in root.rglob("*.py"):
        if path.relative_to(root).parts[0] in ("builtin_plugins", "api"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            used.add(node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else "")
    return sorted(f"{module}.{name} ({next(iter(by))})" for (module, name), by in importers.items()
                  if len(by) == 1 and name not in used and name not in KEPT_FOR_ANY.get(module, set()))


def test_a_helper_of_one_built_in_lives_in_it() -> None:
    """The name-level twin of the lonely-module check: an API name only one built-in imports, and vibe's own code
    never uses, belongs in that built-in, unless `KEPT_FOR_ANY` says why a plug-in of the same kind would need it
    too."""
    lonely = _lonely_names()
    assert lonely == [], "move these into the built-in that uses them, or say in KEPT_FOR_ANY why they stay"


def _import_graph() -> dict[str, set[str]]:
    """Every engine module -> the engine modules it imports anywhere in its text: at the top, inside a function
    (deferred) or under TYPE_CHECKING."""
    modules = {".".join(("engine", *p.relative_to(ENGINE).with_suffix("").parts)).removesuffix(".__init__"): p
               for p in ENGINE.rglob("*.py")}

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("engine"):
                names = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if a.name.startswith("engine")]
            graph[module] |= {t for n in names if (t := resolve(n)) is not None and t != module}
    return graph


def test_no_import_cycles_deferred_and_type_only_included() -> None:
    """A module that needs another only for a type, or only inside a function, still depends on it: no two
    engine modules may reach each other through any kind of import."""
    graph = _import_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert not cycles, cycles


def test_the_listed_packages_are_every_package_of_the_engine() -> None:
    """pyproject.toml lists the packages (the shared templates are mapped from templates/, which discovery cannot
    combine with): a package added under engine/ and not listed would be missing from the wheel."""
    import tomllib

    from setuptools import find_packages

    root = ENGINE.parent
    listed = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert sorted(listed) == sorted([*find_packages(str(root), include=["engine*"]), "engine.report.templates"])
