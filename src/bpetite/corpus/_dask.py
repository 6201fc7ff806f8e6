"""Counting and dataset encoding on a Dask cluster, when one machine is not enough.

Dask is the scheduler; bpetite adds only the tasks. A counting task counts a batch of
files (:func:`file_batches`: at most 64 MiB, and a few batches per worker; a larger
file is a batch of its own), so a corpus of many small files does not make a task per
file. It returns the batch's chunk counts, which the caller adds up exactly as counts
files are merged (:func:`dask_count_files`); or, for training, deals them into one part
per worker by a hash of each chunk and keeps them there (:func:`dask_count_parts`), for
the merge loop's shares on those workers to add up (``_dask_merge``), so that the
table of distinct chunks never comes whole to the caller. Any other stage hands in its
own task (:func:`dask_map_in_order`): the dataset's writes a file's ids to a temp file
beside the output and returns how many there are, one task per file. So what crosses
the network is paths, the model (once per worker) and counts, never the corpus. Every
path must therefore name the same file on every worker (a shared filesystem), and for a
dataset the output's directory too.

A worker that dies loses its running task; Dask runs that task again elsewhere (up to
its ``distributed.scheduler.allowed-failures``), and since a task's result depends only
on its files, the result is still exact.

``dask`` and ``distributed`` are an optional extra (``bpetite[dask]``), imported only
when a cluster is actually used.
"""

from __future__ import annotations

import operator
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

from bpetite.core._errors import WorkerError
from bpetite.core._patterns import SplitPattern, resolve_pattern
from bpetite.core._progress import Progress, ProgressCallback, ignore_progress
from bpetite.corpus._counting import (
    Piece,
    count_piece,
    count_row_group,
    deal_parts,
    expand_inputs,
)
from bpetite.corpus._delimited import check_delimiter, parquet_refusal
from bpetite.corpus._parquet import DEFAULT_TEXT_COLUMN, is_parquet, row_groups, text_size
from bpetite.corpus._streaming import DEFAULT_BLOCK_SIZE, check_block_size
from bpetite.corpus._workers import default_workers

T = TypeVar("T")

#: The address that means "start a LocalCluster of processes on this machine".
LOCAL: Final = "local"
#: Counting tasks take files in batches of at most this many bytes (a larger file is a
#: batch of its own), and smaller ones so that each worker gets BATCHES_PER_WORKER of
#: them: a task costs the scheduler about a millisecond whatever its size, and a few
#: batches per worker keep each busy to the end.
BATCH_BYTES = 1 << 26
BATCHES_PER_WORKER = 4


