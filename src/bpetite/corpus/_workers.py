"""One pool of worker processes for every parallel stage: counting, dataset encoding, merging.

A job is ``count`` pieces, numbered in the order a single process would take them.
Workers claim the next unclaimed piece from a shared index until none is left, so a
worker that gets small pieces simply takes more of them. What a worker does with a
piece is the stage's :class:`Task`, passed in; everything else lives here, once:

* Start. Workers start with SIGINT and SIGTERM held back and then ignore them: the
  parent alone decides when workers stop (a Ctrl-C reaches the whole process group,
  ``timeout`` signals it), so a signal never prints a worker's traceback.
* Receive. Each worker reports through a pipe of its own: its finished pieces in
  batches, about every :data:`POLL_SECONDS`, then its summary. The parent hands the
  results on in piece order, whatever order the workers finish in.
* Death. The parent waits on the pipes and on the processes themselves, so a worker
  that dies without reporting (SIGKILL, the OOM killer) fails the job at once with a
  :class:`WorkerError` naming its pid and the signal or exit status; nothing waits
  forever. A worker whose parent was killed outright stops by itself at its next block.
* Errors. A piece that fails stops the handing out of pieces, and its error is raised
  once every piece before it has reported: always the first failing piece in piece
  order, the error a single process would meet, whatever the worker count and timing.
* Cleanup. Whatever ends the job (its end, an error, Ctrl-C, SIGTERM raised as an
  exception), no worker outlives the call: those still running are killed, all reaped.

:func:`run_here` runs the same tasks in this process, for one piece or one worker.

A stage that talks with its workers for as long as it runs (the merge loop, one
message each way per merge) starts them with :func:`conversing`: the same start,
signals, death and cleanup, with a pair of pipes per worker instead of pieces. Each
end polls briefly for the next message before it blocks (:data:`SPIN_SECONDS`).
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import time
from collections.abc import Callable, Iterator, MutableSequence, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeVar

from bpetite.core._errors import ParameterError, WorkerError
from bpetite.core._progress import Progress, ProgressCallback

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess
    from multiprocessing.sharedctypes import Synchronized

R = TypeVar("R")
S = TypeVar("S")
R_co = TypeVar("R_co", covariant=True)
S_co = TypeVar("S_co", covariant=True)

#: Told the size of each block a task has read: progress, and the parent-death watch.
OnBytes = Callable[[int], None]

#: How often the parent wakes to report progress, and how often a worker reports its
#: finished pieces: often enough for a live display, seldom enough that the parent's
#: waking takes next to no CPU from the workers on a small machine.
#: Measurements: docs/design-notes.md#corpus-worker-reports-in-batches
POLL_SECONDS: Final = 0.1

#: How long either end of a conversation polls for the next message before it blocks.
#: The merge loop sends a message each way per batch of merges, most of them well under
#: a millisecond apart, and a process that blocks gives up its CPU: on a virtual
#: machine it then waits far longer to run again than the message took to come.
#: Measurements: docs/design-notes.md#corpus-conversations-poll-before-they-block
SPIN_SECONDS: Final = 0.001

#: How long a worker that has sent its last report may take to exit before it is killed:
#: all it has left is to flush its standard streams, which can block for good in a child
#: forked while another thread of the parent held one of their locks.
EXIT_SECONDS: Final = 10.0

#: Gives the CPU to any other runnable process, or returns at once if there is none.
_yield_cpu: Final[Callable[[], None]] = getattr(os, "sched_yield", lambda: time.sleep(0))

#: What stops a run: the parent handles these, workers ignore them.
_SHUTDOWN_SIGNALS: Final = frozenset({signal.SIGINT, signal.SIGTERM})


class Task(Protocol[R_co, S_co]):
    """One worker's share of a job, made in the worker by ``task_of(slot)``."""

    def run(self, index: int, on_bytes: OnBytes) -> R_co:
        """Do piece `index`, calling `on_bytes` once per block read; return its result."""

    def sync(self) -> None:
        """Make what the results so far point to readable by the parent (flush a spool)."""

    def finish(self) -> S_co:
        """Release what the task holds (syncing it) and return the worker's summary.

        Called once: after the last piece, or after a piece failed.
        """


