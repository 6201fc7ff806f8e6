"""Messages a command-line user can act on: what they name exists on the command line.

Each failure is one line on stderr, exit 1, no traceback, and its remedy is checked by
doing what it says: the options it names are the command's, and following it works.
The help texts are checked against what the commands print, and ``show``'s against the
rendering table of docs/visualize.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bpetite import Tokenizer
from tests.cli.running import Result, run

MESSAGES = [{"role": "user", "content": "hello"}]


@pytest.fixture
def model(tmp_path: Path) -> str:
    """A model without ChatML's or harmony's special tokens."""
    path = tmp_path / "model.json"
    Tokenizer.train("hello world " * 20, 270, special_tokens=["<|endoftext|>"]).save(path)
    return str(path)


@pytest.fixture
def conversation(tmp_path: Path) -> str:
    path = tmp_path / "conversation.json"
    path.write_text(json.dumps(MESSAGES), encoding="utf-8")
    return str(path)


def one_line_failure(result: Result) -> str:
    assert result.code == 1 and result.out == ""
    assert result.err.startswith("bpetite: error: ") and result.err.count("\n") == 1
    assert "Traceback" not in result.err
    return result.err


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("{{ 1/0 }}", "the chat template failed: ZeroDivisionError: division by zero"),
        (
            "{% for i in range(100000000) %}x{% endfor %}",
            "the chat template failed: OverflowError: Range too big",
        ),
        (
            "{% macro f(n) %}{{ f(n+1) }}{% endmacro %}{{ f(0) }}",
            "the chat template failed: RecursionError: maximum recursion depth exceeded",
        ),
        ('{{ "x" * 100000000000 }}', "the chat template failed: OverflowError: Repetition too big"),
        (
            "{% for m in messages %}{{ m.content ",
            "the chat template is not valid Jinja: unexpected end of template",
        ),
    ],
    ids=["division", "range", "recursion", "repetition", "unfinished"],
)
def test_chat_reports_a_failing_template_in_one_line(
    capsys: pytest.CaptureFixture[str],
    model: str,
    conversation: str,
    tmp_path: Path,
    source: str,
    message: str,
) -> None:
    template = tmp_path / "x.jinja"
    template.write_text(source, encoding="utf-8")
    err = one_line_failure(
        run(capsys, "chat", "--model", model, "--messages", conversation, "--template", template)
    )
    assert err.startswith(f"bpetite: error: {message}")


def test_a_recursive_template_fails_cleanly_in_a_fresh_process(
    model: str, conversation: str, tmp_path: Path
) -> None:
    """The real process, with Python's own recursion limit: one line, exit 1."""
    template = tmp_path / "loop.jinja"
    template.write_text("{% macro f(n) %}{{ f(n+1) }}{% endmacro %}{{ f(0) }}", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "bpetite", "chat", "--model", model, "--messages", conversation,
         "--template", str(template)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "bpetite: error: the chat template failed: RecursionError: maximum recursion depth "
        "exceeded\n"
    )


@pytest.mark.parametrize("form", ["chatml", "harmony"])
def test_chat_names_the_command_line_ways_to_get_missing_specials(
    capsys: pytest.CaptureFixture[str], model: str, conversation: str, tmp_path: Path, form: str
) -> None:
    base = ["chat", "--model", model, "--messages", conversation, "--template", form]
    err = one_line_failure(run(capsys, *base))
    assert "which this tokenizer lacks; add them with 'bpetite specials --add TEXT'" in err
    assert "or give --text to print the rendered text" in err
    assert "with_special_tokens" not in err and "tokenize=False" not in err
    # Both ways work: --text prints the text...
    assert run(capsys, *base, "--text").code == 0
    # ...and the special tokens the message names, added with specials --add, let it encode.
    named = err.split("needs the special tokens ")[1].split(", which")[0].split(", ")
    edited = tmp_path / "edited.json"
    adds = [argument for text in named for argument in ("--add", text)]
    assert run(capsys, "specials", "--model", model, *adds, "--output", edited).code == 0
    encoded = run(capsys, *base[:2], str(edited), *base[3:])
    assert encoded.code == 0, encoded.err
    assert json.loads(encoded.out)


