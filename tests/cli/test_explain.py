"""``bpetite explain``: an encode's or a training run's every step, printed or as a page.

Expected lines come from ``bpetite.reference`` (``trace_encode``, ``trace_train`` and
``render_trace``) on the model read back from its file, and the ids from the fast
encoder: never from the command under test.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bpetite import PRESETS, Tokenizer, get_encoding, reference
from bpetite.cli import main
from bpetite.visualize import MAX_TRAIN_BYTES
from tests import datafiles
from tests.visualize.explain_pages import ExplainPage

_CORPUS = "Hello world, hello there! naïve café 😀😀 مرحبا بالعالم <|endoftext|> 12345\n" * 20
_TEXT = "Hello naïve 😀🦓<|endoftext|> there"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("model") / "tok.json"
    Tokenizer.train(_CORPUS, 320).save(path)
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text(_CORPUS, encoding="utf-8")
    return path


def test_explain_prints_every_step_then_the_ids(
    model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explain", "--model", str(model), "--text", _TEXT]) == 0
    out, err = capsys.readouterr()
    tokenizer = Tokenizer.load(model)
    trace = reference.render_trace(reference.trace_encode(tokenizer, _TEXT))
    assert out == f"{trace}\nids: {tokenizer.encode(_TEXT)}\n"
    assert "special '<|endoftext|>' -> 320" in out
    size = len(_TEXT.encode("utf-8"))
    summary = rf"encode: \d+ merges on a text of {size} bytes, \d+ tokens before, \d+ after\n"
    assert re.fullmatch(summary, err)


def test_explain_reads_a_file_or_stdin_byte_for_byte(model: Path, tmp_path: Path) -> None:
    text = "a\r\nb\u00a0c"
    path = tmp_path / "text.txt"
    path.write_bytes(text.encode("utf-8"))
    expected = reference.render_trace(reference.trace_encode(Tokenizer.load(model), text))
    for args, stdin in ((["--input", str(path)], b""), (["--input", "-"], text.encode())):
        result = subprocess.run(
            [sys.executable, "-m", "bpetite", "explain", "--model", str(model), *args],
            input=stdin,
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.decode("utf-8").startswith(expected + "\nids: ")


def test_explain_colours_each_steps_tokens(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--model", str(model), "--text", _TEXT, "--color", "always"]) == 0
    out = capsys.readouterr().out
    assert _ANSI.search(out)
    plain = _ANSI.sub("", out).splitlines()
    tokenizer = Tokenizer.load(model)
    steps = reference.trace_encode(tokenizer, _TEXT)
    assert len(plain) == len(steps) + 1 and plain[-1] == f"ids: {tokenizer.encode(_TEXT)}"
    # a chunk's line shows its bytes as show draws them: · for a space, hex for a part
    first = next(line for line in plain if line.startswith("chunk ' naïve'"))
    assert first == "chunk ' naïve': ·na⟨c3⟩⟨af⟩ve"


def test_explain_train_prints_every_merge(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["explain", "--train", "--input", str(corpus), "--vocab-size", "270"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert out == reference.render_trace(reference.trace_train(_CORPUS, 270)) + "\n"
    assert len(out.splitlines()) == 14
    size = len(_CORPUS.encode("utf-8"))
    assert err.startswith(f"train: 14 merges on a corpus of {size:,} bytes, {size} tokens before")


def test_explain_train_follows_the_training_options(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["explain", "--train", "--input", str(corpus), "--vocab-size", "400",
            "--max-token-bytes", "3", "--min-frequency", "30", "--pattern", "cl100k"]  # fmt: skip
    assert main(args) == 0
    steps = reference.trace_train(
        _CORPUS, 400, pattern=PRESETS["cl100k"], max_token_bytes=3, min_frequency=30
    )
    assert capsys.readouterr().out == reference.render_trace(steps) + "\n"
    assert all(len(step.token) <= 3 and step.count >= 30 for step in steps)


def test_explain_html_writes_a_page_and_nothing_on_stdout(
    model: Path, corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.html"
    assert main(["explain", "--model", str(model), "--text", _TEXT, "--html", str(page)]) == 0
    out, err = capsys.readouterr()
    assert out == "" and f"wrote '{page}'" in err
    parsed = ExplainPage(page.read_text(encoding="utf-8"))
    tokenizer = Tokenizer.load(model)
    rows = tokenizer.explain(_TEXT).rows
    assert parsed.tokens_at(len(rows)) == tokenizer.encode(_TEXT)
    # an existing page is kept unless --force, and nothing else is left behind
    before = page.read_bytes()
    assert main(["explain", "--model", str(model), "--text", "ab", "--html", str(page)]) == 1
    assert "exists" in capsys.readouterr().err and page.read_bytes() == before
    argv = ["explain", "--train", "--input", str(corpus), "--vocab-size", "280",
            "--html", str(page), "--force"]  # fmt: skip
    assert main(argv) == 0
    assert ExplainPage(page.read_text(encoding="utf-8")).radios[-1].endswith("-24")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--train", "--model", "m.json", "--text", "x", "--vocab-size", "300"], "drop --model"),
        (["--train", "--text", "x"], "--train needs --vocab-size"),
        (["--train", "--text", "x", "--vocab-size", "300"], "--train reads its corpus from"),
        (["--text", "x"], "give --model PATH"),
        (["--model", "m.json", "--text", "x", "--vocab-size", "300"], "--vocab-size is for"),
    ],
)
def test_explain_names_the_flag_a_mix_is_wrong_about(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explain", *args]) == 1
    out, err = capsys.readouterr()
    assert out == "" and message in err and "Traceback" not in err


def test_explain_train_refuses_a_large_corpus_before_reading_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big.txt"
    with big.open("wb") as handle:
        handle.truncate(MAX_TRAIN_BYTES + 1)
    args = ["explain", "--train", "--input", str(big), "--vocab-size", "300"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert f"has {MAX_TRAIN_BYTES + 1:,} bytes" in err and "bpetite train" in err
    # the vocabulary is checked before the corpus is even opened
    assert main([*args[:-3], "missing.txt", "--vocab-size", "99999"]) == 1
    assert "--vocab-size must be at most 4,096 to explain" in capsys.readouterr().err


def test_explain_works_with_an_imported_vocabulary(
    gpt2_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """GPT-2 through `bpetite import`: its byte order, its deep ranks, its special."""
    model = tmp_path / "gpt2.json"
    argv = ["import", str(gpt2_dir / "encoder.json"), str(gpt2_dir / "vocab.bpe"),
            "--output", str(model)]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    text = "Tokenization, step by step: naïve 😀<|endoftext|>"
    assert main(["explain", "--model", str(model), "--text", text]) == 0
    out = capsys.readouterr().out
    tokenizer = Tokenizer.load(model)
    assert out.endswith(f"ids: {tokenizer.encode(text)}\n")
    assert out.startswith(reference.render_trace(reference.trace_encode(tokenizer, text)))


def test_explain_a_built_in_whose_merged_ids_skip_a_special(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """p50k_base's <|endoftext|> holds 50256 among its merged ids, its whitespace tokens
    50257 and on: the steps name the ids tiktoken gives the tokens, and the ids are
    tiktoken's, in plain text and in colour."""
    text = "hello" + " " * 30 + "world<|endoftext|>"
    assert main(["explain", "--model", "p50k_base", "--text", text]) == 0
    out, err = capsys.readouterr()
    oracle = datafiles.tiktoken_encoding("p50k_base")
    ids = oracle.encode(text, allowed_special="all")
    assert 50256 in ids and max(ids) > 50256
    trace = reference.render_trace(reference.trace_encode(get_encoding("p50k_base"), text))
    assert out == f"{trace}\nids: {ids}\n"
    assert oracle.decode_single_token_bytes(50257) == b"  "
    assert "  merge 50000: (220, 220) -> 50257 '  ' gives" in out
    assert "special '<|endoftext|>' -> 50256" in out
    assert err.startswith("encode: ")
    argv = ["explain", "--model", "p50k_base", "--text", text, "--color", "always"]
    assert main(argv) == 0
    coloured = capsys.readouterr().out
    assert coloured.endswith(f"ids: {ids}\n") and "-> 50257 '  ' gives" in coloured