@dataclass(frozen=True, slots=True)
class Role:
    """What a stage's workers are called in errors and progress events."""

    name: str  # "counting": "a counting worker (pid 7) was killed by SIGKILL"
    stage: Literal["count", "encode", "merge"]  # the progress events' task
    lost: str  # what a worker that died unheard took with it: "its counts"
    note: str = ""  # what its death means for the output: "; nothing was written"


# --------------------------------------------------------------------------- how many


def default_workers() -> int:
    """The number of CPUs this process may run on (a container or taskset may allow fewer)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


def check_workers(workers: object) -> int:
    """Return `workers` if it is a positive int, :func:`default_workers` for None;
    otherwise raise naming the value."""
    if workers is None:
        return default_workers()
    if isinstance(workers, bool) or not isinstance(workers, int):
        raise TypeError(f"workers must be an integer, got {workers!r}")
    if workers < 1:
        raise ParameterError(f"workers must be at least 1, got {workers}")
    return workers


def forking() -> bool:
    """Whether workers start by fork, inheriting this process's memory."""
    import multiprocessing  # only here: `import bpetite` stays light

    return multiprocessing.get_start_method() == "fork"


# --------------------------------------------------------------------------- in this process


def run_here(
    task_of: Callable[[int], Task[R, S]],
    count: int,
    role: Role,
    total: int,
    report: ProgressCallback,
    on_result: Callable[[int, R], None] | None = None,
) -> S:
    """Run pieces ``0 .. count-1`` in order in this process; return the task's summary.

    The same task a worker runs, so one process and many give the same results;
    progress is reported after every block, since here a report costs no message.
    """
    report(Progress(role.stage, "start", 0, total))
    done = 0

    def on_bytes(size: int) -> None:
        nonlocal done
        done += size
        report(Progress(role.stage, "update", done, total))

    task = task_of(0)
    try:
        for index in range(count):
            result = task.run(index, on_bytes)
            if on_result is not None:
                task.sync()  # on_result may read what the piece wrote
                on_result(index, result)
    finally:
        summary = task.finish()  # also after a failure: nothing stays open
    return summary


# --------------------------------------------------------------------------- the pool


def run_in_workers(
    task_of: Callable[[int], Task[R, S]],
    count: int,
    processes: int,
    role: Role,
    total: int,
    report: ProgressCallback,
    on_result: Callable[[int, R], None] | None = None,
    on_summary: Callable[[S], None] | None = None,
) -> None:
    """Run pieces ``0 .. count-1`` in `processes` workers, each making its task with `task_of`.

    `on_result(index, result)` is called in piece order, `on_summary` once per worker
    as each finishes; `report` gets the `role`'s progress events, "start" and "update"
    (the caller reports "done" once it has used the results). The module docstring
    says what happens on a death, an error or a signal. `task_of` is pickled to each
    worker unless it is forked (a bound method or a ``functools.partial`` of
    module-level names pickles).
    """
    # The platform's default start method (fork on Linux before Python 3.14, spawn on
    # macOS), so a caller's set_start_method() is respected. Fork needs no import in
    # the child and no ``if __name__ == "__main__"`` guard in the caller's script.
    import multiprocessing  # only here: `import bpetite` stays light
    from multiprocessing.connection import wait

    context = multiprocessing.get_context()
    shared = Shared(context.Value("q", 0), context.Array("q", processes, lock=False), count)
    started: list[BaseProcess] = []
    pending: dict[Connection, BaseProcess] = {}  # workers yet to send their last report
    results: dict[int, Any] = {}  # finished pieces waiting for the ones before them
    failures: dict[int, BaseException] = {}  # piece index -> its error
    handed_on = 0
    try:
        with _shutdown_signals_blocked():
            for slot in range(processes):
                receiver, sender = context.Pipe(duplex=False)
                process = context.Process(
                    target=_work,
                    args=(task_of, shared, slot, sender, role.name),
                    name=f"bpetite-{role.name}-{slot}",
                )
                process.start()
                started.append(process)
                # Only the worker may hold the sending end, so that its death reads as
                # end-of-file here; workers forked later never see it.
                sender.close()
                pending[receiver] = process
        # Reported only now: a live progress display starts a thread, and forking a
        # process that runs threads is what Python warns about.
        report(Progress(role.stage, "start", 0, total))
        reported = 0
        while pending:
            ready = set(wait([*pending, *(p.sentinel for p in pending.values())], POLL_SECONDS))
            for receiver, worker in list(pending.items()):
                if receiver not in ready and worker.sentinel not in ready:
                    continue
                # Read all it has sent. A worker that has ended sent all it ever will,
                # so read on until its last report, or the pipe's end: its death.
                while receiver.poll() or not worker.is_alive():
                    message: Report = receive_from(receiver, worker, role)
                    for index, outcome in message.pieces:
                        if isinstance(outcome, BaseException):
                            failures[index] = outcome
                            shared.stop()
                        else:
                            results[index] = outcome
                    if message.last:
                        if on_summary is not None and not failures:
                            on_summary(message.summary)
                        del pending[receiver]
                        receiver.close()
                        break
            while handed_on in results:
                outcome = results.pop(handed_on)
                if on_result is not None:
                    on_result(handed_on, outcome)
                handed_on += 1
            # Pieces are claimed in order, so every piece before the first failure has
            # been claimed; once all of them have reported, no earlier error can come.
            if failures and handed_on >= min(failures):
                raise failures[min(failures)]
            done = sum(shared.done)
            if done != reported:
                reported = done
                report(Progress(role.stage, "update", done, total))
        if failures:  # every worker has ended, so no earlier piece can still report
            raise failures[min(failures)]
        # Each has sent its last report; one still running at the deadline is killed below.
        deadline = time.monotonic() + EXIT_SECONDS
        for worker in started:
            worker.join(max(deadline - time.monotonic(), 0))
    finally:
        _stop(started)
        for receiver in pending:
            receiver.close()


