"""Built-in vocabularies: tiktoken's encodings by name, from model files inside the package.

``get_encoding("cl100k_base")`` is tiktoken's call and gives tiktoken's ids, with no
network. tiktoken reads a rank file (each token's bytes and id) and builds its tables
in Rust; bpetite's model is a merge list, and recovering each token's merge from a rank
file costs seconds in Python (``core/_ranks.py``). So the package ships the merges
themselves, recovered once by ``scripts/write_builtin_vocabularies.py`` from OpenAI's
rank files (kept in ``tests/data/``, whose test proves every shipped file gives exactly
the tokens, ids and specials its rank file and tiktoken give).

A shipped file, ``bpetite/_data/<rank file's stem>.merges.gz``, is gzip of:

1. the line ``bpetite merges 1\\n`` (the format and its version);
2. 256 bytes: the byte order, ``byte_order[i]`` the byte of id ``i``;
3. the merges' left indices, then their right indices, merge ``r`` making index
   ``256 + r`` (its id, unless the names using the file give a special token an id
   among the merged tokens': p50k_base's ``<|endoftext|>`` holds 50256, and the merged
   tokens take the ids it leaves free); each list as three planes of one byte per
   index: every low byte, then every middle byte, then every high byte (indices are
   below 2**24). Planes, not whole numbers, because the high bytes barely change,
   which gzip then stores in almost nothing.

The sha256 of the decompressed file is in the table below and checked on every load;
what it guarantees (the merges keep the model's rule, every token is tiktoken's) is
not proven again. The split pattern and special tokens are the ones tiktoken's
``tiktoken_ext/openai_public.py`` pins for the name. Each tokenizer is built once per
process, as tiktoken caches its encodings, and shared: a tokenizer never changes.

Adding an encoding that shares a file with another (``p50k_edit`` is ``p50k_base``'s
ranks with more specials, ``o200k_harmony`` ``o200k_base``'s) is one entry in the
table; one with a new rank file also needs that file in ``tests/data/`` and the script
run once.
"""

from __future__ import annotations

import binascii
import functools
import hashlib
import os
import sys
import zlib
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from bpetite.core._constants import BASE_VOCAB_SIZE, END_OF_TEXT_TOKEN
from bpetite.core._errors import ArtifactError, ParameterError
from bpetite.core._gc import gc_paused
from bpetite.core._ids import skipped_ids
from bpetite.core._model import LearnedIndexedMerges, LearnedMerges, Merges
from bpetite.core._tokenizer import Tokenizer

#: The first line of a shipped model file: its format and version.
MODEL_FILE_HEADER: Final = b"bpetite merges 1\n"
#: Bytes per id in a shipped file: one plane each.
ID_PLANES: Final = 3
#: The package's data folder, found from this file with ``os.path``: importing
#: importlib.resources or pathlib would cost a first ``get_encoding`` more than reading
#: the file does.
PACKAGE_DATA: Final = os.path.join(os.path.dirname(os.path.dirname(__file__)), "_data")  # noqa: PTH118, PTH120


@dataclass(frozen=True, slots=True)
class BuiltinVocabulary:
    """One of tiktoken's encodings: where its model comes from and what tiktoken attaches."""

    #: tiktoken's encoding name.
    name: str
    #: The rank file the model was recovered from, by tiktoken's name for it
    #: (``cl100k_base.tiktoken``); it lives gzipped in ``tests/data/``.
    rank_file: str
    #: The sha256 of the rank file: tiktoken's ``expected_hash`` for it.
    rank_file_sha256: str
    #: The sha256 of the shipped model file's decompressed content.
    file_sha256: str
    #: bpetite's preset that splits as tiktoken's ``pat_str`` for the name.
    pattern: str
    #: tiktoken's special tokens and their ids.
    special_tokens: Mapping[str, int]
    #: How many mergeable tokens the rank file lists (tiktoken's mergeable ranks).
    mergeable_vocab_size: int

    @property
    def file(self) -> str:
        """The model file in ``bpetite/_data/`` (``o200k_base.merges.gz``)."""
        return f"{self.rank_file.removesuffix('.tiktoken')}.merges.gz"


def _vocabulary(
    name: str,
    rank_file: tuple[str, str, str],
    pattern: str,
    special_tokens: dict[str, int],
    mergeable_vocab_size: int,
) -> BuiltinVocabulary:
    return BuiltinVocabulary(
        name, *rank_file, pattern, MappingProxyType(special_tokens), mergeable_vocab_size
    )


#: Each rank file: its name, tiktoken's sha256 of it, the sha256 of the model shipped for it.
_R50K: Final = (
    "r50k_base.tiktoken",
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "2faf79053172ec0f2dc577833b768b1c263a62c3381ca348389b6ef00f72a702",
)
_P50K: Final = (
    "p50k_base.tiktoken",
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    "2955a6cd05d3b2213cd2d89596fde788b92305b6a4010fd7d241fa60b24a1599",
)
_CL100K: Final = (
    "cl100k_base.tiktoken",
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "f74b1dc0ca3f2e8d251081a1360f0dfd276d1d11a64ed9c294fa71ecbe74744a",
)
_O200K: Final = (
    "o200k_base.tiktoken",
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "d60b573addcebfc2c5c4a2bd1c8312e8375c02810c11294fe8c490346aad4a93",
)


