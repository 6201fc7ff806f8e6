"""Built-in vocabularies: tiktoken's encodings by name, from rank files inside the package.

``get_encoding("cl100k_base")`` is tiktoken's call and gives tiktoken's ids, with no
network: OpenAI's rank files ship gzipped in ``bpetite/_data/`` (its README gives their
source, licence and sha256). A file is checked against tiktoken's own sha256 before it
is used, each token's merge is recovered from the ranks (``core/_ranks.py``), and the
split pattern and special tokens are the ones tiktoken's ``tiktoken_ext/openai_public.py``
pins for that name. Each tokenizer is built once per process, as tiktoken caches its
encodings, and shared: a tokenizer never changes.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Final

from bpetite.core._constants import END_OF_TEXT_TOKEN
from bpetite.core._errors import ArtifactError, InteropError, ParameterError
from bpetite.core._model import Merges, check_merges
from bpetite.core._ranks import parse_ranks, recover_merges
from bpetite.core._tokenizer import Tokenizer


@dataclass(frozen=True, slots=True)
class BuiltinVocabulary:
    """One of tiktoken's encodings: its rank file and what tiktoken attaches to it."""

    #: tiktoken's encoding name.
    name: str
    #: The gzipped rank file in ``bpetite/_data/``.
    file: str
    #: The sha256 of the decompressed file: tiktoken's ``expected_hash`` for it.
    sha256: str
    #: bpetite's preset that splits as tiktoken's ``pat_str`` for the name.
    pattern: str
    #: tiktoken's special tokens and their ids.
    special_tokens: Mapping[str, int]
    #: How many tokens the file ranks (tiktoken's mergeable ranks).
    ranks: int


def _vocabulary(
    name: str, file: str, sha256: str, pattern: str, special_tokens: dict[str, int], ranks: int
) -> BuiltinVocabulary:
    return BuiltinVocabulary(name, file, sha256, pattern, MappingProxyType(special_tokens), ranks)


_R50K_SHA256: Final = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"

#: Every built-in vocabulary by name, in tiktoken's order. ``gpt2`` and ``r50k_base``
#: are one vocabulary under two names: tiktoken reads ``gpt2`` from GPT-2's
#: ``encoder.json`` and ``vocab.bpe`` and ``r50k_base`` from ``r50k_base.tiktoken``,
#: which rank the same tokens alike. Their pattern is tiktoken's faster spelling of
#: GPT-2's, which bpetite's ``gpt2`` preset splits identically (tests check both).
BUILTIN_VOCABULARIES: Final[Mapping[str, BuiltinVocabulary]] = MappingProxyType(
    {
        "gpt2": _vocabulary(
            "gpt2", "r50k_base.tiktoken.gz", _R50K_SHA256, "gpt2", {END_OF_TEXT_TOKEN: 50256}, 50256
        ),
        "r50k_base": _vocabulary(
            "r50k_base",
            "r50k_base.tiktoken.gz",
            _R50K_SHA256,
            "gpt2",
            {END_OF_TEXT_TOKEN: 50256},
            50256,
        ),
        "cl100k_base": _vocabulary(
            "cl100k_base",
            "cl100k_base.tiktoken.gz",
            "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
            "cl100k",
            {
                END_OF_TEXT_TOKEN: 100257,
                "<|fim_prefix|>": 100258,
                "<|fim_middle|>": 100259,
                "<|fim_suffix|>": 100260,
                "<|endofprompt|>": 100276,
            },
            100256,
        ),
        "o200k_base": _vocabulary(
            "o200k_base",
            "o200k_base.tiktoken.gz",
            "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
            "o200k",
            {END_OF_TEXT_TOKEN: 199999, "<|endofprompt|>": 200018},
            199998,
        ),
    }
)


def list_encoding_names() -> list[str]:
    """The names :func:`get_encoding` accepts (tiktoken's function of the same name).

    >>> list_encoding_names()
    ['gpt2', 'r50k_base', 'cl100k_base', 'o200k_base']
    """
    return list(BUILTIN_VOCABULARIES)


