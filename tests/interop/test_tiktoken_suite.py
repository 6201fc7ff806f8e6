"""tiktoken's own test suite, run against bpetite through a thin adapter.

tiktoken's tests ship in its sdist, at the version ``uv.lock`` pins. Code from other
projects is not committed here, so this test fetches that sdist from the URL in
``uv.lock`` into a cache folder (reused when present; the sha256 ``uv.lock`` records is
checked either way), extracts its ``tests/`` and runs them with pytest in a process
where ``tests/tiktoken_adapter/`` comes first on ``sys.path``: there ``import tiktoken``
is a package made of bpetite's public API, serving every encoding bpetite serves.
Nothing may fail, error or skip; only tiktoken's two tests of its own packaging (that
importing tiktoken does not import ``blobfile``) are left out, by name.

The cache is ``$BPETITE_TEST_CACHE``, else ``$XDG_CACHE_HOME/bpetite-tests``, else
``~/.cache/bpetite-tests``. Package registries are reachable from development machines
and CI; a machine without them can put the sdist in the cache by hand.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import tomllib
import urllib.request
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from tests import datafiles
from tests.conftest import REPO_ROOT

ADAPTER = REPO_ROOT / "tests" / "tiktoken_adapter"
#: tiktoken's tests of its own packaging, not of an encoding: left out, by name.
PACKAGING_TESTS = (
    "tests/test_misc.py::test_optional_blobfile_dependency",
    "tests/test_simple_public.py::test_optional_blobfile_dependency",
)


def locked_sdist(package: str) -> tuple[str, str, str]:
    """(version, URL, sha256) of `package`'s sdist as ``uv.lock`` pins it."""
    lock = tomllib.loads((REPO_ROOT / "uv.lock").read_text(encoding="utf-8"))
    for entry in lock["package"]:
        if entry["name"] == package and "sdist" in entry:
            sdist = entry["sdist"]
            algorithm, _, digest = sdist["hash"].partition(":")
            assert algorithm == "sha256", sdist["hash"]
            return entry["version"], sdist["url"], digest
    raise AssertionError(f"uv.lock pins no sdist of {package}")


def fetched(url: str, sha256: str) -> Path:
    """The file at `url` in the cache, downloaded unless a copy with `sha256` is there."""
    folder = datafiles.cache_folder()
    path = folder / url.rsplit("/", 1)[-1]
    if path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == sha256:
        return path
    folder.mkdir(parents=True, exist_ok=True)
    with urllib.request.urlopen(url, timeout=120) as response:  # uv.lock's https URL
        data = response.read()
    actual = hashlib.sha256(data).hexdigest()
    assert actual == sha256, f"{url} has sha256 {actual}, not uv.lock's {sha256}"
    partial = path.with_name(f"{path.name}.{os.getpid()}.part")
    partial.write_bytes(data)
    partial.replace(path)  # whole or not at all, if two runs fetch at once
    return path


def extract_tests(sdist: Path, version: str, into: Path) -> Path:
    """The sdist's ``tests/`` folder, extracted into `into`."""
    prefix = f"tiktoken-{version}/tests/"
    with tarfile.open(sdist) as archive:
        members = [member for member in archive.getmembers() if member.name.startswith(prefix)]
        assert members, f"{sdist} has no {prefix}"
        archive.extractall(into, members=members, filter="data")
    return into / f"tiktoken-{version}"


def test_tiktokens_own_tests_pass_on_bpetite(tmp_path: Path) -> None:
    version, url, sha256 = locked_sdist("tiktoken")
    root = extract_tests(fetched(url, sha256), version, tmp_path)
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("CI", "PYTEST_ADDOPTS") and not key.startswith("PYTEST_XDIST_")
    }
    env["PYTHONPATH"] = str(ADAPTER)
    # Hypothesis's folder (its Unicode tables, built in seconds, and its examples) is the
    # suite's, not a new one in each run's temporary folder.
    env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(REPO_ROOT / ".hypothesis")
    probe = subprocess.run(
        [sys.executable, "-c", "import tiktoken; print(tiktoken.__file__)"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert Path(probe.stdout.strip()) == ADAPTER / "tiktoken" / "__init__.py"
    report = tmp_path / "report.xml"
    deselect = [option for test in PACKAGING_TESTS for option in ("--deselect", test)]
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-p",
            "installed_bpetite",  # tests/tiktoken_adapter/installed_bpetite.py
            "-q",
            f"--junitxml={report}",
            *deselect,
            "tests",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    output = result.stdout[-4000:] + result.stderr[-2000:]
    root_element = ElementTree.parse(report).getroot()
    suite = root_element if root_element.tag == "testsuite" else root_element.find("testsuite")
    assert suite is not None, output
    counts = {key: int(suite.get(key, "0")) for key in ("tests", "failures", "errors", "skipped")}
    assert counts["failures"] == counts["errors"] == counts["skipped"] == 0, output
    assert result.returncode == 0, output
    assert counts["tests"] >= 31, output  # tiktoken 0.14's 33 tests, the two left out
    assert f"{len(PACKAGING_TESTS)} deselected" in result.stdout, output
    run = {case.get("name") for case in suite.iter("testcase")}
    assert "test_optional_blobfile_dependency" not in run
    assert {"test_encoding_for_model", "test_basic_encode", "test_pickle"} <= run