def _o200k_harmony_specials() -> dict[str, int]:
    """tiktoken's special tokens for ``o200k_harmony`` (gpt-oss), ordered by id.

    o200k_base's two, then gpt-oss's named ones, and ``<|reserved_N|>`` for every other
    id N from 200000 to 201087: 200018 too, which ``<|endofprompt|>`` holds, so the
    reserved text is an alias and the id decodes to ``<|endofprompt|>``, as tiktoken's does.
    """
    named = {
        END_OF_TEXT_TOKEN: 199999,
        "<|endofprompt|>": 200018,
        "<|startoftext|>": 199998,
        "<|return|>": 200002,
        "<|constrain|>": 200003,
        "<|channel|>": 200005,
        "<|start|>": 200006,
        "<|end|>": 200007,
        "<|message|>": 200008,
        "<|call|>": 200012,
    }
    gpt_oss = set(named.values()) - {named["<|endofprompt|>"]}
    reserved = {f"<|reserved_{n}|>": n for n in range(200000, 201088) if n not in gpt_oss}
    # sorted is stable: <|endofprompt|>, listed first, stays the first text of 200018
    return dict(sorted([*named.items(), *reserved.items()], key=lambda item: item[1]))


#: Every built-in vocabulary by name, in tiktoken's order. ``gpt2`` and ``r50k_base``
#: are one vocabulary under two names: tiktoken reads ``gpt2`` from GPT-2's
#: ``encoder.json`` and ``vocab.bpe`` and ``r50k_base`` from ``r50k_base.tiktoken``,
#: which give the same tokens the same ids. Their pattern is tiktoken's faster spelling
#: of GPT-2's, which bpetite's ``gpt2`` preset splits identically (tests check both).
BUILTIN_VOCABULARIES: Final[Mapping[str, BuiltinVocabulary]] = MappingProxyType(
    {
        "gpt2": _vocabulary("gpt2", _R50K, "gpt2", {END_OF_TEXT_TOKEN: 50256}, 50256),
        "r50k_base": _vocabulary("r50k_base", _R50K, "gpt2", {END_OF_TEXT_TOKEN: 50256}, 50256),
        # p50k's <|endoftext|> holds 50256, among its merged tokens' ids (50257..50280
        # are 24 runs of spaces), which skip it.
        "p50k_base": _vocabulary("p50k_base", _P50K, "gpt2", {END_OF_TEXT_TOKEN: 50256}, 50280),
        "p50k_edit": _vocabulary(
            "p50k_edit",
            _P50K,
            "gpt2",
            {
                END_OF_TEXT_TOKEN: 50256,
                "<|fim_prefix|>": 50281,
                "<|fim_middle|>": 50282,
                "<|fim_suffix|>": 50283,
            },
            50280,
        ),
        "cl100k_base": _vocabulary(
            "cl100k_base",
            _CL100K,
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
            _O200K,
            "o200k",
            {END_OF_TEXT_TOKEN: 199999, "<|endofprompt|>": 200018},
            199998,
        ),
        "o200k_harmony": _vocabulary(
            "o200k_harmony", _O200K, "o200k", _o200k_harmony_specials(), 199998
        ),
    }
)


def list_encoding_names() -> list[str]:
    """The names :func:`get_encoding` accepts (tiktoken's function of the same name).

    >>> list_encoding_names()  # doctest: +NORMALIZE_WHITESPACE
    ['gpt2', 'r50k_base', 'p50k_base', 'p50k_edit', 'cl100k_base', 'o200k_base',
     'o200k_harmony']
    """
    return list(BUILTIN_VOCABULARIES)


