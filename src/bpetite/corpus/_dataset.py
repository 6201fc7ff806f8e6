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

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Final

from bpetite.core._atomic import check_destination, publish_atomically, write_atomically
from bpetite.core._constants import END_OF_TEXT_TOKEN
from bpetite.core._errors import NotATokenError, ParameterError
from bpetite.core._progress import ProgressCallback, ignore_progress
from bpetite.core._tokenizer import Tokenizer
from bpetite.corpus._assemble import EncodeOptions, encode_all, in_val
from bpetite.corpus._documents import check_paths, expand_documents, spool_stdin
from bpetite.corpus._encoding import MAX_ID, WIDER_DTYPE, Dtype
from bpetite.corpus._manifest import dumps_manifest, manifest_path, resolve_model
from bpetite.corpus._streaming import DEFAULT_BLOCK_SIZE, check_block_size
from bpetite.corpus._workers import POLL_SECONDS, check_workers, default_workers

#: How many times the temp folder is removed before a stray file is given up on.
_REMOVE_TRIES: Final = 5


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
    tokenizer, model_info = resolve_model(model)
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
    inputs = check_paths(paths)
    train_path = Path(output)
    val_path = None
    if fraction:
        val_path = train_path.with_name("val.bin") if val_output is None else Path(val_output)
    destinations = [train_path, manifest_path(train_path)]
    if val_path is not None:
        destinations += [val_path, manifest_path(val_path)]
    _check_destinations(destinations, overwrite=overwrite)
    expanded = expand_documents(inputs)

    report = progress or ignore_progress
    temp_dir = Path(
        tempfile.mkdtemp(dir=train_path.parent, prefix=f".{train_path.name}.", suffix=".tmp")
    )
    published: list[Path] = []
    try:
        documents = spool_stdin(expanded, temp_dir)
        if fraction and not any(in_val(index, fraction) for index in range(len(documents))):
            raise ParameterError(
                f"val_fraction {val_fraction} of {len(documents)} document(s) selects none "
                "for validation; each file is one document, so give more files or a larger "
                "fraction"
            )
        train, val = encode_all(
            tokenizer,
            documents,
            temp_dir,
            EncodeOptions(dtype, separator_id, fraction, workers, block_size, piece_bytes, dask),
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
            dumps_manifest(
                name,
                dtype=dtype,
                tokens=split.tokens,
                offsets=split.offsets,
                sources=split.sources,
                model_info=model_info,
                separator=separator,
                separator_id=separator_id,
                options=options,
            )
            for name, split, _ in outputs
        ]
        # The arrays first, then the manifests: a manifest means its array is complete.
        for _, split, destination in outputs:
            publish_atomically(split.temp, destination, overwrite=overwrite)
            published.append(destination)
        for (_, _, destination), manifest in zip(outputs, manifests, strict=True):
            write_atomically(manifest_path(destination), manifest, overwrite=overwrite)
            published.append(manifest_path(destination))
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
            str(manifest_path(destination)),
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


# --------------------------------------------------------------------------- checks


def _check_dtype(dtype: object, tokenizer: Tokenizer) -> Dtype:
    if dtype is None:
        return "uint16" if tokenizer.n_vocab - 1 <= MAX_ID["uint16"] else "uint32"
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


def _check_destinations(paths: Sequence[Path], *, overwrite: bool) -> None:
    """Refuse outputs that cannot be written, before any slow work."""
    resolved = [path.resolve() for path in paths]
    if len(set(resolved)) != len(resolved):
        raise ParameterError(
            f"the outputs {', '.join(str(path) for path in paths)} must all be different files"
        )
    for path in paths:
        check_destination(path, overwrite=overwrite)
