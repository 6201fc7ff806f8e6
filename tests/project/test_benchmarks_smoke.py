"""The benchmark harness's plumbing, never its figures: those are measured, not asserted.

`.ci/run` runs the suite's quick mode end to end; these cheap checks pin the pieces
whose mistakes would silently skew every figure or hide a wrong result (the percentile
rule, the byte-level alphabet the HF adapter relies on, the merges recovered from a
peer's ranks, the pieces fed to bpe-openai, which checks fail a run, the target table,
the corpus selection, the docs page) and the commands' usage contract.
"""

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks._checks import harness_failures
from benchmarks._docs import BEGIN, END
from benchmarks._docs import write as write_docs
from benchmarks._peers import (
    bpetite_pairs,
    compare_merges,
    merge_ranks,
    pairs_from_tokens,
    pieces,
)
from benchmarks._rust import compare_merges as rust_compare_merges
from benchmarks._rust import from_byte_level, to_byte_level
from benchmarks._targets import rows as target_rows
from benchmarks._timing import Stat
from benchmarks.big_corpus import build_corpus, select_sources
from bpetite import Tokenizer

RUN_PY = Path(__file__).resolve().parents[2] / "benchmarks" / "run.py"


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
    assert rust_compare_merges(ours, theirs) == {
        "ours": 3,
        "theirs": 4,
        "identical_prefix": 1,
        "same_rank": 1,
        "shared": 3,
    }


# The suite's pure pieces: peers' merges, the pieces fed to bpe-openai, checks, targets.


def test_suite_help_lists_its_options() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--help"],
        capture_output=True,
        text=True,
        check=False,
        cwd=RUN_PY.parent.parent,
    )
    assert result.returncode == 0
    for flag in ("--quick", "--output", "--write-docs", "--big-corpus-mb", "--skip"):
        assert flag in result.stdout


def _bytes_then(*tokens: bytes) -> list[bytes]:
    return [bytes([byte]) for byte in range(256)] + list(tokens)


def test_pairs_from_tokens_recovers_the_merge_of_each_token() -> None:
    """`abc` after `bc` must split as a + bc: the lower-ranked pair merges first."""
    tokens = _bytes_then(b"bc", b"ab", b"abc")
    assert pairs_from_tokens(tokens) == [(b"b", b"c"), (b"a", b"b"), (b"a", b"bc")]


def test_pairs_from_tokens_agrees_with_bpetite_on_a_trained_model() -> None:
    """An independent check: bpetite's own merges, spelled as bytes, are recovered exactly."""
    tokenizer = Tokenizer.train("the cat sat on the mat with the hat " * 20, 300)
    tokens = [tokenizer.vocab[i] for i in range(256 + len(tokenizer.merges))]
    assert pairs_from_tokens(tokens) == bpetite_pairs(tokenizer)


def test_merge_ranks_accepts_bytes_in_another_order_and_refuses_a_non_merge() -> None:
    permuted = [bytes([byte]) for byte in reversed(range(256))] + [b"ab"]
    assert merge_ranks(permuted) == [(255 - ord("a"), 255 - ord("b"))]
    with pytest.raises(ValueError, match="not one merge of two tokens"):
        merge_ranks(_bytes_then(b"abc"))


def test_compare_merges_reports_the_first_difference_and_a_shorter_list() -> None:
    ours = [(b"a", b"b"), (b"c", b"d")]
    assert compare_merges(ours, list(ours)).identical
    differ = compare_merges(ours, [(b"a", b"b"), (b"d", b"c")])
    assert (differ.first_difference, differ.ours_at, differ.theirs_at) == (
        1,
        (b"c", b"d"),
        (b"d", b"c"),
    )
    shorter = compare_merges(ours, ours[:1])
    assert (shorter.first_difference, shorter.theirs_at) == (1, None)