def get_encoding(encoding_name: str) -> Tokenizer:
    """The tokenizer of tiktoken's encoding `encoding_name`, built from the package's files.

    Every id is tiktoken's: the same mergeable tokens, special tokens and split pattern,
    and ``name`` is `encoding_name`. Nothing is downloaded; the model file inside the
    package is checked against its sha256 first (a damaged file raises ArtifactError).
    The first call for a vocabulary builds it; later calls return the same tokenizer.
    An unknown name raises ParameterError listing :func:`list_encoding_names`.

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
    # One pause for the merges and the tables: the collection that follows a pause
    # walks everything made during it, so two pauses would walk the merges twice.
    with gc_paused():
        merges, byte_order = _model(vocabulary.file, vocabulary.file_sha256)
        count = BASE_VOCAB_SIZE + len(merges)
        if skipped_ids(count, vocabulary.special_tokens.values()):
            merges = LearnedIndexedMerges(merges)  # the file's indices: ids skip the specials'
        return Tokenizer(
            merges,
            pattern=vocabulary.pattern,
            special_tokens=vocabulary.special_tokens,
            byte_order=byte_order,
            name=name,
        )


@functools.cache
def _model(file: str, sha256: str) -> tuple[Merges, tuple[int, ...]]:
    """The merges and byte order of a shipped model file (shared by the names that use it)."""
    data = _verified(read_packaged(file), file, sha256)
    byte_order, lefts, rights = parse_model_file(data)
    with gc_paused():  # see _gc: hundreds of thousands of pairs, none in a cycle
        # Merges without check_merges: the file is, byte for byte, one whose merges the
        # script recovered from tiktoken's rank file and the tests check. Marked as
        # learned because, like a trained list, every token is whole (encodes to itself;
        # tests/reference/test_builtin_whole.py proves it), so the encoder proves none.
        merges = LearnedMerges(zip(lefts, rights, strict=True))
    return merges, tuple(byte_order)


def parse_model_file(data: bytes) -> tuple[bytes, array[int], array[int]]:
    """A decompressed model file's byte order, left ids and right ids.

    The file must be well formed (its sha256 checked): only its length is checked here.
    """
    body = data[len(MODEL_FILE_HEADER) + BASE_VOCAB_SIZE :]
    count, rest = divmod(len(body), 2 * ID_PLANES)
    if not data.startswith(MODEL_FILE_HEADER) or rest:
        raise ValueError("not a bpetite model file")
    side = ID_PLANES * count
    return (
        data[len(MODEL_FILE_HEADER) : len(MODEL_FILE_HEADER) + BASE_VOCAB_SIZE],
        _unplaned(body[:side], count),
        _unplaned(body[side:], count),
    )


def write_model_file(byte_order: Sequence[int], merges: Sequence[tuple[int, int]]) -> bytes:
    """A model file's decompressed content (the inverse of :func:`parse_model_file`).

    `merges` must keep the model's rule, and every id be below 2**24.
    """
    sides = (array("I", (merge[side] for merge in merges)) for side in (0, 1))
    planes = [_planes(ids) for ids in sides]
    return MODEL_FILE_HEADER + bytes(byte_order) + b"".join(planes)


def _planes(ids: array[int]) -> bytes:
    """The byte planes of `ids`: every low byte, then every middle one, then every high one."""
    if ids and max(ids) >> (8 * ID_PLANES):
        raise ValueError(f"an id does not fit in {ID_PLANES} bytes")
    if sys.byteorder == "big":  # pragma: no cover - the planes go low byte first
        ids.byteswap()
    wide = ids.tobytes()
    return b"".join(wide[plane :: ids.itemsize] for plane in range(ID_PLANES))


def _unplaned(planes: bytes, count: int) -> array[int]:
    """`count` ids from their byte planes, widened at C speed into machine ints."""
    ids = array("I")
    wide = bytearray(ids.itemsize * count)
    for plane in range(ID_PLANES):
        wide[plane :: ids.itemsize] = planes[plane * count : (plane + 1) * count]
    ids.frombytes(wide)
    if sys.byteorder == "big":  # pragma: no cover - the planes go low byte first
        ids.byteswap()
    return ids


def read_packaged(file: str) -> bytes:
    """The compressed bytes of ``bpetite/_data/<file>``."""
    with open(os.path.join(PACKAGE_DATA, file), "rb") as stream:  # noqa: PTH118, PTH123
        return stream.read()


def _verified(compressed: bytes, file: str, sha256: str) -> bytes:
    """Decompress a shipped file and check it is exactly the file the table pins."""
    try:
        data = zlib.decompress(compressed, wbits=16 + zlib.MAX_WBITS)  # gzip
    except zlib.error as error:
        raise ArtifactError(
            f"bpetite's built-in vocabulary file bpetite/_data/{file} is damaged ({error}); "
            "reinstall bpetite"
        ) from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != sha256:
        raise ArtifactError(
            f"bpetite's built-in vocabulary file bpetite/_data/{file} is damaged: its sha256 "
            f"is {actual}, not {sha256}; reinstall bpetite"
        )
    return data


def rank_file(encoding_name: str) -> tuple[bytes, dict[bytes, int]]:
    """The rank file of built-in `encoding_name`, written from its tokenizer's own tokens,
    and the ranks it lists (token bytes -> id: what tiktoken reads from it).

    Each mergeable token as tiktoken's rank files list it, ``base64(bytes) id``, in id
    order; the file must have tiktoken's sha256 for it, or ArtifactError. For running
    tiktoken itself offline on the same vocabulary (``bpetite compare-tiktoken``).
    """
    vocabulary = BUILTIN_VOCABULARIES[encoding_name]
    tokenizer = get_encoding(encoding_name)
    tokens, special_ids = tokenizer.vocab, set(tokenizer.special_tokens.values())
    ranks = {
        tokens[token_id]: token_id for token_id in sorted(tokens) if token_id not in special_ids
    }
    data = b"".join(
        b"%s %d\n" % (binascii.b2a_base64(token, newline=False), token_id)
        for token, token_id in ranks.items()
    )
    actual = hashlib.sha256(data).hexdigest()
    if actual != vocabulary.rank_file_sha256:  # pragma: no cover - the tests check every one
        raise ArtifactError(
            f"the rank file written from bpetite's {encoding_name} has sha256 {actual}, not "
            f"tiktoken's {vocabulary.rank_file_sha256}; reinstall bpetite"
        )
    return data, ranks
