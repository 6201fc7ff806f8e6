"""What an input that is not UTF-8 is, when it is a kind of file that can be named.

An input that fails to decode is more often another kind of file than a damaged text: a
token array written by ``bpetite dataset`` or nanoGPT's ``prepare.py``, a Parquet table,
a compressed file, UTF-16 text. The message then names what was met and what reads it,
instead of the first byte that is not UTF-8. A text with a bad byte inside is none of
these, and keeps the message that names the byte and its offset.
"""

from __future__ import annotations

import codecs
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from bpetite import BpetiteError
from bpetite._internal import MANIFEST_FORMAT, loads_json

#: Bytes of an input's start looked at: a NUL among them makes it binary (git's test).
HEAD_BYTES: Final = 8192
#: A manifest beside a ``.bin`` file is read only up to this size.
_MANIFEST_BYTES: Final = 64 << 20
_PARQUET: Final = b"PAR1"
#: llm.c's and modded-nanogpt's shard header starts: int32 20240520, then version 1.
_LLMC_HEAD: Final = (20240520).to_bytes(4, "little") + (1).to_bytes(4, "little")
#: Magic numbers at the start of a file, and what to call it.
_COMPRESSED: Final = (
    (b"\x1f\x8b", "a gzip-compressed file", "gzip -dc"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file", "zstd -dc"),
    (b"\xfd7zXZ\x00", "an xz-compressed file", "xz -dc"),
    (b"BZh", "a bzip2-compressed file", "bzip2 -dc"),
)

Wanted = Literal["text", "ids"]


@dataclass(frozen=True, slots=True)
class Sample:
    """What is known of an input: its name as given, its first bytes, maybe its last 4."""

    name: str
    head: bytes
    tail: bytes | None  # None when the end is unknown (standard input, read in part)


def sample_file(path: str) -> Sample | None:
    """The start and end of the regular file at `path`; None for anything else (a pipe
    cannot be read twice), or if it cannot be read."""
    try:
        if not stat.S_ISREG(Path(path).stat().st_mode):
            return None
        with Path(path).open("rb") as stream:
            head = stream.read(HEAD_BYTES)
            size = stream.seek(0, 2)
            stream.seek(max(size - len(_PARQUET), 0))
            return Sample(path, head, stream.read())
    except OSError:
        return None


def sample_bytes(name: str, data: bytes, *, whole: bool) -> Sample:
    """A sample of `data`, read from `name`; `whole` when it is all of the input."""
    return Sample(name, data[:HEAD_BYTES], data[-len(_PARQUET) :] if whole else None)


def what_it_is(sample: Sample, wanted: Wanted) -> str | None:
    """One line naming the kind of file `sample` is and what reads it, or None for a text.

    `wanted` is what the command reads: "text" (UTF-8 text files) or "ids" (a JSON array
    of token ids, what ``bpetite encode`` prints).
    """
    shown = "standard input" if sample.name == "-" else f"'{sample.name}'"
    reads = (
        "bpetite reads UTF-8 text files"
        if wanted == "text"
        else "decode reads a JSON array of ids, as bpetite encode prints them"
    )
    if sample.head.startswith(_PARQUET):
        whole = sample.tail == _PARQUET
        kind = "a Parquet file" if whole else "Parquet data (it starts with Parquet's magic bytes)"
        return (
            f"{shown} is {kind}, not {_wanted(wanted)}; {reads} (train, count and dataset "
            f"read Parquet: --input FILE.parquet --text-column NAME)"
        )
    for magic, kind, command in _COMPRESSED:
        if sample.head.startswith(magic):
            source = "FILE" if sample.name == "-" else f"'{sample.name}'"
            return (
                f"{shown} is {kind}, not {_wanted(wanted)}; decompress it first: "
                f"{command} {source} | bpetite ... --input -"
            )
    if sample.head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return (
            f"{shown} is UTF-16 text (it starts with a UTF-16 byte order mark); bpetite reads "
            f"UTF-8: convert it first, e.g. iconv -f UTF-16 -t UTF-8"
        )
    if sample.head[:8] == _LLMC_HEAD and len(sample.head) >= 12:
        tokens = int.from_bytes(sample.head[8:12], "little")
        return (
            f"{shown} is a token shard in llm.c's format (header magic 20240520, version 1, "
            f"{tokens:,} uint16 ids after its 1,024-byte header, as bpetite dataset --format "
            f"llmc writes it), not {_wanted(wanted)}; {reads}"
        )
    binary = b"\x00" in sample.head or not _utf8_so_far(sample.head)
    token_file = _token_file(sample.name) if binary else None
    if token_file is not None:
        return f"{shown} is {token_file}, not {_wanted(wanted)}; {reads}"
    if b"\x00" in sample.head:
        return f"{shown} is a binary file (it holds NUL bytes), not {_wanted(wanted)}; {reads}"
    return None


def _utf8_so_far(head: bytes) -> bool:
    """True if `head` is UTF-8, but for a character cut at its end."""
    try:
        codecs.getincrementaldecoder("utf-8")("strict").decode(head)
    except UnicodeDecodeError:
        return False
    return True


def _wanted(wanted: Wanted) -> str:
    return "UTF-8 text" if wanted == "text" else "a JSON array of token ids"


def _token_file(name: str) -> str | None:
    """How to describe a token array: bpetite's (its manifest beside it) or nanoGPT's."""
    if name == "-" or not name.endswith(".bin"):
        return None
    manifest = Path(name + ".json")
    dtype = None
    try:
        if manifest.stat().st_size <= _MANIFEST_BYTES:
            document = loads_json(manifest.read_bytes(), source=str(manifest))
            if isinstance(document, dict) and document.get("format") == MANIFEST_FORMAT:
                dtype = document.get("dtype")
    except (OSError, BpetiteError):
        pass
    if dtype in ("uint16", "uint32"):
        numpy_dtype = "numpy.uint16" if dtype == "uint16" else "numpy.uint32"
        return (
            f"a token file written by bpetite dataset ({dtype} ids, described by "
            f"'{manifest}'; numpy.fromfile('{name}', dtype={numpy_dtype}) reads it)"
        )
    return (
        "a .bin file, most likely token ids as bpetite dataset or nanoGPT write them "
        "(numpy.fromfile reads them, with the dtype they were written in)"
    )
