"""Rules the code base keeps, checked on its source: shells use only the public API.

* No code touches another object's underscore attribute (``obj._x`` where ``obj`` is
  not ``self`` or ``cls``): if a shell needs one, the public API is missing something.
* Imports point down the tiers (reference, core, corpus, visualize, the faces, interop,
  the CLI), and no two modules import each other.
* The shells (``bpetite.cli``, ``bpetite.interop``, benchmarks, scripts) import the
  public modules and ``bpetite._internal``, no other private module; nothing outside
  ``tests/`` imports ``tests``.
* No test module imports another test module (shared helpers live in modules that are
  not ``test_*.py``).
"""

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ("src", "tests", "benchmarks", "scripts")
#: Underscore names of the standard library that are its documented API.
ALLOWED = {("sys", "_getframe"), ("os", "_exit")}


def python_files() -> Iterator[Path]:
    for folder in CHECKED:
        yield from sorted((ROOT / folder).rglob("*.py"))


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@pytest.mark.parametrize("path", list(python_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_foreign_underscore_attributes(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
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
#: a lower one. The reference stands alone; the faces (``bpetite``, ``bpetite.corpus``,
#: ``bpetite.visualize``, ``bpetite._internal``) gather the tiers below the shells.
TIERS = ("reference", "core", "corpus", "visualize", "face", "interop", "cli")
FACES = {"bpetite", "bpetite._internal", "bpetite.corpus", "bpetite.visualize"}
#: What a shell (the CLI, interop, benchmarks, scripts) may import from bpetite: the
#: public modules, the one internal door, and its own package's modules.
SHELL_MAY_IMPORT = FACES | {"bpetite.reference", "bpetite.interop", "bpetite.cli"}
#: The reference's only imports from bpetite: the spec's constants, and the engine that
#: is `regex` or, where `regex` is missing, `re` with the same Unicode classes.
REFERENCE_MAY_IMPORT = (": bpetite.core._constants", ": bpetite.core._regex")


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


def _bpetite_imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every bpetite module `path` imports, at module level or inside a function."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "bpetite":
                    yield node.lineno, alias.name
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.split(".")[0] == "bpetite"
        ):
            for alias in node.names:
                # `from bpetite.core import _encoder` imports a module
                place = ROOT / "src" / Path(*node.module.split("."), alias.name)
                is_module = place.with_suffix(".py").exists() or place.is_dir()
                yield node.lineno, f"{node.module}.{alias.name}" if is_module else node.module


SOURCES = sorted((ROOT / "src" / "bpetite").rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_down_the_tiers(path: Path) -> None:
    module = _module_name(path)
    own = TIERS.index(_tier(module))
    imports = list(_bpetite_imports(path))
    if TIERS[own] == "reference":  # the oracle shares the spec's constants and the regex engine
        found = [f"{path.name}:{line}: {target}" for line, target in imports]
        found = [line for line in found if not line.endswith(REFERENCE_MAY_IMPORT)]
    else:
        found = [
            f"{path.name}:{line}: {module} ({TIERS[own]}) imports {target} ({_tier(target)})"
            for line, target in imports
            if TIERS.index(_tier(target)) > own
        ]
    assert not found, "imports from a higher tier:\n" + "\n".join(found)


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
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                last = node.module.split(".")[-1]
                if last.startswith("test_"):
                    found.append(f"{path.name}:{node.lineno}: from {node.module}")
    assert not found, "test modules importing test modules:\n" + "\n".join(found)
