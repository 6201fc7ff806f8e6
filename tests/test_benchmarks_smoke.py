"""The benchmark harness's plumbing, never its figures: those are measured, not asserted.

`.ci/run` runs the harness's quick mode end to end; these cheap checks pin the pieces
whose mistakes would silently skew every figure (the percentile rule, the byte-level
alphabet the HF adapter relies on) and the command's usage contract.
"""

import subprocess
import sys
from pathlib import Path

from benchmarks._rust import compare_merges, from_byte_level, to_byte_level
from benchmarks._timing import Stat

RUN_PY = Path(__file__).resolve().parent.parent / "benchmarks" / "run.py"


def test_help_lists_the_modes() -> None:
    result = subprocess.run(
        [sys.executable, str(RUN_PY), "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    for flag in ("--quick", "--output", "--corpus", "--profile"):
        assert flag in result.stdout


def test_missing_corpus_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.txt"
    result = subprocess.run(
        [
            sys.executable,
            str(RUN_PY),
            "--quick",
            "--corpus",
            str(missing),
            "--output",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert "TinyShakespeare not found" in result.stderr
    assert not (tmp_path / "results.json").exists()


def test_p99_of_100_samples_is_the_second_largest() -> None:
    """Nearest rank: ceil(0.99 * 100) = 99th smallest, so one outlier cannot set p99."""
    stat = Stat(tuple(float(value) for value in range(1, 101)))
    assert stat.percentile(99) == 99.0
    assert stat.percentile(50) == 50.0
    assert stat.median == 50.5
    assert (stat.low, stat.high) == (1.0, 100.0)


def test_byte_level_alphabet_round_trips_every_byte() -> None:
    """HF's merges are compared as bytes; a wrong table would make every merge differ."""
    every_byte = bytes(range(256))
    assert from_byte_level(to_byte_level(every_byte)) == every_byte
    assert len(set(to_byte_level(every_byte))) == 256
    assert to_byte_level(b" ") == "Ġ"


def test_compare_merges_counts_prefix_rank_and_shared() -> None:
    ours = [(b"a", b"b"), (b"c", b"d"), (b"e", b"f")]
    theirs = [(b"a", b"b"), (b"e", b"f"), (b"c", b"d"), (b"x", b"y")]
    assert compare_merges(ours, theirs) == {
        "ours": 3,
        "theirs": 4,
        "identical_prefix": 1,
        "same_rank": 1,
        "shared": 3,
    }
