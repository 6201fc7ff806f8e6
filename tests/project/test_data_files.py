"""The committed data is what its READMEs say it is, byte for byte.

Two folders hold it: ``tests/data/`` (read by the tests only: TinyShakespeare, GPT-2's
files, OpenAI's rank files) and the package's ``src/bpetite/_data/`` (read at run time:
the demo's corpus and the models behind ``get_encoding``). Each file's sha256 is
computed from the gzip file here and compared with its README's table, and the tables'
hashes with the ones published independently: the download script's for
TinyShakespeare, tiktoken's own ``expected_hash`` values for OpenAI's files. The
corpus packaged for ``bpetite demo`` must be the same TinyShakespeare.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import re
from importlib import resources
from pathlib import Path

import pytest

from bpetite._internal import BUILTIN_VOCABULARIES
from tests.datafiles import (
    DATA_DIR,
    GPT2_FILES,
    OPENAI_FILES,
    PACKAGE_DATA_DIR,
    RANK_FILES,
    SHAKESPEARE,
    committed_names,
    read_bytes,
    sha256,
    shakespeare_text,
    unpack,
)

ROW = re.compile(r"^\| (\S+)\.gz \| (\d+) \| ([0-9a-f]{64}) \|$", re.MULTILINE)
FOLDERS = {"tests/data": DATA_DIR, "bpetite/_data": PACKAGE_DATA_DIR}


def readme_table(folder: Path) -> dict[str, tuple[int, str]]:
    """Decompressed name -> (size, sha256), from the table in the folder's README.md."""
    text = (folder / "README.md").read_text(encoding="utf-8")
    rows = ROW.findall(text)
    table = {name: (int(size), digest) for name, size, digest in rows}
    assert len(table) == len(rows), "a file is listed twice"
    return table


def gz_names(folder: Path) -> list[str]:
    return sorted(path.name.removesuffix(".gz") for path in folder.glob("*.gz"))


@pytest.mark.parametrize("folder", FOLDERS.values(), ids=list(FOLDERS))
def test_each_readme_lists_every_file_of_its_folder_and_nothing_else(folder: Path) -> None:
    assert sorted(readme_table(folder)) == gz_names(folder)


def test_the_tests_name_every_file_and_read_each_from_one_place() -> None:
    assert committed_names() == gz_names(DATA_DIR)
    rank_files = {file.removesuffix(".gz") for file in RANK_FILES.values()}
    assert rank_files <= set(committed_names())
    tested = {SHAKESPEARE, *GPT2_FILES, *OPENAI_FILES}
    assert tested == set(committed_names()) - rank_files | set(RANK_FILES)
    assert not rank_files & set(gz_names(PACKAGE_DATA_DIR)), "a rank file ships"


@pytest.mark.parametrize(
    ("folder", "name"),
    [(folder, name) for folder in FOLDERS.values() for name in gz_names(folder)],
)
def test_every_file_has_the_size_and_sha256_in_its_readme(folder: Path, name: str) -> None:
    size, digest = readme_table(folder)[name]
    with gzip.open(folder / f"{name}.gz", "rb") as stream:
        content = stream.read()
    assert len(content) == size
    assert hashlib.sha256(content).hexdigest() == digest


@pytest.mark.parametrize("name", [*committed_names(), *RANK_FILES])
def test_the_helpers_read_each_file_by_its_test_name(name: str) -> None:
    file_name = RANK_FILES.get(name, f"{name}.gz").removesuffix(".gz")
    assert sha256(name) == readme_table(DATA_DIR)[file_name][1]


def test_tinyshakespeare_is_the_file_the_download_script_verifies() -> None:
    spec = importlib.util.spec_from_file_location(
        "download_corpus", DATA_DIR.parent.parent / "scripts" / "download_corpus.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert readme_table(DATA_DIR)[SHAKESPEARE][1] == script.EXPECTED_SHA256


def test_openai_files_are_the_ones_tiktoken_checks() -> None:
    """tiktoken pins every file it downloads to a sha256: the same hashes as ours."""
    source_file = importlib.util.find_spec("tiktoken_ext.openai_public")
    assert source_file is not None and source_file.origin is not None
    source = Path(source_file.origin).read_text(encoding="utf-8")
    pinned = set(re.findall(r'_hash="([0-9a-f]{64})"', source))
    for name in [*GPT2_FILES, *OPENAI_FILES]:
        file_name = RANK_FILES.get(name, f"{name}.gz").removesuffix(".gz")
        assert readme_table(DATA_DIR)[file_name][1] in pinned, f"tiktoken does not pin {name}"


def test_get_encoding_checks_the_hashes_in_the_readmes() -> None:
    """The tables get_encoding verifies against agree with the READMEs, file for file:
    each model's own sha256, and tiktoken's of the rank file it was recovered from."""
    models, ranks = readme_table(PACKAGE_DATA_DIR), readme_table(DATA_DIR)
    for vocabulary in BUILTIN_VOCABULARIES.values():
        assert models[vocabulary.file.removesuffix(".gz")][1] == vocabulary.file_sha256
        assert ranks[vocabulary.rank_file][1] == vocabulary.rank_file_sha256
    shipped = {vocabulary.file.removesuffix(".gz") for vocabulary in BUILTIN_VOCABULARIES.values()}
    assert shipped | {SHAKESPEARE} == set(gz_names(PACKAGE_DATA_DIR))


def test_the_demo_corpus_in_the_package_is_tinyshakespeare() -> None:
    packaged = resources.files("bpetite") / "_data" / "tinyshakespeare.txt.gz"
    assert gzip.decompress(packaged.read_bytes()) == read_bytes(SHAKESPEARE)


def test_helpers_give_the_decompressed_content(tmp_path: Path) -> None:
    assert shakespeare_text().startswith("First Citizen:\nBefore we proceed any further")
    unpacked = unpack(GPT2_FILES, tmp_path / "gpt2")
    assert sorted(path.name for path in unpacked.iterdir()) == sorted(GPT2_FILES)
    assert (unpacked / "vocab.bpe").read_bytes().startswith(b"#version: 0.2\n")
    for name in GPT2_FILES:
        assert (unpacked / name).read_bytes() == read_bytes(name)
