"""Encode every document and assemble the train and val arrays, in input order.

Documents are cut into pieces (:mod:`bpetite.corpus._encoding` says why the ids do not
change), the pieces are encoded here, by the worker pool or on Dask, and each piece is
copied into its split's temp file once every piece before it has been: so the bytes
never depend on the workers, the block size or the piece size. A document's separator
follows its last piece.
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

from bpetite.core._errors import WorkerError
from bpetite.core._progress import Progress, ProgressCallback
from bpetite.core._tokenizer import Tokenizer
from bpetite.corpus._counting import Piece, default_piece_bytes, plan_pieces
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
from bpetite.corpus._workers import Role, run_here, run_in_workers

#: How dataset workers are named in errors and progress; a death loses the whole run.
_ROLE: Final = Role("dataset", "encode", "its piece", "; nothing was written")

#: How much of a spool the parent copies at a time.
_COPY_BLOCK: Final = 1 << 20


@dataclass(frozen=True, slots=True)
class EncodeOptions:
    """How to encode: the dtype, the separator's id, the val fraction, where to run."""

    dtype: Dtype
    separator_id: int | None
    fraction: Fraction
    workers: int
    block_size: int
    piece_bytes: int | None
    dask: Any  # a distributed.Client, or None to run here or in local workers


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


def encode_all(
    tokenizer: Tokenizer,
    documents: Sequence[Document],
    temp_dir: Path,
    options: EncodeOptions,
    report: ProgressCallback,
) -> tuple[SplitFile, SplitFile]:
    """Encode every document into the train or val temp file, in input order."""
    files = [document.path for document in documents]
    total = sum(path.stat().st_size for path in files)
    streaming = tokenizer.split_pattern.is_preset  # no proven cut points for a custom one
    if streaming and options.dask is None:
        piece_bytes = options.piece_bytes
        if piece_bytes is None:
            piece_bytes = default_piece_bytes(total, options.workers)
        pieces = plan_pieces(files, piece_bytes)
    else:  # one task per file on Dask, and per file for a custom pattern
        pieces = [Piece(str(path), 0, None, path.stat().st_size) for path in files]
    # Which document each piece belongs to: a new document starts at every offset 0.
    owners: list[int] = []
    document = -1
    for piece in pieces:
        document += piece.start == 0
        owners.append(document)
    last_piece = {owner: index for index, owner in enumerate(owners)}

    separator = b""
    if options.separator_id is not None:
        separator = to_bytes(array(TYPECODES[options.dtype], [options.separator_id]))
    with (
        (temp_dir / "train.bin").open("wb") as train_handle,
        (temp_dir / "val.bin").open("wb") as val_handle,
    ):
        train = SplitFile(temp_dir / "train.bin", train_handle)
        val = SplitFile(temp_dir / "val.bin", val_handle)
        sources: dict[str, int] = {}  # spool path -> an open descriptor, for reading

        def append(index: int, written: Written) -> None:
            """Copy piece `index`'s ids into its split, in input order, then its separator."""
            owner = owners[index]
            split = val if in_val(owner, options.fraction) else train
            piece = pieces[index]
            if piece.start == 0:
                split.offsets.append(split.tokens)
                split.sources.append(documents[owner].name)
            source = sources.get(written.path)
            if source is None:
                source = sources[written.path] = os.open(written.path, os.O_RDONLY)
            _copy_range(source, written.start, written.size, split.handle)
            if written.alone:  # a file of its own (a Dask task's): done with it
                os.close(sources.pop(written.path))
                Path(written.path).unlink()
            split.tokens += written.tokens
            split.input_bytes += piece.size
            if separator and last_piece[owner] == index:
                split.handle.write(separator)
                split.tokens += 1

        job = EncodeJob(
            pieces,
            [documents[owner].name for owner in owners],
            options.dtype,
            options.block_size,
            str(temp_dir),
            streaming,
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

    def on_piece(index: int, tokens: int) -> None:
        nonlocal done
        path = job.piece_path(index)
        append(index, Written(str(path), 0, path.stat().st_size, tokens, alone=True))
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
