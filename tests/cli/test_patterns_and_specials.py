"""Modern tokenizers from the command line: split patterns, several special tokens, the
special-token policy of encode, and several vocabulary sizes from one training run.

Expected results come from the library called directly (separate runs, ``encode`` with
tiktoken's policy keywords), never from the command under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpetite import Tokenizer
from bpetite.cli import main

CORPUS = (
    "<|user_start|>Hello there, how's it going?<|user_end|>"
    "<|assistant_start|>It's going well: 123 4567 tokens!<|assistant_end|>\r\n"
    "The quick brown fox jumps over the lazy dog; naïve café 🤔 日本語.\n"
) * 30
CHAT = ("<|user_start|>", "<|user_end|>", "<|assistant_start|>", "<|assistant_end|>")
TEXT = "<|user_start|>Hi, it's 2024!<|user_end|><|endoftext|> tail <|user_start"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line(err: str, *fragments: str) -> None:
    assert "Traceback" not in err
    (line,) = err.splitlines()
    assert line.startswith("bpetite: error: ")
    for fragment in fragments:
        assert fragment in line, (fragment, line)


def saved_bytes(tokenizer: Tokenizer, path: Path) -> bytes:
    tokenizer.save(path, overwrite=True)
    return path.read_bytes()


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    path = tmp_path / "chat.txt"
    path.write_bytes(CORPUS.encode("utf-8"))
    return path


# --------------------------------------------------------------------------- several sizes


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k"])
@pytest.mark.parametrize("specials", [(), CHAT])
def test_several_sizes_from_one_run_equal_separate_runs(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    corpus_file: Path,
    pattern: str,
    specials: tuple[str, ...],
) -> None:
    sizes = [300, 260, 420]
    argv = ["train", "--input", str(corpus_file), "--workers", "1", "--pattern", pattern]
    for special in specials:
        argv += ["--special-token", special]
    for size in sizes:
        argv += ["--vocab-size", str(size)]
    code, out, err = run(capsys, *argv, "--output", str(tmp_path / "tok-{vocab_size}.json"))
    assert code == 0, err
    summary = json.loads(out)
    assert [entry["requested_vocab_size"] for entry in summary["outputs"]] == sorted(sizes)
    assert err.count("train: started") == 1  # one training run
    for size in sizes:
        separate = Tokenizer.train(
            CORPUS, size, pattern=pattern, special_tokens=specials or ("<|endoftext|>",)
        )
        written = (tmp_path / f"tok-{size}.json").read_bytes()
        assert written == saved_bytes(separate, tmp_path / "separate.json")


def test_a_size_past_where_training_stops_equals_a_separate_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, corpus_file: Path
) -> None:
    argv = ["train", "--input", str(corpus_file), "--vocab-size", "300"]
    argv += ["--vocab-size", "100000", "--output", str(tmp_path / "t{vocab_size}.json")]
    code, _, err = run(capsys, *argv)
    assert code == 0, err
    separate = Tokenizer.train(CORPUS, 100000)
    expected = saved_bytes(separate, tmp_path / "separate.json")
    assert (tmp_path / "t100000.json").read_bytes() == expected


def test_several_sizes_need_the_size_in_the_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, corpus_file: Path
) -> None:
    argv = ["train", "--input", str(corpus_file), "--vocab-size", "300", "--vocab-size", "400"]
    code, out, err = run(capsys, *argv, "--output", str(tmp_path / "tok.json"))
    assert (code, out) == (1, "")
    one_line(err, "{vocab_size}")
    assert list(tmp_path.iterdir()) == [corpus_file]


def test_every_output_is_checked_before_training(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, corpus_file: Path
) -> None:
    (tmp_path / "tok-400.json").write_bytes(b"keep")
    argv = ["train", "--input", str(corpus_file), "--vocab-size", "300", "--vocab-size", "400"]
    code, out, err = run(capsys, *argv, "--output", str(tmp_path / "tok-{vocab_size}.json"))
    assert (code, out) == (1, "")
    one_line(err, "tok-400.json", "already exists")
    assert not (tmp_path / "tok-300.json").exists()


# --------------------------------------------------------------------------- patterns, specials


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_train_with_a_preset_and_chat_special_tokens(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, corpus_file: Path, pattern: str
) -> None:
    output = tmp_path / "tok.json"
    argv = ["train", "--input", str(corpus_file), "--vocab-size", "350", "--pattern", pattern]
    for special in CHAT:
        argv += ["--special-token", special]
    code, _, err = run(capsys, *argv, "--output", str(output), "--workers", "1")
    assert code == 0, err
    expected = Tokenizer.train(CORPUS, 350, pattern=pattern, special_tokens=CHAT)
    assert output.read_bytes() == saved_bytes(expected, tmp_path / "expected.json")
    loaded = Tokenizer.load(output)
    assert loaded.pattern_name == pattern
    assert list(loaded.special_tokens) == list(CHAT)


def test_train_from_stdin_with_a_custom_pattern(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import sys

    regex = r"\s*\S+|\s+"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(CORPUS.encode("utf-8"))))
    output = tmp_path / "tok.json"
    argv = ["train", "--input", "-", "--vocab-size", "300", "--pattern-regex", regex]
    code, _, err = run(capsys, *argv, "--output", str(output))
    assert code == 0, err
    expected = Tokenizer.train(CORPUS, 300, pattern=regex)
    assert output.read_bytes() == saved_bytes(expected, tmp_path / "expected.json")


def test_pattern_and_pattern_regex_exclude_each_other(
    capsys: pytest.CaptureFixture[str], corpus_file: Path
) -> None:
    argv = ["train", "--input", str(corpus_file), "--vocab-size", "300", "--output", "o.json"]
    code, out, err = run(capsys, *argv, "--pattern", "cl100k", "--pattern-regex", r"\S+|\s+")
    assert (code, out) == (2, "")
    assert "not allowed with argument" in err


@pytest.mark.parametrize(
    ("option", "value", "fragment"),
    [
        ("--pattern-regex", "(", "not a valid regex"),
        ("--pattern-regex", "a*", "empty string"),
        ("--pattern-regex", "", "the split pattern is empty"),  # not the default pattern
        ("--special-token", "", "non-empty"),
    ],
)
def test_a_bad_pattern_or_special_fails_before_counting(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    corpus_file: Path,
    option: str,
    value: str,
    fragment: str,
) -> None:
    argv = ["train", "--input", str(corpus_file), "--vocab-size", "300"]
    code, out, err = run(capsys, *argv, "--output", str(tmp_path / "o.json"), option, value)
    assert (code, out) == (1, "")
    one_line(err, fragment)  # the only line: no counting progress before it


def test_a_special_token_given_twice_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, corpus_file: Path
) -> None:
    argv = ["train", "--input", str(corpus_file), "--vocab-size", "300"]
    argv += ["--special-token", "<|a|>", "--special-token", "<|a|>"]
    code, out, err = run(capsys, *argv, "--output", str(tmp_path / "o.json"))
    assert (code, out) == (1, "")
    one_line(err, "twice")


# --------------------------------------------------------------------------- encode --special


@pytest.fixture
def spec_model(tmp_path: Path) -> Path:
    path = tmp_path / "spec.json"
    Tokenizer.train(CORPUS, 300).save(path)
    return path


@pytest.mark.parametrize("source", ["text", "input"])
@pytest.mark.parametrize("policy", ["allow", "ordinary"])
def test_encode_special_policies(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, spec_model: Path, source: str, policy: str
) -> None:
    tokenizer = Tokenizer.load(spec_model)
    expected = tokenizer.encode(TEXT) if policy == "allow" else tokenizer.encode_ordinary(TEXT)
    where = ["--text", TEXT]
    if source == "input":
        (tmp_path / "in.txt").write_bytes(TEXT.encode("utf-8"))
        where = ["--input", str(tmp_path / "in.txt")]
    code, out, err = run(capsys, "encode", "--model", str(spec_model), *where, "--special", policy)
    assert code == 0, err
    assert json.loads(out) == expected
    assert (policy == "allow") == (tokenizer.special_tokens["<|endoftext|>"] in expected)


@pytest.mark.parametrize("source", ["text", "input"])
def test_encode_special_raise_refuses_special_text(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, spec_model: Path, source: str
) -> None:
    where = ["--text", TEXT]
    if source == "input":
        (tmp_path / "in.txt").write_bytes(TEXT.encode("utf-8"))
        where = ["--input", str(tmp_path / "in.txt")]
    code, out, err = run(capsys, "encode", "--model", str(spec_model), *where, "--special", "raise")
    assert (code, out) == (1, "")
    one_line(err, "<|endoftext|>", "--special raise", f"at character {TEXT.index('<|endoftext|>')}")


def test_encode_special_raise_accepts_plain_text(
    capsys: pytest.CaptureFixture[str], spec_model: Path
) -> None:
    text = "no special token here <|endoftext"
    code, out, _ = run(
        capsys, "encode", "--model", str(spec_model), "--text", text, "--special", "raise"
    )
    assert code == 0
    assert json.loads(out) == Tokenizer.load(spec_model).encode_ordinary(text)


# --------------------------------------------------------------------------- several specials


@pytest.fixture
def chat_model(tmp_path: Path) -> Path:
    path = tmp_path / "chat.json"
    Tokenizer.train(CORPUS, 320, pattern="cl100k", special_tokens=CHAT).save(path)
    return path


def test_encode_and_decode_with_chat_special_tokens(
    capsys: pytest.CaptureFixture[str], chat_model: Path
) -> None:
    tokenizer = Tokenizer.load(chat_model)
    code, out, _ = run(capsys, "encode", "--model", str(chat_model), "--text", TEXT)
    assert code == 0
    ids = json.loads(out)
    assert ids == tokenizer.encode(TEXT)
    assert tokenizer.special_tokens["<|user_start|>"] in ids
    code, out, _ = run(capsys, "decode", "--model", str(chat_model), "--ids", *map(str, ids))
    assert (code, out) == (0, TEXT)


def test_show_marks_every_special_token(
    capsys: pytest.CaptureFixture[str], chat_model: Path
) -> None:
    code, out, _ = run(
        capsys, "show", "--model", str(chat_model), "--text", TEXT, "--ids", "--color", "never"
    )
    assert code == 0
    tokenizer = Tokenizer.load(chat_model)
    for special in ("<|user_start|>", "<|user_end|>"):
        shown = special.replace("|", "\\|")  # the plain rendering escapes "|"
        assert f"{shown}[{tokenizer.special_tokens[special]}]" in out


def test_inspect_lists_every_special_token(
    capsys: pytest.CaptureFixture[str], chat_model: Path
) -> None:
    code, out, _ = run(capsys, "inspect", "--model", str(chat_model))
    assert code == 0
    stats = json.loads(out)
    assert stats["special_tokens"] == dict(Tokenizer.load(chat_model).special_tokens)


@pytest.mark.parametrize("pattern", ["cl100k", "o200k"])
def test_count_then_train_with_a_pattern_equals_training_on_the_text(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, corpus_file: Path, pattern: str
) -> None:
    counts = tmp_path / "counts.json"
    argv = ["count", "--input", str(corpus_file), "--pattern", pattern, "--workers", "2"]
    assert main([*argv, "--output", str(counts)]) == 0
    output = tmp_path / "tok.json"
    argv = ["train", "--counts", str(counts), "--vocab-size", "340", "--pattern", pattern]
    code, _, err = run(capsys, *argv, "--output", str(output))
    assert code == 0, err
    expected = Tokenizer.train(CORPUS, 340, pattern=pattern)
    assert output.read_bytes() == saved_bytes(expected, tmp_path / "expected.json")


def test_counts_files_train_only_the_pattern_they_were_cut_with(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, corpus_file: Path
) -> None:
    counts = tmp_path / "counts.json"
    assert main(["count", "--input", str(corpus_file), "--output", str(counts)]) == 0
    capsys.readouterr()
    argv = ["train", "--counts", str(counts), "--vocab-size", "300", "--pattern", "cl100k"]
    code, out, err = run(capsys, *argv, "--output", str(tmp_path / "o.json"))
    assert (code, out) == (1, "")
    one_line(err, "counts.json", "pattern")
    assert not (tmp_path / "o.json").exists()


@pytest.mark.parametrize("policy", ["allow", "ordinary", "raise"])
def test_encode_input_streams_with_chat_special_tokens(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    chat_model: Path,
    monkeypatch: pytest.MonkeyPatch,
    policy: str,
) -> None:
    """Tiny blocks cut special tokens and chunks everywhere; the ids stay encode's."""
    from bpetite.cli.commands import _encode

    monkeypatch.setattr(_encode, "BLOCK_SIZE", 5)
    text = TEXT * 7 if policy != "raise" else CORPUS.replace("<|", "< |")
    source = tmp_path / "in.txt"
    source.write_bytes(text.encode("utf-8"))
    tokenizer = Tokenizer.load(chat_model)
    argv = ["encode", "--model", str(chat_model), "--input", str(source), "--special", policy]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    expected = tokenizer.encode_ordinary(text) if policy != "allow" else tokenizer.encode(text)
    assert json.loads(out) == expected


