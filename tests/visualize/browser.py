"""Headless Chromium for the page tests: find it, and drive it over DevTools.

Shared by the browser tests (a test module never imports another). A missing browser
skips with a reason (``apt-get install chromium`` on Debian, or point
``BPETITE_CHROMIUM`` at a binary); under ``CI=true`` it is a failure, so CI cannot
silently stop checking the pages. :class:`DevTools` speaks Chromium's DevTools protocol
over ``--remote-debugging-pipe`` (JSON messages ending in a NUL byte on file
descriptors 3 and 4), which needs nothing beyond the standard library: it loads a page
in a tab of its own, presses keys as a person would, reads the DOM and computed styles,
takes screenshots.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

#: A hang guard, not a timing: the browser answers each command in well under a second.
_SILENCE_SECONDS = 60

_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

_FLAGS = (
    "--headless",
    "--no-sandbox",  # CI containers run as root, where the sandbox refuses to start
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--force-color-profile=srgb",  # so screenshot pixels are the CSS colours exactly
    "--hide-scrollbars",
)


def find_browser() -> str | None:
    override = os.environ.get("BPETITE_CHROMIUM")
    if override:
        return override
    return next((path for name in _BROWSERS if (path := shutil.which(name))), None)


def require_browser() -> str:
    """The browser's path; skips (fails under CI) when none is installed."""
    path = find_browser()
    if path is None:
        message = "no Chromium found: install it (apt-get install chromium) or set BPETITE_CHROMIUM"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; CI must install it")
        pytest.skip(message)
    return path


@contextmanager
def _short_tmpdir() -> Iterator[dict[str, str]]:
    # Chromium makes a Unix socket under TMPDIR, and a socket's path holds at most 107
    # bytes: under a long TMPDIR (.ci/run uses one) it would not start. /tmp is short.
    short = Path("/tmp") if Path("/tmp").is_dir() else None
    with tempfile.TemporaryDirectory(prefix="bpetite-", dir=short) as sockets:
        yield {**os.environ, "TMPDIR": sockets}


class DevToolsError(AssertionError):
    """The browser answered a command with an error."""