@contextmanager
def dask_client(address: str, *, workers: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` for `address` (``"local"``: a LocalCluster of processes).

    The local cluster listens on 127.0.0.1 only, has `workers` single-threaded worker
    processes (default: one per CPU), and its HTTP endpoint (the dashboard, when bokeh
    is installed) takes a free loopback port. ImportError names the extra to
    install when Dask is missing.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ImportError(
            "Dask is not installed: install the extra with 'pip install bpetite[dask]'"
        ) from None
    if address == LOCAL:
        with (
            LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=workers or default_workers(),
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0",
            ) as cluster,
            Client(cluster) as client,  # type: ignore[no-untyped-call]
        ):
            yield client
    else:
        with Client(address) as client:  # type: ignore[no-untyped-call]
            yield client


# --------------------------------------------------------------------------- counting


def dask_count_files(
    paths: Iterable[str | os.PathLike[str]],
    client: Any,
    *,
    block_size: int = DEFAULT_BLOCK_SIZE,
    progress: ProgressCallback | None = None,
    pattern: str | SplitPattern = "gpt2",
    text_column: str = DEFAULT_TEXT_COLUMN,
    doc_delimiter: str | None = None,
) -> Counter[bytes]:
    """:func:`~bpetite.corpus._counting.count_files` on a Dask cluster: a task per batch of files.

    Equal to the local count, whatever the cluster does: counts are sums. Directories
    are expanded here, so this process must see the files too. A Parquet file is one
    task too, its `text_column` read a row group at a time on the worker. With
    `doc_delimiter`, each text file's documents are counted apart, as locally.
    """
    futures, sizes = _start_counting(
        _count_files, paths, client, block_size, pattern, text_column, doc_delimiter
    )
    str_counts: Counter[str] = Counter()
    for future in _as_counted(futures, sizes, progress or ignore_progress):
        str_counts.update(future.result())
    return Counter({chunk.encode("utf-8"): n for chunk, n in str_counts.items()})


@dataclass(frozen=True, slots=True)
class CountsOnDask:
    """Chunk counts that stay on a Dask cluster, dealt into shares by a hash of each chunk.

    ``shares[k]`` lists the futures of share ``k``'s parts, one per counting task, each a
    pickled dict of chunks (UTF-8) to counts; a chunk is in the same share in every task, so a
    share's parts add up to exact counts for its chunks. ``workers[k]`` is the worker
    meant to hold share ``k``. The merge loop takes the futures (the lists are emptied),
    so that the parts are freed once its shares hold them. `corpus_bytes` is the bytes of
    text counted: a text file's size, a Parquet file's documents in UTF-8.
    """

    client: Any
    workers: tuple[str, ...]
    shares: list[list[Any]]
    corpus_bytes: int


def dask_count_parts(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    client: Any,
    *,
    block_size: int = DEFAULT_BLOCK_SIZE,
    progress: ProgressCallback | None = None,
    pattern: str | SplitPattern = "gpt2",
    text_column: str = DEFAULT_TEXT_COLUMN,
    doc_delimiter: str | None = None,
) -> CountsOnDask:
    """:func:`dask_count_files`, with the counts left on the cluster: one share per worker.

    Each task deals its batch's counts into one part per worker, by the CRC-32 of each
    chunk (as the local counting workers deal theirs); the parts stay where they were
    counted until the merge loop's shares take them (:mod:`bpetite.corpus._dask_merge`).
    So this process never holds the table of distinct chunks, only futures. No `paths`
    gives empty shares, for counts held here to be dealt into.
    """
    workers = tuple(sorted(client.nthreads()))
    if not workers:
        raise WorkerError("the Dask cluster has no workers to count and merge on")
    futures: list[Any] = []
    sizes: list[int] = []
    if not (isinstance(paths, (list, tuple)) and not paths):  # none: empty shares
        futures, sizes = _start_counting(
            _count_file_parts,
            paths,
            client,
            block_size,
            pattern,
            text_column,
            doc_delimiter,
            shares=len(workers),
        )
    for _ in _as_counted(futures, sizes, progress or ignore_progress):
        pass  # each task's parts stay on its worker
    # Part k of each task as a future of its own (taken out where the task ran): only
    # part k ever moves to the worker of share k.
    shares = [
        [client.submit(operator.getitem, future, k) for future in futures]
        for k in range(len(workers))
    ]
    return CountsOnDask(client, workers, shares, sum(sizes))


def _start_counting(
    count: Callable[..., Any],
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    client: Any,
    block_size: int,
    pattern: str | SplitPattern,
    text_column: str,
    doc_delimiter: str | None,
    **more: Any,
) -> tuple[list[Any], list[int]]:
    """Check the options, expand `paths`, and submit ``count(paths, ...)`` for each batch
    of files (:func:`file_batches`); the futures and the batches' sizes."""
    check_block_size(block_size)
    doc_delimiter = check_delimiter(doc_delimiter)
    files = [str(path) for path in expand_inputs(paths)]
    for path in files:  # refused here, as locally, before any task runs
        if doc_delimiter is not None and is_parquet(path):
            raise parquet_refusal(path)
    sizes = _text_sizes(files, client, text_column)
    batches = file_batches(sizes, len(client.nthreads()))
    # pure=False: a file named twice is two documents, so counted twice, never cached.
    source = resolve_pattern(pattern).source  # a str crosses the network; workers compile it
    futures = client.map(
        count,
        [[files[index] for index in batch] for batch in batches],
        block_size=block_size,
        pattern=source,
        text_column=text_column,
        doc_delimiter=doc_delimiter,
        pure=False,
        **more,
    )
    return futures, [sum(sizes[index] for index in batch) for batch in batches]


def _text_sizes(files: list[str], client: Any, text_column: str) -> list[int]:
    """The bytes of text in each file, as a local count measures them: a text file's
    size, a Parquet file's documents in UTF-8 (read on the cluster, which checks them;
    the error raised is the first failing file's)."""
    sizes = [Path(path).stat().st_size for path in files]
    parquet = [index for index, path in enumerate(files) if is_parquet(path)]
    if parquet:
        futures = client.map(
            _parquet_text_size,
            [files[index] for index in parquet],
            text_column=text_column,
            pure=False,
        )
        try:
            for index, future in zip(parquet, futures, strict=True):
                sizes[index] = future.result()
        finally:
            client.cancel(futures)
    return sizes


def _parquet_text_size(path: str, text_column: str) -> int:
    """On a worker: the UTF-8 bytes of the documents of the Parquet file at `path`."""
    return sum(text_size(group, text_column) for group in row_groups(path, text_column))


def file_batches(sizes: Sequence[int], workers: int) -> list[range]:
    """The files (by index, in order) each counting task takes, given their `sizes`.

    A batch holds at most ``min(BATCH_BYTES, total / (BATCHES_PER_WORKER * workers))``
    bytes, or one file larger than that; files are taken in order.

    >>> file_batches([10, 10, 10, 50, 10], workers=1)
    [range(0, 2), range(2, 3), range(3, 4), range(4, 5)]
    """
    most = max(1, min(BATCH_BYTES, sum(sizes) // (BATCHES_PER_WORKER * max(1, workers))))
    batches: list[range] = []
    start, held = 0, 0
    for index, size in enumerate(sizes):
        if index > start and held + size > most:
            batches.append(range(start, index))
            start, held = index, 0
        held += size
    if start < len(sizes):
        batches.append(range(start, len(sizes)))
    return batches


def _as_counted(futures: list[Any], sizes: list[int], report: ProgressCallback) -> Iterator[Any]:
    """Each counting future as its task ends, reporting the bytes counted so far; a
    task's error is raised here."""
    from distributed import as_completed

    total = sum(sizes)
    report(Progress("count", "start", 0, total))
    done = 0
    index_of = {future.key: index for index, future in enumerate(futures)}
    for future in as_completed(futures):  # type: ignore[no-untyped-call]
        if future.status != "finished":
            future.result()  # re-raises the task's error (or its cancellation) here
        yield future
        done += sizes[index_of[future.key]]
        report(Progress("count", "update", done, total))
    report(Progress("count", "done", total, total))


def _count_files(
    paths: list[str],
    block_size: int,
    pattern: str,
    text_column: str = DEFAULT_TEXT_COLUMN,
    doc_delimiter: str | None = None,
) -> Counter[str]:
    """On a worker: the chunk counts of a batch of whole files, cut with `pattern`."""
    counts: Counter[str] = Counter()
    for path in paths:
        if is_parquet(path):
            for group in row_groups(path, text_column):
                piece = Piece(path, 0, None, 0, group.index)  # its size: no progress here
                count_row_group(piece, counts, None, pattern, text_column, None)
        else:
            piece = Piece(path, 0, None, Path(path).stat().st_size)
            count_piece(piece, block_size, counts, pattern=pattern, doc_delimiter=doc_delimiter)
    return counts


def _count_file_parts(
    paths: list[str],
    block_size: int,
    pattern: str,
    text_column: str,
    doc_delimiter: str | None,
    shares: int,
) -> tuple[bytes, ...]:
    """On a worker: the chunk counts of a batch of files, dealt into `shares` parts, each
    a pickled dict of UTF-8 chunks (pickled here: Dask would send a dict item by item)."""
    counts = _count_files(paths, block_size, pattern, text_column, doc_delimiter)
    return tuple(deal_parts(counts, shares))


# --------------------------------------------------------------------------- any stage


def dask_map_in_order(
    client: Any,
    run: Callable[..., T],
    shared: Sequence[Any],
    count: int,
    on_result: Callable[[int, T], None],
) -> None:
    """Run ``run(*shared, index)`` for every index below `count`, one task each, in order.

    ``on_result(index, result)`` is called in index order as results arrive; a task's
    error is raised here, and the tasks still queued are cancelled however the call
    ends. `shared` (a model, a job) goes to every worker once, scattered rather than
    pickled into each task: a tokenizer pickles as its definition, and each worker
    unpickles (builds) it once for all its tasks. `run` is pickled by reference, so it
    must be a module-level function the workers can import.
    """
    scattered = client.scatter(list(shared), broadcast=True, hash=False)
    futures = [client.submit(run, *scattered, index, pure=False) for index in range(count)]
    try:
        for index, future in enumerate(futures):
            on_result(index, future.result())
    finally:
        client.cancel(futures)
