"""``bpetite extend``, ``trim`` and ``specials``: the library's surgery, from the command line.

Each artifact written is checked against what the CLI did not make: ``Tokenizer.train``
at the larger size (extending must equal it byte for byte), the original artifact
(trimming must give it back), and hand-written special-token tables. Refusals exit 1
with one line, stdout empty and no file written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpetite import Tokenizer, count_chunks, get_encoding
from bpetite import reference as ref
from tests.cli.running import Result, run

CORPUS = (
    "The quick brown fox jumps over the lazy dog; the dog sleeps.\r\n"
    "naïve café, 日本語のテキスト, emoji 🤔🤔 and <|endoftext|> as plain text.\r\n"
) * 12


def assert_refused(result: Result, *fragments: str) -> None:
    assert result.code == 1, result
    assert result.out == ""
    assert "Traceback" not in result.err
    last = result.err.splitlines()[-1]
    assert last.startswith("bpetite: error: "), result.err
    for fragment in fragments:
        assert fragment in last, (fragment, last)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "corpus.txt").write_bytes(CORPUS.encode("utf-8"))
    Tokenizer.train(CORPUS, 270).save(tmp_path / "small.json")
    return tmp_path


# ------------------------------------------------------------------ extend


def test_extend_equals_training_to_the_larger_size(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    result = run(
        capsys,
        *("extend", "--model", folder / "small.json", "--input", folder / "corpus.txt"),
        *("--vocab-size", "320", "--renumber-specials", "--output", folder / "big.json"),
    )
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    expected = Tokenizer.train(CORPUS, 320)
    assert (folder / "big.json").read_bytes() == expected.dumps()
    assert summary["mergeable_vocab_size_before"] == 270
    assert summary["actual_mergeable_vocab_size"] == expected.mergeable_vocab_size
    assert summary["new_merges"] == len(expected.merges) - 14
    assert summary["special_tokens"] == {"<|endoftext|>": expected.mergeable_vocab_size}
    assert "extend: done" in result.err  # progress on stderr


def test_extend_from_counts_files(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    counts = folder / "counts.json"
    assert run(capsys, "count", "--input", folder / "corpus.txt", "--output", counts).code == 0
    result = run(
        capsys,
        *("extend", "--model", folder / "small.json", "--counts", counts, "--vocab-size", "300"),
        *("--renumber-specials", "--output", folder / "big.json"),
    )
    assert result.code == 0, result.err
    assert json.loads(result.out)["corpus_bytes"] is None
    small = Tokenizer.load(folder / "small.json")
    merges = ref.extend(small, count_chunks([CORPUS]), 300)
    assert list(Tokenizer.load(folder / "big.json").merges) == merges


def test_extend_reads_documents_as_train_does(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    """A Parquet file's named text column, a delimiter, a budget: train's options, with
    the reference's extension of the documents they give as the oracle."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    lines = CORPUS.splitlines(keepends=True)
    pq.write_table(pa.table({"body": lines}), folder / "rows.parquet")
    small = Tokenizer.load(folder / "small.json")
    argv = ["extend", "--model", folder / "small.json", "--vocab-size", "300", "--force"]
    argv.append("--renumber-specials")  # the ids training gives, as the reference does
    cases = [
        (["--input", folder / "rows.parquet", "--text-column", "body"], lines),
        (["--input", folder / "corpus.txt", "--doc-delimiter", "; "], CORPUS.split("; ")),
        (["--input", folder / "corpus.txt", "--doc-cap", "100"], [CORPUS[:100]]),
    ]
    for options, documents in cases:
        result = run(capsys, *argv, *options, "--output", folder / "big.json")
        assert result.code == 0, result.err
        expected = ref.extend(small, count_chunks(documents), 300)
        assert list(Tokenizer.load(folder / "big.json").merges) == expected, options
    counts = ["--counts", folder / "corpus.txt", "--max-chars", "100"]
    assert_refused(run(capsys, *argv, *counts, "--output", folder / "x.json"), "not to --counts")


