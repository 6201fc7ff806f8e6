"""``bpetite show`` and ``bpetite inspect``: in-process through ``main``, and a few real runs.

Expected values come from the artifact's JSON read directly and from the naive
reference encoder, not from the code under test.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from bpetite import Tokenizer, get_encoding, reference
from bpetite.cli import main
from bpetite.cli._render import render_ansi
from bpetite.cli.commands._inspect import stats_tables
from bpetite.visualize import PALETTE, token_pieces
from tests.rendering import expected_label, parse_page, parse_plain

_CORPUS = (
    "Hello world! Hello there. " * 20
    + "😀😀 🎉🎉 你好 你好 |pipe| \\back\\ [x] <b>&amp;</b> " * 10
    + "\t\tindent\n\n\nlines\n" * 10
)
_TEXT = "Hello world 🦓|\\ <|endoftext|>\n\n\tthere"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("model") / "tok.json"
    Tokenizer.train(_CORPUS, 300).save(str(path))
    return path


@pytest.fixture(scope="module")
def artifact(model: Path) -> dict[str, object]:
    """The artifact as plain JSON: the independent source of merges and vocabulary."""
    loaded: dict[str, object] = json.loads(model.read_text(encoding="utf-8"))
    return loaded


def _merges(artifact: dict[str, object]) -> list[tuple[int, int]]:
    merges = artifact["merges"]
    assert isinstance(merges, list)
    return [(left, right) for left, right in merges]


def _expected(artifact: dict[str, object], text: str) -> tuple[list[int], list[str]]:
    merges = _merges(artifact)
    ids = reference.encode(reference.Model(merges), text)
    vocab = reference.vocab(merges)
    return ids, [expected_label(vocab[i]) for i in ids]


def _summary(text: str, tokens: int) -> str:
    n_bytes = len(text.encode("utf-8"))
    return f"{tokens} tokens, {n_bytes} bytes, {n_bytes / tokens:.2f} bytes per token"


def _cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "bpetite", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
    )


def _with_pty(args: list[str], stream: str, env: dict[str, str]) -> tuple[int, str, str]:
    """Run bpetite with `stream` ("stdout" or "stderr") on a pseudo-terminal.

    Returns the exit code, what the terminal received and the other stream.
    """
    controller, terminal = pty.openpty()
    other = subprocess.PIPE
    process = subprocess.Popen(
        [sys.executable, "-m", "bpetite", *args],
        stdin=subprocess.DEVNULL,
        stdout=terminal if stream == "stdout" else other,
        stderr=terminal if stream == "stderr" else other,
        env=env,
    )
    os.close(terminal)
    received = bytearray()
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        received += chunk
    os.close(controller)
    pipe = process.stderr if stream == "stdout" else process.stdout
    assert pipe is not None
    rest = pipe.read().decode("utf-8")
    pipe.close()
    code = process.wait(timeout=60)
    # The terminal's line discipline turns "\n" into "\r\n".
    return code, received.decode("utf-8").replace("\r\n", "\n"), rest


def _terminal_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in {"NO_COLOR", "COLORTERM"}}
    env.update({"TERM": "xterm-256color", **extra})
    return env


# --------------------------------------------------------------------------- show


def test_show_plain_is_the_tokens_separated_by_bars(
    model: Path, artifact: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", "--model", str(model), "--text", _TEXT]) == 0
    out, err = capsys.readouterr()
    ids, labels = _expected(artifact, _TEXT)
    assert parse_plain(out) == labels
    assert any(label.startswith("⟨") for label in labels)  # the unseen 🦓 is cut up
    assert "<\\|endoftext\\|>" in out
    assert err == _summary(_TEXT, len(ids)) + "\n"


def test_show_draws_an_aliased_special_as_it_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """o200k_harmony's id 200018 has two texts; shown, a token is the text it stands for
    here, so the page's bytes join back to the input and the summary counts its bytes."""
    text = "<|reserved_200018|>hi <|endofprompt|>"
    assert main(["show", "--model", "o200k_harmony", "--text", text]) == 0
    out, err = capsys.readouterr()
    assert parse_plain(out) == ["<|reserved_200018|>", "hi", "·", "<|endofprompt|>"]
    assert err.startswith(f"4 tokens, {len(text.encode())} bytes")
    page = tmp_path / "page.html"
    argv = ["show", "--model", "o200k_harmony", "--text", text, "--html", str(page)]
    assert main(argv) == 0
    tokens = parse_page(page.read_text(encoding="utf-8")).tokens
    assert b"".join(bytes.fromhex(token["data-bytes"]) for token in tokens) == text.encode()
    ids = get_encoding("o200k_harmony").encode(text)
    assert [int(token["data-token-id"]) for token in tokens] == ids
    assert ids[0] == ids[-1] == 200018


