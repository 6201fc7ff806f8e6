"""Saving an artifact: refusals before writing, permissions, and atomicity under faults."""

import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from bpetite.core._artifact import dumps_artifact, load
from tests.artifacts import (
    GATE_CORPUS,
    State,
    dir_listing,
    save,
    trained_state,
)

# --------------------------------------------------------------------------- save


@pytest.fixture
def state() -> State:
    return trained_state("ab ab ab", 258)


@pytest.fixture
def umask() -> Iterator[Callable[[int], int]]:
    """Set the process umask for one test and always put the old one back."""
    original = os.umask(0o022)
    os.umask(original)
    yield os.umask
    os.umask(original)


def test_save_refuses_to_overwrite_existing_file_by_default(
    tmp_path: Path, state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused up front, before any temp file is written."""
    path = tmp_path / "tok.json"
    path.write_bytes(b"precious")
    monkeypatch.setattr(tempfile, "mkstemp", lambda *a, **k: pytest.fail("wrote a temp file"))
    with pytest.raises(FileExistsError, match="overwrite=True"):
        save(path, *state)
    assert path.read_bytes() == b"precious"
    assert dir_listing(tmp_path) == ["tok.json"]


def test_save_refuses_a_dangling_symlink_without_overwrite(tmp_path: Path, state: State) -> None:
    path = tmp_path / "tok.json"
    path.symlink_to(tmp_path / "nowhere.json")
    with pytest.raises(FileExistsError):
        save(path, *state)
    assert not (tmp_path / "nowhere.json").exists()


def test_save_overwrites_when_asked(tmp_path: Path, state: State) -> None:
    path = tmp_path / "tok.json"
    path.write_bytes(b"old")
    save(path, *state, overwrite=True)
    assert path.read_bytes() == dumps_artifact(*state)
    assert dir_listing(tmp_path) == ["tok.json"]


def test_save_accepts_str_paths_and_relative_names(
    tmp_path: Path, state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    save("tok.json", *state)
    assert load("tok.json").state == state


def test_save_raises_file_not_found_when_parent_directory_missing(
    tmp_path: Path, state: State
) -> None:
    path = tmp_path / "missing" / "tok.json"
    with pytest.raises(FileNotFoundError, match="does not exist"):
        save(path, *state)
    assert dir_listing(tmp_path) == []


def test_save_rejects_a_parent_that_is_a_file(tmp_path: Path, state: State) -> None:
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        save(tmp_path / "file" / "tok.json", *state)


def test_save_rejects_a_destination_that_is_a_directory(tmp_path: Path, state: State) -> None:
    (tmp_path / "tok.json").mkdir()
    for overwrite in (False, True):
        with pytest.raises(IsADirectoryError, match="it is a directory"):
            save(tmp_path / "tok.json", *state, overwrite=overwrite)
    assert dir_listing(tmp_path) == ["tok.json"]


def test_save_refuses_an_invalid_state_and_writes_nothing(tmp_path: Path, state: State) -> None:
    """dumps_artifact validates its own output, so no file load() would reject is written."""
    vocab, merges, special = state
    broken_vocab = dict(vocab)
    del broken_vocab[258]
    with pytest.raises(ValueError, match='no entry "258" for the special token'):
        save(tmp_path / "tok.json", broken_vocab, merges, special)
    with pytest.raises(ValueError, match=r'vocab\["256"\] must be the bytes of merges\[0\]'):
        save(tmp_path / "tok.json", vocab | {256: b"ba"}, merges, special)
    with pytest.raises(ValueError, match="must be an integer"):
        save(tmp_path / "tok.json", vocab, [(97, 98), (32, True)], special)
    assert dir_listing(tmp_path) == []


@pytest.mark.skipif(os.name == "nt", reason="platform limit: POSIX permission bits")
@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002, 0o027])
@pytest.mark.parametrize("overwrite", [False, True])
def test_saved_file_gets_ordinary_permissions_not_mkstemps(
    tmp_path: Path, state: State, umask: Callable[[int], int], mask: int, overwrite: bool
) -> None:
    path = tmp_path / "tok.json"
    if overwrite:
        path.write_bytes(b"old")
    umask(mask)
    save(path, *state, overwrite=overwrite)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask


def test_save_writes_its_temp_file_beside_the_destination_and_syncs_both(
    tmp_path: Path, state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same directory, so the final rename is atomic; fsync of file and directory."""
    real_mkstemp, real_fsync = tempfile.mkstemp, os.fsync
    temp_dirs: list[str] = []
    synced: list[bool] = []

    def recording_mkstemp(*args: Any, **kwargs: Any) -> tuple[int, str]:
        fd, name = real_mkstemp(*args, **kwargs)
        temp_dirs.append(str(Path(name).parent))
        return fd, name

    def recording_fsync(fd: int) -> None:
        synced.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        real_fsync(fd)

    monkeypatch.setattr(tempfile, "mkstemp", recording_mkstemp)
    monkeypatch.setattr(os, "fsync", recording_fsync)
    save(tmp_path / "tok.json", *state)
    assert temp_dirs == [str(tmp_path)]
    if os.name != "nt":
        assert synced == [False, True]


_REAL_FDOPEN = os.fdopen  # captured before tests replace os.fdopen


class _HalfWriter:
    """A file object that writes half the data and then fails, like a full disk."""

    def __init__(self, fd: int, failure: BaseException) -> None:
        self._handle = _REAL_FDOPEN(fd, "wb")  # closed in __exit__
        self._failure = failure

    def __enter__(self) -> "_HalfWriter":
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._handle.close()

    def write(self, data: bytes) -> int:
        self._handle.write(data[: len(data) // 2])
        self._handle.flush()
        raise self._failure


def _inject(monkeypatch: pytest.MonkeyPatch, where: str, failure: BaseException) -> None:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise failure

    if where == "write":
        monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: _HalfWriter(fd, failure))
    else:
        monkeypatch.setattr(os, where, fail)


_FAILURES = [
    pytest.param(OSError(errno.ENOSPC, "No space left on device"), id="OSError"),
    pytest.param(KeyboardInterrupt(), id="KeyboardInterrupt"),
]


@pytest.mark.parametrize("failure", _FAILURES)
@pytest.mark.parametrize("where", ["write", "fsync", "replace"])
def test_a_failed_overwrite_keeps_the_previous_artifact_and_leaves_no_temp_file(
    tmp_path: Path,
    state: State,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    failure: BaseException,
) -> None:
    path = tmp_path / "tok.json"
    save(path, *trained_state(GATE_CORPUS, 270))
    previous = path.read_bytes()
    _inject(monkeypatch, where, failure)
    with pytest.raises(type(failure)):
        save(path, *state, overwrite=True)
    monkeypatch.undo()
    assert path.read_bytes() == previous
    assert dir_listing(tmp_path) == ["tok.json"]


@pytest.mark.parametrize(
    ("where", "failure"),
    [
        ("write", OSError(errno.ENOSPC, "No space left on device")),
        ("write", KeyboardInterrupt()),
        ("fsync", OSError(errno.EIO, "Input/output error")),
        ("fsync", KeyboardInterrupt()),
        ("link", KeyboardInterrupt()),  # an OSError from link means "try replace" instead
    ],
)
def test_a_failed_new_save_leaves_nothing_behind(
    tmp_path: Path,
    state: State,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    failure: BaseException,
) -> None:
    (tmp_path / "other.json").write_bytes(b"unrelated")
    _inject(monkeypatch, where, failure)
    with pytest.raises(type(failure)):
        save(tmp_path / "tok.json", *state)
    monkeypatch.undo()
    assert dir_listing(tmp_path) == ["other.json"]


def test_a_file_that_appears_during_the_save_is_not_clobbered(
    tmp_path: Path, state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The existence check runs before writing; another process may win the race."""
    path = tmp_path / "tok.json"
    real_fsync = os.fsync

    def fsync_while_someone_else_saves(fd: int) -> None:
        if not path.exists():
            path.write_bytes(b"theirs")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_while_someone_else_saves)
    with pytest.raises(FileExistsError):
        save(path, *state)
    assert path.read_bytes() == b"theirs"
    assert dir_listing(tmp_path) == ["tok.json"]


@pytest.mark.parametrize("someone_else_wins", [False, True])
def test_save_without_hard_links_falls_back_to_replace(
    tmp_path: Path, state: State, monkeypatch: pytest.MonkeyPatch, someone_else_wins: bool
) -> None:
    """Filesystems such as FAT refuse hard links; saving must still work there."""
    path = tmp_path / "tok.json"

    def no_hard_links(source: Any, destination: Any) -> None:
        if someone_else_wins:
            path.write_bytes(b"theirs")
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_hard_links)
    if someone_else_wins:
        with pytest.raises(FileExistsError):
            save(path, *state)
        assert path.read_bytes() == b"theirs"
    else:
        save(path, *state)
        assert path.read_bytes() == dumps_artifact(*state)
    assert dir_listing(tmp_path) == ["tok.json"]


def test_a_failed_fallback_replace_leaves_nothing_behind(
    tmp_path: Path, state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", refuse)
    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(PermissionError):
        save(tmp_path / "tok.json", *state)
    monkeypatch.undo()
    assert dir_listing(tmp_path) == []
