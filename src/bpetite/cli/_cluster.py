"""``--dask ADDRESS``: connecting to a Dask cluster, and counting files on it for training.

Connecting is one place for every command that takes ``--dask`` (count, train,
dataset): a missing extra or an unreachable scheduler is one line, never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bpetite import SplitPattern
from bpetite._internal import shown
from bpetite.cli._errors import CliError
from bpetite.cli._progress import PhaseProgress, counting_progress
from bpetite.cli._reading import Reading, library_errors

if TYPE_CHECKING:
    from bpetite._internal import CountsOnDask


@contextmanager
def cluster(address: str | None, workers: int | None) -> Iterator[Any]:
    """A Dask client for --dask `address` (None without it); failing to connect is one
    line. `workers` sizes ``--dask local``'s cluster."""
    if address is None:
        yield None
        return
    from bpetite._internal import dask_client

    with ExitStack() as stack:
        try:
            client = stack.enter_context(dask_client(address, workers=workers))
        except ImportError as error:
            raise CliError(str(error)) from None
        except OSError as error:  # the scheduler cannot be reached
            raise CliError(f"cannot use the Dask cluster '{shown(address)}': {error}") from None
        yield client


def count_on_cluster(
    files: tuple[Path, ...],
    client: Any,
    pattern: SplitPattern,
    reading: Reading,
) -> CountsOnDask:
    """Count `files` on the cluster, leaving the counts there, a share per worker (no
    files: empty shares, for the counts held here)."""
    from bpetite._internal import dask_count_parts

    if not files:
        return dask_count_parts((), client, pattern=pattern)
    with PhaseProgress("count", "bytes", stream=sys.stderr) as phase, library_errors():
        return dask_count_parts(
            files,
            client,
            pattern=pattern,
            progress=counting_progress(phase),
            text_column=reading.text_column,
            doc_delimiter=reading.doc_delimiter,
        )
