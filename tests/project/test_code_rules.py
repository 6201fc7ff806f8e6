"""Rules the code base keeps, checked on its source: shells use only the public API.

* No code touches another object's underscore attribute (``obj._x`` where ``obj`` is
  not ``self`` or ``cls``): if a shell needs one, the public API is missing something.
* Imports point down the tiers (reference, core, corpus, visualize, the faces, interop,
  the CLI), and no two modules import each other. A lower tier reaches a higher one only
  as :data:`REACHES_UP` lists: by name, when called, never by an import statement. A
  module looked up by name is named by a literal, or listed in the module's ``_HOMES``.
* The shells (``bpetite.cli``, ``bpetite.interop``, benchmarks, scripts) import the
  public modules and ``bpetite._internal``, no other private module; nothing outside
  ``tests/`` imports ``tests``.
* Only ``bpetite.core._regex`` imports ``regex``: the rest of the library reaches the
  engine through it.
* No test module imports another test module (shared helpers live in modules that are
  not ``test_*.py``).
"""

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ("src", "tests", "benchmarks", "scripts")
#: Underscore names of the standard library that are its documented API.
ALLOWED = {("sys", "_getframe"), ("os", "_exit")}


def python_files() -> Iterator[Path]:
    for folder in CHECKED:
        yield from sorted((ROOT / folder).rglob("*.py"))


