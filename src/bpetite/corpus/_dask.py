"""Counting and dataset encoding on a Dask cluster, when one machine is not enough.

Dask is the scheduler; bpetite adds only the tasks. Each file is one task. A counting
task returns the file's chunk counts, which the caller adds up exactly as counts files
are merged; an encoding task writes the file's ids to a temp file beside the output and
returns how many there are. So what crosses the network is paths, the model (once per
worker) and counts, never the corpus. Every path must therefore name the same file on
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
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from bpetite.core._patterns import SplitPattern, resolve_pattern
from bpetite.core._progress import Progress, ProgressCallback, ignore_progress
from bpetite.core._tokenizer import Tokenizer
from bpetite.corpus._counting import Piece, count_piece, expand_inputs
from bpetite.corpus._streaming import DEFAULT_BLOCK_SIZE, check_block_size

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
        from bpetite.corpus._workers import default_workers

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
) -> Counter[bytes]:
    """:func:`~bpetite.corpus._counting.count_files` on a Dask cluster: one task per file.

    Equal to the local count, whatever the cluster does: counts are sums. Directories
    are expanded here, so this process must see the files too.
    """
    check_block_size(block_size)
    report = progress or ignore_progress
    files = [str(path) for path in expand_inputs(paths)]
    sizes = [Path(path).stat().st_size for path in files]
    total = sum(sizes)
    report(Progress("count", "start", 0, total))
    # pure=False: a file named twice is two documents, so two tasks, not one cached.
    source = resolve_pattern(pattern).source  # a str crosses the network; workers compile it
    futures = client.map(_count_file, files, block_size=block_size, pattern=source, pure=False)
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


def _count_file(path: str, block_size: int, pattern: str) -> Counter[str]:
    """On a worker: the chunk counts of one whole file, cut with `pattern`."""
    counts: Counter[str] = Counter()
    piece = Piece(path, 0, None, Path(path).stat().st_size)
    count_piece(piece, block_size, counts, pattern=pattern)
    return counts


# --------------------------------------------------------------------------- encoding


def dask_encode_pieces(
    client: Any,
    tokenizer: Tokenizer,
    job: Any,
    on_piece: Any,
) -> None:
    """Encode every piece of `job` as one task each; call ``on_piece(index, tokens)`` in order.

    The model is scattered to every worker once: a tokenizer pickles as its definition,
    and each worker unpickles (builds) it once and keeps it for all its tasks. A task
    writes its ids to ``job.piece_path(index)``, which must be on a filesystem the
    workers share with this process.
    """
    [model] = client.scatter([tokenizer], broadcast=True, hash=False)
    futures = [
        client.submit(_encode_piece, model, job, index, pure=False)
        for index in range(len(job.pieces))
    ]
    try:
        for index, future in enumerate(futures):
            on_piece(index, future.result())
    finally:
        client.cancel(futures)


def _encode_piece(tokenizer: Tokenizer, job: Any, index: int) -> int:
    """On a worker: encode one piece with the scattered tokenizer; return its token count."""
    from bpetite.corpus._dataset import encode_piece

    with job.piece_path(index).open("wb") as sink:
        return encode_piece(tokenizer, job, index, sink, None)
