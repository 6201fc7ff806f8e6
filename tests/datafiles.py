"""The committed test data, read straight from the gzip files.

Every file sits in ``tests/data/`` and is described, with its source, licence and the
sha256 of its decompressed content, in ``tests/data/README.md``;
``tests/project/test_data_files.py`` checks those hashes. OpenAI's rank files are kept
under tiktoken's names (``r50k_base.tiktoken.gz``); the package ships the merges
recovered from them, not the files. Tests get the data through the fixtures in
``tests/conftest.py``, which use this module; a test or a command that needs a real
file path gets a decompressed copy in a temporary directory from :func:`unpack`, never
a file next to the repository.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import bpetite

if TYPE_CHECKING:
    from bpetite.interop import ImportResult

DATA_DIR = Path(__file__).resolve().parent / "data"
#: The package's data folder (``bpetite/_data/``), where get_encoding reads its files.
PACKAGE_DATA_DIR = Path(bpetite.__file__).resolve().parent / "_data"

SHAKESPEARE = "tinyshakespeare.txt"
#: GPT-2's published vocabulary, as ``bpetite import`` and tiktoken's ``gpt2`` read it.
GPT2_FILES = ("encoder.json", "vocab.bpe", "gpt2.tiktoken")
#: The rank files of tiktoken's ``p50k_base``, ``cl100k_base`` and ``o200k_base`` encodings.
OPENAI_FILES = ("p50k_base.tiktoken", "cl100k_base.tiktoken", "o200k_base.tiktoken")

#: The rank files kept under tiktoken's names, by the name the tests give them.
#: ``gpt2.tiktoken`` is tiktoken's ``r50k_base.tiktoken``: GPT-2's vocabulary in the rank
#: format.
RANK_FILES = {
    "gpt2.tiktoken": "r50k_base.tiktoken.gz",
    "p50k_base.tiktoken": "p50k_base.tiktoken.gz",
    "cl100k_base.tiktoken": "cl100k_base.tiktoken.gz",
    "o200k_base.tiktoken": "o200k_base.tiktoken.gz",
}

#: Where tiktoken downloads each file from; its cache names an entry by the sha1 of the URL.
TIKTOKEN_URLS = {
    "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe": "vocab.bpe",
    "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json": (
        "encoder.json"
    ),
    "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken": "gpt2.tiktoken",
}


def gz_path(name: str) -> Path:
    """The committed gzip file of the data file `name`."""
    return DATA_DIR / RANK_FILES.get(name, f"{name}.gz")


def committed_names() -> list[str]:
    """The decompressed name of every file in tests/data/, in name order."""
    return sorted(path.name.removesuffix(".gz") for path in DATA_DIR.glob("*.gz"))


@functools.cache
def read_bytes(name: str) -> bytes:
    """The decompressed content of the data file `name`, e.g. ``read_bytes("vocab.bpe")``.

    Cached: the files never change while the tests run, and several tests read the same
    one. Raises FileNotFoundError naming the file when it is not committed.
    """
    return gzip.decompress(gz_path(name).read_bytes())


def sha256(name: str) -> str:
    """The hex sha256 of a data file's decompressed content."""
    return hashlib.sha256(read_bytes(name)).hexdigest()


def shakespeare_bytes() -> bytes:
    """TinyShakespeare, exactly as published (1,115,394 bytes of UTF-8)."""
    return read_bytes(SHAKESPEARE)


def shakespeare_text() -> str:
    return shakespeare_bytes().decode("utf-8")


@functools.cache
def shakespeare_tokenizer(vocab_size: int) -> bpetite.Tokenizer:
    """``Tokenizer.train(TinyShakespeare, vocab_size)``, once per process: the encoder's
    and the trainer's tests train the same sizes, and a trained tokenizer's merges never
    change (its caches are only caches)."""
    return bpetite.Tokenizer.train(shakespeare_text(), vocab_size)


def unpack(names: Iterable[str], directory: Path) -> Path:
    """Write a decompressed copy of each named file into `directory` (made if missing).

    For code under test that takes a file path. Returns `directory`.
    """
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        (directory / name).write_bytes(read_bytes(name))
    return directory


