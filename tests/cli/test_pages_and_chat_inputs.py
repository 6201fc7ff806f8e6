"""Names and values the pages and ``chat`` must survive: file names that are not UTF-8 or
hold control characters, texts with noncharacters, ``--var`` names the command passes
itself, and templates that render a lone surrogate; and ``explain``'s options refused
as ``train`` refuses them.

Oracles: the file name as error messages show it (``'\\udcff'``), the text a page's
parser reads, and ``bpetite train``'s own message for the same mistake.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from bpetite import Tokenizer
from tests.cli.running import Result, run

#: A file name with a byte that is not UTF-8 (Python holds it as the surrogate U+DCFF)
#: and markup; how a page shows it: the surrogate as its escape, the rest as text.
NOT_UTF8_NAME = "in\udcff<x>.txt"
NOT_UTF8_SHOWN = "in\\udcff<x>.txt"
#: A file name that would colour a terminal red and ring its bell, and how it is shown.
CONTROL_NAME = "x\x1b[31mRED\x07\x01.txt"
CONTROL_SHOWN = "x␛[31mRED␇␁.txt"
MESSAGES = [{"role": "user", "content": "hi"}]


class Page(HTMLParser):
    """The text of a page as a browser reads it, and where its style elements are."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.styles_in_head = self.styles_in_body = 0
        self._in_body = False
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":
            self._in_body = True
        if tag == "style":
            if self._in_body:
                self.styles_in_body += 1
            else:
                self.styles_in_head += 1

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _one_line_failure(result: Result, code: int = 1) -> str:
    assert (result.code, result.out) == (code, "")
    assert "Traceback" not in result.err
    if code == 1:
        assert result.err.startswith("bpetite: error: ") and result.err.count("\n") == 1
    return result.err


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    Tokenizer.train("hello world, hello there " * 20, 270).save(tmp_path / "tok.json")
    return "tok.json"


def _page_command(command: str, model: str, source: str) -> list[str]:
    if command == "explain-train":
        return ["explain", "--train", "--vocab-size", "260", "--input", source]
    return [command, "--model", model, "--input", source]


# --------------------------------------------------------------------------- pages


@pytest.mark.parametrize("command", ["show", "explain", "explain-train", "eval"])
def test_a_page_shows_a_file_name_that_is_not_utf8(
    capsys: pytest.CaptureFixture[str], model: str, command: str
) -> None:
    Path(NOT_UTF8_NAME).write_bytes(b"ab <script> &\n")
    argv = [*_page_command(command, model, NOT_UTF8_NAME), "--html", "page.html"]
    result = run(capsys, *argv)
    assert result.code == 0, result.err
    page = Path("page.html").read_bytes().decode("utf-8")
    assert NOT_UTF8_SHOWN in "".join(Page(page).text)


def test_a_page_shows_a_model_path_that_is_not_utf8(
    capsys: pytest.CaptureFixture[str], model: str
) -> None:
    Path("m\udcff.json").write_bytes(Path(model).read_bytes())
    for command in ("show", "explain"):
        argv = [command, "--model", "m\udcff.json", "--text", "hello", "--html", "p.html"]
        result = run(capsys, *argv, "--force")
        assert result.code == 0, result.err
        text = "".join(Page(Path("p.html").read_bytes().decode("utf-8")).text)
        assert "model 'm\\udcff.json'" in text


def test_eval_shows_control_characters_of_a_name_never_raw(
    capsys: pytest.CaptureFixture[str], model: str
) -> None:
    Path(CONTROL_NAME).write_text("hi", encoding="utf-8")
    result = run(capsys, "eval", "--model", model, "--input", CONTROL_NAME, "--html", "ev.html")
    assert result.code == 0, result.err
    assert CONTROL_SHOWN in result.err
    assert not any(char in result.err for char in "\x1b\x07\x01")
    assert json.loads(result.out)["texts"][0]["name"] == CONTROL_NAME  # the data stays exact
    page = Path("ev.html").read_text(encoding="utf-8")
    assert not [char for char in page if ord(char) < 0x20 and char not in "\t\n\r"]
    assert CONTROL_SHOWN in "".join(Page(page).text)


@pytest.mark.parametrize("command", ["show", "explain"])
def test_a_page_shows_a_noncharacter_by_its_code_point(
    capsys: pytest.CaptureFixture[str], model: str, command: str
) -> None:
    """U+FFFF raw is an error for an HTML parser: it is drawn as ⟨U+FFFF⟩ (a model that
    has the characters whole, not in parts of their bytes)."""
    text = "a\uffff b\ufdd0"
    Tokenizer.train(text * 50, 300).save("whole.json")
    Path("text.txt").write_text(text, encoding="utf-8")
    argv = [command, "--model", "whole.json", "--input", "text.txt", "--html", "p.html"]
    result = run(capsys, *argv)
    assert result.code == 0, result.err
    page = Path("p.html").read_text(encoding="utf-8")
    assert "\uffff" not in page and "\ufdd0" not in page
    assert "⟨U+FFFF⟩" in page and "⟨U+FDD0⟩" in page


