"""Encode a corpus into training data: one flat binary array of token ids, as nanoGPT reads it.

Layout: every document's ids (``encode_ordinary``: text that looks like a special token
is text, so a document cannot forge a boundary), each followed by the separator's id,
as little-endian ``uint16`` (when every id of the model fits) or ``uint32``, and nothing
else, so ``numpy.memmap(path, dtype=numpy.uint16, mode="r")`` reads it as is. Beside
it, ``<output>.json`` (the manifest, :mod:`bpetite.corpus._manifest`) records the
dtype, the counts, each document's offset, the model's hash and the options that
shaped the content.

This module is the public flow: check every option before any slow work, read the
documents (:mod:`bpetite.corpus._documents`), encode and assemble them
(:mod:`bpetite.corpus._assemble`, which says why the bytes never depend on the
workers), then publish. Atomic: everything is written under temporary names in the
output's directory and renamed at the end, the manifests last (a manifest means its
``.bin`` is complete); a failure or Ctrl-C removes every temporary file.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import re
import shutil
import sys
import tempfile
import time
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Final, Literal

from bpetite.core._atomic import check_destination, publish_atomically, write_atomically
from bpetite.core._budget import Budget
from bpetite.core._constants import END_OF_TEXT_TOKEN
from bpetite.core._errors import NotATokenError, OutputExistsError, ParameterError
from bpetite.core._progress import ProgressCallback, ignore_progress
from bpetite.core._tokenizer import Tokenizer
from bpetite.corpus._assemble import EncodeOptions, SplitFile, encode_all, in_val, plan_documents
from bpetite.corpus._delimited import check_delimiter
from bpetite.corpus._documents import STDIN, check_paths, expand_documents, spool_stdin
from bpetite.corpus._encoding import MAX_ID, TYPECODES, WIDER_DTYPE, Dtype
from bpetite.corpus._manifest import dumps_manifest, manifest_path, resolve_model
from bpetite.corpus._parquet import DEFAULT_TEXT_COLUMN, check_text_column
from bpetite.corpus._streaming import DEFAULT_BLOCK_SIZE, check_block_size
from bpetite.corpus._workers import POLL_SECONDS, check_workers

#: How many times the temp folder is removed before a stray file is given up on.
_REMOVE_TRIES: Final = 5

#: The array layouts: a flat array of ids, or llm.c's header then uint16 ids.
FileFormat = Literal["bin", "llmc"]
#: llm.c's and modded-nanogpt's shard header: 256 int32, the magic, the version, the count.
LLMC_MAGIC: Final = 20240520
LLMC_VERSION: Final = 1
LLMC_HEADER_INTS: Final = 256
LLMC_MAX_TOKENS: Final = (1 << 31) - 1
#: What a shard's output name holds, replaced by its number.
SHARD_FIELD: Final = "{shard}"
#: How a refusal of an array too large for one llm.c file ends (the CLI puts its flag in).
SHARD_HINT: Final = "pass shard_tokens to cut it into shards"
#: How much of a temp array is copied at a time.
_COPY_BLOCK: Final = 1 << 20


@dataclass(frozen=True, slots=True)
class DatasetSplit:
    """One written split: its (first) array and manifest, dtype, tokens and documents.

    `paths` lists every array of the split: its shards in order, or its one array.
    A document that spans two shards is counted once, in the shard it starts in.
    """

    path: str
    manifest_path: str
    dtype: Dtype
    tokens: int
    documents: int
    paths: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Dataset:
    """What :func:`write_dataset` wrote: the training split and, if asked for, validation."""

    train: DatasetSplit
    val: DatasetSplit | None
    input_bytes: int


def write_dataset(
    paths: Iterable[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    model: Tokenizer | str | os.PathLike[str],
    *,
    dtype: Dtype | None = None,
    separator: str | None = END_OF_TEXT_TOKEN,
    bos: str | None = None,
    val_fraction: float = 0.0,
    val_output: str | os.PathLike[str] | None = None,
    file_format: FileFormat = "bin",
    shard_tokens: int | None = None,
    val_shards: int = 0,
    text_column: str = DEFAULT_TEXT_COLUMN,
    doc_delimiter: str | None = None,
    max_chars: int | None = None,
    doc_cap: int | None = None,
    workers: int | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    piece_bytes: int | None = None,
    overwrite: bool = False,
    progress: ProgressCallback | None = None,
    dask: Any = None,
) -> Dataset:
    """Encode the documents `paths` name into `output`, a flat array of token ids, and its manifest.

    A UTF-8 file is one document (a directory means every regular file under it,
    sorted; ``-`` is standard input); a Parquet file (known by its content) gives one
    document per row of its `text_column`. With `doc_delimiter` (e.g.
    ``"<|endoftext|>"``), every UTF-8 file is cut into documents at each occurrence
    of that text, as ``str.split`` cuts it: the delimiter belongs to no document, and
    a document that is empty or only whitespace is dropped (such as the newline after
    a file's last delimiter); with Parquet inputs it raises ParameterError, since their
    rows are already documents. Each document's ids are those of
    ``model.encode_ordinary(text)``, preceded by `bos`'s id (nanochat's layout) unless
    `bos` is None, and followed by `separator`'s id unless `separator` is None.
    `doc_cap` and `max_chars` are :meth:`Tokenizer.train_from_iterator`'s budget over
    the documents in input order. `model` is a tokenizer or the path of an artifact.
    `dtype` defaults to ``uint16`` when every id of the model fits, else ``uint32``;
    an id that does not fit a forced dtype raises ParameterError.

    Validation, by document: with `val_fraction` F, document ``i`` goes to
    `val_output` (default: ``val.bin`` beside `output`) when
    ``floor((i+1)·F) > floor(i·F)``, which spreads ``floor(n·F)`` documents evenly
    over the corpus, rows of one Parquet file, or a delimited text file's documents,
    included.

    `file_format` ``"llmc"`` writes llm.c's and modded-nanogpt's shard layout: a
    header of 256 little-endian int32 (20240520, version 1, the token count, zeros)
    then the ids as uint16. `shard_tokens` N cuts each split into files of exactly N
    tokens (the last one shorter; a document may span two), named by `output` (and
    `val_output`, default ``val_{shard}.bin`` beside it) with ``{shard}`` replaced by
    the shard's number, zero-padded to six digits. `val_shards` K (with
    `shard_tokens`, instead of `val_fraction`) makes the first K shards validation,
    as llm.c's first shard is. Every array gets its manifest, ``<array>.json``.

    The bytes written never depend on `workers` (processes, default one per CPU),
    `block_size` or `piece_bytes`. Invalid UTF-8 raises InvalidUtf8Error naming the
    file and offset; it is found while encoding, and nothing is written. With several
    bad files it names the first in input order, whatever `workers`. Existing outputs
    raise OutputExistsError unless `overwrite`; with `shard_tokens`, so does any file
    already named like a shard (or its manifest), and with `overwrite` those the new
    shards do not replace are removed once every new shard is written, so that a
    loader globbing the shards never mixes two runs. `progress` gets ``"encode"`` events in
    input bytes. On spawn or forkserver start methods, a script needs the usual
    ``if __name__ == "__main__":`` guard to use several workers.

    `dask`, a ``distributed.Client``, runs one task per file (per row group of a
    Parquet file) on its cluster instead of local processes (the files and the
    output's directory must be shared paths); the bytes are the same.
    """
    tokenizer, model_info = resolve_model(model)
    requested_dtype = dtype
    dtype = _check_dtype(dtype, tokenizer)
    _check_format(file_format, dtype, requested_dtype)
    separator_id = _token_id(tokenizer, separator, dtype, "separator")
    bos_id = _token_id(tokenizer, bos, dtype, "bos")
    fraction = _check_fraction(val_fraction)
    sharding = _check_sharding(shard_tokens, val_shards, fraction, file_format)
    budget = Budget(max_chars=max_chars, doc_cap=doc_cap)
    check_text_column(text_column)
    doc_delimiter = check_delimiter(doc_delimiter)
    workers = check_workers(workers)
    check_block_size(block_size)
    if piece_bytes is not None and (
        isinstance(piece_bytes, bool) or not isinstance(piece_bytes, int) or piece_bytes < 1
    ):
        raise ParameterError(f"piece_bytes must be a positive integer, got {piece_bytes!r}")
    if not isinstance(overwrite, bool):
        raise TypeError(f"overwrite must be True or False, got {overwrite!r}")
    inputs = check_paths(paths)
    train_path = Path(output)
    val_path = None
    if fraction or sharding.val_shards:
        default_val = "val.bin" if shard_tokens is None else f"val_{SHARD_FIELD}.bin"
        val_path = train_path.with_name(default_val) if val_output is None else Path(val_output)
    elif val_output is not None:
        raise ParameterError("val_output needs val_fraction (or val_shards with shard_tokens)")
    stale: list[Path] = []  # with shard_tokens, the files already named like shards
    if shard_tokens is not None:
        for path in (train_path, val_path):
            if path is not None and SHARD_FIELD not in path.name:
                raise ParameterError(
                    f"with shard_tokens, each output name must hold {SHARD_FIELD} (its shard's "
                    f"number goes there), e.g. 'train_{SHARD_FIELD}.bin'; got '{path}'"
                )
        if (
            val_path is not None
            and val_path.name == train_path.name
            and (val_path.parent.resolve() == train_path.parent.resolve())
        ):
            raise ParameterError(
                f"the train and val shards must have different names: '{val_path}'"
            )
        for path in (train_path, val_path):  # each shard's directory must exist
            if path is not None:
                check_destination(path.with_name(_shard_name(path, 0).name), overwrite=True)
                found = _shard_files(path)
                _check_no_shards(path, found, overwrite=overwrite)
                stale += found
    else:
        destinations = [train_path, manifest_path(train_path)]
        if val_path is not None:
            destinations += [val_path, manifest_path(val_path)]
        _check_destinations(destinations, overwrite=overwrite)
    expanded = expand_documents(inputs)
    sources = [document.path for document in expanded if document.name != STDIN]
    if not isinstance(model, Tokenizer):
        sources.append(Path(model))
    patterns = [path for path in (train_path, val_path) if path is not None]
    if shard_tokens is None:
        _refuse_inputs(destinations, sources)
    else:  # files named like shards are replaced or removed: none may be an input
        _refuse_inputs(stale, sources, doing="replacing or removing")

    report = progress or ignore_progress
    temp_dir = Path(
        tempfile.mkdtemp(dir=train_path.parent, prefix=f".{train_path.name}.", suffix=".tmp")
    )
    published: list[Path] = []
    options = {
        "inputs": inputs,
        "dtype": requested_dtype,
        "separator": separator,
        "bos": bos,
        "val_fraction": val_fraction,
        "format": file_format,
        "shard_tokens": shard_tokens,
        "val_shards": val_shards,
        "text_column": text_column,
        "doc_delimiter": doc_delimiter,
        "max_chars": max_chars,
        "doc_cap": doc_cap,
    }
    try:
        documents = spool_stdin(expanded, temp_dir)
        encode_options = EncodeOptions(
            dtype,
            separator_id,
            fraction,
            workers,
            block_size,
            piece_bytes,
            dask,
            bos_id,
            text_column,
            budget,
            doc_delimiter,
        )
        try:
            pieces = plan_documents(tokenizer, documents, encode_options)
        except ParameterError as error:  # about a file: standard input's spool is "-"
            message = str(error)
            for document in documents:
                message = message.replace(f"'{document.path}'", f"'{document.name}'")
            raise ParameterError(message) from None
        # One document per text file: the documents are known before encoding, so an
        # empty val is refused now, with a word on cutting files into documents.
        whole_files = doc_delimiter is None and all(piece.row_group is None for piece in pieces)
        if whole_files:
            count = sum(piece.start == 0 for piece in pieces)
            _check_val_documents(val_fraction, fraction, count, whole_files=True)
        train, val = encode_all(tokenizer, documents, pieces, temp_dir, encode_options, report)
        count = len(train.offsets) + len(val.offsets)
        _check_val_documents(val_fraction, fraction, count, whole_files=whole_files)
        arrays = _arrays(train, val, train_path, val_path, sharding, file_format, dtype, temp_dir)
        manifests = [
            dumps_manifest(
                written.split,
                dtype=dtype,
                tokens=written.tokens,
                offsets=written.offsets,
                sources=written.sources,
                model_info=model_info,
                separator=separator,
                separator_id=separator_id,
                options=options,
                extra=_manifest_extra(written, file_format, bos, bos_id),
            )
            for written in arrays
        ]
        # Shards are named only now that they are counted.
        _refuse_inputs([path for written in arrays for path in _files_of(written)], sources)
        # The arrays first, then the manifests: a manifest means its array is complete.
        for written in arrays:
            publish_atomically(written.temp, written.destination, overwrite=overwrite)
            published.append(written.destination)
        for written, manifest in zip(arrays, manifests, strict=True):
            write_atomically(manifest_path(written.destination), manifest, overwrite=overwrite)
            published.append(manifest_path(written.destination))
    except BaseException:
        # A failure part-way through publishing (the disk fills, Ctrl-C) must not leave
        # half a dataset: remove what this call already published.
        for path in published:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        raise
    finally:
        _remove_tree(temp_dir)
    if shard_tokens is not None:  # only now that the new shards are all written
        kept = {path for written in arrays for path in _files_of(written)}
        for pattern in patterns:
            for path in _shard_files(pattern):
                if path not in kept:
                    path.unlink(missing_ok=True)
    splits = {
        name: [written for written in arrays if written.split == name] for name in ("train", "val")
    }
    results = {
        name: DatasetSplit(
            str(chosen[0].destination),
            str(manifest_path(chosen[0].destination)),
            dtype,
            sum(written.tokens for written in chosen),
            sum(len(written.offsets) for written in chosen),
            tuple(str(written.destination) for written in chosen),
        )
        for name, chosen in splits.items()
        if chosen
    }
    return Dataset(results["train"], results.get("val"), train.input_bytes + val.input_bytes)


# --------------------------------------------------------------------------- arrays and shards


@dataclass(frozen=True, slots=True)
class _Sharding:
    tokens: int | None
    val_shards: int


@dataclass(frozen=True, slots=True)
class _Array:
    """One file to publish: its temp file, destination, split, and what its manifest says."""

    temp: Path
    destination: Path
    split: str
    tokens: int
    offsets: list[int]
    sources: list[str]


def _arrays(
    train: SplitFile,
    val: SplitFile,
    train_path: Path,
    val_path: Path | None,
    sharding: _Sharding,
    file_format: FileFormat,
    dtype: Dtype,
    temp_dir: Path,
) -> list[_Array]:
    """Every file to publish: one per split, or its shards; llm.c's header added."""
    itemsize = array(TYPECODES[dtype]).itemsize
    arrays: list[_Array] = []
    if sharding.tokens is None:
        splits = [("train", train, train_path)]
        if val_path is not None:
            splits.append(("val", val, val_path))
        for name, split, destination in splits:
            temp = split.temp
            if file_format == "llmc":
                _check_llmc_tokens(split.tokens, destination)
                temp = _copy_shard(split, 0, split.tokens, itemsize, temp_dir / f"{name}.llmc")
            arrays.append(
                _Array(temp, destination, name, split.tokens, split.offsets, split.sources)
            )
        return arrays
    size = sharding.tokens
    for name, split, pattern in (("train", train, train_path), ("val", val, val_path)):
        if pattern is None or (name == "val" and sharding.val_shards):
            continue
        if file_format == "llmc":
            _check_llmc_tokens(size, pattern)
        count = max(1, -(-split.tokens // size))
        for shard in range(count):
            first, last = shard * size, min((shard + 1) * size, split.tokens)
            arrays.append(
                _shard_array(
                    split, name, first, last, itemsize, file_format, pattern, shard, temp_dir
                )
            )
    if sharding.val_shards:  # the first shards of the one stream are validation
        if val_path is None:  # pragma: no cover - val_path is set whenever val_shards is
            raise ParameterError("val_shards needs a val output")
        if len(arrays) <= sharding.val_shards:
            raise ParameterError(
                f"val_shards {sharding.val_shards} leaves no shard for training: the corpus "
                f"made {len(arrays)} shard(s) of {size:,} tokens; lower shard_tokens or val_shards"
            )
        renamed = []
        for index, written in enumerate(arrays):
            if index < sharding.val_shards:
                destination, split_name = _shard_name(val_path, index), "val"
            else:
                destination = _shard_name(train_path, index - sharding.val_shards)
                split_name = "train"
            renamed.append(
                _Array(
                    written.temp,
                    destination,
                    split_name,
                    written.tokens,
                    written.offsets,
                    written.sources,
                )
            )
        arrays = renamed
    return arrays


def _check_llmc_tokens(tokens: int, destination: Path) -> None:
    """llm.c's header holds the token count as an int32."""
    if tokens > LLMC_MAX_TOKENS:
        raise ParameterError(
            f"'{destination}' would hold {tokens:,} tokens, more than llm.c's header can "
            f"count ({LLMC_MAX_TOKENS:,}); {SHARD_HINT}"
        )


def _shard_array(
    split: SplitFile,
    name: str,
    first: int,
    last: int,
    itemsize: int,
    file_format: FileFormat,
    pattern: Path,
    shard: int,
    temp_dir: Path,
) -> _Array:
    """Tokens ``first:last`` of `split` as shard number `shard`."""
    temp = temp_dir / f"{name}-{shard}.shard"
    _copy_shard(split, first, last, itemsize, temp, header=file_format == "llmc")
    position = bisect.bisect_left(split.offsets, first)
    stop = bisect.bisect_left(split.offsets, last)
    offsets = [offset - first for offset in split.offsets[position:stop]]
    return _Array(
        temp,
        _shard_name(pattern, shard),
        name,
        last - first,
        offsets,
        split.sources[position:stop],
    )


def _shard_name(pattern: Path, shard: int) -> Path:
    return pattern.with_name(pattern.name.replace(SHARD_FIELD, f"{shard:06d}"))


def _shard_files(pattern: Path) -> list[Path]:
    """The files in `pattern`'s directory named like one of its shards or their manifests,
    sorted: a loader that globs the shards would read them with the new ones."""
    parts = [re.escape(part) for part in pattern.name.split(SHARD_FIELD)]
    named = re.compile(parts[0] + "(?P<n>[0-9]{6,})" + "(?P=n)".join(parts[1:]) + r"(?:\.json)?")
    try:
        entries = list(os.scandir(pattern.parent))
    except FileNotFoundError:
        return []
    return sorted(
        pattern.with_name(entry.name)
        for entry in entries
        if named.fullmatch(entry.name) and not entry.is_dir(follow_symlinks=False)
    )


def _check_no_shards(pattern: Path, found: Sequence[Path], *, overwrite: bool) -> None:
    """Refuse, unless `overwrite`, the files `found` named like shards of `pattern`: new
    shards would replace some and leave the others beside them."""
    if not found or overwrite:
        return
    others = f" and {len(found) - 1} more file(s)" if len(found) > 1 else ""
    raise OutputExistsError(
        f"'{found[0]}'{others} named like the shards of '{pattern}' already exist; pass "
        "overwrite=True to replace them (the old shards that are not written again are "
        "removed once the new ones are all written)"
    )


def _copy_shard(
    split: SplitFile, first: int, last: int, itemsize: int, temp: Path, *, header: bool = True
) -> Path:
    """Write tokens ``first:last`` of `split`'s temp file to `temp`, after llm.c's header."""
    source = os.open(split.temp, os.O_RDONLY)
    try:
        with temp.open("wb") as sink:
            if header:
                sink.write(llmc_header(last - first))
            position, remaining = first * itemsize, (last - first) * itemsize
            while remaining:
                block = os.pread(source, min(remaining, _COPY_BLOCK), position)
                if not block:  # pragma: no cover - the temp file is ours
                    raise OSError(f"'{split.temp}' ended early")
                sink.write(block)
                position += len(block)
                remaining -= len(block)
    finally:
        os.close(source)
    return temp


def llmc_header(tokens: int) -> bytes:
    """llm.c's shard header: 256 little-endian int32, magic, version, token count, zeros."""
    header = array("i", [0] * LLMC_HEADER_INTS)
    header[0], header[1], header[2] = LLMC_MAGIC, LLMC_VERSION, tokens
    if sys.byteorder == "big":  # pragma: no cover - no big-endian CI machine
        header.byteswap()
    return header.tobytes()


def _manifest_extra(
    written: _Array, file_format: FileFormat, bos: str | None, bos_id: int | None
) -> dict[str, Any]:
    extra: dict[str, Any] = {
        "bos": None if bos is None else {"text": bos, "id": bos_id},
        "layout": file_format,
        "header_bytes": LLMC_HEADER_INTS * 4 if file_format == "llmc" else 0,
    }
    return extra


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


# --------------------------------------------------------------------------- checks


def _check_dtype(dtype: object, tokenizer: Tokenizer) -> Dtype:
    if dtype is None:
        return "uint16" if tokenizer.n_vocab - 1 <= MAX_ID["uint16"] else "uint32"
    if dtype == "uint16" or dtype == "uint32":
        return dtype
    raise ParameterError(f"dtype must be 'uint16', 'uint32' or None (automatic), got {dtype!r}")


def _token_id(tokenizer: Tokenizer, text: str | None, dtype: Dtype, what: str) -> int | None:
    """The id of the separator or BOS token `text`: a special token's, or any single token's."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a token's text or None, got {text!r}")
    try:
        token_id = tokenizer.encode_single_token(text)
    except NotATokenError:
        raise ParameterError(
            f"{what} {text!r} is not a single token of this model (its special "
            f"tokens: {', '.join(map(repr, tokenizer.special_tokens)) or 'none'})"
        ) from None
    _check_fits(token_id, dtype, f"the {what} {text!r}")
    return token_id


def _check_format(file_format: object, dtype: Dtype, requested: object) -> None:
    if file_format not in ("bin", "llmc"):
        raise ParameterError(f"file_format must be 'bin' or 'llmc', got {file_format!r}")
    if file_format == "llmc" and dtype != "uint16":
        why = "dtype is uint32" if requested == "uint32" else "this model has ids past 65,535"
        raise ParameterError(
            f"the llmc format stores uint16 ids (llm.c's version 1 header), but {why}; "
            "write the bin format instead"
        )


def _check_sharding(
    shard_tokens: object, val_shards: object, fraction: Fraction, file_format: FileFormat
) -> _Sharding:
    if shard_tokens is not None and (
        isinstance(shard_tokens, bool) or not isinstance(shard_tokens, int) or shard_tokens < 1
    ):
        raise ParameterError(f"shard_tokens must be a positive integer, got {shard_tokens!r}")
    if isinstance(val_shards, bool) or not isinstance(val_shards, int) or val_shards < 0:
        raise ParameterError(f"val_shards must be a whole number, got {val_shards!r}")
    if val_shards and shard_tokens is None:
        raise ParameterError("val_shards needs shard_tokens (it counts shards)")
    if val_shards and fraction:
        raise ParameterError(
            "give val_fraction (validation by document) or val_shards (by shard), not both"
        )
    return _Sharding(shard_tokens, val_shards)


def _check_val_documents(
    val_fraction: float, fraction: Fraction, count: int, *, whole_files: bool
) -> None:
    if fraction and not any(in_val(index, fraction) for index in range(count)):
        hint = "give more documents or a larger fraction"
        if whole_files:
            hint += (
                ", or a doc_delimiter to cut the text files into documents (each text file "
                "is one document without it)"
            )
        raise ParameterError(
            f"val_fraction {val_fraction} of {count} document(s) selects none for "
            f"validation; {hint}"
        )


def _check_fits(token_id: int, dtype: Dtype, what: str) -> None:
    if token_id > MAX_ID[dtype]:
        raise ParameterError(
            f"{what} has id {token_id}, which does not fit in {dtype} (at most "
            f"{MAX_ID[dtype]}); {WIDER_DTYPE}"
        )


def _check_fraction(value: object) -> Fraction:
    """The fraction as written (``0.1`` is exactly 1/10), so the split is the same everywhere."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"val_fraction must be a number, got {value!r}")
    if not 0 <= value < 1:
        raise ParameterError(f"val_fraction must be at least 0 and below 1, got {value!r}")
    return Fraction(repr(value))


def _files_of(written: _Array) -> tuple[Path, Path]:
    return written.destination, manifest_path(written.destination)


def _refuse_inputs(
    destinations: Sequence[Path], sources: Sequence[Path], doing: str = "writing"
) -> None:
    """Refuse an output that is an input document or the model's file, by any name (a
    symbolic or hard link counts): replacing it would destroy what the dataset is made
    from, whatever `overwrite` says. `doing` is what would be done to it."""
    existing = []
    for destination in destinations:
        with contextlib.suppress(OSError):  # nothing there yet: it cannot be an input
            existing.append((destination, destination.stat()))
    if not existing:
        return
    for source in sources:
        try:
            found = source.stat()
        except OSError:
            continue
        for destination, target in existing:
            if os.path.samestat(target, found):
                raise ParameterError(
                    f"the output '{destination}' is the input '{source}'; {doing} it would "
                    "destroy the input, even with overwrite=True: choose another output"
                )


def _check_destinations(paths: Sequence[Path], *, overwrite: bool) -> None:
    """Refuse outputs that cannot be written, before any slow work."""
    resolved = [path.resolve() for path in paths]
    if len(set(resolved)) != len(resolved):
        raise ParameterError(
            f"the outputs {', '.join(str(path) for path in paths)} must all be different files"
        )
    for path in paths:
        check_destination(path, overwrite=overwrite)