@dataclass(frozen=True, slots=True)
class Shared:
    """What the parent and every worker share: the next unclaimed piece, and progress.

    `done[slot]` is the number of bytes the worker in `slot` has read so far. Only
    that worker writes it and the parent reads it without a lock, so a worker killed
    at any instant cannot block the parent.
    """

    next_piece: Synchronized[int]
    done: MutableSequence[int]
    count: int

    def claim(self) -> int | None:
        """The next unclaimed piece, or None when none is left."""
        with self.next_piece.get_lock():
            index = self.next_piece.value
            self.next_piece.value = index + 1
        return index if index < self.count else None

    def stop(self) -> None:
        """Hand out no more pieces: workers finish the piece they hold, report, exit."""
        with self.next_piece.get_lock():
            self.next_piece.value = max(self.next_piece.value, self.count)


@dataclass(frozen=True, slots=True)
class Report:
    """A worker's message: the pieces it finished since its last one, and if it is done.

    Each piece comes with its result or the error it raised (index -1: an error
    outside any piece); a failure is a worker's last report. `summary` is the task's,
    in the last report of a worker that ran out of pieces.
    """

    pieces: list[tuple[int, Any]]
    last: bool = False
    summary: Any = None


@contextmanager
def _shutdown_signals_blocked() -> Iterator[None]:
    """Hold back SIGINT and SIGTERM while workers start; they inherit the blocked mask.

    A forked worker starts with the parent's handlers (the CLI turns SIGTERM into an
    exception), so a signal arriving before it has ignored them would print a
    traceback from the worker. Held back, the parent gets its signal a moment later,
    once every started worker is in the list its ``finally`` stops.
    """
    if not hasattr(signal, "pthread_sigmask"):  # Windows: no signal masks, no fork
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _SHUTDOWN_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def receive_from(receiver: Connection, process: BaseProcess, role: Role) -> Any:
    """What the worker sent next; WorkerError naming how it died if it sent nothing.

    Called when the pipe is readable or the process has ended. A process that ended
    has written all it ever will and holds the only sending end, so the pipe then
    holds a whole message or ends: ``recv`` cannot block.
    """
    try:
        return receiver.recv()
    except (EOFError, OSError):  # nothing, or half a message: the worker died sending
        process.join(POLL_SECONDS * 10)  # it has closed the pipe, so it is exiting
        raise WorkerError(describe_death(process, role.name, role.lost) + role.note) from None


def await_message(connection: Connection, seconds: float = SPIN_SECONDS) -> None:
    """Return once `connection` has a message to read, or after `seconds`, whichever is
    first: a spin that yields the CPU between polls, so that it takes none from a
    process that could run, and that never blocks."""
    end = time.perf_counter() + seconds
    while not connection.poll(0) and time.perf_counter() < end:
        _yield_cpu()