def test_encode_input_raise_fails_before_any_output(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    chat_model: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bpetite.cli.commands import _encode

    monkeypatch.setattr(_encode, "BLOCK_SIZE", 5)
    text = "plain text " * 500 + "<|assistant_start|>" + " more" * 10
    source = tmp_path / "in.txt"
    source.write_bytes(text.encode("utf-8"))
    argv = ["encode", "--model", str(chat_model), "--input", str(source), "--special", "raise"]
    code, out, err = run(capsys, *argv)
    assert (code, out) == (1, "")
    one_line(err, "'<|assistant_start|>'", f"at character {text.index('<|assistant_start|>')}")


def test_a_custom_pattern_model_loads_only_when_trusted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    regex = r"\s*\S+|\s+"
    path = tmp_path / "custom.json"
    tokenizer = Tokenizer.train(CORPUS, 300, pattern=regex)
    tokenizer.save(path)
    code, out, err = run(capsys, "encode", "--model", str(path), "--text", "Hello there")
    assert (code, out) == (1, "")
    one_line(err, "custom split pattern", "--trust-custom-pattern")
    argv = ["encode", "--model", str(path), "--text", "Hello there", "--trust-custom-pattern"]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    assert json.loads(out) == tokenizer.encode("Hello there")


# --------------------------------------------------------------------------- training options


@pytest.mark.parametrize(
    ("flags", "options"),
    [
        (["--max-token-bytes", "3"], {"max_token_bytes": 3}),
        (["--min-frequency", "40"], {"min_frequency": 40}),
    ],
)
def test_training_options_equal_the_library(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    corpus_file: Path,
    flags: list[str],
    options: dict[str, int],
) -> None:
    out = tmp_path / "tok.json"
    code, _, err = run(
        capsys, "train", "--input", str(corpus_file), "--vocab-size", "400",
        "--output", str(out), *flags,
    )  # fmt: skip
    assert code == 0, err
    expected = Tokenizer.train(CORPUS, 400, **options)  # type: ignore[arg-type]
    assert out.read_bytes() == saved_bytes(expected, tmp_path / "expected.json")
    assert dict(Tokenizer.load(out).training) == options


@pytest.mark.parametrize(
    ("flag", "value", "code"), [("--max-token-bytes", "1", 1), ("--min-frequency", "0", 2)]
)
def test_training_options_are_checked_before_counting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str, value: str, code: int
) -> None:
    result, out, err = run(
        capsys, "train", "--input", str(tmp_path / "missing.txt"), "--vocab-size", "300",
        "--output", str(tmp_path / "t.json"), flag, value,
    )  # fmt: skip
    assert result == code and out == ""
    assert flag in err and "missing.txt" not in err


