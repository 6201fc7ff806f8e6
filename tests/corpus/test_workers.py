"""Counting workers never hang the parent, and signals never leave anything behind.

A worker that dies (SIGKILL, the kernel's OOM killer) must fail the count at once
with a :class:`WorkerError`; SIGTERM or SIGINT to the parent must stop every worker,
leave no temp file and print one line. Workers are really killed and the CLI really
signalled; every test waits for an observable state (progress reported, a worker's
pid present), never for a fixed time. A watchdog turns a hang into a failure.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.util
import os
import random
import re
import signal
import string
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from bpetite import Progress, reference, train_files
from bpetite.cli import EXIT_INTERRUPTED, EXIT_TERMINATED, main
from bpetite.corpus import _counting as counting
from bpetite.corpus import _workers as pool
from bpetite.corpus._counting import Piece, count_files
from bpetite.errors import WorkerError
from tests.processes import HANG_SECONDS, watchdog


def _chunks(text: str) -> list[bytes]:
    """The chunks of `text` as the reference splits it, in UTF-8."""
    return [chunk.encode("utf-8") for chunk in reference.split(text)]


needs_proc = pytest.mark.skipif(
    not Path("/proc/self/stat").exists() or os.name != "posix", reason="needs /proc and signals"
)
needs_fork = pytest.mark.skipif(
    multiprocessing.get_start_method() != "fork",
    reason="patches the parent's module, which only forked workers share",
)

#: Large enough that two workers are far from done when they first report progress.
CORPUS_MEGABYTES = 16


def write_corpus(directory: Path, megabytes: int = CORPUS_MEGABYTES, files: int = 4) -> Path:
    """`files` files of random lowercase words, about `megabytes` MB in all, many lines each."""
    directory.mkdir()
    rng = random.Random(14)
    words = [
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(1, 10))) for _ in range(5000)
    ]
    lines = [" ".join(rng.choices(words, k=12)) for _ in range(20_000)]
    block = ("\n".join(lines) + "\n").encode("ascii")  # about 1.3 MB
    per_file = megabytes * 1_000_000 // files
    for index in range(files):
        data = block * (per_file // len(block) + 1)
        (directory / f"{index}.txt").write_bytes(data[:per_file])
    return directory


@pytest.fixture(scope="module")
def big_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("big") / "corpus")


def counting_workers() -> list[int]:
    """The pids of bpetite's own workers, named ``bpetite-<role>-<slot>``.

    Not every child: a process another test started (a Dask cluster's, still closing
    on a loaded machine) may still be alive, and killing it would prove nothing.
    """
    children = multiprocessing.active_children()
    return [child.pid or 0 for child in children if child.name.startswith("bpetite-")]


# --------------------------------------------------------------------------- /proc helpers


def proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, process group) of `pid`, or None if there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[2])


def all_pids() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def children_of(parent: int) -> list[int]:
    found = []
    for pid in all_pids():
        stat = proc_stat(pid)
        if stat is not None and stat[1] == parent and stat[0] != "Z":
            found.append(pid)
    return found


def worker_pids(parent: int) -> list[int]:
    """The counting workers under `parent`, whatever the start method.

    Forked workers are its children; under forkserver they are the children of the
    fork server (itself a child), and spawn or forkserver add a resource tracker.
    Workers are the descendants that have no children and are not the tracker.
    """
    found = []
    for child in children_of(parent):
        grandchildren = children_of(child)
        if grandchildren:
            found += grandchildren
        elif b"resource_tracker" not in Path(f"/proc/{child}/cmdline").read_bytes():
            found.append(child)
    return found


def live_processes_in_group(group: int) -> list[int]:
    """Processes of the process group `group` that are not yet dead (zombies excluded)."""
    found = []
    for pid in all_pids():
        stat = proc_stat(pid)
        if stat is not None and stat[2] == group and stat[0] != "Z":
            found.append(pid)
    return found


def is_running(pid: int) -> bool:
    stat = proc_stat(pid)
    return stat is not None and stat[0] != "Z"


def assert_all_gone(workers: list[int], group: int | None = None) -> None:
    """No worker is running now; the rest of `group` (a fork server, a tracker) ends soon.

    Workers are reaped before the call or the command returns, so they must be gone at
    once. multiprocessing's helper processes, where the start method uses them, exit
    when they see their parent's pipe close: they are waited for, under the watchdog.
    """
    assert workers
    assert [pid for pid in workers if is_running(pid)] == []
    if group is not None:
        with watchdog():
            while live_processes_in_group(group):
                time.sleep(0.01)


# --------------------------------------------------------------------------- the library


@needs_proc
def test_a_killed_worker_fails_the_count_at_once(big_corpus: Path) -> None:
    """SIGKILL one of two workers as soon as counting has begun: a WorkerError, not a hang.

    The error must come before the surviving worker could have counted the rest, and
    no worker may outlive the call.
    """
    killed: list[int] = []
    workers: list[int] = []
    events: list[Progress] = []

    def kill_a_worker(event: Progress) -> None:
        events.append(event)
        if event.stage == "update" and event.done > 0 and not killed:
            workers.extend(counting_workers())
            assert len(workers) == 2
            killed.append(workers[0])
            os.kill(killed[0], signal.SIGKILL)

    with watchdog(), pytest.raises(WorkerError) as caught:
        count_files([big_corpus], workers=2, block_size=1 << 16, progress=kill_a_worker)
    assert str(caught.value) == (
        f"a counting worker (pid {killed[0]}) was killed by SIGKILL; "
        "the machine may be out of memory"
    )
    assert isinstance(caught.value, RuntimeError)
    assert events[-1].stage == "update"
    assert events[-1].done < events[-1].total  # it did not wait for the others to finish
    assert multiprocessing.active_children() == []
    assert_all_gone(workers)


@needs_proc
def test_train_files_reports_a_killed_worker(big_corpus: Path) -> None:
    workers: list[int] = []

    def kill_a_worker(event: Progress) -> None:
        if event.task == "count" and event.stage == "update" and event.done > 0 and not workers:
            workers.extend(counting_workers())
            os.kill(workers[-1], signal.SIGKILL)

    with watchdog(), pytest.raises(WorkerError, match=r"\(pid \d+\) was killed by SIGKILL"):
        train_files([big_corpus], 300, workers=2, block_size=1 << 16, progress=kill_a_worker)
    assert multiprocessing.active_children() == []
    assert_all_gone(workers)


@needs_proc
@pytest.mark.parametrize(
    ("signum", "described"),
    # Not SIGSEGV or SIGABRT: pytest's faulthandler, inherited by forked workers, would
    # print a stack for them. The parent's description does not depend on the signal.
    [(signal.SIGHUP, "was killed by SIGHUP"), (signal.SIGUSR1, "was killed by SIGUSR1")],
)
def test_a_worker_killed_by_another_signal_is_named(
    big_corpus: Path, signum: int, described: str, request: pytest.FixtureRequest
) -> None:
    workers: list[int] = []
    # Forked workers inherit the disposition: under `nohup` SIGHUP is ignored, and
    # this test is about a signal that kills.
    previous = signal.signal(signum, signal.SIG_DFL)
    request.addfinalizer(lambda: signal.signal(signum, previous))

    def kill_a_worker(event: Progress) -> None:
        # At "start" the workers exist and cannot have finished: killing at the first
        # update raced a fast count (the worker had already sent its counts and left).
        if event.stage == "start" and not workers:
            workers.extend(counting_workers())
            os.kill(workers[0], signum)

    with watchdog(), pytest.raises(WorkerError) as caught:
        count_files([big_corpus], workers=2, block_size=1 << 16, progress=kill_a_worker)
    assert str(caught.value) == f"a counting worker (pid {workers[0]}) {described}"
    assert multiprocessing.active_children() == []
    assert_all_gone(workers)


@needs_fork
@needs_proc
def test_a_worker_that_exits_without_its_counts_names_the_exit_code(
    monkeypatch: pytest.MonkeyPatch, big_corpus: Path
) -> None:
    """``os._exit(3)`` in a worker (what a crash in C code or a stray exit looks like)."""

    def exit_abruptly(
        piece: Piece,
        block_size: int,
        counts: Counter[str],
        on_bytes: object,
        pattern: object,
        *options: object,
    ) -> None:
        os._exit(3)

    monkeypatch.setattr(counting, "count_piece", exit_abruptly)
    with watchdog(), pytest.raises(WorkerError) as caught:
        count_files([big_corpus], workers=2)
    assert re.fullmatch(
        r"a counting worker \(pid \d+\) exited with status 3 before sending its counts",
        str(caught.value),
    )
    assert children_of(os.getpid()) == []


@needs_fork
@needs_proc
def test_a_worker_stuck_after_its_last_report_is_killed_and_the_counts_stand(
    monkeypatch: pytest.MonkeyPatch, big_corpus: Path
) -> None:
    """A worker that never exits once it has sent everything (here a finalizer that
    blocks, as a flush of a standard stream whose lock another thread held at the fork
    does) cannot hold the caller: its counts are in, and it is killed."""
    real = counting.count_piece

    def count_then_block_at_exit(piece: Piece, *args: object) -> None:
        real(piece, *args)  # type: ignore[arg-type]
        multiprocessing.util.Finalize(None, time.sleep, args=(3600,), exitpriority=0)

    expected = count_files([big_corpus], workers=1)
    monkeypatch.setattr(counting, "count_piece", count_then_block_at_exit)
    monkeypatch.setattr(pool, "EXIT_SECONDS", 0.5)
    with watchdog():
        assert count_files([big_corpus], workers=2) == expected
    assert children_of(os.getpid()) == []


@needs_fork
@needs_proc
def test_an_error_in_a_worker_reaches_the_caller_and_stops_the_others(
    monkeypatch: pytest.MonkeyPatch, big_corpus: Path
) -> None:
    """A file that vanished after planning: the worker's own error, with its filename."""
    real = counting.count_piece

    def vanish(
        piece: Piece,
        block_size: int,
        counts: Counter[str],
        on_bytes: object,
        pattern: object,
        *options: object,
    ) -> None:
        if piece.path.endswith("2.txt"):
            raise FileNotFoundError(2, "No such file or directory", piece.path)
        real(piece, block_size, counts, on_bytes, pattern, *options)  # type: ignore[arg-type]

    monkeypatch.setattr(counting, "count_piece", vanish)
    with watchdog(), pytest.raises(FileNotFoundError) as caught:
        count_files([big_corpus], workers=2, piece_bytes=1 << 20)
    assert caught.value.filename == str(big_corpus / "2.txt")
    assert children_of(os.getpid()) == []


