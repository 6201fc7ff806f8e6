"""Ctrl-C and SIGTERM while a command runs: exceptions that unwind, held back for a moment.

Both signals raise, so temp files go and workers stop on the way out: SIGINT as
``KeyboardInterrupt``, SIGTERM as :class:`Terminated`. A few steps must not be cut in
two, because the message after a signal says what was written: a write to stdout and
the count of the bytes it took, or the write of the last byte and the note that the
result is complete. Inside :func:`signals_deferred` a signal waits and is raised as
the block ends, so the count is exact whenever the exception arrives.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any, Final


class Terminated(BaseException):
    """SIGTERM as an exception, so it unwinds like Ctrl-C: temp files go, workers stop."""


_SIGNALS: Final[tuple[int, ...]] = (signal.SIGINT, signal.SIGTERM)


class _State:
    """Whether a signal must wait, and the one that is waiting."""

    deferring = False
    pending: int | None = None


def _raise_for(signum: int) -> None:
    if signum == signal.SIGTERM:
        raise Terminated
    raise KeyboardInterrupt


def _handle(signum: int, frame: FrameType | None) -> None:
    if signum == signal.SIGTERM:
        # Only the first one: a second SIGTERM while the cleanup runs would cut it short.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if _State.deferring:
        if _State.pending is None:
            _State.pending = signum
        return
    _raise_for(signum)


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """While a command runs, SIGINT and SIGTERM raise (SIGTERM as :class:`Terminated`).

    The previous handlers come back afterwards (tests call ``main`` in-process). Nothing
    changes off the main thread, where signals cannot be handled, nor for a signal that
    whoever started us chose to ignore (``nohup``, a background job).
    """
    previous: dict[int, Callable[[int, FrameType | None], Any] | int | None] = {}
    for signum in _SIGNALS:
        handler = signal.getsignal(signum)
        if handler is signal.SIG_IGN:
            continue
        try:
            signal.signal(signum, _handle)
        except ValueError:  # not the main thread
            break
        previous[signum] = handler
    _State.deferring, _State.pending = False, None
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends, then raise the first that came.

    For a few instructions only, never a wait: a signal that arrives meanwhile is
    raised as soon as they are done. A signal that arrives while the block raises
    something else wins, so Ctrl-C still stops the command.
    """
    if _State.deferring:  # already held by an outer block, which raises it
        yield
        return
    _State.deferring = True
    try:
        yield
    finally:
        _State.deferring = False
        pending, _State.pending = _State.pending, None
        if pending is not None:
            _raise_for(pending)  # the signal replaces whatever was raising