def test_pieces_cut_at_line_ends_within_the_byte_limit() -> None:
    text = "".join(f"line {index} é\n" for index in range(1000)) + "no newline at the end"
    cut = pieces(text, max_bytes=500)
    assert "".join(cut) == text
    assert all(len(piece.encode("utf-8")) <= 500 for piece in cut)
    assert all(piece.endswith("\n") for piece in cut[:-1])
    with pytest.raises(ValueError, match="longer than a piece"):
        pieces("x" * 501, max_bytes=500)


def test_harness_failures_counts_every_failed_check_once() -> None:
    passing: dict[str, Any] = {
        "merge_agreement": {"naive-512": {"identical": True}, "hf-512": {"shared": 3}},
        "multi_file": {"checks": {"one_file": True}},
        "encoding": {"text": {"checks": {"tiktoken_ids_equal_bpetite": True}}},
        "notes": ["HF tokenizers is not installed"],
    }
    assert harness_failures(passing) == []
    failing = {
        **passing,
        "merge_agreement": {"naive-512": {"identical": False}},
        "encoding": {"text": {"checks": {"tiktoken_ids_equal_bpetite": False}}},
        "notes": [
            "CHECK FAILED: tiktoken_ids_equal_bpetite on the whole corpus.",
            "CHECK FAILED: something only a note knows.",
        ],
    }
    assert harness_failures(failing) == [
        "naive-512: merges differ from bpetite's",
        "whole-corpus encode: tiktoken_ids_equal_bpetite",
        "something only a note knows.",
    ]


def test_target_rows_keep_their_place_without_figures_and_compute_ratios_with_them() -> None:
    empty = target_rows({})
    assert empty and all(row.value is None and row.met is None for row in empty)
    results = {
        "peer_training": {
            "vocab_size": 32000,
            "patterns": {
                "gpt2": {
                    "bpetite": {"seconds": {"median": 3.0}},
                    "rustbpe": {"seconds": {"median": 1.0}},
                }
            },
        }
    }
    by_name = {row.measure: row for row in target_rows(results)}
    row = by_name["train TinyShakespeare, vocab 32000, `gpt2`: bpetite time / rustbpe's"]
    assert (row.value, row.met, row.target) == (3.0, False, "≤ 1.5")


def test_big_corpus_selection_is_a_sorted_utf8_prefix_within_the_limit() -> None:
    small = list(select_sources(300_000))
    larger = list(select_sources(600_000))
    assert small and larger[: len(small)] == small
    assert sum(len(data) for _, data in larger) <= 600_000
    for _, data in larger:
        data.decode("utf-8")


def test_big_corpus_refuses_a_cache_inside_the_repository() -> None:
    with pytest.raises(ValueError, match="inside the repository"):
        build_corpus(0.1, RUN_PY.parent / "corpus-cache")


def test_docs_keep_the_notes_after_the_generated_figures(tmp_path: Path) -> None:
    results: dict[str, Any] = {
        "mode": "quick",
        "failures": [],
        "suite": {
            "command": "uv run --group bench python -m benchmarks --quick",
            "packages": {"bpetite": "1.0.0", "rustbpe": None},
            "machine": {
                "cpu_model": "a CPU",
                "logical_cpus": 2,
                "available_cpus": 2,
                "python": "CPython 3.11",
                "platform": "Linux",
                "git_commit": "abc1234",
                "date_utc": "2026-01-01T00:00:00+00:00",
            },
        },
    }
    page = tmp_path / "benchmarks.md"
    page.write_text(f"# Benchmarks\n\n{BEGIN}\nold figures\n{END}\n\nNotes by hand.\n", "utf-8")
    write_docs(results, page)
    text = page.read_text(encoding="utf-8")
    assert "old figures" not in text
    assert text.count("Notes by hand.") == 1
    assert text.index(END) < text.index("Notes by hand.")
    assert "rustbpe (not installed)" in text
    assert "– (not measured in this run)" in text
