"""The built wheel and sdist hold exactly what they should, and no stray file.

Both archives are built with ``uv build`` (the sdist first, the wheel from it) from a
copy of the source tree to which files a working tree collects are added: a
``tokenizer.json`` the README's commands write, a downloaded ``data/`` corpus, notes.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from bpetite._internal import BUILTIN_VOCABULARIES
from tests.conftest import REPO_ROOT
from tests.datafiles import PACKAGE_DATA_DIR, SHAKESPEARE, read_bytes

#: Never copied into the build tree: version control, environments, caches, outputs.
NOT_SOURCE = {".git", ".venv", "dist", "build", "data", "results"}
CACHES = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"}
STRAYS = ("tokenizer.json", "data/tinyshakespeare.txt", "notes.md", "src/scratch.py")
#: Besides the package, the wheel holds only its metadata.
WHEEL_METADATA = {"METADATA", "WHEEL", "RECORD", "entry_points.txt", "licenses/LICENSE"}
#: The models get_encoding loads, one per rank file (gpt2 and r50k_base share one).
MODEL_FILES = sorted({vocabulary.file for vocabulary in BUILTIN_VOCABULARIES.values()})


def source_files(root: Path, relative: str) -> set[str]:
    """The files at or under `relative` (a file or a directory), caches left out."""
    path = root / relative
    if path.is_file():
        return {relative}
    return {
        file.relative_to(root).as_posix()
        for file in path.rglob("*")
        if file.is_file() and not CACHES & set(file.parts) and file.suffix != ".pyc"
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(source tree with strays, wheel, sdist)."""
    uv = os.environ.get("UV") or shutil.which("uv")
    assert uv, "uv builds the archives; install it (https://docs.astral.sh/uv/)"
    tree = tmp_path_factory.mktemp("tree") / "bpetite"
    shutil.copytree(
        REPO_ROOT,
        tree,
        ignore=lambda directory, names: {
            name
            for name in names
            if name in CACHES or (Path(directory) == REPO_ROOT and name in NOT_SOURCE)
        },
    )
    for stray in STRAYS:
        (tree / stray).parent.mkdir(parents=True, exist_ok=True)
        (tree / stray).write_text("stray\n", encoding="utf-8")
    out = tmp_path_factory.mktemp("dist")
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    result = subprocess.run(
        [uv, "build", "--quiet", "--out-dir", str(out), str(tree)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return tree, wheel, sdist


def test_the_wheel_holds_the_package_its_data_and_py_typed_only(
    built: tuple[Path, Path, Path],
) -> None:
    tree, wheel, _ = built
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        corpus = archive.read("bpetite/_data/tinyshakespeare.txt.gz")
        archive_bytes = {
            f"bpetite/_data/{file}": archive.read(f"bpetite/_data/{file}") for file in MODEL_FILES
        }
        licence = archive.read("bpetite-1.0.0.dist-info/licenses/LICENSE")
    package = {name for name in names if name.startswith("bpetite/")}
    metadata = {name.removeprefix("bpetite-1.0.0.dist-info/") for name in names - package}
    assert package == source_files(tree / "src", "bpetite")
    assert "bpetite/py.typed" in package
    assert {name for name in package if not name.endswith(".py")} == {
        "bpetite/py.typed",
        "bpetite/_data/README.md",
        "bpetite/_data/tinyshakespeare.txt.gz",
        "bpetite/_data/r50k_base.merges.gz",
        "bpetite/_data/p50k_base.merges.gz",
        "bpetite/_data/cl100k_base.merges.gz",
        "bpetite/_data/o200k_base.merges.gz",
    }
    for file in MODEL_FILES:  # get_encoding's models, as committed
        assert archive_bytes[f"bpetite/_data/{file}"] == (PACKAGE_DATA_DIR / file).read_bytes()
    assert metadata == WHEEL_METADATA
    assert licence == (REPO_ROOT / "LICENSE").read_bytes()
    assert gzip.decompress(corpus) == read_bytes(SHAKESPEARE)


def test_the_sdist_holds_the_include_list_only(built: tuple[Path, Path, Path]) -> None:
    tree, _, sdist = built
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    include = config["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    with tarfile.open(sdist) as archive:
        names = {
            member.name.removeprefix("bpetite-1.0.0/")
            for member in archive.getmembers()
            if member.isfile()
        }
    expected = set().union(*(source_files(tree, entry.lstrip("/")) for entry in include))
    # hatchling always adds the metadata file and the ignore rules it applied.
    assert names == expected | {"PKG-INFO", ".gitignore"}
    for stray in STRAYS:
        assert stray not in names
    for needed in ("LICENSE", "uv.lock", "tests/data/README.md", "tests/data/vocab.bpe.gz"):
        assert needed in names


def test_the_licence_is_mit_as_pyproject_says() -> None:
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["project"]["license"] == "MIT"
    text = (REPO_ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n\nCopyright (c) ")
    assert "bpetite contributors" in text.splitlines()[2]
    assert "Permission is hereby granted, free of charge" in text
