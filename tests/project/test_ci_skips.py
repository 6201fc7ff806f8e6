"""Under CI=true a skip fails the run unless its reason names a platform limit.

The policy lives in tests/conftest.py; here it runs on a made-up test file in a
separate pytest process, with and without CI=true, and under CI=true also in pytest-xdist
workers, where the suite runs (the hook rewrites the report in the worker).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

TESTS = """
import pytest

def test_passes():
    pass

def test_skips_for_missing_data():
    pytest.skip("TinyShakespeare not found")

def test_skips_for_a_platform_limit():
    pytest.skip("platform limit: needs /proc")

@pytest.mark.skipif(True, reason="no GPT-2 files")
def test_skipif_for_missing_data():
    pass

@pytest.mark.skipif(True, reason="platform limit: POSIX permission bits")
def test_skipif_for_a_platform_limit():
    pass

@pytest.mark.xfail(reason="a known bug", strict=True)
def test_expected_failure():
    assert False
"""


TEST_FILE = "test_made_up.py"
#: A line of ``pytest -v``: ``test_made_up.py::test_x PASSED [ 16%]`` in one process,
#: ``[gw0] [ 16%] PASSED test_made_up.py::test_x`` from an xdist worker.
OUTCOME_LINE = re.compile(
    rf"^{re.escape(TEST_FILE)}::(?P<name>\w+) (?P<outcome>[A-Z]+)"
    rf"|^\[gw\d+\] \[ *\d+%\] (?P<xdist_outcome>[A-Z]+) {re.escape(TEST_FILE)}::(?P<xdist_name>\w+)"
)


def run_pytest(tmp_path: Path, ci: str | None, *options: str) -> dict[str, str]:
    """Test name -> outcome ("PASSED", "SKIPPED", "FAILED", "ERROR", "XFAIL")."""
    (tmp_path / "conftest.py").write_text(
        "from tests.conftest import pytest_runtest_makereport  # noqa: F401\n", encoding="utf-8"
    )
    (tmp_path / TEST_FILE).write_text(TESTS, encoding="utf-8")
    env = {
        key: value
        for key, value in os.environ.items()
        if key != "CI" and not key.startswith("PYTEST_XDIST_")  # this run's, not that one's
    }
    env["PYTHONPATH"] = str(REPO_ROOT)
    if ci is not None:
        env["CI"] = ci
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", *options, TEST_FILE],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    outcomes = {}
    for line in result.stdout.splitlines():
        if found := OUTCOME_LINE.match(line):
            name = found["name"] or found["xdist_name"]
            outcomes[name] = found["outcome"] or found["xdist_outcome"]
    assert "skipped under CI=true" in result.stdout or ci != "true", result.stdout
    return outcomes


@pytest.mark.parametrize("ci", [None, "false"])
def test_outside_ci_every_skip_is_a_skip(tmp_path: Path, ci: str | None) -> None:
    outcomes = run_pytest(tmp_path, ci)
    assert outcomes == {
        "test_passes": "PASSED",
        "test_skips_for_missing_data": "SKIPPED",
        "test_skips_for_a_platform_limit": "SKIPPED",
        "test_skipif_for_missing_data": "SKIPPED",
        "test_skipif_for_a_platform_limit": "SKIPPED",
        "test_expected_failure": "XFAIL",
    }


@pytest.mark.parametrize("options", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_under_ci_only_platform_limits_may_skip(tmp_path: Path, options: list[str]) -> None:
    outcomes = run_pytest(tmp_path, "true", *options)
    assert outcomes == {
        "test_passes": "PASSED",
        "test_skips_for_missing_data": "FAILED",
        "test_skips_for_a_platform_limit": "SKIPPED",
        "test_skipif_for_missing_data": "ERROR",
        "test_skipif_for_a_platform_limit": "SKIPPED",
        "test_expected_failure": "XFAIL",
    }
