"""The library without `regex`, as in Pyodide: the same ids, merges and counts as with it.

A child interpreter blocks ``import regex`` before importing bpetite, then encodes,
decodes, streams, trains and counts mixed-script texts with ``gpt2``, ``cl100k_base``
and every preset pattern (``tests/without_regex.py``); the results must equal the same
calls in this process, where `regex` is installed. Under Node, the Pyodide check
(``tests/project/test_pyodide.py``) runs the library where `regex` truly is missing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import bpetite
from bpetite.core import _regex
from tests.conftest import REPO_ROOT
from tests.without_regex import CHILD, results


def _run_without_regex(*args: str, code: str = CHILD) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="module")
def without_regex(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    child = _run_without_regex(str(tmp_path_factory.mktemp("without-regex")))
    assert child.returncode == 0, child.stderr
    found: dict[str, Any] = json.loads(child.stdout)
    return found


def test_the_child_really_ran_on_re(without_regex: dict[str, Any]) -> None:
    assert without_regex["engine"] == "re"
    assert _regex.have_regex()  # and this process on regex


def test_every_result_equals_the_run_with_regex(
    without_regex: dict[str, Any], tmp_path: Path
) -> None:
    with_regex = results(tmp_path)
    assert with_regex.keys() == without_regex.keys()
    for key in with_regex.keys() - {"engine"}:
        assert without_regex[key] == with_regex[key], key
    decoded = [key for key in with_regex if " decodes " in key]
    assert decoded
    assert all(without_regex[key] is True for key in decoded)


CUSTOM_CHILD = """
import sys
sys.modules["regex"] = None
import bpetite
try:
    bpetite.Tokenizer.train("abc", vocab_size=260, pattern=sys.argv[1])
except bpetite.PatternError as error:
    print(error)
else:
    print("trained")
"""


def test_a_custom_pattern_re_cannot_read_as_regex_names_regex() -> None:
    child = _run_without_regex(r"\p{Greek}+|\P{Greek}+", code=CUSTOM_CHILD)
    assert child.returncode == 0, child.stderr
    assert child.stdout.startswith(r"the pattern uses \p{Greek} at position 0, and without")
    assert "the regex package cannot be imported here: install regex" in child.stdout


def test_a_custom_pattern_with_the_spelled_classes_trains_without_regex() -> None:
    pattern = r"\p{L}+|\p{N}|\s+|[^\s\p{L}\p{N}]+"
    child = _run_without_regex(pattern, code=CUSTOM_CHILD)
    assert child.returncode == 0, child.stderr
    assert child.stdout == "trained\n"
    assert bpetite.Tokenizer.train("abc", vocab_size=260, pattern=pattern).pattern_name == "custom"