class DevTools:
    """A headless browser driven over the DevTools protocol's pipe, one page at a time.

    :meth:`start` runs the browser; :meth:`page` loads a page in a tab of its own and
    closes the tab after, so the tests of a module share one browser (starting one costs
    more than all a test does in it) and never a page.
    """

    def __init__(self, process: subprocess.Popen[bytes], commands: int, replies: int) -> None:
        self._process = process
        self._commands = commands
        self._replies = os.fdopen(replies, "rb", buffering=0)
        self._buffer = b""
        self._next_id = 0
        self._session: str | None = None

    @classmethod
    @contextmanager
    def start(cls, browser: str, profile: Path) -> Iterator[DevTools]:
        """Start the browser, with no page yet, and close it after."""
        to_browser, commands = os.pipe()
        replies, from_browser = os.pipe()
        # The browser reads commands on fd 3 and writes replies on fd 4; its pipe ends
        # are copied above 4 first, so placing one in the child cannot overwrite the other.
        to_browser_high = fcntl.fcntl(to_browser, fcntl.F_DUPFD_CLOEXEC, 5)
        from_browser_high = fcntl.fcntl(from_browser, fcntl.F_DUPFD_CLOEXEC, 5)
        os.close(to_browser)
        os.close(from_browser)

        def place_pipes() -> None:
            os.dup2(to_browser_high, 3)
            os.dup2(from_browser_high, 4)

        command = [
            browser,
            *_FLAGS,
            f"--user-data-dir={profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        with _short_tmpdir() as env:
            process = subprocess.Popen(
                command,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                close_fds=False,
                preexec_fn=place_pipes,  # the test process starts no threads
            )
            os.close(to_browser_high)
            os.close(from_browser_high)
            tools = cls(process, commands, replies)
            try:
                yield tools
            finally:
                tools.close()

    @contextmanager
    def page(self, url: str, *, width: int = 1200, height: int = 800) -> Iterator[DevTools]:
        """Open `url` in a new tab of `width` x `height`, wait until it has loaded, and
        close the tab after."""
        assert self._session is None, "one page at a time"
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.send("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        try:
            self.send(
                "Emulation.setDeviceMetricsOverride",
                width=width,
                height=height,
                deviceScaleFactor=1,
                mobile=False,
            )
            self.send("Emulation.setFocusEmulationEnabled", enabled=True)
            self.send("Page.enable")
            self.send("Page.navigate", url=url)
            self._wait_for("Page.loadEventFired")
            yield self
        finally:
            self._session = None
            with contextlib.suppress(OSError, DevToolsError):  # a dead browser: keep the error
                self.send("Target.closeTarget", targetId=target)

    def dom(self) -> str:
        """The page's DOM as the browser built it, serialized (as ``--dump-dom`` prints it)."""
        html: str = self.evaluate("document.documentElement.outerHTML")
        return html

    def close(self) -> None:
        """Close the browser and wait for it to exit."""
        try:
            self._session = None
            self.send("Browser.close")
        except (OSError, DevToolsError):
            pass
        finally:
            os.close(self._commands)
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._replies.close()

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and return its result (events that arrive first are dropped)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if self._session is not None:
            message["sessionId"] = self._session
        os.write(self._commands, json.dumps(message).encode("utf-8") + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise DevToolsError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result

    def _wait_for(self, event: str) -> None:
        """Read until the current page sends `event`."""
        while True:
            message = self._read()
            if message.get("method") == event and message.get("sessionId") == self._session:
                return

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if not select.select([self._replies], [], [], _SILENCE_SECONDS)[0]:
                raise DevToolsError(f"the browser sent nothing for {_SILENCE_SECONDS} s")
            data = self._replies.read(65536)
            if not data:
                raise DevToolsError("the browser closed the pipe")
            self._buffer += data
        message, _, self._buffer = self._buffer.partition(b"\0")
        reply: dict[str, Any] = json.loads(message)
        return reply

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (DevTools is not the page's
        script: the page's policy forbids scripts, which this does not change)."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise DevToolsError(str(result["exceptionDetails"]))
        return result["result"].get("value")

    def press(self, key: str) -> None:
        """Press and release one key (``"Tab"``, ``"ArrowDown"``, ...) as a keyboard would."""
        codes = {"Tab": 9, "ArrowLeft": 37, "ArrowUp": 38, "ArrowRight": 39, "ArrowDown": 40}
        code = codes[key]
        for kind in ("rawKeyDown", "keyUp"):
            self.send(
                "Input.dispatchKeyEvent",
                type=kind,
                key=key,
                code=key,
                windowsVirtualKeyCode=code,
                nativeVirtualKeyCode=code,
            )

    def screenshot(self) -> bytes:
        """The page as it is drawn now, as PNG bytes."""
        data = self.send("Page.captureScreenshot", format="png")["data"]
        return base64.b64decode(data)


def png_colours(
    data: bytes, wanted: set[tuple[int, int, int]]
) -> tuple[int, int, set[tuple[int, int, int]]]:
    """A tiny PNG reader: (width, height, colours seen), for 8-bit RGB or RGBA images.

    It stops as soon as every `wanted` colour has been seen, because unfiltering
    rows in pure Python is slow and what the tests look for sits near the top.
    """
    position = 8
    idat = bytearray()
    width = height = channels = 0
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and colour_type in {2, 6}, body
            channels = 3 if colour_type == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(bytes(idat))
    stride = width * channels
    previous = bytearray(stride)
    seen: set[tuple[int, int, int]] = set()
    for row in range(height):
        start = row * (stride + 1)
        line = _unfilter(
            raw[start], bytearray(raw[start + 1 : start + 1 + stride]), previous, channels
        )
        seen.update(zip(line[0::channels], line[1::channels], line[2::channels], strict=True))
        if wanted <= seen:
            break
        previous = line
    return width, height, seen


def _unfilter(kind: int, line: bytearray, previous: bytearray, channels: int) -> bytearray:
    if kind == 0:
        return line
    if kind == 2:  # Up
        return bytearray((a + b) & 0xFF for a, b in zip(line, previous, strict=True))
    for x in range(len(line)):
        left = line[x - channels] if x >= channels else 0
        up = previous[x]
        if kind == 1:  # Sub
            line[x] = (line[x] + left) & 0xFF
        elif kind == 3:  # Average
            line[x] = (line[x] + (left + up) // 2) & 0xFF
        else:  # Paeth
            corner = previous[x - channels] if x >= channels else 0
            estimate = left + up - corner
            pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
            predictor = left if pa <= pb and pa <= pc else up if pb <= pc else corner
            line[x] = (line[x] + predictor) & 0xFF
    return line


def rgb_set(colours: tuple[str, ...]) -> set[tuple[int, int, int]]:
    return {(int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)) for c in colours}