class Unpicklable(Exception):
    """An exception the parent could not rebuild: its constructor needs two arguments."""

    def __init__(self, first: str, second: str) -> None:
        super().__init__(f"{first} {second}")


@needs_fork
def test_an_error_that_cannot_cross_processes_is_still_reported(
    monkeypatch: pytest.MonkeyPatch, big_corpus: Path
) -> None:
    def fail(
        piece: Piece,
        block_size: int,
        counts: Counter[str],
        on_bytes: object,
        pattern: object,
        *options: object,
    ) -> None:
        raise Unpicklable("cannot", "travel")

    monkeypatch.setattr(counting, "count_piece", fail)
    with watchdog(), pytest.raises(WorkerError, match=r"Unpicklable: cannot travel"):
        count_files([big_corpus], workers=2)


def test_a_worker_whose_parent_is_gone_stops_at_the_next_block(tmp_path: Path) -> None:
    """Workers compare their parent's pid at every block: an orphan stops counting."""
    path = tmp_path / "f.txt"
    path.write_bytes(b"some words\n" * 1000)
    pieces = [Piece(str(path), 0, None, path.stat().st_size)]
    job = counting.CountJob(pieces, 1024, "gpt2")
    context = multiprocessing.get_context()
    shared = pool.Shared(context.Value("q", 0), context.Array("q", 1, lock=False), len(pieces))
    orphan = pool.watch_parent(shared.done, 0, "counting", parent=-1)
    with pytest.raises(WorkerError, match="parent process is gone"):
        orphan(1)
    reports: list[pool.Report] = []
    pool.serve(job.task, 0, shared, orphan, reports.append, "counting")
    [(index, error)] = reports[-1].pieces
    assert reports[-1].last and index == 0
    assert isinstance(error, WorkerError) and "parent process is gone" in str(error)
    shared.next_piece.value = 0
    reports.clear()
    own = pool.watch_parent(shared.done, 0, "counting")
    pool.serve(job.task, 0, shared, own, reports.append, "counting")
    counts = reports[-1].summary
    assert Counter({k.encode(): v for k, v in counts.items()}) == Counter(
        _chunks(path.read_text(encoding="utf-8"))
    )
    assert shared.done[0] == path.stat().st_size


