"""Encode one piece of a document into a dataset's bytes: its ids, little-endian, in the dtype.

A piece's ids are those ``Tokenizer.encode_ordinary`` gives its text, and the pieces
of a document, joined, give the document's: pieces are cut only where the whole text
has a chunk boundary (see :mod:`bpetite.corpus._counting`), BPE never merges across
one, and the streaming encoder only ever encodes stretches of text that re-split into
the same chunks. A custom ``SplitPattern`` has no proven cut points, so with such a
model each document is one piece, read whole and encoded in one call. A Parquet piece
is a row group, many documents: its worker writes each one's ids between the BOS and
separator ids and says how many tokens each took, so that the parent can send each
document to its split. So does the worker of a piece of a text file cut into documents
by a delimiter (:mod:`bpetite.corpus._delimited`): such pieces hold whole documents,
and a document larger than a piece's whole-encoding size is streamed.

A worker appends the pieces it encodes to one spool file of its own and says where
each landed (:class:`Written`); the parent copies them into the output in order. One
spool per worker, not one file per piece, so the filesystem's cost does not grow with
the number of pieces. Measurements: docs/design-notes.md#corpus-one-spool-per-worker
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import IO, Final, Literal, NoReturn

from bpetite.core._budget import Budget
from bpetite.core._errors import InvalidUtf8Error, ParameterError
from bpetite.core._tokenizer import Tokenizer
from bpetite.corpus._counting import Piece
from bpetite.corpus._delimited import kept_documents
from bpetite.corpus._parquet import RowGroup, read_texts
from bpetite.corpus._streaming import encode_pieces, stream_file_text
from bpetite.corpus._workers import OnBytes

#: The dtypes a dataset can use, and the array typecode and largest id of each.
Dtype = Literal["uint16", "uint32"]
TYPECODES: Final[dict[str, str]] = {
    "uint16": "H",
    "uint32": "I" if array("I").itemsize == 4 else "L",
}
MAX_ID: Final[dict[str, int]] = {"uint16": (1 << 16) - 1, "uint32": (1 << 32) - 1}
#: A piece up to this size is read and encoded whole; a larger one is streamed. Bounds
#: a worker's memory at a few times this (the text and its ids).
WHOLE_PIECE_BYTES: Final = 8 << 20

#: How a refusal of an id too large for uint16 ends: the keyword that fixes it (the CLI
#: puts its flag in its place).
WIDER_DTYPE: Final = 'pass dtype="uint32"'


@dataclass(frozen=True, slots=True)
class EncodeJob:
    """What every worker needs to encode any piece; sent to each worker once."""

    pieces: Sequence[Piece]
    names: Sequence[str]  # the document name of each piece, for error messages
    dtype: Dtype
    block_size: int
    temp_dir: str
    streaming: bool
    text_column: str = "text"
    doc_cap: int | None = None
    bos_id: int | None = None  # written before each document of a Parquet piece
    separator_id: int | None = None  # and this after it
    doc_delimiter: str | None = None  # cuts each text piece into documents

    def piece_path(self, index: int) -> Path:
        """The file of piece `index` alone (a Dask task writes one)."""
        return Path(self.temp_dir, f"piece-{index}.bin")

    def spool_path(self, slot: int) -> Path:
        """The file worker `slot` appends all its pieces to."""
        return Path(self.temp_dir, f"spool-{slot}.bin")


@dataclass(frozen=True, slots=True)
class Written:
    """Where a piece's ids were written: `size` bytes of `path` from `start`."""

    path: str
    start: int
    size: int
    tokens: int
    alone: bool = False  # the file holds this piece only, and is removed once copied
    #: For a Parquet piece, or a text piece cut by a delimiter, the tokens of each
    #: document in turn (BOS and separator included); None for a piece of one text
    #: document.
    documents: tuple[int, ...] | None = None


def encode_piece(
    tokenizer: Tokenizer,
    job: EncodeJob,
    index: int,
    sink: IO[bytes],
    on_bytes: OnBytes | None,
) -> tuple[int, tuple[int, ...] | None]:
    """Append the ids of piece `index` to `sink` in the dtype's bytes; return how many,
    and for a Parquet piece or a delimited text piece how many each document took.

    Decoding is where invalid UTF-8 is found: InvalidUtf8Error names the document
    (``-`` for standard input, not its spool) and the offset in the whole file. An id
    too large for the dtype raises ParameterError naming the document.
    """
    piece = job.pieces[index]
    if piece.row_group is not None:
        documents = _encode_rows(tokenizer, job, index, sink)
        if on_bytes is not None:
            on_bytes(piece.size)
        return sum(documents), documents
    text = stream_file_text(
        piece.path, block_size=job.block_size, start=piece.start, end=piece.end, on_bytes=on_bytes
    )
    try:
        if job.doc_delimiter is not None:
            documents = _encode_documents(tokenizer, job, index, text, sink)
            return sum(documents), documents
        # A piece of up to WHOLE_PIECE_BYTES (or one block) is encoded whole, straight
        # into the dtype's array: streaming scans the text twice (once to find where it
        # may be cut), which costs more than holding a few megabytes. Text of multi-byte
        # characters has more bytes per character, so a one-block limit streamed it
        # sooner than English of the same length, and made it slower relative to
        # tiktoken. Measurements: docs/design-notes.md#corpus-whole-pieces
        stream = job.streaming and piece.size > max(job.block_size, WHOLE_PIECE_BYTES)
        return _write_ids(tokenizer, job, index, text, stream, sink), None
    except InvalidUtf8Error as error:
        raise InvalidUtf8Error(job.names[index], error.offset, error.byte, error.reason) from None