# --------------------------------------------------------------------------- OpenAI files


def test_import_recognises_cl100k_and_encodes_with_tiktokens_ids(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, openai_dir: Path
) -> None:
    out = tmp_path / "cl100k.json"
    code, stdout, err = run(
        capsys, "import", str(openai_dir / "cl100k_base.tiktoken"), "--output", str(out)
    )
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["vocabulary"] == "cl100k_base" and summary["pattern"] == "cl100k"
    assert summary["special_tokens"]["<|endofprompt|>"] == 100276
    code, stdout, err = run(
        capsys, "encode", "--model", str(out), "--text", "hello world<|endoftext|>"
    )
    # tiktoken's cl100k_base ids for this text (tests/interop/test_openai_vocabularies.py checks
    # every id against tiktoken itself).
    assert json.loads(stdout) == [15339, 1917, 100257]


def test_another_tiktoken_file_takes_a_pattern_and_special_ids(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, openai_dir: Path
) -> None:
    copy = tmp_path / "mine.tiktoken"
    copy.write_bytes((openai_dir / "cl100k_base.tiktoken").read_bytes() + b"\n")
    code, _, err = run(capsys, "import", str(copy), "--output", str(tmp_path / "refused.json"))
    one_line(err, "--pattern")
    assert code == 1
    out = tmp_path / "mine.json"
    code, stdout, err = run(
        capsys, "import", str(copy), "--pattern", "cl100k",
        "--special-token", "<|endoftext|>=100257", "--special-token", "<|im_start|>=100264",
        "--output", str(out),
    )  # fmt: skip
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["vocabulary"] is None
    assert summary["special_tokens"] == {"<|endoftext|>": 100257, "<|im_start|>": 100264}
    assert Tokenizer.load(out).encode("hello world<|im_start|>") == [15339, 1917, 100264]


def test_a_special_token_needs_text_and_id(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, openai_dir: Path
) -> None:
    code, out, err = run(
        capsys, "import", str(openai_dir / "cl100k_base.tiktoken"),
        "--special-token", "<|x|>", "--output", str(tmp_path / "x.json"),
    )  # fmt: skip
    assert code == 2 and out == ""
    assert "TEXT=ID" in err