@cache
def parsed(path: Path) -> ast.Module:
    """The syntax tree of `path`, parsed once per process: the tests only read it."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@pytest.mark.parametrize("path", list(python_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_foreign_underscore_attributes(path: Path) -> None:
    tree = parsed(path)
    imported_modules = {
        alias.asname or alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    imported_modules |= {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("_")  # `from bpetite import _persistence`: a module
    }
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _is_private(node.attr)):
            continue
        owner = node.value
        if isinstance(owner, ast.Name):
            if owner.id in {"self", "cls"} or (owner.id, node.attr) in ALLOWED:
                continue
            if owner.id in imported_modules and owner.id != "bpetite":
                continue  # a module's own private helper, used by the module's tests
        found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "foreign underscore attributes:\n" + "\n".join(found)


#: The tiers of src/bpetite, lowest first: a module imports only from its own tier or
#: a lower one. The reference stands alone; the faces (``bpetite``, ``bpetite.errors``,
#: ``bpetite.corpus``, ``bpetite.visualize``, ``bpetite._internal``) gather the tiers below
#: the shells.
TIERS = ("reference", "core", "corpus", "visualize", "face", "interop", "cli")
FACES = {"bpetite", "bpetite._internal", "bpetite.errors", "bpetite.corpus", "bpetite.visualize"}
#: What a shell (the CLI, interop, benchmarks, scripts) may import from bpetite: the
#: public modules, the one internal door, and its own package's modules.
SHELL_MAY_IMPORT = FACES | {"bpetite.reference", "bpetite.interop", "bpetite.cli", "bpetite.chat"}
#: The reference's only imports from bpetite: the spec's constants, and the engine that
#: is `regex` or, where `regex` is missing, `re` with the same Unicode classes.
REFERENCE_MAY_IMPORT = {"bpetite.core._constants", "bpetite.core._regex"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT / "src").with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _tier(module: str) -> str:
    if module == "bpetite.__main__":
        return "cli"
    if module in FACES:
        return "face"
    second = module.split(".")[1]
    return second if second in TIERS else "face"


#: The one way a lower tier reaches a higher one, and every place that does it. The
#: tokenizer's ``explain`` and ``_repr_html_`` return pages and explanations, which live in
#: ``bpetite.visualize`` above the core: the method looks the tier up by name when called
#: (``import_module("bpetite.visualize")``), so importing the core never loads it, and the
#: return type is imported for the type checker only, under ``if TYPE_CHECKING:``. An
#: import statement that runs is never allowed upward; a new pair here is a decision a
#: reviewer sees. Each pair is (the module reaching up, the module it reaches).
#: ``apply_chat_template`` reaches ``bpetite.chat`` (the chat formats, jinja2) the same way.
REACHES_UP = {
    ("bpetite.core._tokenizer", "bpetite.visualize"),
    ("bpetite.core._tokenizer", "bpetite.chat"),
}
#: How a module reaches another: an import statement that runs (at module level or in a
#: function), one for the type checker only, or a module looked up by name when called.
RUNS, TYPE_ONLY, BY_NAME = "import", "type-only import", "by name"
_IMPORTERS_BY_NAME = {"import_module", "__import__"}
#: A face that loads its names on first use (PEP 562) looks each one's module up in a
#: module-level dict of this name, ``{"name": "bpetite.corpus._streaming", ...}``: its
#: values are the modules it reaches by name, checked as every other reach is.
HOMES = "_HOMES"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _calls_an_importer(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in _IMPORTERS_BY_NAME


def _named_module(call: ast.Call) -> str | None:
    """The module ``import_module("bpetite.x")`` names: an f-string's leading text,
    ``f"bpetite.cli.commands._{name}"`` -> ``bpetite.cli.commands``."""
    if not call.args:
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values:
        first = arg.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value.rsplit(".", 1)[0]
    return None  # named at run time: test_the_only_reaches_up_are_the_listed_ones refuses it


def _homes(tree: ast.Module) -> ast.Dict | None:
    """The module-level ``_HOMES = {...}`` dict literal of `tree`, if it has one."""
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Dict)
            and any(isinstance(name, ast.Name) and name.id == HOMES for name in node.targets)
        ):
            return node.value
    return None


@cache
def _reaches(path: Path) -> tuple[tuple[int, str, str], ...]:
    """Every bpetite module `path` reaches, as (line, module, how): RUNS, TYPE_ONLY or BY_NAME."""
    return tuple(_find_reaches(parsed(path)))


def _find_reaches(tree: ast.Module) -> Iterator[tuple[int, str, str]]:
    homes = _homes(tree)
    for home in homes.values if homes else ():
        name = home.value if isinstance(home, ast.Constant) else None
        if isinstance(name, str) and name.split(".")[0] == "bpetite":
            yield home.lineno, name, BY_NAME

    def visit(node: ast.AST, how: str) -> Iterator[tuple[int, str, str]]:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                yield from visit(child, TYPE_ONLY)
            for child in node.orelse:
                yield from visit(child, how)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "bpetite":
                    yield node.lineno, alias.name, how
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.split(".")[0] == "bpetite"
        ):
            for alias in node.names:
                # `from bpetite.core import _encoder` imports a module
                place = ROOT / "src" / Path(*node.module.split("."), alias.name)
                is_module = place.with_suffix(".py").exists() or place.is_dir()
                target = f"{node.module}.{alias.name}" if is_module else node.module
                yield node.lineno, target, how
        elif isinstance(node, ast.Call):
            named = _named_module(node) if _calls_an_importer(node) else None
            if named is not None and named.split(".")[0] == "bpetite":
                yield node.lineno, named, BY_NAME
        for part in ast.iter_child_nodes(node):
            yield from visit(part, how)

    yield from visit(tree, RUNS)


def _bpetite_imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every bpetite module `path` imports or looks up by name, wherever it does."""
    for line, target, _ in _reaches(path):
        yield line, target


