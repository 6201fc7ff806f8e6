"""Write a whole file or nothing: every file bpetite creates goes through here.

Artifacts, exports, count files and HTML pages all need the same guarantees: a reader
sees the old file or the new one, never half of one; a failure or Ctrl-C leaves no
temp file; an existing file is only replaced when the caller says so; and the new file
gets the permissions any new file would (``mkstemp`` makes it 0o600).
"""

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from bpetite.core._errors import OutputExistsError


def write_atomically(path: str | os.PathLike[str], data: bytes, *, overwrite: bool) -> None:
    """Write `data` to `path` atomically and durably.

    Raises OutputExistsError (a FileExistsError) when `path` exists and `overwrite` is
    false (also when the file appears while we write), FileNotFoundError or
    NotADirectoryError for a bad parent, IsADirectoryError when `path` is a directory;
    all before writing anything.
    """
    with atomic_writer(path, overwrite=overwrite) as handle:
        handle.write(data)


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, overwrite: bool) -> Iterator[BinaryIO]:
    """A file to write `path`'s content into, a piece at a time, published whole at the end.

    For outputs too large to hold as bytes: the block writes into a temp file beside
    `path`, which gets its final name as write_atomically's does when the block ends
    without error; an exception (Ctrl-C included) removes it instead. The destination
    is checked before the block runs, with write_atomically's errors.
    """
    destination = Path(path)
    check_destination(destination, overwrite=overwrite)
    fd, temp = _create_temp(destination.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:  # Ctrl-C included: the temp file never outlives us
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    _publish(temp, destination, overwrite=overwrite)


def publish_atomically(
    temp: str | os.PathLike[str], path: str | os.PathLike[str], *, overwrite: bool
) -> None:
    """Give a finished temp file in `path`'s directory its final name, as write_atomically does.

    For outputs too large to pass as bytes: the caller writes the temp file, this
    fsyncs it, gives it a new file's permissions and renames it (never replacing an
    existing file unless `overwrite`: OutputExistsError). On failure the temp file
    is removed.
    """
    temp = Path(temp)
    destination = Path(path)
    try:
        check_destination(destination, overwrite=overwrite)
        with temp.open("rb+") as handle:
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    _publish(temp, destination, overwrite=overwrite)


def check_destination(destination: Path, *, overwrite: bool) -> None:
    """Fail before writing anything, with a message that names the real problem.

    Public within the package: a command with several outputs checks them all first.
    """
    parent = destination.parent
    if not parent.exists():
        raise FileNotFoundError(
            f"cannot write '{destination}': directory '{parent}' does not exist"
        )
    if not parent.is_dir():
        raise NotADirectoryError(f"cannot write '{destination}': '{parent}' is not a directory")
    if destination.is_dir():
        raise IsADirectoryError(f"cannot write '{destination}': it is a directory")
    if not overwrite and (destination.exists() or destination.is_symlink()):
        raise OutputExistsError(_exists_message(destination))


def _exists_message(destination: Path) -> str:
    return f"'{destination}' already exists; pass overwrite=True to replace it"


def _publish(temp: Path, destination: Path, *, overwrite: bool) -> None:
    """Give a synced temp file its final name and a new file's permissions; fsync the
    directory. The temp file never outlives this call.

    The temp file lives beside the destination so the final rename or link is a
    single metadata operation on one filesystem, never a cross-device copy.
    """
    try:
        # The temp file is created 0o600; an output gets the permissions any new file would.
        temp.chmod(0o666 & ~_current_umask())
        if overwrite:
            temp.replace(destination)
        else:
            _publish_without_clobbering(temp, destination)
    finally:
        # Runs on every failure, KeyboardInterrupt included; after a rename it finds nothing.
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
    _fsync_directory(destination.parent)


def _create_temp(directory: Path) -> tuple[int, Path]:
    """Create a new, private (0o600) temp file in `directory`: ``.bpetite-<random>.tmp``.

    The name is short whatever the destination's is, so a destination name that the
    filesystem only just accepts never fails at the end for a longer temp name;
    ``mkstemp`` creates it with ``O_EXCL``, safe against a name someone else holds.
    """
    import tempfile  # here, not at the top: only a write needs it (and its shutil, random)

    fd, name = tempfile.mkstemp(dir=directory, prefix=".bpetite-", suffix=".tmp")
    return fd, Path(name)


def _publish_without_clobbering(temp: Path, destination: Path) -> None:
    """Give the temp file its final name only if nothing holds that name yet.

    A hard link fails atomically when the destination exists, so a file created by
    someone else while we were writing is never replaced. On filesystems without hard
    links we fall back to check-then-replace, which leaves a tiny race window. Either
    way the temp name is gone when this returns.
    """
    try:
        os.link(temp, destination)
    except FileExistsError:
        raise OutputExistsError(_exists_message(destination)) from None
    except OSError:
        if destination.exists() or destination.is_symlink():
            raise OutputExistsError(_exists_message(destination)) from None
        temp.replace(destination)
        return
    temp.unlink()


def _current_umask() -> int:
    """Read the process umask, which Python can only do by setting it.

    os.umask is process-global, so for an instant another thread creating a file would
    see the temporary value; 0o077 is chosen so that such a file is only ever made
    more private, never more exposed. Read at every save because the umask can change.
    """
    umask = os.umask(0o077)
    os.umask(umask)
    return umask


#: fsync of a directory fails with these where the filesystem does not support it
#: (some network and FUSE filesystems): the file is in place, so that is not a failure.
_FSYNC_UNSUPPORTED = frozenset({errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP})


def _fsync_directory(directory: Path) -> None:
    """Make the new directory entry itself durable, not just the file's contents.

    Runs after the file is published: a filesystem that cannot fsync a directory
    leaves the file in place, complete, and is not reported as a failure.
    """
    if os.name == "nt":  # Windows cannot open a directory as a file descriptor.
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as error:
        if error.errno not in _FSYNC_UNSUPPORTED:
            raise
    finally:
        os.close(fd)