def test_the_explain_page_keeps_its_style_in_the_head(
    capsys: pytest.CaptureFixture[str], model: str
) -> None:
    result = run(capsys, "explain", "--model", model, "--text", "hello there", "--html", "e.html")
    assert result.code == 0, result.err
    page = Page(Path("e.html").read_text(encoding="utf-8"))
    assert (page.styles_in_head, page.styles_in_body) == (1, 0)


# --------------------------------------------------------------------------- explain options


def test_explain_refuses_pattern_without_train(
    capsys: pytest.CaptureFixture[str], model: str
) -> None:
    result = run(capsys, "explain", "--model", model, "--text", "x", "--pattern", "cl100k")
    err = _one_line_failure(result)
    assert "--pattern is for --train; an encode uses the model's split pattern" in err


@pytest.mark.parametrize(
    "option", [["--max-token-bytes", "1"], ["--max-token-bytes", "0"], ["--vocab-size", "255"]]
)
def test_explain_train_refuses_what_train_refuses_in_its_words(
    capsys: pytest.CaptureFixture[str], model: str, option: list[str]
) -> None:
    Path("notes.txt").write_text("hello world " * 10, encoding="utf-8")
    options = {"--vocab-size": "260", "--max-token-bytes": None}
    options[option[0]] = option[1]
    given = [part for name, value in options.items() if value for part in (name, value)]
    train = run(capsys, "train", "--input", "notes.txt", "--output", "t.json", *given)
    explain = run(capsys, "explain", "--train", "--input", "notes.txt", *given)
    assert train.code == explain.code != 0
    assert train.err.splitlines()[-1].split(" error: ")[1] in explain.err
    assert "vocab_size" not in explain.err and "Tokenizer.train" not in explain.err


def test_eval_help_names_the_built_in_models(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "eval", "--help")
    assert result.code == 0
    assert "--model PATH|NAME" in result.out and "cl100k_base" in result.out


# --------------------------------------------------------------------------- chat


@pytest.fixture
def conversation(model: str) -> str:
    Path("m.json").write_text(json.dumps(MESSAGES), encoding="utf-8")
    return "m.json"


def _template(source: str) -> str:
    Path("t.jinja").write_text(source, encoding="utf-8")
    return "t.jinja"


@pytest.mark.parametrize("name", ["messages", "add_generation_prompt", "tokenize", "chat_template"])
def test_chat_refuses_a_var_the_command_passes_itself(
    capsys: pytest.CaptureFixture[str], model: str, conversation: str, name: str
) -> None:
    template = _template("{% for m in messages %}{{ m.content }}{% endfor %}")
    argv = ["chat", "--model", model, "--messages", conversation, "--template", template]
    err = _one_line_failure(run(capsys, *argv, "--var", f"{name}=x", "--text"), code=2)
    assert f"--var cannot set '{name}'" in err


def test_chat_passes_vars_named_as_the_librarys_own_parameters(
    capsys: pytest.CaptureFixture[str], model: str, conversation: str
) -> None:
    template = _template("{{ tokenizer }}{{ source }}{{ conversation }}")
    argv = ["chat", "--model", model, "--messages", conversation, "--template", template]
    variables = ["--var", "tokenizer=a", "--var", "source=b"]
    variables += ["--var", "conversation=c"]
    result = run(capsys, *argv, *variables, "--text")
    assert (result.code, result.out) == (0, "abc")


def test_chat_refuses_the_var_jinja_keeps(
    capsys: pytest.CaptureFixture[str], model: str, conversation: str
) -> None:
    template = _template("{{ self }}")
    argv = ["chat", "--model", model, "--messages", conversation, "--template", template]
    err = _one_line_failure(run(capsys, *argv, "--var", "self=x", "--text"), code=2)
    assert "--var cannot set 'self'" in err


def test_chat_refuses_a_var_given_twice(
    capsys: pytest.CaptureFixture[str], model: str, conversation: str
) -> None:
    template = _template("{{ eos_token }}")
    argv = ["chat", "--model", model, "--messages", conversation, "--template", template]
    result = run(capsys, *argv, "--var", "eos_token=a", "--var", "eos_token=b", "--text")
    assert "--var names 'eos_token' twice" in _one_line_failure(result, code=2)


@pytest.mark.parametrize("mode", [[], ["--text"], ["--count"]])
def test_chat_refuses_a_template_that_renders_a_lone_surrogate(
    capsys: pytest.CaptureFixture[str], model: str, conversation: str, mode: list[str]
) -> None:
    template = _template('{{ "\\ud800" }}{% for m in messages %}{{ m.content }}{% endfor %}')
    argv = ["chat", "--model", model, "--messages", conversation, "--template", template]
    err = _one_line_failure(run(capsys, *argv, *mode, "--output", "out.txt"))
    assert err == (
        "bpetite: error: the rendered text holds a lone surrogate '\\ud800' at position 0, "
        "which is not valid Unicode and cannot be encoded\n"
    )
    assert not Path("out.txt").exists()


def test_chat_refuses_a_var_that_is_not_utf8(
    capsys: pytest.CaptureFixture[str], model: str, conversation: str
) -> None:
    template = _template("{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}")
    argv = ["chat", "--model", model, "--messages", conversation, "--template", template]
    err = _one_line_failure(run(capsys, *argv, "--var", "bos_token=\udcff", "--text"))
    assert "--var bos_token is not valid UTF-8: byte 0xff at character 0" in err