SOURCES = sorted((ROOT / "src" / "bpetite").rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_down_the_tiers(path: Path) -> None:
    module = _module_name(path)
    own = TIERS.index(_tier(module))
    reaches = list(_reaches(path))
    if TIERS[own] == "reference":  # the oracle shares the spec's constants and the regex engine
        found = [
            f"{path.name}:{line}: {target} ({how})"
            for line, target, how in reaches
            if target not in REFERENCE_MAY_IMPORT
        ]
    else:
        found = [
            f"{path.name}:{line}: {module} ({TIERS[own]}) reaches {target} "
            f"({_tier(target)}) with {how}"
            for line, target, how in reaches
            if TIERS.index(_tier(target)) > own
            and not (how != RUNS and (module, target) in REACHES_UP)
        ]
    assert not found, "imports from a higher tier:\n" + "\n".join(found)


def test_the_only_reaches_up_are_the_listed_ones() -> None:
    """Every pair in :data:`REACHES_UP` is used, by name, and nothing else reaches up."""
    found: dict[tuple[str, str], set[str]] = {}
    for path in SOURCES:
        module = _module_name(path)
        own = TIERS.index(_tier(module))
        for _, target, how in _reaches(path):
            if own and TIERS.index(_tier(target)) > own:
                found.setdefault((module, target), set()).add(how)
    assert set(found) == REACHES_UP
    for pair, ways in found.items():
        assert BY_NAME in ways and RUNS not in ways, (pair, ways)
    unchecked = []
    for path in SOURCES:
        tree = parsed(path)
        homes = _homes(tree)
        if homes is not None:  # its lookups read the dict, whose values are checked above
            unchecked += [
                f"{path.name}:{value.lineno}: {ast.unparse(value)}"
                for value in homes.values
                if not (isinstance(value, ast.Constant) and isinstance(value.value, str))
            ]
            continue
        unchecked += [
            f"{path.name}:{node.lineno}: {ast.unparse(node)}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and _calls_an_importer(node)
            and _named_module(node) is None
        ]
    assert not unchecked, "modules looked up by a name made at run time:\n" + "\n".join(unchecked)


#: The one module of the library that imports `regex`: every other regex use goes
#: through it, so bpetite runs where `regex` cannot be imported (Pyodide offline).
REGEX_ENGINE = ROOT / "src" / "bpetite" / "core" / "_regex.py"


def test_only_the_engine_imports_regex() -> None:
    found = []
    for path in SOURCES:
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            if path != REGEX_ENGINE and any(name.split(".")[0] == "regex" for name in names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "regex imported outside core/_regex.py:\n" + "\n".join(found)


def test_no_import_circles() -> None:
    graph: dict[str, set[str]] = {_module_name(path): set() for path in SOURCES}
    for path in SOURCES:
        for _, target in _bpetite_imports(path):
            if target in graph and target != _module_name(path):
                graph[_module_name(path)].add(target)
    # a package imports its own modules to re-export them; that is no circle
    edges = {
        (source, target)
        for source, targets in graph.items()
        for target in targets
        if not target.startswith(source + ".")
    }
    circles = sorted(
        f"{a} <-> {b}"
        for a, b in edges
        if a < b and (b, a) in edges and not a.startswith(b + ".") and not b.startswith(a + ".")
    )
    assert not circles, "modules that import each other:\n" + "\n".join(circles)


def _shell_files() -> Iterator[Path]:
    for folder in ("src/bpetite/cli", "src/bpetite/interop", "benchmarks", "scripts"):
        yield from sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", list(_shell_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_shells_use_the_public_api_and_the_internal_door(path: Path) -> None:
    found = [
        f"{path.name}:{line}: {target}"
        for line, target in _bpetite_imports(path)
        if target not in SHELL_MAY_IMPORT
        and not target.startswith(("bpetite.cli.", "bpetite.interop."))
    ]
    assert not found, "private imports outside bpetite._internal:\n" + "\n".join(found)


def test_nothing_outside_tests_imports_tests() -> None:
    found = []
    for folder in ("src", "benchmarks", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(parsed(path)):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                else:
                    continue
                found += [
                    f"{path}:{node.lineno}" for name in names if name.split(".")[0] == "tests"
                ]
    assert not found, "code outside tests/ importing tests:\n" + "\n".join(found)


def test_no_test_module_imports_another() -> None:
    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.ImportFrom) and node.module:
                last = node.module.split(".")[-1]
                if last.startswith("test_"):
                    found.append(f"{path.name}:{node.lineno}: from {node.module}")
    assert not found, "test modules importing test modules:\n" + "\n".join(found)
