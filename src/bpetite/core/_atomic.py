"""Write a whole file or nothing: every file bpetite creates goes through here.

Artifacts, exports, count files and HTML pages all need the same guarantees: a reader
sees the old file or the new one, never half of one; a failure or Ctrl-C leaves no
temp file; an existing file is only replaced when the caller says so; and the new file
gets the permissions any new file would (``mkstemp`` makes it 0o600).

Only a regular file is ever replaced. A symbolic link is written through: the new file
replaces the regular file it points at, as a shell's ``>`` writes through one. A FIFO,
a device, a socket or a link to nothing is refused (NotARegularFileError): renaming a
file over it would swap the node itself for a regular file, and the data would never
reach the reader or device the path stood for.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO

from bpetite.core._errors import (
    NotARegularFileError,
    OutputDirectoryMissingError,
    OutputExistsError,
    OutputIsADirectoryError,
    OutputParentNotADirectoryError,
)

if TYPE_CHECKING:
    # pathlib (with urllib.parse and ipaddress) is imported by the functions that make a
    # Path, at the first write: `import bpetite` does not need it.
    from pathlib import Path


def write_atomically(path: str | os.PathLike[str], data: bytes, *, overwrite: bool) -> None:
    """Write `data` to `path` atomically and durably.

    Raises OutputExistsError (a FileExistsError) when `path` exists and `overwrite` is
    false (also when the file appears while we write), OutputDirectoryMissingError (a
    FileNotFoundError) or OutputParentNotADirectoryError (a NotADirectoryError) for a
    bad parent, OutputIsADirectoryError (an IsADirectoryError) when `path` is a
    directory or ends in a separator, NotARegularFileError for a FIFO, a device, a
    socket or a link to nothing; all before writing anything. A symbolic link to a regular file is
    written through (with `overwrite`).
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
    destination = check_destination(_as_path(path), overwrite=overwrite)
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
    from pathlib import Path

    temp = Path(temp)
    given = _as_path(path)
    try:
        destination = check_destination(given, overwrite=overwrite)
        if destination != given and destination.parent != temp.parent:
            # A link to a file elsewhere (maybe another filesystem): copy the data to a
            # temp file beside the target, which publishes whole, as any write does.
            import shutil

            with temp.open("rb") as source, atomic_writer(destination, overwrite=True) as sink:
                shutil.copyfileobj(source, sink)
            temp.unlink()
            return
        with temp.open("rb+") as handle:
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    _publish(temp, destination, overwrite=overwrite)


def check_destination(destination: Path, *, overwrite: bool) -> Path:
    """Fail before writing anything, with a message that names the real problem; return
    the path to publish at: `destination`, or the regular file a link there points at.

    Public within the package: a command with several outputs checks them all first.
    """
    parent = destination.parent
    if not parent.exists():
        raise OutputDirectoryMissingError(destination, f"directory '{parent}' does not exist")
    if not parent.is_dir():
        raise OutputParentNotADirectoryError(destination, f"'{parent}' is not a directory")
    if destination.is_dir():
        raise OutputIsADirectoryError(destination, "it is a directory")
    try:
        mode = destination.lstat().st_mode
    except FileNotFoundError:
        return destination  # nothing there yet
    if not stat.S_ISLNK(mode):
        what = _kind(mode)
        if what is not None:
            raise _not_regular(destination, f"it is {what}")
    if not overwrite:
        raise OutputExistsError(_exists_message(destination))
    if not stat.S_ISLNK(mode):
        return destination
    from pathlib import Path

    target = Path(os.path.realpath(destination))
    try:
        what = _kind(target.stat().st_mode)
    except OSError:  # a link to nothing, or a loop of links
        raise _not_regular(
            destination, f"it is a symbolic link to '{target}', which does not exist"
        ) from None
    if what is not None:
        raise _not_regular(destination, f"it is a symbolic link to {what}, '{target}'")
    return target


def _not_regular(destination: str | os.PathLike[str], what: str) -> NotARegularFileError:
    """The refusal of a destination that is `what` rather than a regular file."""
    return NotARegularFileError(destination, f"{what}, and bpetite only replaces regular files")


def _as_path(path: str | os.PathLike[str]) -> Path:
    """`path` as a Path; one ending in a separator names a directory, as ``open`` says.

    A str or a path object; bytes, which pathlib does not take, are refused by name.
    """
    from pathlib import Path

    text = os.fspath(path) if isinstance(path, os.PathLike) else path
    if not isinstance(text, str):
        raise TypeError(f"path must be a str or os.PathLike, got {type(text).__name__}")
    if text.endswith(os.sep) or (os.altsep is not None and text.endswith(os.altsep)):
        raise OutputIsADirectoryError(text, "it ends in a separator, so it names a directory")
    return Path(text)


#: What each kind of node other than a regular file is called in a refusal.
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str | None:
    """What a node of `mode` is, in words, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


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
    from pathlib import Path

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
