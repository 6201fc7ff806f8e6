"""Timing, statistics and peak-RSS helpers shared by every measurement.

Every figure is a median with its min/max, because the benchmark machine is shared
and noisy: a single run says little, the median of a few says more, and the spread
says how much to trust it. Ratios are always taken between figures of the same run.
"""

from __future__ import annotations

import gc
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

#: ``ru_maxrss`` is in kibibytes on Linux and in bytes on macOS.
_RSS_BYTES_PER_UNIT = 1 if sys.platform == "darwin" else 1024


@dataclass(frozen=True, slots=True)
class Stat:
    """Repeated samples of one quantity (seconds, bytes, ...) and their summary."""

    samples: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def low(self) -> float:
        return min(self.samples)

    @property
    def high(self) -> float:
        return max(self.samples)

    def percentile(self, percent: float) -> float:
        """Nearest-rank percentile: the ``ceil(p/100 * n)``-th smallest sample.

        With 100 samples p99 is the second-largest, so one stray sample (a GC pause,
        a neighbour on the machine) cannot decide it on its own.
        """
        ordered = sorted(self.samples)
        rank = max(1, math.ceil(percent / 100 * len(ordered)))
        return ordered[rank - 1]

    def to_json(self) -> dict[str, Any]:
        return {
            "median": self.median,
            "min": self.low,
            "max": self.high,
            "runs": len(self.samples),
            "samples": list(self.samples),
        }


def rss_bytes(max_rss: int) -> int:
    """Convert a ``ru_maxrss`` value to bytes on this platform."""
    return max_rss * _RSS_BYTES_PER_UNIT


def own_peak_rss() -> int:
    """This process's peak resident set size so far, in bytes."""
    return rss_bytes(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def time_call(function: Callable[[], object]) -> float:
    """Seconds one call takes, after a full collection so earlier garbage is not billed.

    The collector stays enabled during the call: a user's encode pays for its own
    garbage, so the benchmark does too.
    """
    gc.collect()
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def repeat(function: Callable[[], object], runs: int) -> Stat:
    """Time `runs` calls of `function`, each after a full collection (see :func:`time_call`)."""
    return Stat(tuple(time_call(function) for _ in range(runs)))


def steady_calls(function: Callable[[], object], runs: int) -> list[float]:
    """Seconds each of `runs` back-to-back calls of `function` takes: steady-state latency.

    Unlike :func:`time_call` there is no collection between calls. A full collection
    walks every object and evicts the CPU caches, so the call after it runs cache-cold;
    for a call of a few microseconds that cost dominates and hides the encoder's own.
    The collector stays enabled, so the young-generation collections a loop of calls
    triggers land in some of them, as they would for a user, and show in p99.
    """
    clock = time.perf_counter
    samples = []
    for _ in range(runs):
        started = clock()
        function()
        samples.append(clock() - started)
    return samples


@dataclass(frozen=True, slots=True)
class ChildRun:
    """One measured child process: its JSON report and what the parent saw of it."""

    report: dict[str, Any]
    wall_seconds: float
    peak_rss_bytes: int
    cpu_seconds: float
    stdout: str


class ChildFailed(RuntimeError):
    """A measured subprocess exited non-zero; the message carries its stderr tail."""


def run_child(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    json_report: bool = True,
) -> ChildRun:
    """Run `command` to completion and return its wall time, peak RSS and CPU time.

    The process is reaped with ``os.wait4`` so the resource usage is this child's
    alone; ``RUSAGE_CHILDREN`` would give the maximum over every child so far.
    Output goes to temporary files, not pipes, so a chatty child cannot block on a
    full pipe while nobody reads it. With `json_report` the last stdout line is
    parsed as the child's JSON report.
    """
    merged_env = {**os.environ, **(env or {})}
    with tempfile.TemporaryFile() as out_file, tempfile.TemporaryFile() as err_file:
        started = time.perf_counter()
        process = subprocess.Popen(
            list(command), stdout=out_file, stderr=err_file, env=merged_env, cwd=cwd
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        stdout = finished_output(command, status, out_file, err_file)
    report = last_json_line(command, stdout) if json_report else {}
    return ChildRun(
        report=report,
        wall_seconds=wall,
        peak_rss_bytes=rss_bytes(usage.ru_maxrss),
        cpu_seconds=usage.ru_utime + usage.ru_stime,
        stdout=stdout,
    )


def finished_output(
    command: Sequence[str], status: int, out_file: IO[bytes], err_file: IO[bytes]
) -> str:
    """A reaped child's stdout; ChildFailed with its stderr's tail if it exited non-zero."""
    out_file.seek(0)
    err_file.seek(0)
    stdout = out_file.read().decode("utf-8", errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        stderr = err_file.read().decode("utf-8", errors="replace")
        tail = "\n".join(stderr.strip().splitlines()[-15:])
        raise ChildFailed(f"{' '.join(command)} exited {code}:\n{tail}")
    return stdout


def last_json_line(command: Sequence[str], stdout: str) -> dict[str, Any]:
    """The child's report: the last line it printed, as JSON."""
    lines = stdout.strip().splitlines()
    if not lines:
        raise ChildFailed(f"{' '.join(command)} printed no JSON report")
    report: dict[str, Any] = json.loads(lines[-1])
    return report
