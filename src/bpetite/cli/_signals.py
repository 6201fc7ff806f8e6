"""Ctrl-C and SIGTERM while a command runs: exceptions that unwind, held back for a moment.

Both signals raise, so temp files go and workers stop on the way out: SIGINT as
``KeyboardInterrupt``, SIGTERM as :class:`Terminated`; the command then exits 130 or
143 (128 + the signal's number, what a shell reports for a process the signal ended).
A few steps must not be cut in two, because the message after a signal says what was
written: a write to stdout and the count of the bytes it took, or the write of the
last byte and the note that the result is complete. Inside :func:`signals_deferred` a
signal waits and is raised as the block ends, so the count is exact whenever the
exception arrives. Only the first signal raises: once it has, or once the command's
outcome is decided (:func:`ignore_signals`), later ones are ignored, so the cleanup
and the one line that says what happened are never cut short.

A signal's exception can land where Python swallows exceptions (a weakref callback,
such as the one that drops an import's module lock, or a ``__del__``), where Python
would print "Exception ignored" and go on. bpetite's ``sys.unraisablehook`` recognises
its own exception there and keeps the signal, which :func:`raise_lost_signal` raises
again at the command's next step, so a Ctrl-C is never lost.

Standard library only: ``bpetite.cli`` installs these handlers before it imports
anything else.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any, Final


class Terminated(BaseException):
    """SIGTERM as an exception, so it unwinds like Ctrl-C: temp files go, workers stop."""


#: The exit code after Ctrl-C: 128 + 2, what a shell reports for a process SIGINT ended.
EXIT_INTERRUPTED: Final = 128 + signal.SIGINT
#: The exit code after SIGTERM: 128 + 15, so a supervisor can tell "stopped" from
#: "failed" (1) after the cleanup ran.
EXIT_TERMINATED: Final = 128 + signal.SIGTERM

_SIGNALS: Final[tuple[int, ...]] = (signal.SIGINT, signal.SIGTERM)

Handler = Callable[[int, FrameType | None], Any] | int | None


class _State:
    """Whether a signal must wait, the one that is waiting, whether one has raised, and
    the signal whose exception is on its way out or was swallowed."""

    deferring = False
    pending: int | None = None
    stopping = False
    raised: int | None = None
    lost: int | None = None
    unraisablehook: Callable[[sys.UnraisableHookArgs], object] = sys.unraisablehook


def _exception(signum: int) -> type[BaseException]:
    return Terminated if signum == signal.SIGTERM else KeyboardInterrupt


def _raise_for(signum: int) -> None:
    _State.stopping, _State.raised, _State.lost = True, signum, None
    raise _exception(signum)


def _handle(signum: int, frame: FrameType | None) -> None:
    if _State.stopping:  # the first signal, or the command's end, decided the outcome
        return
    if _State.deferring:
        if _State.pending is None:
            _State.pending = signum
        return
    _raise_for(signum)


def handle_signals() -> dict[int, Handler]:
    """From now on SIGINT and SIGTERM raise (SIGTERM as :class:`Terminated`), and a
    signal whose exception Python swallows is kept (``sys.unraisablehook``); returns the
    handlers replaced.

    Nothing changes off the main thread, where signals cannot be handled, nor for a
    signal that whoever started us chose to ignore (``nohup``, a background job).
    """
    previous: dict[int, Handler] = {}
    for signum in _SIGNALS:
        handler = signal.getsignal(signum)
        if handler is signal.SIG_IGN:
            continue
        try:
            signal.signal(signum, _handle)
        except ValueError:  # not the main thread
            break
        previous[signum] = handler
    _State.deferring, _State.pending, _State.stopping = False, None, False
    _State.raised, _State.lost = None, None
    if previous and sys.unraisablehook is not _keep_lost_signal:
        _State.unraisablehook, sys.unraisablehook = sys.unraisablehook, _keep_lost_signal
    return previous


def _keep_lost_signal(unraisable: sys.UnraisableHookArgs) -> None:
    """``sys.unraisablehook``: a signal's exception that Python swallowed is kept, silently,
    for :func:`raise_lost_signal`; anything else goes to the hook that was there before."""
    if _State.raised is not None and isinstance(unraisable.exc_value, _exception(_State.raised)):
        _State.lost, _State.raised = _State.raised, None
        return
    _State.unraisablehook(unraisable)


def raise_lost_signal() -> None:
    """Raise again the signal whose exception Python swallowed, if one was: called where
    the command goes on (before it starts its work, before each write, after it returns)."""
    if _State.lost is not None and not _State.deferring:
        _raise_for(_State.lost)


def signal_within(error: BaseException) -> BaseException | None:
    """The KeyboardInterrupt or :class:`Terminated` that `error` was raised from (its
    causes and contexts followed), if it was raised from one; else None."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, (KeyboardInterrupt, Terminated)):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def forget_interrupt() -> None:
    """Let the exit code be the one returned after a KeyboardInterrupt was caught.

    Once a KeyboardInterrupt has left code that ``exec()`` or ``eval()`` ran from a
    string (the methods that ``dataclasses`` and ``namedtuple`` make while a module
    loads), CPython 3.11 to 3.13 mark the process to end by SIGINT after ``python -m``
    returns, as if the interrupt had gone uncaught, whoever caught it. Starting such
    code clears the mark, so an empty one does; newer CPython marks only an interrupt
    that nobody caught.
    """
    exec("")


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """:func:`handle_signals` for the block; the previous handlers (and
    ``sys.unraisablehook``) come back afterwards (tests call ``main`` in-process)."""
    hook = sys.unraisablehook
    previous = handle_signals()
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        sys.unraisablehook = hook


def ignore_signals() -> None:
    """The command's outcome is decided (and is being said): later signals do nothing,
    and one that was lost stays lost."""
    _State.stopping, _State.raised, _State.lost = True, None, None


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
    raise_lost_signal()
    _State.deferring = True
    try:
        yield
    finally:
        _State.deferring = False
        pending, _State.pending = _State.pending, None
        if pending is not None:
            _raise_for(pending)  # the signal replaces whatever was raising
