"""bpetite in Pyodide under Node, offline, without `regex`: tiktoken's ids, the reference's merges.

``tests/pyodide/run.mjs`` loads the npm package ``pyodide`` (pinned in
``tests/pyodide/package-lock.json``; it ships the interpreter and the standard library,
and no `regex`), mounts ``src/`` and runs ``tests/pyodide/check.py``, with no network
and no micropip: ``get_encoding("cl100k_base")`` encodes and decodes multilingual text,
and a small tokenizer is trained from the text and from a file. Here, on CPython, the
ids must be tiktoken's and the merges ``bpetite.reference``'s.

``.ci/run`` installs the package before the tests and names it in ``BPETITE_PYODIDE``,
so under CI this test runs and never skips. To run it elsewhere::

    dir=$(mktemp -d); cp tests/pyodide/package*.json "$dir"
    npm ci --prefix "$dir" --no-audit --no-fund
    BPETITE_PYODIDE="$dir/node_modules/pyodide" uv run pytest tests/project/test_pyodide.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bpetite import PRESETS, reference
from tests import datafiles
from tests.conftest import REPO_ROOT
from tests.strategies import MULTILINGUAL

CHECK = REPO_ROOT / "tests" / "pyodide"

TEXTS = [
    "Größenwahn! Съешь ещё 中文テキスト 한국어 العربية हिन्दी 😀👍🏽 It's 3:45pm.\r\n",
    MULTILINGUAL,
    # regex's \s is not re's (U+001C..U+001F), and (?i:'s) must match the long s too.
    "a\x1c\x1d b\x1e\x1f\u2028 c\u00a0\u3000 'S 'ſ 'K \u212a<|endoftext|>end",
]
#: The small training run: text, vocabulary size, pattern.
TRAIN_TEXT, VOCAB_SIZE, PATTERN = MULTILINGUAL, 300, "o200k"


@pytest.fixture(scope="module")
def pyodide_result() -> dict[str, Any]:
    package = os.environ.get("BPETITE_PYODIDE")
    node = shutil.which("node")
    if not package or node is None:
        pytest.skip(
            "BPETITE_PYODIDE does not name the npm package pyodide, or node is missing: "
            "see this module's docstring (.ci/run installs it)"
        )
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
    manifest = json.loads((CHECK / "package.json").read_text(encoding="utf-8"))
    pinned = manifest["dependencies"]["pyodide"]
    assert lock["packages"]["node_modules/pyodide"]["version"] == pinned
    assert not (CHECK / "node_modules").exists()
    assert Path(CHECK / "check.py").is_file()
