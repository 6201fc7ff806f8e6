"""Rules the code base keeps, checked on its source: shells use only the public API.

* No code touches another object's underscore attribute (``obj._x`` where ``obj`` is
  not ``self`` or ``cls``): if a shell needs one, the public API is missing something.
* ``bpetite.cli`` and ``bpetite.interop`` import nothing private from the core.
* No test module imports another test module (shared helpers live in modules that are
  not ``test_*.py``).
"""

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
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


def _core_private_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            parts = node.module.split(".")
            names = [alias.name for alias in node.names]
            if parts[0] != "bpetite":
                continue
            if len(parts) == 2 and _is_private(parts[1]):
                found.append(f"{path.name}:{node.lineno}: from {node.module} import ...")
            elif len(parts) == 1 and any(_is_private(name) for name in names):
                found.append(f"{path.name}:{node.lineno}: from bpetite import {names}")
    return found


@pytest.mark.parametrize("package", ["cli", "interop"])
def test_shells_use_only_the_public_core(package: str) -> None:
    found = [
        line
        for path in sorted((ROOT / "src" / "bpetite" / package).rglob("*.py"))
        for line in _core_private_imports(path)
    ]
    assert not found, f"bpetite.{package} imports private core names:\n" + "\n".join(found)


def test_no_test_module_imports_another() -> None:
    found = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                last = node.module.split(".")[-1]
                if last.startswith("test_"):
                    found.append(f"{path.name}:{node.lineno}: from {node.module}")
    assert not found, "test modules importing test modules:\n" + "\n".join(found)
