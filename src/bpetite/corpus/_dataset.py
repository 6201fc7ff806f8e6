"""Encode a corpus into training data: one flat binary array of token ids, as nanoGPT reads it.

Layout: every document's ids (``encode_ordinary``: text that looks like a special token
is text, so a document cannot forge a boundary), each followed by the separator's id,
as little-endian ``uint16`` (when every id of the model fits) or ``uint32``, and nothing
else, so ``numpy.memmap(path, dtype=numpy.uint16, mode="r")`` reads it as is. Beside
it, ``<output>.json`` (the manifest) records the dtype, the counts, each document's
offset, the model's hash and the options that shaped the content.

Why the output never depends on the workers or the block size: files are cut into
pieces only at points that are chunk boundaries of the whole text (see
:mod:`bpetite.corpus._counting`), BPE never merges across a chunk boundary, and the streaming
encoder below only ever encodes stretches of text that re-split into the same chunks.
A custom ``SplitPattern`` has no proven safe cut points, so with such a model each
file is read whole and encoded in one call.

Each worker appends its pieces' ids to a spool file of its own and says where each
piece landed; the parent copies the pieces into the output in input order. One spool
per worker, not one file per piece: creating and deleting thousands of small files
made the filesystem's inode allocator, not the encoding, the cost of a run.

Atomic: everything is written under temporary names in the output's directory and
renamed at the end, the manifests last (a manifest means its ``.bin`` is complete); a
failure or Ctrl-C removes every temporary file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import IO, Any, Final, Literal, NoReturn

from bpetite.core._atomic import check_destination, publish_atomically, write_atomically
from bpetite.core._constants import END_OF_TEXT_TOKEN
from bpetite.core._errors import (
    InvalidUtf8Error,
    NotATokenError,
    ParameterError,
    WorkerError,
)
from bpetite.core._progress import Progress, ProgressCallback, ignore_progress
from bpetite.core._tokenizer import Tokenizer
from bpetite.corpus._counting import (
    Piece,
    default_piece_bytes,
    expand_inputs,
    plan_pieces,
)
from bpetite.corpus._streaming import (
    DEFAULT_BLOCK_SIZE,
    check_block_size,
    encode_pieces,
    read_blocks,
    stream_file_text,
)
from bpetite.corpus._workers import (
    POLL_SECONDS,
    OnBytes,
    Role,
    check_workers,
    default_workers,
    run_here,
    run_in_workers,
)

#: The manifest's format name and version.
MANIFEST_FORMAT: Final = "bpetite-dataset"
MANIFEST_VERSION: Final = 1

#: The dtypes a dataset can use, and the array typecode and largest id of each.
Dtype = Literal["uint16", "uint32"]
_TYPECODES: Final[dict[str, str]] = {
    "uint16": "H",
    "uint32": "I" if array("I").itemsize == 4 else "L",
}
_MAX_ID: Final[dict[str, int]] = {"uint16": (1 << 16) - 1, "uint32": (1 << 32) - 1}

#: What the input path ``-`` means: standard input, spooled to a file first.
STDIN: Final = "-"


@dataclass(frozen=True, slots=True)
class DatasetSplit:
    """One written array: its paths, dtype, how many tokens and documents it holds."""

    path: str
    manifest_path: str
    dtype: Dtype
    tokens: int
    documents: int


@dataclass(frozen=True, slots=True)
class Dataset:
    """What :func:`write_dataset` wrote: the training split and, if asked for, validation."""

    train: DatasetSplit
    val: DatasetSplit | None
    input_bytes: int


@dataclass(frozen=True, slots=True)
class _Document:
    """One input file: the path to read and the name errors and the manifest use."""

    path: Path
    name: str


# --------------------------------------------------------------------------- public


def write_dataset(
    paths: Iterable[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    model: Tokenizer | str | os.PathLike[str],
    *,
    dtype: Dtype | None = None,
    separator: str | None = END_OF_TEXT_TOKEN,
    val_fraction: float = 0.0,
    val_output: str | os.PathLike[str] | None = None,
    workers: int | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    piece_bytes: int | None = None,
    overwrite: bool = False,
    progress: ProgressCallback | None = None,
    dask: Any = None,
) -> Dataset:
    """Encode the files `paths` name into `output`, a flat array of token ids, and its manifest.

    Each file is one document (a directory means every regular file under it, sorted;
    ``-`` is standard input); its ids are those of ``model.encode_ordinary(text)``,
    followed by `separator`'s id unless `separator` is None. `model` is a tokenizer or
    the path of an artifact. `dtype` defaults to ``uint16`` when every id of the model
    fits, else ``uint32``; an id that does not fit a forced dtype raises
    ParameterError. With `val_fraction` F, document ``i`` goes to `val_output`
    (default: ``val.bin`` beside `output`) when ``floor((i+1)·F) > floor(i·F)``, which
    spreads ``floor(n·F)`` documents evenly over the corpus.

    The bytes written never depend on `workers` (processes, default one per CPU),
    `block_size` or `piece_bytes`. Invalid UTF-8 raises InvalidUtf8Error naming the
    file and offset; it is found while encoding, and nothing is written. With several
    bad files it names the first in input order, whatever `workers`. Existing outputs
    raise OutputExistsError unless `overwrite`. `progress` gets ``"encode"`` events in
    input bytes. On spawn or forkserver start methods, a script needs the usual
    ``if __name__ == "__main__":`` guard to use several workers.

    `dask`, a ``distributed.Client``, runs one task per file on its cluster instead
    of local processes (the files and the output's directory must be shared paths);
    the bytes are the same.
    """
    tokenizer, model_info = _resolve_model(model)
    requested_dtype = dtype
    dtype = _check_dtype(dtype, tokenizer)
    separator_id = _separator_id(tokenizer, separator, dtype)
    fraction = _check_fraction(val_fraction)
    workers = check_workers(default_workers() if workers is None else workers)
    check_block_size(block_size)
    if piece_bytes is not None and (
        isinstance(piece_bytes, bool) or not isinstance(piece_bytes, int) or piece_bytes < 1
    ):
        raise ParameterError(f"piece_bytes must be a positive integer, got {piece_bytes!r}")
    if not isinstance(overwrite, bool):
        raise TypeError(f"overwrite must be True or False, got {overwrite!r}")
    inputs = [os.fspath(path) for path in _checked_paths(paths)]
    train_path = Path(output)
    val_path = None
    if fraction:
        val_path = train_path.with_name("val.bin") if val_output is None else Path(val_output)
    destinations = [train_path, _manifest_path(train_path)]
    if val_path is not None:
        destinations += [val_path, _manifest_path(val_path)]
    _check_destinations(destinations, overwrite=overwrite)
    expanded = _expand(inputs)

    report = progress or ignore_progress
    temp_dir = Path(
        tempfile.mkdtemp(dir=train_path.parent, prefix=f".{train_path.name}.", suffix=".tmp")
    )
    published: list[Path] = []
    try:
        documents = _spool_stdin(expanded, temp_dir)
        if fraction and not any(_in_val(index, fraction) for index in range(len(documents))):
            raise ParameterError(
                f"val_fraction {val_fraction} of {len(documents)} document(s) selects none "
                "for validation; each file is one document, so give more files or a larger "
                "fraction"
            )
        train, val = _encode_all(
            tokenizer,
            documents,
            temp_dir,
            _Options(dtype, separator_id, fraction, workers, block_size, piece_bytes, dask),
            report,
        )
        options = {
            "inputs": inputs,
            "dtype": requested_dtype,
            "separator": separator,
            "val_fraction": val_fraction,
        }
        outputs = [("train", train, train_path)]
        if val_path is not None:
            outputs.append(("val", val, val_path))
        manifests = [
            _manifest(name, split, dtype, model_info, separator, separator_id, options)
            for name, split, _ in outputs
        ]
        # The arrays first, then the manifests: a manifest means its array is complete.
        for _, split, destination in outputs:
            publish_atomically(split.temp, destination, overwrite=overwrite)
            published.append(destination)
        for (_, _, destination), manifest in zip(outputs, manifests, strict=True):
            write_atomically(_manifest_path(destination), manifest, overwrite=overwrite)
            published.append(_manifest_path(destination))
    except BaseException:
        # A failure part-way through publishing (the disk fills, Ctrl-C) must not leave
        # half a dataset: remove what this call already published.
        for path in published:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        raise
    finally:
        _remove_tree(temp_dir)
    results = [
        DatasetSplit(
            str(destination),
            str(_manifest_path(destination)),
            dtype,
            split.tokens,
            len(split.offsets),
        )
        for _, split, destination in outputs
    ]
    return Dataset(
        results[0], results[1] if len(results) > 1 else None, train.input_bytes + val.input_bytes
    )


def _remove_tree(folder: Path) -> None:
    """Remove the temp folder, even if a Dask task still running adds a file meanwhile.

    A task cannot be interrupted; one that creates its piece file between ``rmtree``
    listing the folder and removing it leaves the folder behind (not empty). Once the
    folder is gone, a later task fails to open its file there, so a few tries suffice.
    """
    for _ in range(_REMOVE_TRIES):
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            return
        time.sleep(POLL_SECONDS)


#: How many times the temp folder is removed before a stray file is given up on.
_REMOVE_TRIES: Final = 5


# --------------------------------------------------------------------------- checks


def _resolve_model(
    model: Tokenizer | str | os.PathLike[str],
) -> tuple[Tokenizer, dict[str, Any]]:
    """The tokenizer and what the manifest says about it: name, sha256, size, pattern."""
    if isinstance(model, Tokenizer):
        tokenizer = model
        name = None
        sha256 = hashlib.sha256(tokenizer.dumps()).hexdigest()  # of the file save writes
    elif isinstance(model, (str, os.PathLike)):
        path = Path(model)
        data = path.read_bytes()
        tokenizer = Tokenizer.load(path)
        name = path.name
        sha256 = hashlib.sha256(data).hexdigest()
    else:
        raise TypeError(f"model must be a Tokenizer or an artifact's path, got {model!r}")
    return tokenizer, {
        "name": name,
        "sha256": sha256,
        "n_vocab": tokenizer.n_vocab,
        "pattern": tokenizer.pattern_name,
    }


def _check_dtype(dtype: object, tokenizer: Tokenizer) -> Dtype:
    if dtype is None:
        return "uint16" if tokenizer.n_vocab - 1 <= _MAX_ID["uint16"] else "uint32"
    if dtype == "uint16" or dtype == "uint32":
        return dtype
    raise ParameterError(f"dtype must be 'uint16', 'uint32' or None (automatic), got {dtype!r}")


def _separator_id(tokenizer: Tokenizer, separator: str | None, dtype: Dtype) -> int | None:
    """The id written after each document: a special token's, or any single token's."""
    if separator is None:
        return None
    if not isinstance(separator, str):
        raise TypeError(f"separator must be a token's text or None, got {separator!r}")
    try:
        token_id = tokenizer.encode_single_token(separator)
    except NotATokenError:
        raise ParameterError(
            f"separator {separator!r} is not a single token of this model (its special "
            f"tokens: {', '.join(map(repr, tokenizer.special_tokens)) or 'none'})"
        ) from None
    _check_fits(token_id, dtype, f"the separator {separator!r}")
    return token_id


def _check_fits(token_id: int, dtype: Dtype, what: str) -> None:
    if token_id > _MAX_ID[dtype]:
        raise ParameterError(
            f"{what} has id {token_id}, which does not fit in {dtype} (at most "
            f"{_MAX_ID[dtype]}); use dtype uint32"
        )


def _check_fraction(value: object) -> Fraction:
    """The fraction as written (``0.1`` is exactly 1/10), so the split is the same everywhere."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"val_fraction must be a number, got {value!r}")
    if not 0 <= value < 1:
        raise ParameterError(f"val_fraction must be at least 0 and below 1, got {value!r}")
    return Fraction(repr(value))


def _in_val(index: int, fraction: Fraction) -> bool:
    """Document ``index`` goes to validation when ``floor((i+1)·F) > floor(i·F)``."""
    return bool(fraction) and (index + 1) * fraction // 1 > index * fraction // 1


def _checked_paths(paths: Iterable[str | os.PathLike[str]]) -> list[str | os.PathLike[str]]:
    if isinstance(paths, (str, bytes, os.PathLike)):
        raise TypeError("paths must be a list of paths, not one path: write [path]")
    checked = list(paths)
    if not checked:
        raise ParameterError("no input paths were given")
    if sum(os.fspath(path) == STDIN for path in checked) > 1:
        raise ParameterError("'-' (standard input) can be given only once")
    return checked


def _manifest_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def _check_destinations(paths: Sequence[Path], *, overwrite: bool) -> None:
    """Refuse outputs that cannot be written, before any slow work."""
    resolved = [path.resolve() for path in paths]
    if len(set(resolved)) != len(resolved):
        raise ParameterError(
            f"the outputs {', '.join(str(path) for path in paths)} must all be different files"
        )
    for path in paths:
        check_destination(path, overwrite=overwrite)


def _expand(inputs: Sequence[str]) -> list[_Document]:
    """Expand directories (before any temp file exists, so none is ever listed)."""
    documents: list[_Document] = []
    for raw in inputs:
        if raw == STDIN:
            documents.append(_Document(Path(STDIN), STDIN))
        else:
            documents += [_Document(path, str(path)) for path in expand_inputs([raw])]
    return documents


def _spool_stdin(documents: list[_Document], temp_dir: Path) -> list[_Document]:
    """Standard input is read once, into a file the workers can read like any other."""
    spooled = []
    for document in documents:
        if document.name == STDIN:
            spool = temp_dir / "stdin"
            with spool.open("wb") as handle:
                for block in read_blocks(sys.stdin.buffer):
                    handle.write(block)
            document = _Document(spool, STDIN)
        spooled.append(document)
    return spooled


# --------------------------------------------------------------------------- encoding


@dataclass(frozen=True, slots=True)
class _Options:
    dtype: Dtype
    separator_id: int | None
    fraction: Fraction
    workers: int
    block_size: int
    piece_bytes: int | None
    dask: Any


@dataclass(slots=True)
class _Split:
    """One output while it is written: its temp file, token count and document offsets."""

    temp: Path
    handle: IO[bytes]
    tokens: int = 0
    input_bytes: int = 0
    offsets: list[int] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


def _encode_all(
    tokenizer: Tokenizer,
    documents: Sequence[_Document],
    temp_dir: Path,
    options: _Options,
    report: ProgressCallback,
) -> tuple[_Split, _Split]:
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

    typecode = _TYPECODES[options.dtype]
    separator = b""
    if options.separator_id is not None:
        separator = _to_bytes(array(typecode, [options.separator_id]))
    with (
        (temp_dir / "train.bin").open("wb") as train_handle,
        (temp_dir / "val.bin").open("wb") as val_handle,
    ):
        train = _Split(temp_dir / "train.bin", train_handle)
        val = _Split(temp_dir / "val.bin", val_handle)

        sources: dict[str, int] = {}  # spool path -> an open descriptor, for reading

        def append(index: int, written: Written) -> None:
            """Copy piece `index`'s ids into its split, in input order, then its separator."""
            owner = owners[index]
            split = val if _in_val(owner, options.fraction) else train
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

        processes = min(options.workers, len(pieces))
        job = _Job(
            pieces,
            [documents[owner].name for owner in owners],
            options.dtype,
            options.block_size,
            str(temp_dir),
            streaming,
        )
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


@dataclass(frozen=True, slots=True)
class _Job:
    """What every worker needs to encode any piece; sent to each worker once."""

    pieces: Sequence[Piece]
    names: Sequence[str]  # the document name of each piece, for error messages
    dtype: Dtype
    block_size: int
    temp_dir: str
    streaming: bool

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


def encode_piece(
    tokenizer: Tokenizer,
    job: _Job,
    index: int,
    sink: IO[bytes],
    on_bytes: OnBytes | None,
) -> int:
    """Append the ids of piece `index` to `sink` in the dtype's bytes; return how many.

    Decoding is where invalid UTF-8 is found: InvalidUtf8Error names the document
    (``-`` for standard input, not its spool) and the offset in the whole file.
    """
    piece = job.pieces[index]
    text = stream_file_text(
        piece.path, block_size=job.block_size, start=piece.start, end=piece.end, on_bytes=on_bytes
    )
    typecode = _TYPECODES[job.dtype]
    tokens = 0
    try:
        # A piece that fits in one block is encoded whole, straight into the dtype's
        # array: streaming would read it in one block anyway, and it costs a second
        # regex pass to find where the text may be cut.
        if job.streaming and piece.size > job.block_size:
            streamed = encode_pieces(tokenizer, text, allowed_special=set(), disallowed_special=())
            for ids in streamed:  # a lazy stream: decoding errors surface here too
                try:
                    packed = array(typecode, ids)
                except OverflowError:
                    _too_large(job, index, max(ids))
                sink.write(_to_bytes(packed))
                tokens += len(packed)
        else:
            whole = "".join(text)
            try:
                packed = tokenizer.encode_ordinary_array(whole, typecode)
            except OverflowError:
                _too_large(job, index, max(tokenizer.encode_ordinary(whole)))
            sink.write(_to_bytes(packed))
            tokens += len(packed)
    except InvalidUtf8Error as error:
        raise InvalidUtf8Error(job.names[index], error.offset, error.byte, error.reason) from None
    return tokens


def _too_large(job: _Job, index: int, largest: int) -> NoReturn:
    raise ParameterError(
        f"{job.names[index]}: token id {largest} does not fit in {job.dtype} "
        f"(at most {_MAX_ID[job.dtype]}); use dtype uint32"
    )


class EncodeTask:
    """One worker's share of a dataset: every piece it encodes appended to its spool."""

    def __init__(self, tokenizer: Tokenizer, job: _Job, slot: int) -> None:
        self._tokenizer = tokenizer
        self._job = job
        self._spool = job.spool_path(slot).open("wb")

    def run(self, index: int, on_bytes: OnBytes) -> Written:
        spool = self._spool
        start = spool.tell()
        tokens = encode_piece(self._tokenizer, self._job, index, spool, on_bytes)
        return Written(spool.name, start, spool.tell() - start, tokens)

    def sync(self) -> None:
        """Flush the spool: the parent reads it through a descriptor of its own."""
        self._spool.flush()

    def finish(self) -> None:
        self._spool.close()


#: How dataset workers are named in errors and progress; a death loses the whole run.
_ROLE: Final = Role("dataset", "encode", "its piece", "; nothing was written")


def _copy_range(source: int, start: int, size: int, sink: IO[bytes]) -> None:
    """Copy `size` bytes of the file `source` from offset `start` to `sink`."""
    while size:
        block = os.pread(source, min(size, _COPY_BLOCK), start)
        if not block:  # pragma: no cover - a spool shorter than its worker said
            raise WorkerError(f"a dataset spool ended {size} bytes early")
        sink.write(block)
        start += len(block)
        size -= len(block)


#: How much of a spool the parent copies at a time.
_COPY_BLOCK: Final = 1 << 20


def _to_bytes(packed: array[int]) -> bytes:
    """Little-endian bytes, whatever this machine's byte order."""
    if sys.byteorder == "big":  # pragma: no cover - no big-endian CI machine
        packed.byteswap()
    return packed.tobytes()


def _encode_on_dask(
    client: Any,
    tokenizer: Tokenizer,
    job: _Job,
    append: Callable[[int, Written], None],
    total: int,
    report: ProgressCallback,
) -> None:
    from bpetite.corpus._dask import dask_encode_pieces  # only here: Dask is an optional extra

    report(Progress("encode", "start", 0, total))
    done = 0

    def on_piece(index: int, tokens: int) -> None:
        nonlocal done
        path = job.piece_path(index)
        append(index, Written(str(path), 0, path.stat().st_size, tokens, alone=True))
        done += job.pieces[index].size
        report(Progress("encode", "update", done, total))

    dask_encode_pieces(client, tokenizer, job, on_piece)


# --------------------------------------------------------------------------- manifest


def _manifest(
    name: str,
    split: _Split,
    dtype: Dtype,
    model_info: dict[str, Any],
    separator: str | None,
    separator_id: int | None,
    options: dict[str, Any],
) -> bytes:
    """The manifest's bytes: sorted keys, ASCII, so equal datasets have equal manifests."""
    manifest = {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "split": name,
        "dtype": dtype,
        "byteorder": "little",
        "tokens": split.tokens,
        "documents": len(split.offsets),
        "document_offsets": split.offsets,
        "document_sources": split.sources,
        "separator": None if separator is None else {"text": separator, "id": separator_id},
        "model": model_info,
        "options": options,
    }
    return (json.dumps(manifest, sort_keys=True, separators=(",", ":")) + "\n").encode("ascii")