def get_encoding(encoding_name: str) -> Tokenizer:
    """The tokenizer of tiktoken's encoding `encoding_name`, built from the package's files.

    Every id is tiktoken's: the same mergeable tokens, special tokens and split pattern,
    and ``name`` is `encoding_name`. Nothing is downloaded; the rank file inside the
    package is checked against tiktoken's sha256 first (a damaged file raises
    ArtifactError). The first call for a vocabulary builds it (about a second for
    ``o200k_base``); later calls return the same tokenizer. An unknown name raises
    ParameterError listing :func:`list_encoding_names`.

    >>> from bpetite import get_encoding
    >>> gpt2 = get_encoding("gpt2")
    >>> gpt2.encode("hello world"), gpt2.n_vocab
    ([31373, 995], 50257)
    """
    if not isinstance(encoding_name, str):
        raise TypeError(f"encoding_name must be a str, got {type(encoding_name).__name__}")
    if encoding_name not in BUILTIN_VOCABULARIES:
        raise ParameterError(
            f"unknown encoding {encoding_name!r}: bpetite has "
            f"{', '.join(BUILTIN_VOCABULARIES)} (tiktoken's names); for another "
            "vocabulary, import its files (bpetite.interop.import_vocabulary)"
        )
    return _built(encoding_name)


@functools.cache
def _built(name: str) -> Tokenizer:
    vocabulary = BUILTIN_VOCABULARIES[name]
    merges, byte_order = _model(vocabulary.file, vocabulary.sha256)
    return Tokenizer(
        merges,
        pattern=vocabulary.pattern,
        special_tokens=vocabulary.special_tokens,
        byte_order=byte_order,
        name=name,
    )


@functools.cache
def _model(file: str, sha256: str) -> tuple[Merges, tuple[int, ...]]:
    """The merges and byte order of a packaged rank file (shared by the names that use it)."""
    data = _verified(read_packaged(file), file, sha256)
    source = f"bpetite/_data/{file}"
    try:
        recovered = recover_merges(parse_ranks(data, source), source)
    except InteropError as error:  # pragma: no cover - the sha256 matched tiktoken's file
        raise ArtifactError(f"{error}") from None
    if not recovered.is_contiguous:  # pragma: no cover - tiktoken's files rank 0, 1, 2, ...
        raise ArtifactError(f"{source} does not rank its tokens 0, 1, 2, ...")
    merges = check_merges([(left, right) for left, right, _ in recovered.merges])
    return merges, recovered.byte_order


def read_packaged(file: str) -> bytes:
    """The compressed bytes of ``bpetite/_data/<file>``."""
    return (resources.files("bpetite") / "_data" / file).read_bytes()


def _verified(compressed: bytes, file: str, sha256: str) -> bytes:
    """Decompress a packaged file and check it is exactly the file tiktoken pins."""
    try:
        data = gzip.decompress(compressed)
    except (OSError, EOFError, zlib.error) as error:
        raise ArtifactError(
            f"bpetite's built-in vocabulary file bpetite/_data/{file} is damaged ({error}); "
            "reinstall bpetite"
        ) from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != sha256:
        raise ArtifactError(
            f"bpetite's built-in vocabulary file bpetite/_data/{file} is damaged: its sha256 "
            f"is {actual}, not tiktoken's {sha256}; reinstall bpetite"
        )
    return data


def packaged_rank_file(encoding_name: str) -> tuple[str, bytes]:
    """The sha256 and the checked content of the rank file built-in `encoding_name` is made from.

    For running tiktoken itself offline on the same file (``bpetite compare-tiktoken``).
    """
    vocabulary = BUILTIN_VOCABULARIES[encoding_name]
    return vocabulary.sha256, _verified(
        read_packaged(vocabulary.file), vocabulary.file, vocabulary.sha256
    )
