"""scripts/download_corpus.py against a local HTTP server: never the internet.

The server on 127.0.0.1 serves the committed TinyShakespeare, a copy with one byte
changed, a truncated copy and a 404. A download is accepted only when its sha256 is
right, and a rejected or interrupted one leaves no file, not even a temp file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "download_corpus.py"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    """The script imported as a module, for the in-process tests."""
    spec = importlib.util.spec_from_file_location("download_corpus", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def corpus_bytes(shakespeare_bytes: bytes) -> bytes:
    return shakespeare_bytes


@pytest.fixture(scope="module")
def server(corpus_bytes: bytes) -> Iterator[str]:
    """Base URL of a local server with /good.txt, /corrupt.txt, /short.txt; others 404."""
    corrupt = bytearray(corpus_bytes)
    corrupt[len(corrupt) // 2] ^= 0x01  # one bit in the middle: same size, wrong hash
    routes = {
        "/good.txt": corpus_bytes,
        "/corrupt.txt": bytes(corrupt),
        "/short.txt": corpus_bytes[: len(corpus_bytes) // 2],
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = routes.get(self.path)
            if body is None:
                self.send_error(404, "Not Found")
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Keep the test output quiet."""

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def download(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
        check=False,
    )


def test_expected_hash_is_the_published_one(script: ModuleType, corpus_bytes: bytes) -> None:
    """The brief's checksum, and the checksum of the committed copy, independently."""
    published = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
    assert script.EXPECTED_SHA256 == published == hashlib.sha256(corpus_bytes).hexdigest()


def test_downloads_and_verifies(server: str, corpus_bytes: bytes, tmp_path: Path) -> None:
    output = tmp_path / "data" / "tinyshakespeare.txt"
    result = download("--url", f"{server}/good.txt", "--output", str(output))
    assert result.returncode == 0, result.stderr
    assert output.read_bytes() == corpus_bytes
    assert result.stdout == f"saved {output} (1115394 bytes, sha256 verified)\n"
    assert [path.name for path in output.parent.iterdir()] == ["tinyshakespeare.txt"]


def test_default_url_from_environment_and_default_output(
    server: str, corpus_bytes: bytes, tmp_path: Path
) -> None:
    """The exact command the README shows, pointed at the local server."""
    import os

    env = {**os.environ, "BPETITE_CORPUS_URL": f"{server}/good.txt"}
    result = download(cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "data" / "tinyshakespeare.txt").read_bytes() == corpus_bytes
    assert result.stdout == "saved data/tinyshakespeare.txt (1115394 bytes, sha256 verified)\n"


@pytest.mark.parametrize("route", ["/corrupt.txt", "/short.txt"])
def test_rejects_a_wrong_file_and_leaves_nothing(server: str, tmp_path: Path, route: str) -> None:
    output = tmp_path / "data" / "tinyshakespeare.txt"
    result = download("--url", f"{server}{route}", "--output", str(output))
    assert result.returncode == 1
    assert result.stdout == ""
    assert "does not hold the expected corpus" in result.stderr
    assert "nothing was written" in result.stderr
    assert "Traceback" not in result.stderr
    assert list(output.parent.iterdir()) == []  # no file, no temp file


def test_corrupt_download_does_not_replace_a_forced_output(server: str, tmp_path: Path) -> None:
    output = tmp_path / "corpus.txt"
    output.write_bytes(b"previous")
    result = download("--url", f"{server}/corrupt.txt", "--output", str(output), "--force")
    assert result.returncode == 1
    assert output.read_bytes() == b"previous"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["corpus.txt"]


def test_existing_verified_file_is_left_alone(
    server: str, corpus_bytes: bytes, tmp_path: Path
) -> None:
    output = tmp_path / "corpus.txt"
    output.write_bytes(corpus_bytes)
    before = output.stat().st_mtime_ns
    result = download("--url", f"{server}/missing", "--output", str(output))
    assert result.returncode == 0, result.stderr  # no request was needed at all
    assert result.stdout == f"{output} is already there (sha256 verified)\n"
    assert output.stat().st_mtime_ns == before


def test_existing_different_file_needs_force(
    server: str, corpus_bytes: bytes, tmp_path: Path
) -> None:
    output = tmp_path / "corpus.txt"
    output.write_bytes(b"something else")
    refused = download("--url", f"{server}/good.txt", "--output", str(output))
    assert refused.returncode == 1
    assert "pass --force" in refused.stderr
    assert output.read_bytes() == b"something else"
    forced = download("--url", f"{server}/good.txt", "--output", str(output), "--force")
    assert forced.returncode == 0, forced.stderr
    assert output.read_bytes() == corpus_bytes


def test_http_error(server: str, tmp_path: Path) -> None:
    result = download("--url", f"{server}/nope.txt", "--output", str(tmp_path / "c.txt"))
    assert result.returncode == 1
    assert "HTTP 404" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_connection_refused(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port that was free a moment ago: nobody listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = download("--url", f"http://127.0.0.1:{port}/x", "--output", str(tmp_path / "c"))
    assert result.returncode == 1
    assert "cannot download" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [["--url", "ftp://example.com/x"], ["--bogus"]])
def test_usage_problems(tmp_path: Path, args: list[str]) -> None:
    result = download(*args, "--output", str(tmp_path / "c.txt"))
    assert result.returncode == (2 if args == ["--bogus"] else 1)
    assert list(tmp_path.iterdir()) == []


def test_output_is_a_directory(tmp_path: Path) -> None:
    result = download("--url", "http://127.0.0.1:9/x", "--output", str(tmp_path))
    assert result.returncode == 1
    assert "is a directory" in result.stderr


def test_oversized_response_is_rejected(
    script: ModuleType, server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setattr(script, "MAX_BYTES", 1000)
    output = tmp_path / "c.txt"
    assert script.main(["--url", f"{server}/good.txt", "--output", str(output)]) == 1
    assert "sent more than 1000 bytes" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_interrupted_download_leaves_nothing(
    script: ModuleType, server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    def interrupted(url: str, handle: Any) -> tuple[str, int]:
        handle.write(b"partial data")
        raise KeyboardInterrupt

    monkeypatch.setattr(script, "_copy_response", interrupted)
    output = tmp_path / "c.txt"
    assert script.main(["--url", f"{server}/good.txt", "--output", str(output)]) == 1
    assert "interrupted; nothing was written" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
