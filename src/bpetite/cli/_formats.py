"""What an input that is not UTF-8 is, when it is a kind of file that can be named.

An input that fails to decode is more often another kind of file than a damaged text: a
token array written by ``bpetite dataset`` or nanoGPT's ``prepare.py``, a Parquet table,
a compressed file, UTF-16 text. The message then names what was met and what reads it,
instead of the first byte that is not UTF-8. A text with a bad byte inside is none of
these, and keeps the message that names the byte and its offset.

Some such files decode as UTF-8 all the same: token ids below 128 as uint16, ASCII
text in UTF-16 without a byte order mark. Both put NUL bytes in the first block, which
text rarely holds; so an input whose first block holds one is looked at the same way
(:func:`refuse_named_binary`), and refused only if it is one of these kinds.
"""

from __future__ import annotations

import codecs
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from bpetite import BpetiteError
from bpetite._internal import MANIFEST_FORMAT, loads_json, shown
from bpetite.cli._errors import CliError
from bpetite.corpus import expand_inputs
from bpetite.errors import InvalidUtf8Error

#: The path that means "standard input" wherever a command reads a file.
STDIN: Final = "-"
#: Bytes of an input's start looked at: a NUL among them makes it binary (git's test).
HEAD_BYTES: Final = 8192
#: A manifest beside a ``.bin`` file is read only up to this size.
_MANIFEST_BYTES: Final = 64 << 20
#: The least of a text that decodes as UTF-8 to be called UTF-16 by its NULs.
_UTF16_LEAST: Final = 256
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


def describe_input(path: str) -> str:
    """How error messages name an input: the path in quotes, or standard input."""
    return "standard input" if path == STDIN else f"'{shown(path)}'"