@pytest.fixture(scope="module")
def one_process_counts(big_corpus: Path) -> Counter[bytes]:
    """What one process counts in the first two files of the big corpus."""
    return count_files([big_corpus / "0.txt", big_corpus / "1.txt"], workers=1)


@pytest.mark.parametrize("workers", [2, 3])
def test_counts_with_workers_equal_one_process(
    big_corpus: Path, one_process_counts: Counter[bytes], workers: int
) -> None:
    """Several small pieces per worker, claimed in any order: the same counts."""
    files = [big_corpus / "0.txt", big_corpus / "1.txt"]
    expected = one_process_counts
    assert count_files(files, workers=workers, piece_bytes=300_000) == expected
    assert multiprocessing.active_children() == []


# --------------------------------------------------------------------------- the CLI


def popen_bpetite(*argv: object) -> subprocess.Popen[bytes]:
    """Run ``python -m bpetite`` in a process group of its own, plain progress on stderr."""
    env = {k: v for k, v in os.environ.items() if k not in {"FORCE_COLOR", "COLUMNS"}}
    env["TERM"] = "dumb"
    return subprocess.Popen(
        [sys.executable, "-m", "bpetite", *map(str, argv)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )


def wait_for_counting(process: subprocess.Popen[bytes]) -> bytes:
    """Read stderr until a progress line reports counted bytes; return what was read."""
    assert process.stderr is not None
    seen = b""
    while True:
        line = process.stderr.readline()
        assert line, f"the command ended before reporting progress; stderr was {seen!r}"
        seen += line
        match = re.match(rb"count: (\d+)/(\d+) bytes", line)
        if match and int(match[1]) > 0:
            assert int(match[1]) < int(match[2]), "counting finished before the test could act"
            return seen


@contextlib.contextmanager
def reaped(process: subprocess.Popen[bytes]) -> Iterator[None]:
    """Whatever the test found, kill what is left of the process group afterwards."""
    try:
        yield
    finally:
        if live_processes_in_group(process.pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def command(name: str, corpus: Path, output: Path) -> list[object]:
    if name == "count":
        return ["count", "--input", corpus, "--workers", 2, "--output", output]
    return ["train", "--input", corpus, "--workers", 2, "--vocab-size", 300, "--output", output]


@needs_proc
@pytest.mark.parametrize("name", ["count", "train"])
def test_cli_a_killed_worker_is_one_line_and_exit_1(
    big_corpus: Path, tmp_path: Path, name: str
) -> None:
    output = tmp_path / "out" / "result.json"
    output.parent.mkdir()
    process = popen_bpetite(*command(name, big_corpus, output))
    with reaped(process):
        seen = wait_for_counting(process)
        workers = worker_pids(process.pid)
        assert len(workers) == 2, workers
        os.kill(workers[0], signal.SIGKILL)
        stdout, rest = process.communicate(timeout=HANG_SECONDS)
        err = (seen + rest).decode()
        assert process.returncode == 1, err
        assert stdout == b""
        assert "Traceback" not in err
        assert err.splitlines()[-1] == (
            f"bpetite: error: a counting worker (pid {workers[0]}) was killed by SIGKILL; "
            "the machine may be out of memory"
        )
        assert list(output.parent.iterdir()) == []
        assert_all_gone(workers, process.pid)


@needs_proc
@pytest.mark.parametrize(
    ("signum", "code", "message"),
    [
        (signal.SIGTERM, EXIT_TERMINATED, "terminated by SIGTERM; nothing was written"),
        (signal.SIGINT, EXIT_INTERRUPTED, "interrupted; nothing was written"),
    ],
    ids=["SIGTERM", "SIGINT"],
)
@pytest.mark.parametrize("name", ["count", "train"])
def test_cli_a_signal_while_workers_count_stops_them_all(
    big_corpus: Path, tmp_path: Path, name: str, signum: int, code: int, message: str
) -> None:
    """The signal reaches only the parent (as from ``kill PID``): it must stop its workers."""
    output = tmp_path / "out" / "result.json"
    output.parent.mkdir()
    process = popen_bpetite(*command(name, big_corpus, output))
    with reaped(process):
        seen = wait_for_counting(process)
        workers = worker_pids(process.pid)
        assert len(workers) == 2, workers
        process.send_signal(signum)
        stdout, rest = process.communicate(timeout=HANG_SECONDS)
        err = (seen + rest).decode()
        assert process.returncode == code, err
        assert stdout == b""
        assert "Traceback" not in err
        assert "Error" not in err  # BrokenPipeError and friends
        assert err.splitlines()[-1] == f"bpetite: error: {message}"
        assert list(output.parent.iterdir()) == []
        assert_all_gone(workers, process.pid)


@needs_proc
def test_cli_sigterm_to_the_whole_group_is_one_line(big_corpus: Path, tmp_path: Path) -> None:
    """``timeout`` and service managers signal the whole group: workers and parent at once."""
    output = tmp_path / "out" / "counts.json"
    output.parent.mkdir()
    process = popen_bpetite(*command("count", big_corpus, output))
    with reaped(process):
        seen = wait_for_counting(process)
        workers = worker_pids(process.pid)
        os.killpg(process.pid, signal.SIGTERM)
        stdout, rest = process.communicate(timeout=HANG_SECONDS)
        err = (seen + rest).decode()
        assert process.returncode == EXIT_TERMINATED, err
        assert stdout == b""
        assert "Traceback" not in err
        assert err.splitlines()[-1] == "bpetite: error: terminated by SIGTERM; nothing was written"
        assert list(output.parent.iterdir()) == []
        assert_all_gone(workers, process.pid)


@needs_proc
@pytest.mark.parametrize("name", ["count", "train"])
def test_sigterm_while_saving_leaves_no_temp_file(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    name: str,
) -> None:
    """SIGTERM lands between writing the temp file and publishing it.

    The test's own handler stands in for the default action (which would end pytest):
    without a handler of its own, the CLI would let the save finish and exit 0.
    """
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello world, hello there\n" * 50, encoding="utf-8")
    output = tmp_path / "out" / "result.json"
    output.parent.mkdir()
    real_fsync = os.fsync

    def fsync_then_sigterm(fd: int) -> None:
        real_fsync(fd)
        if any(entry.name.endswith(".tmp") for entry in output.parent.iterdir()):
            os.kill(os.getpid(), signal.SIGTERM)

    received: list[int] = []

    def outer_handler(signum: int, frame: FrameType | None) -> None:
        received.append(signum)

    previous = signal.signal(signal.SIGTERM, outer_handler)
    try:
        monkeypatch.setattr(os, "fsync", fsync_then_sigterm)
        argv = command(name, corpus, output)
        argv[argv.index("--workers") + 1] = 1
        code = main([str(arg) for arg in argv])
        assert signal.getsignal(signal.SIGTERM) is outer_handler  # main() put it back
    finally:
        signal.signal(signal.SIGTERM, previous)
    captured = capsys.readouterr()
    assert code == EXIT_TERMINATED, captured
    assert received == []
    assert captured.out == ""
    assert captured.err.splitlines()[-1] == (
        "bpetite: error: terminated by SIGTERM; nothing was written"
    )
    assert list(output.parent.iterdir()) == []


def test_an_ignored_sigterm_stays_ignored(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``nohup``-style: whoever started bpetite chose to ignore SIGTERM; main() keeps that."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello world\n" * 10, encoding="utf-8")
    seen: list[object] = []
    real_fsync = os.fsync

    def fsync_and_look(fd: int) -> None:
        seen.append(signal.getsignal(signal.SIGTERM))
        real_fsync(fd)

    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        monkeypatch.setattr(os, "fsync", fsync_and_look)
        code = main(["count", "--input", str(corpus), "--output", str(tmp_path / "c.json")])
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert code == 0, capsys.readouterr()
    assert seen
    assert all(handler is signal.SIG_IGN for handler in seen)


def test_awaiting_a_message_neither_blocks_nor_reads_it() -> None:
    """The poll before a conversation's blocking read gives up when no message comes,
    and leaves a message that came for the read that follows, unread and whole."""
    receiver, sender = multiprocessing.Pipe(duplex=False)
    with watchdog():
        pool.await_message(receiver, 0.01)  # nothing sent: it must return, not wait
    assert not receiver.poll(0)
    sender.send({"ab": 3})
    with watchdog():
        pool.await_message(receiver)
    assert receiver.poll(0)
    assert receiver.recv() == {"ab": 3}
    receiver.close()
    sender.close()
