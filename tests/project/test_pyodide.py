"""bpetite in Pyodide under Node, offline, without `regex`: tiktoken's ids, the reference's merges.

``tests/pyodide/run.mjs`` loads the npm package ``pyodide`` (pinned in
``tests/pyodide/package-lock.json``; it ships the interpreter and the standard library,
and no `regex`), mounts ``src/`` and runs ``tests/pyodide/check.py``, with no network
and no micropip: ``get_encoding("cl100k_base")`` encodes and decodes multilingual text,
and a small tokenizer is trained from the text and from a file. Here, on CPython, the
ids must be tiktoken's and the merges ``bpetite.reference``'s.

The package is installed by this test (``npm ci`` from those two files) into the test
cache that ``tests/interop/test_tiktoken_suite.py`` uses (``$BPETITE_TEST_CACHE``, else
``$XDG_CACHE_HOME/bpetite-tests``, else ``~/.cache/bpetite-tests``), as
``pyodide-<version>/node_modules/pyodide``, and reused from there; outside the tree, so
the packaging tests never see it. ``BPETITE_PYODIDE`` may name another installed copy.
Only a machine without ``node`` or ``npm`` skips, as a platform limit.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from bpetite import PRESETS, reference
from tests import datafiles
from tests.conftest import PLATFORM_LIMIT, REPO_ROOT
from tests.strategies import MULTILINGUAL

CHECK = REPO_ROOT / "tests" / "pyodide"

# The first test may install Pyodide (npm ci, up to 600 s) before it runs (up to 300 s).
pytestmark = pytest.mark.timeout(1200)

TEXTS = [
    "Größenwahn! Съешь ещё 中文テキスト 한국어 العربية हिन्दी 😀👍🏽 It's 3:45pm.\r\n",
    MULTILINGUAL,
    # regex's \s is not re's (U+001C..U+001F), and (?i:'s) must match the long s too.
    "a\x1c\x1d b\x1e\x1f\u2028 c\u00a0\u3000 'S 'ſ 'K \u212a<|endoftext|>end",
]
#: The small training run: text, vocabulary size, pattern.
TRAIN_TEXT, VOCAB_SIZE, PATTERN = MULTILINGUAL, 300, "o200k"


def pinned_version() -> str:
    manifest = json.loads((CHECK / "package.json").read_text(encoding="utf-8"))
    version: str = manifest["dependencies"]["pyodide"]
    return version


def installed_pyodide(npm: str) -> Path:
    """The pinned npm package ``pyodide`` in the test cache, installed there unless present.

    One run installs at a time (a lock file beside the install, held while checking and
    installing), into a temporary folder in the cache renamed into place when ``npm ci``
    is done: the install is whole or absent, for pytest-xdist workers and parallel runs.
    """
    folder = datafiles.cache_folder()
    folder.mkdir(parents=True, exist_ok=True)
    name = f"pyodide-{pinned_version()}"
    target = folder / name
    package = target / "node_modules" / "pyodide"
    with (folder / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if (package / "pyodide.mjs").is_file():
            return package
        # The staging folder lives beside the target so the rename is atomic.
        staging = Path(tempfile.mkdtemp(prefix=f"{name}.", suffix=".part", dir=folder))
        try:
            for manifest in ("package.json", "package-lock.json"):
                shutil.copyfile(CHECK / manifest, staging / manifest)
            command = [npm, "ci", "--prefix", str(staging), "--no-audit", "--no-fund"]
            run = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
            assert run.returncode == 0, f"{' '.join(command)} failed:\n{run.stderr}"
            if target.exists():  # an install without pyodide.mjs, broken by hand
                shutil.rmtree(target)
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return package


@pytest.fixture(scope="module")
def pyodide_result() -> dict[str, Any]:
    node = shutil.which("node")
    if node is None:
        pytest.skip(PLATFORM_LIMIT + "node is not installed (Pyodide runs under Node)")
    configured = os.environ.get("BPETITE_PYODIDE")
    if configured:
        package = configured
    else:
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip(PLATFORM_LIMIT + "npm is not installed (it installs Pyodide)")
        package = str(installed_pyodide(npm))
    train = {"text": TRAIN_TEXT, "vocab_size": VOCAB_SIZE, "pattern": PATTERN}
    job = json.dumps({"texts": TEXTS, "train": train})
    command = [node, str(CHECK / "run.mjs"), package, str(REPO_ROOT / "src"), "check.py", job]
    run = subprocess.run(
        command, cwd=CHECK, capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, run.stderr
    (line,) = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    result: dict[str, Any] = json.loads(line.removeprefix("RESULT "))
    return result


def test_pyodide_runs_bpetite_on_re_without_regex(pyodide_result: dict[str, Any]) -> None:
    assert pyodide_result["platform"] == "emscripten"
    assert tuple(pyodide_result["python"]) >= (3, 12)
    assert pyodide_result["regex_found"] is False
    assert pyodide_result["engine"] == "re"
    assert pyodide_result["rich_imported"] is False


def test_cl100k_ids_in_pyodide_are_tiktoken_ids(pyodide_result: dict[str, Any]) -> None:
    tiktoken = datafiles.tiktoken_encoding("cl100k_base")
    expected = [tiktoken.encode(text, allowed_special="all") for text in TEXTS]
    assert pyodide_result["encoded"] == expected
    assert pyodide_result["decoded"] == TEXTS


def test_training_in_pyodide_gives_the_reference_merges(pyodide_result: dict[str, Any]) -> None:
    pattern = PRESETS[PATTERN]
    merges = reference.train(TRAIN_TEXT, VOCAB_SIZE, pattern=pattern)
    assert len(merges) == VOCAB_SIZE - 256
    assert [tuple(pair) for pair in pyodide_result["merges"]] == merges
    assert [tuple(pair) for pair in pyodide_result["file_merges"]] == merges
    model = reference.Model(merges, pattern=pattern)
    expected = [reference.encode(model, text) for text in TEXTS]
    assert pyodide_result["trained_encoded"] == expected


def test_the_check_runs_from_the_committed_files_only() -> None:
    """The package and its lock are committed; nothing is installed beside them."""
    lock = json.loads((CHECK / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["packages"]["node_modules/pyodide"]["version"] == pinned_version()
    assert not (CHECK / "node_modules").exists()
    assert Path(CHECK / "check.py").is_file()
