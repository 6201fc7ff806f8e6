"""The atomic writers: a file in place is a success, and the temp name is always short."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from bpetite.core._atomic import atomic_writer, write_atomically
from bpetite.core._errors import OutputExistsError

needs_posix = pytest.mark.skipif(os.name != "posix", reason="directory fsync is POSIX-only")


@needs_posix
@pytest.mark.parametrize("code", [errno.EINVAL, errno.ENOTSUP])
def test_a_directory_fsync_the_filesystem_cannot_do_is_not_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if _is_directory(fd):
            raise OSError(code, os.strerror(code))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    target = tmp_path / "out.json"
    write_atomically(target, b"data", overwrite=False)
    assert target.read_bytes() == b"data"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out.json"]


@needs_posix
def test_a_real_directory_fsync_failure_is_still_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if _is_directory(fd):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError, match="Input/output error"):
        write_atomically(tmp_path / "out.json", b"data", overwrite=False)


def test_the_longest_name_the_filesystem_takes_is_written(tmp_path: Path) -> None:
    limit = os.pathconf(tmp_path, "PC_NAME_MAX") if hasattr(os, "pathconf") else 255
    target = tmp_path / ("n" * (limit - len(".json")) + ".json")
    write_atomically(target, b"data", overwrite=False)
    assert target.read_bytes() == b"data"
    assert [path.name for path in tmp_path.iterdir()] == [target.name]


def test_the_temp_file_is_beside_the_destination_with_a_short_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    real_replace = Path.replace

    def replace(self: Path, target: str | os.PathLike[str]) -> Path:
        seen.append(str(self))
        return real_replace(self, target)

    monkeypatch.setattr(Path, "replace", replace)
    write_atomically(tmp_path / ("x" * 200), b"data", overwrite=True)
    (temp,) = seen
    assert Path(temp).parent == tmp_path
    assert len(Path(temp).name) < 40


def test_a_file_written_a_piece_at_a_time_appears_only_when_whole(tmp_path: Path) -> None:
    target = tmp_path / "ids.json"
    with atomic_writer(target, overwrite=False) as handle:
        handle.write(b"[1,")
        assert not target.exists()
        handle.write(b"2]")
    assert target.read_bytes() == b"[1,2]"
    assert [path.name for path in tmp_path.iterdir()] == ["ids.json"]


@pytest.mark.parametrize("error", [KeyboardInterrupt, ValueError])
def test_a_file_written_a_piece_at_a_time_is_not_made_when_the_block_fails(
    tmp_path: Path, error: type[BaseException]
) -> None:
    with pytest.raises(error), atomic_writer(tmp_path / "ids.json", overwrite=False) as handle:
        handle.write(b"[1,")
        raise error
    assert list(tmp_path.iterdir()) == []


def test_a_file_written_a_piece_at_a_time_keeps_an_existing_one_unless_told(
    tmp_path: Path,
) -> None:
    target = tmp_path / "ids.json"
    target.write_bytes(b"old")
    with pytest.raises(OutputExistsError), atomic_writer(target, overwrite=False):
        pytest.fail("the block must not run")  # pragma: no cover
    with atomic_writer(target, overwrite=True) as handle:
        handle.write(b"new")
    assert target.read_bytes() == b"new"


def _is_directory(fd: int) -> bool:
    return stat.S_ISDIR(os.fstat(fd).st_mode)


def test_the_suites_fsync_skips_the_wait_but_not_the_descriptor_check(tmp_path: Path) -> None:
    """tests/conftest.py's ``os.fsync`` (unless BPETITE_TEST_REAL_FSYNC=1): no wait, and a
    descriptor that is not open still fails as the real one does."""
    path = tmp_path / "f"
    with path.open("wb") as handle:
        os.fsync(handle.fileno())
        os.fsync(handle)
        closed = handle.fileno()
    with pytest.raises(OSError) as caught:
        os.fsync(closed)
    assert caught.value.errno == errno.EBADF