def _encode_rows(
    tokenizer: Tokenizer, job: EncodeJob, index: int, sink: IO[bytes]
) -> tuple[int, ...]:
    """Each document of a Parquet piece: BOS, its ids, the separator; the tokens of each."""
    piece = job.pieces[index]
    if piece.row_group is None:
        raise ValueError(f"{piece!r} is not a row group")
    typecode = TYPECODES[job.dtype]
    before, after, extra = _framing(job)
    group = RowGroup(piece.path, piece.row_group)
    sizes = []
    for text in read_texts(group, job.text_column, Budget(doc_cap=job.doc_cap), piece.rows):
        try:
            packed = tokenizer.encode_ordinary_array(text, typecode)
        except OverflowError:
            _too_large(job, index, max(tokenizer.encode_ordinary(text)))
        sink.write(before + to_bytes(packed) + after)
        sizes.append(len(packed) + extra)
    return tuple(sizes)


def _encode_documents(
    tokenizer: Tokenizer, job: EncodeJob, index: int, text: Iterable[str], sink: IO[bytes]
) -> tuple[int, ...]:
    """Each document of a delimited text piece, as a Parquet piece's rows: BOS, the ids of
    its first `doc_cap` characters, the separator; the tokens of each. Blank documents
    are dropped. One that grows past WHOLE_PIECE_BYTES characters is streamed.
    """
    if job.doc_delimiter is None:
        raise ValueError("the job has no doc_delimiter")
    before, after, extra = _framing(job)
    whole_chars = max(job.block_size, WHOLE_PIECE_BYTES)
    sizes = []
    for taken in kept_documents(text, job.doc_delimiter, job.doc_cap):
        gathered: list[str] = []
        length = 0
        for part in taken:
            gathered.append(part)
            length += len(part)
            if job.streaming and length > whole_chars:
                break
        sink.write(before)
        stream = job.streaming and length > whole_chars
        tokens = _write_ids(tokenizer, job, index, chain(gathered, taken), stream, sink)
        sink.write(after)
        sizes.append(tokens + extra)
    return tuple(sizes)


def _framing(job: EncodeJob) -> tuple[bytes, bytes, int]:
    """The bytes written before and after each document (BOS, separator), and their ids."""
    typecode = TYPECODES[job.dtype]
    before = b"" if job.bos_id is None else to_bytes(array(typecode, [job.bos_id]))
    after = b"" if job.separator_id is None else to_bytes(array(typecode, [job.separator_id]))
    return before, after, (job.bos_id is not None) + (job.separator_id is not None)


def _write_ids(
    tokenizer: Tokenizer,
    job: EncodeJob,
    index: int,
    text: Iterable[str],
    stream: bool,
    sink: IO[bytes],
) -> int:
    """Write the ids of the text made of `text`'s parts, streamed or whole; return how many."""
    typecode = TYPECODES[job.dtype]
    if not stream:
        whole = "".join(text)
        try:
            packed = tokenizer.encode_ordinary_array(whole, typecode)
        except OverflowError:
            _too_large(job, index, max(tokenizer.encode_ordinary(whole)))
        sink.write(to_bytes(packed))
        return len(packed)
    tokens = 0
    streamed = encode_pieces(tokenizer, text, allowed_special=set(), disallowed_special=())
    for ids in streamed:  # a lazy stream: decoding errors surface here too
        try:
            packed = array(typecode, ids)
        except OverflowError:
            _too_large(job, index, max(ids))
        sink.write(to_bytes(packed))
        tokens += len(packed)
    return tokens


def _too_large(job: EncodeJob, index: int, largest: int) -> NoReturn:
    raise ParameterError(
        f"{job.names[index]}: token id {largest} does not fit in {job.dtype} "
        f"(at most {MAX_ID[job.dtype]}); {WIDER_DTYPE}"
    )


def to_bytes(packed: array[int]) -> bytes:
    """Little-endian bytes, whatever this machine's byte order."""
    if sys.byteorder == "big":  # pragma: no cover - no big-endian CI machine
        packed.byteswap()
    return packed.tobytes()


class EncodeTask:
    """One worker's share of a dataset: every piece it encodes appended to its spool."""

    def __init__(self, tokenizer: Tokenizer, job: EncodeJob, slot: int) -> None:
        self._tokenizer = tokenizer
        self._job = job
        self._spool = job.spool_path(slot).open("wb")

    def run(self, index: int, on_bytes: OnBytes) -> Written:
        spool = self._spool
        start = spool.tell()
        tokens, documents = encode_piece(self._tokenizer, self._job, index, spool, on_bytes)
        return Written(spool.name, start, spool.tell() - start, tokens, documents=documents)

    def sync(self) -> None:
        """Flush the spool: the parent reads it through a descriptor of its own."""
        self._spool.flush()

    def finish(self) -> None:
        self._spool.close()


def encode_piece_file(
    tokenizer: Tokenizer, job: EncodeJob, index: int
) -> tuple[int, tuple[int, ...] | None]:
    """A Dask task: encode piece `index` into a file of its own; return its token counts."""
    with job.piece_path(index).open("wb") as sink:
        return encode_piece(tokenizer, job, index, sink, None)