def test_chunk_names_max_tokens_as_the_option(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bytes_only = tmp_path / "bytes.json"
    Tokenizer([]).save(bytes_only)
    base = ["chunk", "--model", bytes_only, "--text", "a🤔"]
    err = one_line_failure(run(capsys, *base, "--max-tokens", "1"))
    assert err.startswith("bpetite: error: no piece within --max-tokens 1 starts at character 1")
    assert err.endswith("; raise --max-tokens\n")
    assert "max_tokens" not in err
    # Raising it works: 🤔 is four byte tokens.
    assert run(capsys, *base, "--max-tokens", "4").code == 0


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            "<|pad|>=-1",
            "--add '<|pad|>=-1': the id after the last '=' must be 0 or more, in digits 0-9 "
            "alone, got -1; a text that itself ends in '=-1' takes its id after it: "
            "--add '<|pad|>=-1=ID'",
        ),
        (
            "<|pad|>=+7",
            "--add '<|pad|>=+7': the id after the last '=' must be 0 or more, in digits 0-9 "
            "alone, got +7",
        ),
        ("=500", "--add '=500' has no text before the '=': give TEXT=ID"),
        ("=-1", "--add '=-1' has no text before the '='"),
        ("", "--add needs a special token's text, got ''"),
    ],
)
def test_specials_refuses_an_add_with_a_bad_id_or_no_text(
    capsys: pytest.CaptureFixture[str], model: str, tmp_path: Path, given: str, message: str
) -> None:
    output = tmp_path / "out.json"
    err = one_line_failure(
        run(capsys, "specials", "--model", model, "--add", given, "--output", output)
    )
    assert err.startswith(f"bpetite: error: {message}")
    assert not output.exists()


def test_specials_add_follows_its_help(
    capsys: pytest.CaptureFixture[str], model: str, tmp_path: Path
) -> None:
    """The help's TEXT=ID rule and its example for a text ending in '=' and an integer."""
    help_text = " ".join(run(capsys, "specials", "--help").out.split())
    assert "Whatever follows the last '=' is the id if it is an integer" in help_text
    assert "(--add 'x=1=500')" in help_text
    output = tmp_path / "out.json"
    added = run(
        capsys, "specials", "--model", model, "--add", "x=1=500", "--add", "<|a|>=b",
        "--add", "<|pad|>=300", "--output", output,
    )  # fmt: skip
    assert added.code == 0, added.err
    specials = Tokenizer.load(output).special_tokens
    assert specials["x=1"] == 500 and specials["<|pad|>"] == 300
    assert "<|a|>=b" in specials  # not an integer after '=': all of it is the text


def test_show_help_describes_what_show_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/visualize.md's table: control pictures for C0 controls (␛, ␇, ␍), ⟨U+XXXX⟩
    for other invisible characters; the help says the same, and the output agrees."""
    help_text = " ".join(run(capsys, "show", "--help").out.split())
    assert "carriage returns as '␍'" in help_text
    assert "other control characters as their Unicode control pictures (escape as '␛'" in help_text
    assert "(zero-width, bidi, exotic spaces, C1 controls) as ⟨U+XXXX⟩" in help_text
    # cl100k_base has a token for each of these characters alone.
    shown = run(
        capsys, "show", "--model", "cl100k_base", "--color", "never",
        "--text", "a\x1bb\x07c\rd\u200be\u00a0f",
    )  # fmt: skip
    assert shown.code == 0, shown.err
    assert shown.out == "a|␛|b|␇|c|␍|d|⟨U+200B⟩|e|⟨U+00A0⟩|f\n"


def test_export_refuses_a_chat_template_that_chat_would_refuse(
    model: str, conversation: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Stored to be rendered later, a template is checked now, with chat's own error."""
    template = tmp_path / "bad.jinja"
    template.write_text("{% for m in messages %}{{ m.content ", encoding="utf-8")
    chat = one_line_failure(
        run(capsys, "chat", "--model", model, "--messages", conversation, "--template", template)
    )
    output = tmp_path / "hf"
    argv = ["export", "--model", model, "--format", "hf", "--output", output]
    exported = one_line_failure(run(capsys, *argv, "--chat-template", template))
    reason = chat.removeprefix("bpetite: error: ")
    assert exported == f"bpetite: error: --chat-template '{template}': {reason}"
    assert not output.exists()
    template.write_text("{% for m in messages %}{{ m.content }}{% endfor %}", encoding="utf-8")
    assert run(capsys, *argv, "--chat-template", template).code == 0
    config = json.loads((output / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["chat_template"] == template.read_text(encoding="utf-8")


def test_chat_names_a_bad_message_not_a_missing_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """o200k_harmony has a format of its own: a message it cannot render is the message's
    fault, said as the library says it; a model with no format still hears so."""
    messages = tmp_path / "messages.json"
    messages.write_text(json.dumps([{"role": "user"}]), encoding="utf-8")
    err = one_line_failure(run(capsys, "chat", "--model", "o200k_harmony", "--messages", messages))
    assert err == "bpetite: error: message 0 has no 'content'\n"
    err = one_line_failure(run(capsys, "chat", "--model", "gpt2", "--messages", messages))
    assert "the model 'gpt2' has no chat format of its own: give --template" in err


@pytest.mark.parametrize("mode", [[], ["--text"], ["--openai-estimate"]])
def test_chat_refuses_a_lone_surrogate_in_the_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: list[str]
) -> None:
    messages = tmp_path / "messages.json"
    messages.write_text('[{"role": "user", "content": "a\\ud800"}]', encoding="utf-8")
    argv = ["chat", "--model", "o200k_harmony", "--messages", messages, *mode]
    err = one_line_failure(run(capsys, *argv))
    assert (
        f"--messages '{messages}': message 0 holds a lone surrogate '\\ud800' at position 1" in err
    )
