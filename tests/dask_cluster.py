"""A real Dask cluster on 127.0.0.1 for the tests, started as docs/scaling.md starts one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

#: How long the scheduler and its workers may take to start on a loaded machine.
START_SECONDS = 120
#: Dask's own diagnostics, which keep an idle cluster's processes busy: the workers'
#: statistical profiler off, the event loop's health check and the system monitor
#: sampled less often. Nothing the tests check reads them.
QUIET = {
    "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
    "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "1s",
    "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL": "5s",
}


@contextmanager
def dask_cluster(folder: Path, workers: int = 2) -> Iterator[str]:
    """The address of ``dask scheduler`` with ``dask worker`` (`workers` single-threaded
    processes, each behind a nanny that restarts it), for as long as the block runs.

    Separate processes, so nothing of Dask's (its workers, multiprocessing's resource
    tracker) is ever a child of the test process; their diagnostics are :data:`QUIET`.
    """
    import distributed

    scheduler_file = folder / "scheduler.json"
    dask = str(Path(sys.executable).with_name("dask"))
    loopback = ["--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"]
    env = {**os.environ, **QUIET}
    processes = [
        subprocess.Popen(
            [dask, "scheduler", "--port", "0", *loopback, "--scheduler-file", str(scheduler_file)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env,
        )
    ]  # fmt: skip
    try:
        processes.append(
            subprocess.Popen(
                [dask, "worker", "--scheduler-file", str(scheduler_file), "--nworkers",
                 str(workers), "--nthreads", "1", *loopback],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                env=env,
            )
        )  # fmt: skip
        address = _address_in(scheduler_file, time.monotonic() + START_SECONDS)
        with distributed.Client(address) as waiting:  # type: ignore[no-untyped-call]
            waiting.wait_for_workers(workers, timeout=START_SECONDS)
        yield str(address)
    finally:
        # Each in a session of its own: SIGKILL to the group takes the worker processes
        # the nannies started too, and nothing is left to wait for.
        for process in reversed(processes):
            os.killpg(process.pid, signal.SIGKILL)
        for process in processes:
            process.wait(timeout=60)


def _address_in(scheduler_file: Path, deadline: float) -> str:
    """The address the scheduler writes to `scheduler_file` once it listens.

    The scheduler writes the file in place, so it can be read empty or cut short: it is
    read again until it parses, as Dask's workers read it.
    """
    while True:
        with suppress(FileNotFoundError, ValueError):
            return str(json.loads(scheduler_file.read_text(encoding="utf-8"))["address"])
        assert time.monotonic() < deadline, "the scheduler did not start"
        time.sleep(0.1)
