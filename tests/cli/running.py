"""Running the CLI in the test process: its exit code and what it printed."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from bpetite.cli import main


class Result(NamedTuple):
    code: int
    out: str
    err: str


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> Result:
    """``bpetite`` with `argv` (each made a str) in this process; stdout and stderr caught."""
    code = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)
