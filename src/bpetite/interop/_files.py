"""Writing an export file atomically, the way the artifact itself is saved.

bpetite's persistence layer has the same logic for artifacts; this small copy takes
arbitrary bytes (a ``tokenizer.json`` or a ``.tiktoken`` file), so a failed or
interrupted export never leaves a partial file behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomically(path: str | os.PathLike[str], data: bytes, *, overwrite: bool) -> None:
    """Write `data` to `path`: temp file, fsync, rename; readers never see half a file.

    Raises FileExistsError if `path` exists and `overwrite` is false, FileNotFoundError
    if its directory does not exist. The temp file lives beside the destination so the
    rename is a single operation on one filesystem, and it is removed on any failure.
    """
    destination = Path(path)
    if not destination.parent.is_dir():
        raise FileNotFoundError(
            f"cannot write '{destination}': directory '{destination.parent}' does not exist"
        )
    if destination.is_dir():
        raise IsADirectoryError(f"cannot write '{destination}': it is a directory")
    if not overwrite and (destination.exists() or destination.is_symlink()):
        raise FileExistsError(f"'{destination}' already exists; pass overwrite=True to replace it")
    fd, temp_name = tempfile.mkstemp(
        dir=destination.parent, prefix=f".{destination.name}.", suffix=".tmp"
    )
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp makes the file private (0o600); an export gets a new file's usual mode.
        temp.chmod(0o666 & ~_current_umask())
        temp.replace(destination)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise


def _current_umask() -> int:
    """Python can only read the umask by setting it; 0o077 errs towards privacy meanwhile."""
    umask = os.umask(0o077)
    os.umask(umask)
    return umask
