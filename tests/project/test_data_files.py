"""The committed test data is what tests/data/README.md says it is, byte for byte.

Each file's sha256 is computed from the gzip file here and compared with the README's
table, and the table's hashes with the ones published independently: the download
script's for TinyShakespeare, tiktoken's own ``expected_hash`` values for OpenAI's files.
The corpus packaged for ``bpetite demo`` must be the same TinyShakespeare.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import re
from importlib import resources
from pathlib import Path

import pytest

from tests.datafiles import (
    DATA_DIR,
    GPT2_FILES,
    OPENAI_FILES,
    SHAKESPEARE,
    committed_names,
    read_bytes,
    sha256,
    shakespeare_text,
    unpack,
)

ROW = re.compile(r"^\| (\S+)\.gz \| (\d+) \| ([0-9a-f]{64}) \|$", re.MULTILINE)


def readme_table() -> dict[str, tuple[int, str]]:
    """Decompressed name -> (size, sha256), from the table in tests/data/README.md."""
    text = (DATA_DIR / "README.md").read_text(encoding="utf-8")
    rows = ROW.findall(text)
    table = {name: (int(size), digest) for name, size, digest in rows}
    assert len(table) == len(rows), "a file is listed twice"
    return table


def test_the_readme_lists_every_committed_file_and_nothing_else() -> None:
    assert sorted(readme_table()) == committed_names()
    assert {SHAKESPEARE, *GPT2_FILES, *OPENAI_FILES} == set(committed_names())


@pytest.mark.parametrize("name", committed_names())
def test_every_file_has_the_size_and_sha256_in_the_readme(name: str) -> None:
    size, digest = readme_table()[name]
    with gzip.open(DATA_DIR / f"{name}.gz", "rb") as stream:
        content = stream.read()
    assert len(content) == size
    assert hashlib.sha256(content).hexdigest() == digest
    assert sha256(name) == digest


def test_tinyshakespeare_is_the_file_the_download_script_verifies() -> None:
    spec = importlib.util.spec_from_file_location(
        "download_corpus", DATA_DIR.parent.parent / "scripts" / "download_corpus.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert readme_table()[SHAKESPEARE][1] == script.EXPECTED_SHA256


def test_openai_files_are_the_ones_tiktoken_checks() -> None:
    """tiktoken pins every file it downloads to a sha256: the same hashes as ours."""
    source_file = importlib.util.find_spec("tiktoken_ext.openai_public")
    assert source_file is not None and source_file.origin is not None
    source = Path(source_file.origin).read_text(encoding="utf-8")
    pinned = set(re.findall(r'_hash="([0-9a-f]{64})"', source))
    table = readme_table()
    for name in (*GPT2_FILES, *OPENAI_FILES):
        assert table[name][1] in pinned, f"tiktoken does not pin {name}'s sha256"


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
