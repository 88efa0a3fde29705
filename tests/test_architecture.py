"""Generic code reaches analysis methods, judge kinds, providers and dataset formats through their registries,
never by name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import engine
from engine.formats import FORMAT_MODULES, format_names
from engine.judges.kinds import KIND_MODULES, kind_names
from engine.provider_table import PROVIDERS
from engine.registry import METHOD_MODULES, method_names

ENGINE = Path(engine.__file__).parent
# The registries themselves and the plug-ins they list (a judge kind's module, a method's whole package) may
# name what they register.
PLUG_INS = (str(ENGINE / "registry.py"), str(ENGINE / "judges" / "kinds.py"), str(ENGINE / "formats.py"),
            str(ENGINE / "provider_table.py"), f"{ENGINE / 'execute' / 'providers'}/",
            *(str(ENGINE / (module.removeprefix("engine.").replace(".", "/") + ".py"))
              for module in (*KIND_MODULES.values(), *FORMAT_MODULES.values())),
            *(f"{ENGINE / 'methods' / module.split('.')[2]}/" for module in METHOD_MODULES.values()))


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
    registered = {"method": set(method_names()), "kind": set(kind_names()), "provider": set(PROVIDERS),
                  "format": set(format_names())}
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
    """Names are not the only way to reach a plug-in: generic code that imports a judge kind's module, a
    method's package, a dataset format's module or a provider's client depends on that plug-in as much as code
    that compares with its name (the report once imported the LLM judge's module for a text filter, and the
    executor the local provider's server and three providers' engines). What several need lives in a module
    of its own (`engine.judges.reading` reads any judge's written answer), and what a provider brings is named
    by its table entry (`ProviderInfo.replica`, `serves`). A provider's shared contract (the providers package
    and its `base`) is not a plug-in."""
    plug_ins = {*KIND_MODULES.values(), *FORMAT_MODULES.values()}
    packages = {".".join(module.split(".")[:3]) for module in METHOD_MODULES.values()}
    packages |= {f"engine.execute.providers.{path.stem}" for path in (ENGINE / "execute" / "providers").glob("*.py")
                 if path.stem not in ("__init__", "base")}
    found = []
    for path in sorted(ENGINE.rglob("*.py")):
        if any(str(path) == p or (p.endswith("/") and str(path).startswith(p)) for p in PLUG_INS):
            continue
        found += [f"{path.relative_to(ENGINE)}:{line}: imports {module}" for line, module in _imports(path)
                  if module in plug_ins or any(module == p or module.startswith(p + ".") for p in packages)]
    assert found == []


def test_every_built_in_method_is_in_the_independence_contract() -> None:
    """The import-linter contract that keeps methods from importing each other lists its packages by hand; a
    method added to the registry but not to the list would fall outside it without a word."""
    import tomllib

    contracts = tomllib.loads((ENGINE.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (independence,) = [c for c in contracts["contracts"] if c["type"] == "independence"]
    assert sorted(independence["modules"]) == sorted({".".join(m.split(".")[:3]) for m in METHOD_MODULES.values()})


def test_the_check_finds_what_it_looks_for() -> None:
    """The grep above is only worth its silence if it speaks on the shapes it forbids."""
    bad = ('if judge.kind == "llm": pass\nif a.method != "vibecheck": pass\n'
           'ok = kind in ("metric", "embedding")\nrows = results.of("vibecheck")\n'
           'if model.provider == "recorded": pass\nif ds.get("format") in ("inspect", "long"): pass\n'
           'if d.method == "llm": pass\n')  # the last one is a discovery method, not an analysis method
    assert [f.split(": ", 1)[1] for f in findings(bad, "x.py")] == [
        "compares with ['llm']", "compares with ['vibecheck']", "compares with ['embedding', 'metric']",
        "looks up a method's results by name", "compares with ['recorded']", "compares with ['inspect', 'long']"]



def test_no_engine_module_over_400_lines() -> None:
    """Short modules: a newcomer reads one in a sitting."""
    long = {str(p.relative_to(ENGINE)): n for p in ENGINE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert not long, long


def _importers(module: str) -> set[str]:
    """Who imports `module`: a method's package (by name) or, for any other engine module, its dotted path."""
    out = set()
    short = module.rsplit(".", 1)
    pattern = re.compile(rf"^\s*(from {re.escape(module)} import|import {re.escape(module)}\b|"
                         rf"from {re.escape(short[0])} import [^\n]*\b{short[1]}\b)", re.M)
    for path in ENGINE.rglob("*.py"):
        dotted = "engine." + ".".join(path.relative_to(ENGINE).with_suffix("").parts)
        if dotted == module or not pattern.search(path.read_text(encoding="utf-8")):
            continue
        parts = path.relative_to(ENGINE).parts
        out.add(f"method:{parts[1]}" if parts[0] == "methods" and len(parts) > 2 else dotted)
    return out


def test_shared_folders_hold_no_code_of_a_single_method() -> None:
    """A module of the shared stages (analyze, report, discover) that serves one method alone belongs in that
    method's package, where a reader looks for it."""
    lonely = []
    for folder in ("analyze", "report", "discover"):
        for path in sorted((ENGINE / folder).glob("*.py")):
            if path.name == "__init__.py":
                continue
            users = _importers(f"engine.{folder}.{path.stem}")
            if len(users) == 1 and next(iter(users)).startswith("method:"):
                lonely.append(f"engine/{folder}/{path.name}: used only by {next(iter(users))}")
    assert not lonely, "\n".join(lonely)


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