def test_extend_a_built_in_vocabulary_keeping_its_specials(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    """cl100k_base leaves id 100256 free before its specials: one merge fits."""
    result = run(
        capsys,
        *("extend", "--model", "cl100k_base", "--input", folder / "corpus.txt"),
        *("--vocab-size", "100257", "--output", folder / "cl.json"),
    )
    assert result.code == 0, result.err
    extended = Tokenizer.load(folder / "cl.json")
    original = get_encoding("cl100k_base")
    assert extended.special_tokens == original.special_tokens
    assert extended.special_tokens["<|endoftext|>"] == 100257
    assert list(extended.merges) == ref.extend(original, CORPUS, 100257)


def test_extend_keeps_the_special_tokens_ids_unless_renumbering(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    """<|endoftext|> keeps 270; the new merges are the renumbered run's, at 271 and on."""
    kept, renumbered = folder / "kept.json", folder / "renumbered.json"
    for output, flags in ((kept, ()), (renumbered, ("--renumber-specials",))):
        result = run(
            capsys,
            *("extend", "--model", folder / "small.json", "--input", folder / "corpus.txt"),
            *("--vocab-size", "300", *flags, "--output", output),
        )
        assert result.code == 0, result.err
    small = Tokenizer.load(folder / "small.json")
    with_ids, training_layout = Tokenizer.load(kept), Tokenizer.load(renumbered)
    assert dict(with_ids.special_tokens) == {"<|endoftext|>": 270}
    assert dict(training_layout.special_tokens) == {"<|endoftext|>": 300}
    assert list(training_layout.merges) == ref.extend(small, CORPUS, 300)
    new = sorted(set(with_ids.vocab) - set(small.vocab))
    assert new == list(range(271, 301))
    assert [with_ids.vocab[i] for i in new] == [training_layout.vocab[i] for i in range(270, 300)]


def test_extend_refuses_before_reading_the_corpus(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    model, output = folder / "small.json", folder / "out.json"
    missing = folder / "missing.txt"  # never read: each refusal comes first
    assert_refused(
        run(
            capsys,
            "extend",
            "--model",
            model,
            "--input",
            missing,
            "--vocab-size",
            "260",
            "--output",
            output,
        ),
        "--vocab-size 260 is below the model's mergeable vocabulary size 270",
        "'bpetite trim'",
    )
    assert_refused(
        run(
            capsys,
            "extend",
            "--model",
            model,
            "--input",
            missing,
            "--vocab-size",
            "300",
            "--renumber-specials",
            "--output",
            model,
        ),
        "would destroy the input, even with --force",
    )
    assert_refused(
        run(
            capsys,
            "extend",
            "--model",
            folder / "nope.json",
            "--input",
            missing,
            "--vocab-size",
            "300",
            "--output",
            output,
        ),
        "does not exist",
    )
    assert not output.exists()


def test_extend_refuses_an_existing_output_unless_forced(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    output = folder / "out.json"
    output.write_text("keep me", encoding="utf-8")
    argv = (
        *("extend", "--model", folder / "small.json", "--input", folder / "corpus.txt"),
        *("--vocab-size", "280", "--renumber-specials", "--output", output),
    )
    assert_refused(run(capsys, *argv), "--force")
    assert output.read_text(encoding="utf-8") == "keep me"
    assert run(capsys, *argv, "--force").code == 0
    assert output.read_bytes() == Tokenizer.train(CORPUS, 280).dumps()


# ------------------------------------------------------------------ trim


def test_trim_gives_the_smaller_training_run(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    Tokenizer.train(CORPUS, 320).save(folder / "big.json")
    result = run(
        capsys,
        *("trim", "--model", folder / "big.json", "--vocab-size", "270"),
        *("--renumber-specials", "--output", folder / "again.json"),
    )
    assert result.code == 0, result.err
    assert (folder / "again.json").read_bytes() == (folder / "small.json").read_bytes()
    kept = run(
        capsys,
        *("trim", "--model", folder / "big.json", "--vocab-size", "270"),
        *("--output", folder / "kept.json"),
    )
    assert kept.code == 0, kept.err
    big = Tokenizer.load(folder / "big.json")
    trimmed = Tokenizer.load(folder / "kept.json")
    assert trimmed.special_tokens == big.special_tokens
    assert trimmed.merges == Tokenizer.load(folder / "small.json").merges
    assert json.loads(kept.out)["special_tokens"] == dict(big.special_tokens)


def test_trim_refusals(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    model, output = folder / "small.json", folder / "out.json"
    for size in ("271", "255"):
        assert_refused(
            run(capsys, "trim", "--model", model, "--vocab-size", size, "--output", output),
            "--vocab-size must be from 256 to the model's mergeable vocabulary size 270",
        )
    assert run(capsys, "trim", "--model", model, "--vocab-size", "x", "--output", output).code == 2
    assert not output.exists()


# ------------------------------------------------------------------ specials


def test_specials_adds_moves_and_drops(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    result = run(
        capsys,
        *("specials", "--model", folder / "small.json", "--add", "<|pad|>"),
        *("--add", "<|im_start|>=300", "--add", "<|a=b|>", "--drop", "<|endoftext|>"),
        *("--output", folder / "edited.json"),
    )
    assert result.code == 0, result.err
    expected = {"<|im_start|>": 300, "<|pad|>": 301, "<|a=b|>": 302}
    assert json.loads(result.out) == {
        "output": str(folder / "edited.json"),
        "special_tokens": expected,
        "n_vocab": 303,
    }
    edited = Tokenizer.load(folder / "edited.json")
    assert dict(edited.special_tokens) == expected
    assert edited.merges == Tokenizer.load(folder / "small.json").merges
    moved = run(
        capsys,
        *("specials", "--model", folder / "edited.json", "--add", "<|pad|>=270"),
        *("--output", folder / "moved.json"),
    )
    assert moved.code == 0, moved.err
    assert Tokenizer.load(folder / "moved.json").special_tokens["<|pad|>"] == 270


def test_specials_refusals(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    model, output = folder / "small.json", folder / "out.json"
    assert_refused(run(capsys, "specials", "--model", model, "--output", output), "nothing to")
    assert_refused(
        run(capsys, "specials", "--model", model, "--add", "<|x|>=256", "--output", output),
        "'<|x|>' cannot take id 256: that is the mergeable token",
    )
    assert_refused(
        run(capsys, "specials", "--model", model, "--add", "<|x|>=270", "--output", output),
        "special token '<|endoftext|>' has it",
    )
    assert_refused(
        run(capsys, "specials", "--model", model, "--drop", "<|pad|>", "--output", output),
        "cannot drop '<|pad|>'",
    )
    assert_refused(
        run(
            capsys,
            "specials",
            "--model",
            model,
            "--add",
            "<|x|>",
            "--add",
            "<|x|>=300",
            "--output",
            output,
        ),
        "twice",
    )
    assert not output.exists()