def test_show_ids(
    model: Path, artifact: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", "--model", str(model), "--text", _TEXT, "--ids"]) == 0
    ids, labels = _expected(artifact, _TEXT)
    parsed = parse_plain(capsys.readouterr().out)
    assert parsed == [f"{label}[{token_id}]" for label, token_id in zip(labels, ids, strict=True)]


def test_show_reads_a_file_byte_for_byte(
    model: Path, artifact: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "crlf.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    assert main(["show", "--model", str(model), "--input", str(path)]) == 0
    out = capsys.readouterr().out
    assert parse_plain(out) == _expected(artifact, "one\r\ntwo\r\n")[1]
    assert "␍" in out


def test_show_reads_stdin(model: Path, artifact: dict[str, object]) -> None:
    result = _cli("show", "--model", str(model), "--input", "-", stdin=_TEXT.encode())
    assert result.returncode == 0, result.stderr
    assert parse_plain(result.stdout.decode("utf-8")) == _expected(artifact, _TEXT)[1]


def test_show_empty_text(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "--model", str(model), "--text", ""]) == 0
    out, err = capsys.readouterr()
    assert out == "\n"
    assert err == "0 tokens, 0 bytes, n/a bytes per token\n"


def _sgr_background(codes: str) -> str | None:
    """The background an SGR sequence sets: "48;2;r;g;b", "48;5;n", "4x"/"10x", or None."""
    numbers = codes.split(";") if codes else ["0"]
    background = None
    index = 0
    while index < len(numbers):
        code = numbers[index]
        if code in {"38", "48"}:  # extended colour: 5;n or 2;r;g;b follows
            width = 2 if numbers[index + 1] == "5" else 4
            if code == "48":
                background = ";".join(numbers[index : index + 1 + width])
            index += 1 + width
            continue
        if re.fullmatch(r"4[0-7]|10[0-7]", code):
            background = code
        index += 1
    return background


def _background_runs(out: str) -> list[tuple[str, str]]:
    """Split ANSI output into runs of one background: (background, text).

    Neighbouring tokens always differ in background, so the runs are the tokens.
    Unstyled text (the layout newlines after a reset) belongs to no run.
    """
    runs: list[tuple[str, str]] = []
    for match in re.finditer(r"\x1b\[([0-9;]*)m([^\x1b]*)", out):
        codes, text = match.groups()
        background = _sgr_background(codes)
        if background is None or not text:
            continue
        if runs and runs[-1][0] == background:
            runs[-1] = (background, runs[-1][1] + text)
        else:
            runs.append((background, text))
    return runs


def test_show_colour_one_background_per_token(
    model: Path,
    artifact: dict[str, object],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLORTERM", "truecolor")
    monkeypatch.delenv("NO_COLOR", raising=False)
    text = "Hello world there\n\nagain"
    assert main(["show", "--model", str(model), "--text", text, "--color", "always"]) == 0
    out = capsys.readouterr().out
    _, labels = _expected(artifact, text)
    assert _ANSI.sub("", out) == "".join(labels[:3]) + "↵\n↵\nagain\n"
    runs = _background_runs(out)
    assert [run_text for _, run_text in runs] == labels
    palette = {"48;2;{};{};{}".format(*bytes.fromhex(colour[1:])) for colour in PALETTE}
    assert {background for background, _ in runs} <= palette


def test_show_colour_on_a_16_colour_terminal_still_alternates(
    model: Path,
    artifact: dict[str, object],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pastels all collapse to bright white in 16 colours; the basic theme must not."""
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.delenv("COLORTERM", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    text = "Hello world there"
    assert main(["show", "--model", str(model), "--text", text, "--color", "always"]) == 0
    runs = _background_runs(capsys.readouterr().out)
    assert [run_text for _, run_text in runs] == _expected(artifact, text)[1]
    assert len(runs) >= 3


def test_render_ansi_matches_the_pieces(model: Path) -> None:
    tokenizer = Tokenizer.load(str(model))
    pieces = token_pieces(tokenizer.encode(_TEXT), tokenizer.vocab, {300})
    rendered = render_ansi(pieces, show_ids=True)
    expected = "".join(
        f"{expected_label(piece.data)}[{piece.token_id}]" + "\n" * piece.data.count(b"\n")
        for piece in pieces
    )
    assert _ANSI.sub("", rendered) == expected + ("" if expected.endswith("\n") else "\n")
    runs = _background_runs(rendered)
    assert [text for _, text in runs] == [
        f"{expected_label(piece.data)}[{piece.token_id}]" for piece in pieces
    ]


def test_show_on_a_terminal_is_coloured(model: Path, artifact: dict[str, object]) -> None:
    code, out, err = _with_pty(
        ["show", "--model", str(model), "--text", _TEXT], "stdout", _terminal_env()
    )
    assert code == 0, err
    ids, labels = _expected(artifact, _TEXT)
    # No separators and no escapes: each token is one run of background colour.
    assert [text for _, text in _background_runs(out)] == labels
    assert err == _summary(_TEXT, len(ids)) + "\n"


@pytest.mark.parametrize("env_extra", [{"NO_COLOR": "1"}, {"TERM": "dumb"}])
def test_show_without_colour_falls_back_to_bars(
    model: Path, artifact: dict[str, object], env_extra: dict[str, str]
) -> None:
    code, out, _ = _with_pty(
        ["show", "--model", str(model), "--text", _TEXT], "stdout", _terminal_env(**env_extra)
    )
    assert code == 0
    assert "\x1b[" not in out
    assert parse_plain(out) == _expected(artifact, _TEXT)[1]


def test_show_html_writes_the_page(
    model: Path, artifact: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page_path = tmp_path / "page.html"
    assert main(["show", "--model", str(model), "--text", _TEXT, "--html", str(page_path)]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert f"wrote '{page_path}'" in err
    page = parse_page(page_path.read_text(encoding="utf-8"))
    ids, labels = _expected(artifact, _TEXT)
    assert [int(token["data-token-id"]) for token in page.tokens] == ids
    assert [token["text"] for token in page.tokens] == labels
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "page.html"
    ]  # no temp file left behind


def test_show_html_refuses_to_overwrite_without_force(
    model: Path, artifact: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page_path = tmp_path / "page.html"
    page_path.write_text("keep me", encoding="utf-8")
    assert main(["show", "--model", str(model), "--text", "hi", "--html", str(page_path)]) == 1
    err = capsys.readouterr().err
    assert (
        err == f"bpetite: error: --html '{page_path}' already exists; pass --force to replace it\n"
    )
    assert page_path.read_text(encoding="utf-8") == "keep me"
    args = ["show", "--model", str(model), "--text", "hi", "--html", str(page_path), "--force"]
    assert main(args) == 0
    page = parse_page(page_path.read_text(encoding="utf-8"))
    assert page.by_id["token-count"] == str(
        len(reference.encode(reference.Model(_merges(artifact)), "hi"))
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["page.html"]


def test_show_html_into_a_missing_directory(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing" / "page.html"
    assert main(["show", "--model", str(model), "--text", "hi", "--html", str(target)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "does not exist" in err


def test_show_errors(model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.json"
    assert main(["show", "--model", str(missing), "--text", "hi"]) == 1
    assert capsys.readouterr().err == f"bpetite: error: model file '{missing}' does not exist\n"

    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok \xff")
    assert main(["show", "--model", str(model), "--input", str(bad)]) == 1
    assert "byte 0xff at byte offset 3" in capsys.readouterr().err

    assert main(["show", "--model", str(model)]) == 2
    assert main(["show", "--model", str(model), "--text", "a", "--input", str(bad)]) == 2
    assert main(["show", "--model", str(model), "--text", "a", "--color", "sometimes"]) == 2


# --------------------------------------------------------------------------- inspect


def test_inspect_json_against_the_artifact(
    model: Path, artifact: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", "--model", str(model), "--top", "3"]) == 0
    out, err = capsys.readouterr()
    assert err == ""  # stderr is not a terminal: no tables
    assert out.count("\n") == 1
    stats = json.loads(out)
    merges = _merges(artifact)
    vocab = reference.vocab(merges)
    assert stats["mergeable_vocab_size"] == artifact["mergeable_vocab_size"] == 256 + len(merges)
    assert stats["merges"] == len(merges)
    assert stats["special_tokens"] == artifact["special_tokens"]
    lengths = Counter(len(vocab[i]) for i in range(256 + len(merges)))
    assert {row["length"]: row["tokens"] for row in stats["token_length_histogram"]} == lengths
    assert [merge["pair"] for merge in stats["first_merges"]] == [list(m) for m in merges[:3]]
    assert [merge["pair"] for merge in stats["last_merges"]] == [list(m) for m in merges[-3:]]
    assert [token["length"] for token in stats["longest_tokens"]] == sorted(
        lengths.elements(), reverse=True
    )[:3]


def test_inspect_corpus(
    model: Path, artifact: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _CORPUS[:3000] + "<|endoftext|>🦓"
    path = tmp_path / "corpus.txt"
    path.write_bytes(corpus.encode("utf-8"))
    assert main(["inspect", "--model", str(model), "--corpus", str(path)]) == 0
    stats = json.loads(capsys.readouterr().out)["corpus"]
    ids = reference.encode(reference.Model(_merges(artifact)), corpus)
    n_bytes = len(corpus.encode("utf-8"))
    assert stats["source"] == str(path)
    assert stats["tokens"] == len(ids)
    assert stats["bytes"] == n_bytes
    assert stats["tokens_per_byte"] == pytest.approx(len(ids) / n_bytes)
    distinct = set(ids) - {300}
    assert stats["distinct_tokens_used"] == len(distinct)
    assert stats["vocabulary_used_share"] == pytest.approx(len(distinct) / 300)
    assert stats["special_tokens_seen"] == 1
    top_id, top_count = Counter(ids).most_common(1)[0]
    assert stats["most_frequent_tokens"][0]["count"] == top_count
    assert stats["most_frequent_tokens"][0]["id"] == min(
        i for i, n in Counter(ids).items() if n == top_count
    )
    assert top_id in {token["id"] for token in stats["most_frequent_tokens"]}


def test_inspect_tables_on_a_terminal(model: Path, artifact: dict[str, object]) -> None:
    code, err, out = _with_pty(
        ["inspect", "--model", str(model), "--top", "2"], "stderr", _terminal_env()
    )
    assert code == 0
    stats = json.loads(out)  # stdout stays pure JSON
    assert stats["merges"] == len(_merges(artifact))
    for title in ("vocabulary", "token length (bytes)", "longest tokens", "first merges"):
        assert title in err


def test_inspect_bad_top(model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--model", str(model), "--top", "-1"]) == 2
    assert "must be 0 or more, got -1" in capsys.readouterr().err
    assert main(["inspect", "--model", str(model), "--top", "many"]) == 2
    assert "invalid int value: 'many'" in capsys.readouterr().err


def test_tables_show_token_text_literally() -> None:
    """A token that looks like rich markup must be printed as is, not interpreted."""
    from rich.console import Console

    vocab = {i: bytes([i]) for i in range(256)} | {256: b"[red]x[/]", 257: b"<|endoftext|>"}
    stats = {
        "mergeable_vocab_size": 257,
        "merges": 1,
        "special_tokens": {"<|endoftext|>": 257},
        "token_length_histogram": [{"length": 1, "tokens": 256}, {"length": 8, "tokens": 1}],
        "longest_tokens": [
            {"id": 256, "length": 8, "text": "[red]x[/]", "hex": vocab[256].hex(" ")}
        ],
        "first_merges": [],
        "last_merges": [],
    }
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, force_terminal=False)
    for table in stats_tables(stats):
        console.print(table)
    assert "[red]x[/]" in buffer.getvalue()


# --------------------------------------------------------------------------- lazy rich


def test_visualize_and_commands_do_not_import_rich(model: Path, tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "import bpetite, bpetite.visualize\n"
        "import bpetite.cli.commands._show, bpetite.cli.commands._inspect\n"
        "import bpetite.cli._render\n"
        "assert 'rich' not in sys.modules, 'imported rich'\n"
        "from bpetite.cli import main\n"
        f"assert main(['show', '--model', {str(model)!r}, '--text', 'hi', '--color', 'never',"
        f" '--html', {str(tmp_path / 'p.html')!r}]) == 0\n"
        "assert 'rich' not in sys.modules, 'show imported rich'\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
