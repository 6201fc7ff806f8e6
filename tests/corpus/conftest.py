"""One Dask cluster for every Dask test a test process runs (test_dask.py, test_dask_merge.py).

Starting a scheduler and two workers costs a few seconds of CPU; the two modules need the
same cluster, and each of their tests that kills a worker waits for its nanny to bring
a new one before it ends.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.dask_cluster import dask_cluster


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real cluster on 127.0.0.1: a scheduler and two single-threaded workers."""
    with dask_cluster(tmp_path_factory.mktemp("dask")) as address:
        yield address
