"""What the running command has written so far, so the line after a failure says it.

A failure or a signal can come after part of a result reached stdout, or after one of
several output files was published; "nothing was written" would then be false. The
writers of ``_output`` count every byte stdout takes and mark the result complete with
its last byte; ``check_output_path`` remembers each output file with the identity of
whatever held its name before. Outputs are published by a rename, so a new file under
that name is a whole one.
"""

from __future__ import annotations

import os
from typing import ClassVar

from bpetite._internal import shown


class _Delivered:
    """The running command's deliveries: reset by ``main`` before each command."""

    stdout_bytes = 0
    stdout_complete = False
    outputs: ClassVar[list[tuple[str, str, tuple[int, ...] | None]]] = []


def start_command() -> None:
    """Forget what the previous command wrote (tests call ``main`` repeatedly)."""
    _Delivered.stdout_bytes = 0
    _Delivered.stdout_complete = False
    _Delivered.outputs = []


def expect_output(option: str, path: str) -> None:
    """Remember that the command may write `path` (given as `option`), and what is there now."""
    _Delivered.outputs.append((option, path, _identity(path)))


def count_stdout(written: int, *, completes: bool) -> None:
    """Count `written` bytes taken by stdout; `completes` when they end the result."""
    _Delivered.stdout_bytes += written
    if completes:
        _Delivered.stdout_complete = True


def _identity(path: str) -> tuple[int, ...] | None:
    try:
        status = os.lstat(path)
    except OSError:
        return None
    return (status.st_dev, status.st_ino, status.st_mtime_ns, status.st_size)


def delivered() -> list[str]:
    """What the command wrote so far, a clause each: [] when nothing was written.

    ``["65536 bytes were written to standard output: the output is incomplete"]``
    """
    clauses: list[str] = []
    written: list[str] = []
    missing: list[str] = []
    for option, path, before in _Delivered.outputs:
        now = _identity(path)
        (written if now is not None and now != before else missing).append(
            f"{option} '{shown(path)}'"
        )
    if written:
        clauses.append(f"{_join(written)} {_was(written)} written in full")
    if _Delivered.stdout_complete:
        clauses.append(
            f"the whole result ({_Delivered.stdout_bytes} bytes) was written to standard output"
        )
    elif _Delivered.stdout_bytes:
        count = _Delivered.stdout_bytes
        clauses.append(
            f"{count} {'byte was' if count == 1 else 'bytes were'} written to standard output: "
            f"the output is incomplete"
        )
    if clauses and missing:
        clauses.append(f"{_join(missing)} {_was(missing)} not written")
    return clauses


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _was(items: list[str]) -> str:
    return "was" if len(items) == 1 else "were"
