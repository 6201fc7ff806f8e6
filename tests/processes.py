"""Running and watching processes from the tests: a clean environment, and their state
polled in /proc, never fixed sleeps."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

#: A hang guard, not a timing: a test under :func:`watchdog` finishes in seconds when
#: nothing hangs.
HANG_SECONDS = 60


class Hung(Exception):
    """What :func:`watchdog` raises. Not TimeoutError: that is an OSError, which
    ``multiprocessing`` swallows while it waits for a process (``Process.join`` then
    returns as if the process had ended, and the next wait blocks for good)."""


@contextlib.contextmanager
def watchdog(seconds: int = HANG_SECONDS) -> Iterator[None]:
    """Raise :class:`Hung` in the main thread if the block is still running after `seconds`."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise Hung(f"still running after {seconds} s: it hangs")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without anything that would change what the CLI draws or finds."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES"} and not key.startswith("TTY_")
    }
    env.update(extra)
    return env


def processes_mentioning(text: str) -> list[Path]:
    """The /proc entries whose command line contains `text`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text.encode() in cmdline.read_bytes():
                found.append(cmdline)
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return found


def none_left_mentioning(text: str, timeout: float = 10) -> bool:
    """Poll until no process mentions `text` (a parent reaps its workers as it exits)."""
    deadline = time.monotonic() + timeout
    while processes_mentioning(text):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def catches_sigterm(pid: int) -> bool:
    """True once process `pid` has a handler for SIGTERM: ``bpetite``'s main is running.

    Python itself only catches SIGINT at start-up; the CLI adds SIGTERM when a command
    starts, so from then on both signals reach its cleanup instead of the default action.
    """
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    return False


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time process `pid` has used so far."""
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (name) "
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for(
    condition: Callable[[], bool],
    what: str,
    *,
    process: subprocess.Popen[bytes] | None = None,
    timeout: float = 60,
) -> None:
    """Poll `condition` until it holds; fail naming `what` after `timeout` seconds, or as
    soon as `process` (when given) has ended."""
    deadline = time.monotonic() + timeout
    while not condition():
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the process ended ({process.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)