def describe_death(process: BaseProcess, role: str, lost: str) -> str:
    """Why a `role` worker stopped without sending `lost`, in words a user can act on.

    >>> class Killed: pid, exitcode = 7, -9
    >>> describe_death(Killed(), "counting", "its counts")  # doctest: +ELLIPSIS
    'a counting worker (pid 7) was killed by SIGKILL; the machine may be out of memory'
    """
    who = f"a {role} worker (pid {process.pid})"
    code = process.exitcode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        if -code == getattr(signal, "SIGKILL", None):
            return f"{who} was killed by {name}; the machine may be out of memory"
        return f"{who} was killed by {name}"
    if code:
        return f"{who} exited with status {code} before sending {lost}"
    return f"{who} stopped before sending {lost}"


def _stop(processes: list[BaseProcess]) -> None:
    """Kill every worker still running and reap them all; no worker outlives the call.

    SIGKILL, because workers ignore SIGTERM (the parent alone decides when they stop);
    what they wrote lives in the caller's temp files, which the caller removes.
    """
    for process in processes:
        if process.exitcode is None:
            process.kill()
    for process in processes:
        process.join()
        process.close()


# --------------------------------------------------------------------------- conversations


@dataclass(frozen=True, slots=True)
class Peer:
    """This process's end of a conversation with one worker started by :func:`conversing`."""

    process: BaseProcess
    to_worker: Connection
    from_worker: Connection
    role: Role

    def send(self, message: Any) -> None:
        """Send `message` to the worker (pickled); it arrives in order. WorkerError if it died."""
        try:
            self.to_worker.send(message)
        except OSError:  # a broken pipe: no one is left to read it
            self.process.join(POLL_SECONDS * 10)  # it has closed the pipe, so it is exiting
            role = self.role
            raise WorkerError(
                describe_death(self.process, role.name, role.lost) + role.note
            ) from None

    def receive(self) -> Any:
        """The worker's next message; its error re-raised here, WorkerError if it died."""
        await_message(self.from_worker)
        message = receive_from(self.from_worker, self.process, self.role)
        if isinstance(message, BaseException):
            raise message
        return message


class Channel:
    """A worker's end of a conversation: what it receives, and how it answers."""

    def __init__(self, inbox: Connection, outbox: Connection, parent: int, role: str) -> None:
        self._inbox, self._outbox = inbox, outbox
        self._parent, self._role = parent, role

    def receive(self) -> Any:
        """The parent's next message. WorkerError once the parent is gone.

        Workers forked after this one hold the sending end too, so the parent's death
        need not close the pipe: its pid is checked every :data:`POLL_SECONDS`.
        """
        await_message(self._inbox)
        while not self._inbox.poll(POLL_SECONDS):
            if os.getppid() != self._parent:
                raise WorkerError(f"the parent process is gone; stopping this {self._role} worker")
        return self._inbox.recv()

    def send(self, message: Any) -> None:
        """Answer the parent with `message` (pickled)."""
        self._outbox.send(message)


#: A conversing worker's whole work: ``target(slot, argument, channel)``.
Converse = Callable[[int, Any, Channel], None]


@contextmanager
def conversing(target: Converse, arguments: Sequence[Any], role: Role) -> Iterator[list[Peer]]:
    """Start a worker per item of `arguments`, each running ``target(slot, argument, channel)``.

    Slots are numbered from 1 (this process is slot 0, working beside them). Started
    as the pool's workers are (shutdown signals held back, then ignored; the
    collector frozen and paused), and stopped however the block ends: every worker
    still running is killed (it holds nothing that outlives the conversation, and a
    kill skips freeing its tables) and all are reaped. An error the target raises
    is sent to this process and raised by :meth:`Peer.receive`; a worker that dies
    makes it raise WorkerError naming how. `target` and each argument are pickled to
    the worker unless it is forked.
    """
    import multiprocessing  # only here: `import bpetite` stays light

    context = multiprocessing.get_context()
    peers: list[Peer] = []
    try:
        with _shutdown_signals_blocked():
            for slot, argument in enumerate(arguments, 1):
                inbox, to_worker = context.Pipe(duplex=False)
                from_worker, outbox = context.Pipe(duplex=False)
                process = context.Process(
                    target=_converse,
                    args=(target, slot, argument, inbox, outbox, os.getpid(), role.name),
                    name=f"bpetite-{role.name}-{slot}",
                )
                process.start()
                # Only the worker may hold its sending end, so that its death reads as
                # end-of-file here; workers forked later never see it.
                outbox.close()
                inbox.close()
                peers.append(Peer(process, to_worker, from_worker, role))
        yield peers
    finally:
        _stop([peer.process for peer in peers])
        for peer in peers:
            peer.to_worker.close()
            peer.from_worker.close()


