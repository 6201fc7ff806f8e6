"""Importing: tell each file's format from its contents, then hand it to the right reader.

File names are not trusted (``vocab.json`` and ``encoder.json`` are the same format,
and people rename files); the contents decide: a JSON object with a ``"model"`` is a
``tokenizer.json``, a JSON object of integers is a vocabulary, ``base64 rank`` lines
are a ``.tiktoken`` file, and ``left right`` lines (usually after ``#version``) are merges.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from bpetite import SplitPattern
from bpetite.errors import InteropError
from bpetite.interop._hf import import_tokenizer_json
from bpetite.interop._model import ImportResult
from bpetite.interop._tiktoken import import_tiktoken
from bpetite.interop._vocab_merges import check_vocab, import_tables, load_json, parse_merges_text

FileKind = Literal["tokenizer.json", "vocabulary JSON", "merges", ".tiktoken"]

_TIKTOKEN_LINE: Final = re.compile(rb"[A-Za-z0-9+/]+={0,2} [0-9]+")
#: Lines looked at to tell merges from a .tiktoken file; the readers then check every line.
_SNIFFED_LINES: Final = 16
_EXPECTED: Final = (
    "give one tokenizer.json, one .tiktoken file, or a vocabulary JSON (encoder.json or "
    "vocab.json) with its merges file (vocab.bpe or merges.txt)"
)


_GZIP_MAGIC: Final = b"\x1f\x8b"
#: The most a gzipped input may expand to: far above a real vocabulary file (o200k_base's
#: .tiktoken is a small fraction of it), and a bound on a hostile one (a gzip bomb).
MAX_GUNZIPPED_BYTES: Final = 256 << 20


def _gunzip(data: bytes, name: str) -> bytes:
    """The decompressed content of a gzip file, refused past MAX_GUNZIPPED_BYTES in all.

    Every member is read, as ``gzip.decompress`` and ``zcat`` read ``cat a.gz b.gz``, and
    zero bytes between or after members are padding, as gzip allows; anything else after
    the gzip data is refused rather than ignored. The input is fed a block at a time, so
    a file of many small members costs what its bytes do (a member's leftover input,
    handed back whole, would be copied once per member).
    """
    view = memoryview(data)
    contents: list[bytes] = []
    size = position = 0
    inflater = None
    while True:
        if inflater is None:  # between members: padding, the next member, or the end
            found = _NOT_ZERO.search(data, position)
            if found is None:
                return b"".join(contents)
            position = found.start()
            if not data.startswith(_GZIP_MAGIC, position):
                raise InteropError(
                    f"{name} has {len(data) - position:,} bytes after its gzip data that are "
                    "not another gzip member; the file is damaged or was joined with "
                    "something else"
                )
            inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        block = view[position : position + _GZIP_BLOCK]
        try:
            content = inflater.decompress(block, MAX_GUNZIPPED_BYTES - size + 1)
        except zlib.error as error:
            raise InteropError(f"{name} is not a valid gzip file: {error}") from None
        size += len(content)
        if size > MAX_GUNZIPPED_BYTES or inflater.unconsumed_tail:
            raise InteropError(
                f"{name} expands to more than {MAX_GUNZIPPED_BYTES:,} bytes; "
                "no vocabulary is that large"
            )
        contents.append(content)
        if inflater.eof:
            position += len(block) - len(inflater.unused_data)
            inflater = None
        elif position + len(block) >= len(data):
            raise InteropError(f"{name} is a truncated gzip file")
        else:
            position += len(block)


#: How much compressed input :func:`_gunzip` hands zlib at a time.
_GZIP_BLOCK: Final = 1 << 16
#: The first byte that is not zero padding.
_NOT_ZERO: Final = re.compile(rb"[^\x00]")


@dataclass(frozen=True, slots=True)
class _Input:
    name: str
    kind: FileKind
    data: bytes
    #: The parsed JSON object; empty for a text file.
    document: dict[str, Any]


def import_vocabulary(
    paths: Sequence[str | os.PathLike[str]],
    *,
    pattern: str | SplitPattern | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> ImportResult:
    """Import a byte-level BPE vocabulary from its files, detecting the format.

    Accepts OpenAI's ``encoder.json`` + ``vocab.bpe``, Hugging Face's ``vocab.json`` +
    ``merges.txt`` (in either order), a ``tokenizer.json``, or a ``.tiktoken`` file.
    Raises InteropError for an unknown format, a wrong combination of files, or a
    vocabulary bpetite cannot reproduce exactly; OSError if a file cannot be read.

    A ``.tiktoken`` file records neither its split pattern nor its special tokens:
    OpenAI's official files are recognised by their sha256 and get tiktoken's; for any
    other, give `pattern` (a preset name or a regex; default GPT-2's) and
    `special_tokens` (text -> id; default ``<|endoftext|>`` after the last rank).
    """
    inputs = [_read(path) for path in paths]
    kinds = sorted(item.kind for item in inputs)
    if (pattern is not None or special_tokens is not None) and kinds != [".tiktoken"]:
        raise InteropError(
            "a pattern or special tokens can only be given for a .tiktoken file; the other "
            "formats record their own"
        )
    if kinds == ["tokenizer.json"]:
        return import_tokenizer_json(inputs[0].document, inputs[0].name)
    if kinds == [".tiktoken"]:
        return import_tiktoken(
            inputs[0].data, inputs[0].name, pattern=pattern, special_tokens=special_tokens
        )
    if kinds == ["merges", "vocabulary JSON"]:
        vocab_file = next(item for item in inputs if item.kind == "vocabulary JSON")
        merges_file = next(item for item in inputs if item.kind == "merges")
        merges, lines = parse_merges_text(merges_file.data, merges_file.name)
        return import_tables(
            check_vocab(vocab_file.document, vocab_file.name),
            merges,
            {},
            "vocab+merges",
            vocab_file.name,
            merge_at=lambda rank: f"{merges_file.name} line {lines[rank]}",
        )
    if kinds == ["vocabulary JSON"]:
        raise InteropError(
            f"{inputs[0].name} is a vocabulary JSON; give its merges file (vocab.bpe or "
            "merges.txt) too"
        )
    if kinds == ["merges"]:
        raise InteropError(
            f"{inputs[0].name} is a merges file; give its vocabulary JSON (encoder.json or "
            "vocab.json) too"
        )
    if not inputs:
        raise InteropError(f"no input files; {_EXPECTED}")
    found = ", ".join(f"{item.name} ({item.kind})" for item in inputs)
    raise InteropError(f"cannot import {found} together; {_EXPECTED}")


def _read(path: str | os.PathLike[str]) -> _Input:
    name = f"'{os.fspath(path)}'"
    data = Path(path).read_bytes()
    if data.startswith(_GZIP_MAGIC):  # cl100k_base.tiktoken.gz and the like
        data = _gunzip(data, name)
    if data.lstrip().startswith(b"{"):
        document = load_json(data, name)
        if isinstance(document, dict) and isinstance(document.get("model"), dict):
            return _Input(name, "tokenizer.json", data, document)
        if (
            isinstance(document, dict)
            and document
            and all(type(value) is int for value in document.values())
        ):
            return _Input(name, "vocabulary JSON", data, document)
        raise InteropError(
            f"cannot tell what {name} is: a JSON object that is neither a tokenizer.json "
            '(it has no "model") nor a vocabulary of tokens to integer ids'
        )
    lines = [line for line in data.splitlines()[: _SNIFFED_LINES + 1] if line][:_SNIFFED_LINES]
    if lines and lines[0].startswith(b"#version"):
        return _Input(name, "merges", data, {})
    if lines and all(_TIKTOKEN_LINE.fullmatch(line) for line in lines):
        return _Input(name, ".tiktoken", data, {})
    if lines and all(len(line.split(b" ")) == 2 for line in lines):
        return _Input(name, "merges", data, {})
    detail = "it is empty" if not data.strip() else "its contents match none of them"
    raise InteropError(
        f"cannot tell the format of {name} ({detail}): bpetite imports a tokenizer.json, a "
        "vocabulary JSON with its merges file, or a .tiktoken file"
    )