def decode_utf8(data: bytes, path: str, wanted: Wanted = "text") -> str:
    """Decode `data`, all of `path`, as strict UTF-8, or fail saying what it is instead:
    a kind of file that can be named (``_formats``), else the first bad byte's offset."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        found = what_it_is(sample_bytes(path, data, whole=True), wanted)
        raise CliError(
            found or not_utf8(path, data[error.start], error.start, error.reason)
        ) from None
    if wanted == "text":
        refuse_named_binary(sample_bytes(path, data, whole=True))
    return text


def invalid_utf8(
    error: InvalidUtf8Error, sample: Sample | None = None, *, tables: bool = False
) -> CliError:
    """The same wording as a whole-input decode error, so every command reads alike.

    `sample` is what was read of standard input; a file is looked at again here.
    `tables`: the corpus reader read the inputs, a Parquet file as a table, so a bad
    byte of one is in a row's text (which the error's reason names).
    """
    if sample is None and error.source != STDIN:
        sample = sample_file(error.source)
    if tables and sample is not None and is_parquet_sample(sample):
        return CliError(
            f"{describe_input(error.source)} holds text that is not valid UTF-8: byte "
            f"0x{error.byte:02x} at byte offset {error.offset} ({error.reason})"
        )
    found = what_it_is(sample, "text") if sample is not None else None
    return CliError(found or not_utf8(error.source, error.byte, error.offset, error.reason))


def not_utf8(path: str, byte: int, offset: int, reason: str) -> str:
    """The one wording for a bad byte at `offset` of the input `path`."""
    return (
        f"{describe_input(path)} is not valid UTF-8: byte 0x{byte:02x} at byte offset "
        f"{offset} ({reason})"
    )


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


def is_parquet_sample(sample: Sample) -> bool:
    """True for a whole Parquet file (its magic at both ends), which the corpus commands
    read as Parquet, not as text."""
    return sample.head.startswith(_PARQUET) and sample.tail == _PARQUET


def what_it_is(sample: Sample, wanted: Wanted) -> str | None:
    """One line naming the kind of file `sample` is and what reads it, or None for a text.

    `wanted` is what the command reads: "text" (UTF-8 text files) or "ids" (a JSON array
    of token ids, what ``bpetite encode`` prints).
    """
    found = _named_kind(sample, wanted)
    if found is None and b"\x00" in sample.head:
        what = f"a binary file (it holds NUL bytes), not {_wanted(wanted)}"
        return f"{_shown(sample)} is {what}; {_reads(wanted)}"
    return found


def refuse_named_binary(sample: Sample) -> None:
    """Refuse an input read as UTF-8 text whose first block holds a NUL byte, if it is
    certainly another kind of file (a token file with bpetite's manifest beside it, an
    llm.c shard, UTF-16 text of at least :data:`_UTF16_LEAST` bytes); NUL is valid text
    otherwise, and such an input is read as usual. Magic bytes and names are not enough
    for text that decodes ("BZh..." is a bzip2 header and a word). Parquet passes: the
    corpus commands read it as a table (a stream too, once copied to a file)."""
    head = sample.head[:HEAD_BYTES]
    if b"\x00" in head and not head.startswith(_PARQUET):
        found = _named_kind(Sample(sample.name, head, sample.tail), "text", certain=True)
        if found is not None:
            raise CliError(found)


def refuse_named_binaries(inputs: Iterable[str | Path], stdin: Sample | None = None) -> None:
    """:func:`refuse_named_binary` for each file `inputs` name (a directory: every file
    under it): one look at its first block; and for `stdin`, what standard input starts
    with. An input that cannot be read passes: its reader says what is wrong with it."""
    if stdin is not None:
        refuse_named_binary(stdin)
    for given in inputs:
        try:
            refuse_named_binary_files([] if str(given) == STDIN else expand_inputs([given]))
        except (OSError, ValueError):
            continue


def refuse_named_binary_files(files: Iterable[str | Path]) -> None:
    """:func:`refuse_named_binaries` for files already expanded (no directory among them)."""
    for path in files:
        sample = sample_file(str(path))
        if sample is not None:
            refuse_named_binary(sample)


def _shown(sample: Sample) -> str:
    return "standard input" if sample.name == "-" else f"'{sample.name}'"


def _reads(wanted: Wanted) -> str:
    if wanted == "text":
        return "bpetite reads UTF-8 text files"
    return "decode reads a JSON array of ids, as bpetite encode prints them"


def _named_kind(sample: Sample, wanted: Wanted, *, certain: bool = False) -> str | None:
    """What :func:`what_it_is` can name, but a binary file it knows only by its NULs;
    `certain`, only what no text that decodes as UTF-8 could be mistaken for."""
    shown = _shown(sample)
    reads = _reads(wanted)
    by_magic = None if certain else _by_magic(sample, shown, wanted, reads)
    if by_magic is not None:
        return by_magic
    if sample.head[:8] == _LLMC_HEAD and len(sample.head) >= 12:
        tokens = int.from_bytes(sample.head[8:12], "little")
        return (
            f"{shown} is a token shard in llm.c's format (header magic 20240520, version 1, "
            f"{tokens:,} uint16 ids after its 1,024-byte header, as bpetite dataset --format "
            f"llmc writes it), not {_wanted(wanted)}; {reads}"
        )
    binary = b"\x00" in sample.head or not _utf8_so_far(sample.head)
    token_file = _token_file(sample.name, by_name=not certain) if binary else None
    if token_file is not None:
        return f"{shown} is {token_file}, not {_wanted(wanted)}; {reads}"
    order = _utf16_order(sample.head)
    if order is not None and (not certain or len(sample.head) >= _UTF16_LEAST):
        return (
            f"{shown} holds a NUL in every other byte: UTF-{order} text without a byte order "
            f"mark, or 16-bit numbers such as token ids, not {_wanted(wanted)}; {reads} "
            f"(for UTF-16: iconv -f UTF-{order} -t UTF-8)"
        )
    return None


def _by_magic(sample: Sample, shown: str, wanted: Wanted, reads: str) -> str | None:
    """Parquet, a compressed file or UTF-16 with a byte order mark, by its first bytes."""
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
    return None


def _utf16_order(head: bytes) -> str | None:
    """``16LE`` or ``16BE`` when every other byte of `head` is NUL and no other is, as in
    ASCII or Latin-1 text in UTF-16; None otherwise."""
    even, odd = head[0 : len(head) - 1 : 2], head[1::2]
    if len(odd) < 2:
        return None
    if not odd.strip(b"\x00") and b"\x00" not in even:
        return "16LE"
    if not even.strip(b"\x00") and b"\x00" not in odd:
        return "16BE"
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


def _token_file(name: str, *, by_name: bool = True) -> str | None:
    """How to describe a token array: bpetite's (its manifest beside it, whatever its
    name) or, `by_name`, a ``.bin`` file, nanoGPT's."""
    if name == "-":
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
    if not by_name or not name.endswith(".bin"):
        return None
    return (
        "a .bin file, most likely token ids as bpetite dataset or nanoGPT write them "
        "(numpy.fromfile reads them, with the dtype they were written in)"
    )