def build_tiktoken_cache(cache_dir: Path) -> Path:
    """Fill a ``TIKTOKEN_CACHE_DIR`` with GPT-2's files so tiktoken loads ``gpt2`` offline.

    tiktoken looks a download up in its cache under the sha1 of its URL and checks the
    content against the sha256 it expects, so only the genuine files are used.
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    for url, name in TIKTOKEN_URLS.items():
        key = hashlib.sha1(url.encode()).hexdigest()
        (cache_dir / key).write_bytes(read_bytes(name))
    return cache_dir


#: The file tiktoken downloads, by its URL's last part -> the committed copy's test name.
TIKTOKEN_FILES = {
    "r50k_base.tiktoken": "gpt2.tiktoken",
    "p50k_base.tiktoken": "p50k_base.tiktoken",
    "cl100k_base.tiktoken": "cl100k_base.tiktoken",
    "o200k_base.tiktoken": "o200k_base.tiktoken",
    "encoder.json": "encoder.json",
    "vocab.bpe": "vocab.bpe",
}


@functools.cache
def tiktoken_constructor(name: str) -> dict[str, Any]:
    """What tiktoken's own constructor for encoding `name` returns, built offline.

    tiktoken's functions in ``tiktoken_ext.openai_public`` give its pattern, special
    tokens and ``explicit_n_vocab``; their files are read from the committed copies
    instead of downloaded, with tiktoken's own hash checks, and nothing is cached on
    disk. ``gpt2`` reads GPT-2's ``encoder.json`` and ``vocab.bpe`` as tiktoken does.
    """
    import pytest
    import tiktoken_ext.openai_public as openai_public
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks, load_tiktoken_bpe

    with tempfile.TemporaryDirectory() as temporary:
        folder = unpack(set(TIKTOKEN_FILES.values()), Path(temporary))

        def local(url: str) -> str:
            return str(folder / TIKTOKEN_FILES[url.rsplit("/", 1)[-1]])

        def ranks(url: str, expected_hash: str) -> dict[bytes, int]:
            return load_tiktoken_bpe(local(url), expected_hash=expected_hash)

        def gpt2_ranks(**files: str) -> dict[bytes, int]:
            return data_gym_to_mergeable_bpe_ranks(
                vocab_bpe_file=local(files["vocab_bpe_file"]),
                encoder_json_file=local(files["encoder_json_file"]),
                vocab_bpe_hash=files["vocab_bpe_hash"],
                encoder_json_hash=files["encoder_json_hash"],
            )

        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("TIKTOKEN_CACHE_DIR", "")  # no cache files written anywhere
            patch.setattr(openai_public, "load_tiktoken_bpe", ranks)
            patch.setattr(openai_public, "data_gym_to_mergeable_bpe_ranks", gpt2_ranks)
            constructor: dict[str, Any] = getattr(openai_public, name)()
    return constructor


@functools.cache
def imported_rank_file(name: str) -> ImportResult:
    """bpetite's import of the committed rank file `name` (``"o200k_base.tiktoken"``), once.

    Imported from a decompressed copy, as a user's file would be. Cached: the tests that
    hold an imported OpenAI vocabulary against tiktoken share one import per process.
    """
    from bpetite.interop import import_vocabulary

    with tempfile.TemporaryDirectory() as temporary:
        return import_vocabulary([unpack([name], Path(temporary)) / name])


@functools.cache
def recovered_rank_file(name: str) -> ImportResult:
    """The committed official rank file `name` imported by recovering every token's merge
    from its ranks, once: what importing it gave before the package's shipped merges
    stood in for the recovery, and the oracle that proves them the same."""
    from bpetite.interop._known import recognise
    from bpetite.interop._tiktoken import recover_tiktoken

    data = read_bytes(name)
    return recover_tiktoken(data, name, known=recognise(data))


@functools.cache
def tiktoken_encoding(name: str) -> Any:
    """tiktoken's encoding `name`, built offline (:func:`tiktoken_constructor`), once."""
    import tiktoken

    return tiktoken.Encoding(**tiktoken_constructor(name))


#: A tiktoken plugin's encoding that bpetite does not ship, so compare-tiktoken builds it
#: from tiktoken's cache alone: p50k_base's ranks, pattern and special token under
#: another name and URL (:func:`write_tiktoken_plugin`).
PLUGIN_ENCODING = "bpetite_test"
#: Where the plugin's constructor reads its ranks: its cache entry is the sha1 of this.
PLUGIN_URL = "https://openaipublic.blob.core.windows.net/encodings/bpetite_test.tiktoken"
PLUGIN_MODULE = "tiktoken_ext.bpetite_test_plugin"


def write_tiktoken_plugin(folder: Path) -> Path:
    """Write a tiktoken plugin under `folder` and return `folder`, to put on ``sys.path``.

    tiktoken finds encodings in the modules of the ``tiktoken_ext`` namespace package
    that define ``ENCODING_CONSTRUCTORS``; this one's constructor reads
    :data:`PLUGIN_URL` with tiktoken's ``load_tiktoken_bpe`` and p50k_base's sha256, as
    tiktoken's own constructors read OpenAI's files.
    """
    package = folder / "tiktoken_ext"
    package.mkdir(parents=True, exist_ok=True)
    (package / f"{PLUGIN_MODULE.rsplit('.', 1)[1]}.py").write_text(
        "from tiktoken.load import load_tiktoken_bpe\n"
        "from tiktoken_ext.openai_public import r50k_pat_str\n"
        "\n"
        f"def {PLUGIN_ENCODING}():\n"
        "    return {\n"
        f"        'name': {PLUGIN_ENCODING!r},\n"
        "        'pat_str': r50k_pat_str,\n"
        "        'mergeable_ranks': load_tiktoken_bpe(\n"
        f"            {PLUGIN_URL!r}, expected_hash={sha256('p50k_base.tiktoken')!r}\n"
        "        ),\n"
        "        'special_tokens': {'<|endoftext|>': 50256},\n"
        "    }\n"
        "\n"
        f"ENCODING_CONSTRUCTORS = {{{PLUGIN_ENCODING!r}: {PLUGIN_ENCODING}}}\n",
        encoding="utf-8",
    )
    return folder


def cache_plugin_file(cache_dir: Path) -> Path:
    """The plugin's rank file in tiktoken's cache `cache_dir`, as a download leaves it;
    returns the cache entry."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    entry = cache_dir / hashlib.sha1(PLUGIN_URL.encode()).hexdigest()
    entry.write_bytes(read_bytes("p50k_base.tiktoken"))
    return entry


def cache_folder() -> Path:
    """Where tests keep what they fetch from the package registries (tiktoken's sdist,
    the npm pyodide package): ``$BPETITE_TEST_CACHE``, else the user's cache folder."""
    configured = os.environ.get("BPETITE_TEST_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "bpetite-tests"