def _settle_in() -> None:
    """What every worker does first: leave the shutdown signals to its parent (ignored
    here, and unblocked, as they were blocked while it started), and freeze the heap it
    inherited. A forked worker starts with the parent's whole heap; the cycle collector
    would walk it again and again (touching every page of it) for nothing. Freezing it
    is O(1) and leaves the collector only this worker's own objects."""
    for signum in _SHUTDOWN_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SHUTDOWN_SIGNALS)
    gc.freeze()


def _converse(
    target: Converse,
    slot: int,
    argument: Any,
    inbox: Connection,
    outbox: Connection,
    parent: int,
    role: str,
) -> None:
    """A conversing worker's whole life: settle in, run `target`, report its error."""
    _settle_in()
    gc.disable()  # a conversing worker builds large acyclic tables (see core._gc)
    channel = Channel(inbox, outbox, parent, role)
    try:
        target(slot, argument, channel)
    except Exception as error:
        with suppress(OSError):  # the parent is gone: there is no one left to tell
            channel.send(portable_error(error, role))
    finally:
        inbox.close()
        outbox.close()


# --------------------------------------------------------------------------- in a worker


def _work(
    task_of: Callable[[int], Task[Any, Any]],
    shared: Shared,
    slot: int,
    sender: Connection,
    role: str,
) -> None:
    """A worker's whole life: settle in, serve pieces until none is left, exit."""
    _settle_in()
    try:
        serve(task_of, slot, shared, watch_parent(shared.done, slot, role), sender.send, role)
    except OSError:  # the parent is gone: there is no one left to tell
        pass
    finally:
        sender.close()


def serve(
    task_of: Callable[[int], Task[Any, Any]],
    slot: int,
    shared: Shared,
    on_bytes: OnBytes,
    send: Callable[[Report], None],
    role: str,
) -> None:
    """Run claimed pieces until none is left or one fails; `send` every report.

    A batch is sent only once the task has synced, so the parent can read what it
    names. An error is sent with the pieces finished before it, so the parent still
    gets every piece before the failing one; an error outside any piece (making,
    syncing or finishing the task) is sent as index -1, which the parent raises at once.
    """
    finished: list[tuple[int, Any]] = []
    sent = time.monotonic()
    try:
        task = task_of(slot)
        while (index := shared.claim()) is not None:
            try:
                finished.append((index, task.run(index, on_bytes)))
            except Exception as error:
                task.finish()
                send(Report([*finished, (index, portable_error(error, role))], last=True))
                return
            if time.monotonic() - sent >= POLL_SECONDS:
                task.sync()
                send(Report(finished))
                finished, sent = [], time.monotonic()
        summary = task.finish()
        send(Report(finished, last=True, summary=summary))
    except Exception as error:
        send(Report([(-1, portable_error(error, role))], last=True))


def watch_parent(
    done: MutableSequence[int], slot: int, role: str, parent: int | None = None
) -> OnBytes:
    """Count a worker's bytes in its progress slot, stopping it once its parent is gone.

    A parent killed outright cannot stop its workers, so each compares its parent's
    pid (`parent`, default the current one) at every block and raises WorkerError
    once it has changed.
    """
    parent = os.getppid() if parent is None else parent

    def on_bytes(size: int) -> None:
        if os.getppid() != parent:
            raise WorkerError(f"the parent process is gone; stopping this {role} worker")
        done[slot] += size

    return on_bytes


def portable_error(error: Exception, role: str) -> BaseException:
    """`error` if the parent can rebuild it from a pickle, else a WorkerError that names it."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return WorkerError(f"a {role} worker failed: {type(error).__name__}: {error}")
    return error
