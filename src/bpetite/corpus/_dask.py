"""Counting and dataset encoding on a Dask cluster, when one machine is not enough.

Dask is the scheduler; bpetite adds only the tasks. Each file is one task. A counting
task returns the file's chunk counts, which the caller adds up exactly as counts files
are merged. Any other stage hands in its own task (:func:`dask_map_in_order`): the
dataset's writes a file's ids to a temp file beside the output and returns how many
there are. So what crosses the network is paths, the model (once per worker) and
counts, never the corpus. Every path must therefore name the same file on
every worker (a shared filesystem), and for a dataset the output's directory too.

A worker that dies loses its running task; Dask runs that task again elsewhere (up to
its ``distributed.scheduler.allowed-failures``), and since a task's result depends only
on its file, the result is still exact.

``dask`` and ``distributed`` are an optional extra (``bpetite[dask]``), imported only
when a cluster is actually used.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, TypeVar

from bpetite.core._patterns import SplitPattern, resolve_pattern
from bpetite.core._progress import Progress, ProgressCallback, ignore_progress
from bpetite.corpus._counting import Piece, count_piece, count_row_group, expand_inputs
from bpetite.corpus._delimited import check_delimiter, parquet_refusal
from bpetite.corpus._parquet import DEFAULT_TEXT_COLUMN, is_parquet, row_groups
from bpetite.corpus._streaming import DEFAULT_BLOCK_SIZE, check_block_size
from bpetite.corpus._workers import default_workers

T = TypeVar("T")

#: The address that means "start a LocalCluster of processes on this machine".
LOCAL: Final = "local"


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
    """:func:`~bpetite.corpus._counting.count_files` on a Dask cluster: one task per file.

    Equal to the local count, whatever the cluster does: counts are sums. Directories
    are expanded here, so this process must see the files too. A Parquet file is one
    task too, its `text_column` read a row group at a time on the worker. With
    `doc_delimiter`, each text file's documents are counted apart, as locally.
    """
    check_block_size(block_size)
    doc_delimiter = check_delimiter(doc_delimiter)
    report = progress or ignore_progress
    files = [str(path) for path in expand_inputs(paths)]
    for path in files:  # refused here, as locally, before any task runs
        if doc_delimiter is not None and is_parquet(path):
            raise parquet_refusal(path)
    sizes = [Path(path).stat().st_size for path in files]
    total = sum(sizes)
    report(Progress("count", "start", 0, total))
    # pure=False: a file named twice is two documents, so two tasks, not one cached.
    source = resolve_pattern(pattern).source  # a str crosses the network; workers compile it
    futures = client.map(
        _count_file,
        files,
        block_size=block_size,
        pattern=source,
        text_column=text_column,
        doc_delimiter=doc_delimiter,
        pure=False,
    )
    str_counts: Counter[str] = Counter()
    done = 0
    from distributed import as_completed

    index_of = {future.key: index for index, future in enumerate(futures)}
    for future in as_completed(futures):  # type: ignore[no-untyped-call]
        partial: Counter[str] = future.result()  # re-raises the task's error here
        str_counts.update(partial)
        done += sizes[index_of[future.key]]
        report(Progress("count", "update", done, total))
    report(Progress("count", "done", total, total))
    return Counter({chunk.encode("utf-8"): n for chunk, n in str_counts.items()})


def _count_file(
    path: str,
    block_size: int,
    pattern: str,
    text_column: str = DEFAULT_TEXT_COLUMN,
    doc_delimiter: str | None = None,
) -> Counter[str]:
    """On a worker: the chunk counts of one whole file, cut with `pattern`."""
    counts: Counter[str] = Counter()
    if is_parquet(path):
        for group in row_groups(path, text_column):
            piece = Piece(path, 0, None, group.size, group.index)
            count_row_group(piece, counts, None, pattern, text_column, None)
        return counts
    piece = Piece(path, 0, None, Path(path).stat().st_size)
    count_piece(piece, block_size, counts, pattern=pattern, doc_delimiter=doc_delimiter)
    return counts


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
