"""Watching for processes from the tests: whether any still mentions a path, without sleeps."""

from __future__ import annotations

import time
from pathlib import Path


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
