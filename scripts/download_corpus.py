"""Fetch TinyShakespeare into data/, checked against its sha256 and written atomically.

This is the project's only networked helper: the library and the CLI never download
anything. Standard library only, so it runs before any dependency is installed:

    uv run python scripts/download_corpus.py [--url URL] [--output PATH] [--force]

Exit codes: 0 when the verified file is in place (downloaded now, or already there),
1 when it is not (network error, checksum mismatch, an existing different file), 2 for
a usage error. A failed or interrupted download never leaves a file behind.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import BinaryIO

DEFAULT_URL = (
    "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
)
#: The URL can also come from the environment, so a test can serve the file locally
#: while running the exact command the README shows.
URL_ENV_VAR = "BPETITE_CORPUS_URL"
DEFAULT_OUTPUT = "data/tinyshakespeare.txt"
EXPECTED_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
#: The real file is 1,115,394 bytes; a response far larger than that is not it.
MAX_BYTES = 16 * 1024 * 1024
TIMEOUT_SECONDS = 60
_CHUNK_BYTES = 64 * 1024


class DownloadError(Exception):
    """A failure the user can act on: one line on stderr, exit code 1."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Download the TinyShakespeare corpus and verify its sha256.",
        epilog=f"The URL defaults to ${URL_ENV_VAR} if set, else {DEFAULT_URL}",
    )
    parser.add_argument(
        "--url", default=os.environ.get(URL_ENV_VAR) or DEFAULT_URL, help="where to fetch from"
    )
    parser.add_argument(
        "--output", default=DEFAULT_OUTPUT, help=f"file to write (default: {DEFAULT_OUTPUT})"
    )
    parser.add_argument("--force", action="store_true", help="replace --output if it differs")
    args = parser.parse_args(argv)
    try:
        message = fetch_corpus(args.url, Path(args.output), force=args.force)
    except DownloadError as error:
        print(f"download_corpus: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("download_corpus: error: interrupted; nothing was written", file=sys.stderr)
        return 1
    print(message)
    return 0


def fetch_corpus(url: str, output: Path, *, force: bool) -> str:
    """Put the verified corpus at `output`; return a one-line report of what happened."""
    if not url.startswith(("https://", "http://")):
        raise DownloadError(f"--url must be an http(s) URL, got '{url}'")
    if output.is_dir():
        raise DownloadError(f"--output '{output}' is a directory; give the path of a file")
    if output.exists() and not force:
        if _sha256_of(output) == EXPECTED_SHA256:
            return f"{output} is already there (sha256 verified)"
        raise DownloadError(
            f"'{output}' exists and is not the expected corpus; pass --force to replace it"
        )
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DownloadError(f"cannot create '{output.parent}': {error.strerror}") from None

    print(f"downloading {url}", file=sys.stderr)
    size = _download_verified(url, output)
    return f"saved {output} ({size} bytes, sha256 verified)"


def _download_verified(url: str, output: Path) -> int:
    """Stream `url` into a temp file beside `output`, check it, then rename it into place.

    The temp file lives in the destination directory so the rename is atomic: readers
    see no file or the whole verified file, never a partial or corrupt one.
    """
    fd, temp_name = tempfile.mkstemp(dir=output.parent, prefix=f".{output.name}.", suffix=".tmp")
    temp = Path(temp_name)
    published = False
    try:
        with os.fdopen(fd, "wb") as handle:
            digest, size = _copy_response(url, handle)
            handle.flush()
            os.fsync(handle.fileno())
        if digest != EXPECTED_SHA256:
            raise DownloadError(
                f"{url} does not hold the expected corpus: sha256 {digest}, expected "
                f"{EXPECTED_SHA256} ({size} bytes); nothing was written"
            )
        temp.chmod(0o644)
        temp.replace(output)
        published = True
    finally:
        if not published:  # every failure, KeyboardInterrupt included
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
    return size


def _copy_response(url: str, handle: BinaryIO) -> tuple[str, int]:
    """Write the body of `url` to `handle`; return its sha256 and size."""
    digest = hashlib.sha256()
    size = 0
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            while chunk := response.read(_CHUNK_BYTES):
                size += len(chunk)
                if size > MAX_BYTES:
                    raise DownloadError(
                        f"{url} sent more than {MAX_BYTES} bytes; that is not the corpus"
                    )
                digest.update(chunk)
                handle.write(chunk)
    except urllib.error.HTTPError as error:
        raise DownloadError(f"cannot download {url}: HTTP {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise DownloadError(f"cannot download {url}: {error.reason}") from None
    except (OSError, TimeoutError) as error:
        raise DownloadError(f"cannot download {url}: {error}") from None
    return digest.hexdigest(), size


def _sha256_of(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as error:
        raise DownloadError(f"cannot read '{path}': {error.strerror}") from None


if __name__ == "__main__":
    sys.exit(main())
