"""Encode every document and assemble the train and val arrays, in input order.

Documents are cut into pieces (:mod:`bpetite.corpus._encoding` says why the ids do not
change), the pieces are encoded here, by the worker pool or on Dask, and each piece is
copied into its split's temp file once every piece before it has been: so the bytes
never depend on the workers, the block size or the piece size. A document's separator
follows its last piece. A piece of many documents (a Parquet row group, or a text
piece cut by a delimiter) comes back with each document's token count, and each
document goes to its split in turn.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import IO, Any, Final

from bpetite.core._budget import Budget
from bpetite.core._errors import WorkerError
from bpetite.core._progress import Progress, ProgressCallback
from bpetite.core._tokenizer import Tokenizer
from bpetite.corpus._counting import Piece, default_piece_bytes, plan_inputs
from bpetite.corpus._dask import dask_map_in_order
from bpetite.corpus._documents import Document
from bpetite.corpus._encoding import (
    TYPECODES,
    Dtype,
    EncodeJob,
    EncodeTask,
    Written,
    encode_piece_file,
    to_bytes,
)
from bpetite.corpus._parquet import DEFAULT_TEXT_COLUMN
from bpetite.corpus._workers import Role, run_here, run_in_workers

#: How dataset workers are named in errors and progress; a death loses the whole run.
_ROLE: Final = Role("dataset", "encode", "its piece", "; nothing was written")

#: How much of a spool the parent copies at a time.
_COPY_BLOCK: Final = 1 << 20


@dataclass(frozen=True, slots=True)
class EncodeOptions:
    """How to encode: the dtype, the BOS and separator ids, the val fraction, the budget,
    where to run."""

    dtype: Dtype
    separator_id: int | None
    fraction: Fraction
    workers: int
    block_size: int
    piece_bytes: int | None
    dask: Any  # a distributed.Client, or None to run here or in local workers
    bos_id: int | None = None
    text_column: str = DEFAULT_TEXT_COLUMN
    budget: Budget = field(default_factory=Budget)
    doc_delimiter: str | None = None


@dataclass(slots=True)
class SplitFile:
    """One output while it is written: its temp file, token count and document offsets."""

    temp: Path
    handle: IO[bytes]
    tokens: int = 0
    input_bytes: int = 0
    offsets: list[int] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


def in_val(index: int, fraction: Fraction) -> bool:
    """Document ``index`` goes to validation when ``floor((i+1)·F) > floor(i·F)``.

    That spreads ``floor(n·F)`` documents evenly over the corpus.
    """
    return bool(fraction) and (index + 1) * fraction // 1 > index * fraction // 1


def plan_documents(
    tokenizer: Tokenizer, documents: Sequence[Document], options: EncodeOptions
) -> list[Piece]:
    """The pieces of `documents` in document order, as far as the budget takes them."""
    files = [document.path for document in documents]
    # No proven cut points for a custom pattern, except between documents (which are
    # encoded apart); Dask runs one task per file.
    delimited = options.doc_delimiter is not None
    split_files = (tokenizer.split_pattern.is_preset or delimited) and options.dask is None
    piece_bytes = options.piece_bytes
    if piece_bytes is None:
        total = sum(path.stat().st_size for path in files)
        piece_bytes = default_piece_bytes(total, options.workers)
    return plan_inputs(
        files,
        piece_bytes,
        split_files=split_files,
        text_column=options.text_column,
        budget=options.budget,
        block_size=options.block_size,
        doc_delimiter=options.doc_delimiter,
    )


def encode_all(
    tokenizer: Tokenizer,
    documents: Sequence[Document],
    pieces: Sequence[Piece],
    temp_dir: Path,
    options: EncodeOptions,
    report: ProgressCallback,
) -> tuple[SplitFile, SplitFile]:
    """Encode every document into the train or val temp file, in input order.

    Documents are numbered as they are appended, in order (a row group's only once it
    is read, since nulls are no documents), so the split of each never depends on
    the workers.
    """
    total = sum(piece.size for piece in pieces)
    names = {str(document.path): document.name for document in documents}
    # A piece of a text document ends it when the next piece starts another document.
    ends_document = [
        index + 1 == len(pieces)
        or pieces[index + 1].start == 0
        or pieces[index + 1].row_group is not None
        for index in range(len(pieces))
    ]
    typecode = TYPECODES[options.dtype]
    separator = b""
    if options.separator_id is not None:
        separator = to_bytes(array(typecode, [options.separator_id]))
    bos = b"" if options.bos_id is None else to_bytes(array(typecode, [options.bos_id]))
    itemsize = array(typecode).itemsize
    with (
        (temp_dir / "train.bin").open("wb") as train_handle,
        (temp_dir / "val.bin").open("wb") as val_handle,
    ):
        train = SplitFile(temp_dir / "train.bin", train_handle)
        val = SplitFile(temp_dir / "val.bin", val_handle)
        sources: dict[str, int] = {}  # spool path -> an open descriptor, for reading
        next_document = 0
        current = train  # the split of the text document being appended

        def start_document(name: str) -> SplitFile:
            nonlocal next_document
            split = val if in_val(next_document, options.fraction) else train
            next_document += 1
            split.offsets.append(split.tokens)
            split.sources.append(name)
            return split

        def append(index: int, written: Written) -> None:
            """Copy piece `index`'s ids into its split(s), in input order."""
            nonlocal current
            piece = pieces[index]
            source = sources.get(written.path)
            if source is None:
                source = sources[written.path] = os.open(written.path, os.O_RDONLY)
            name = names[piece.path]
            if written.documents is None:  # a stretch of one text document
                if piece.start == 0:
                    current = start_document(name)
                    if bos:
                        current.handle.write(bos)
                        current.tokens += 1
                _copy_range(source, written.start, written.size, current.handle)
                current.tokens += written.tokens
                current.input_bytes += piece.size
                if separator and ends_document[index]:
                    current.handle.write(separator)
                    current.tokens += 1
            else:  # many documents, each whole, BOS and separator written
                position = written.start
                for tokens in written.documents:
                    split = start_document(name)
                    _copy_range(source, position, tokens * itemsize, split.handle)
                    split.tokens += tokens
                    position += tokens * itemsize
                train.input_bytes += piece.size
            if written.alone:  # a file of its own (a Dask task's): done with it
                os.close(sources.pop(written.path))
                Path(written.path).unlink()

        job = EncodeJob(
            pieces,
            [names[piece.path] for piece in pieces],
            options.dtype,
            options.block_size,
            str(temp_dir),
            tokenizer.split_pattern.is_preset,
            options.text_column,
            options.budget.doc_cap,
            options.bos_id,
            options.separator_id,
            options.doc_delimiter,
        )
        processes = min(options.workers, len(pieces))
        task_of = partial(EncodeTask, tokenizer, job)
        try:
            if options.dask is not None:
                _encode_on_dask(options.dask, tokenizer, job, append, total, report)
            elif processes <= 1:
                run_here(task_of, len(pieces), _ROLE, total, report, on_result=append)
            else:
                run_in_workers(
                    task_of, len(pieces), processes, _ROLE, total, report, on_result=append
                )
        finally:
            for source in sources.values():
                os.close(source)
        report(Progress("encode", "done", total, total))
        train_handle.flush()
        val_handle.flush()
    return train, val


def _encode_on_dask(
    client: Any,
    tokenizer: Tokenizer,
    job: EncodeJob,
    append: Callable[[int, Written], None],
    total: int,
    report: ProgressCallback,
) -> None:
    """One Dask task per piece, each writing a file of its own; appended in order."""
    report(Progress("encode", "start", 0, total))
    done = 0

    def on_piece(index: int, result: tuple[int, tuple[int, ...] | None]) -> None:
        nonlocal done
        path = job.piece_path(index)
        tokens, documents = result
        written = Written(str(path), 0, path.stat().st_size, tokens, True, documents)
        append(index, written)
        done += job.pieces[index].size
        report(Progress("encode", "update", done, total))

    dask_map_in_order(client, encode_piece_file, (tokenizer, job), len(job.pieces), on_piece)


def _copy_range(source: int, start: int, size: int, sink: IO[bytes]) -> None:
    """Copy `size` bytes of the file `source` from offset `start` to `sink`."""
    while size:
        block = os.pread(source, min(size, _COPY_BLOCK), start)
        if not block:  # pragma: no cover - a spool shorter than its worker said
            raise WorkerError(f"a dataset spool ended {size} bytes early")
        sink.write(block)
        start += len(block)
        size -= len(block)
