"""Compression report: figures recomputed by hand, the page's safety, and ``bpetite eval``."""

from __future__ import annotations

import json
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from bpetite import Tokenizer, evaluate_compression
from bpetite.errors import ParameterError
from tests.cli.running import run

HOSTILE = '<script>alert(1)</script><b>"x"&amp;'


class Page(HTMLParser):
    """Start tags, bar rectangles and the text of every element, as a browser would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: Counter[str] = Counter()
        self.bars: list[dict[str, str | None]] = []
        self.metas: list[dict[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        if tag == "rect":
            self.bars.append(dict(attrs))
        if tag == "meta":
            self.metas.append(dict(attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: str) -> Page:
    parser = Page()
    parser.feed(page)
    parser.close()
    return parser


def test_figures_by_hand() -> None:
    """ "ab ab" is "ab", " ab": 2 tokens for 5 bytes and 2 words with merges ab, " ab"."""
    trained = Tokenizer.train("ab ab", vocab_size=258)
    bytes_only = Tokenizer([])
    report = evaluate_compression(
        [("trained", trained), ("bytes", bytes_only)], [("x", "ab ab"), ("empty", "")]
    ).to_json()
    assert report["models"] == ["trained", "bytes"]
    first = report["texts"][0]
    assert (first["bytes"], first["words"]) == (5, 2)
    assert first["results"] == [
        {"model": "trained", "tokens": 2, "bytes_per_token": 2.5, "tokens_per_word": 1.0,
         "ratio": 1.0},
        {"model": "bytes", "tokens": 5, "bytes_per_token": 1.0, "tokens_per_word": 2.5,
         "ratio": 2.5},
    ]  # fmt: skip
    empty = report["texts"][1]["results"][0]
    assert empty == {
        "model": "trained", "tokens": 0, "bytes_per_token": None, "tokens_per_word": None,
        "ratio": None,
    }  # fmt: skip
    overall = report["overall"]
    assert (overall["bytes"], overall["words"]) == (5, 2)
    assert [entry["tokens"] for entry in overall["results"]] == [2, 5]


def test_special_token_text_is_counted_as_text() -> None:
    """An eval measures text: "<|endoftext|>" in it is 13 bytes of text, not one id."""
    report = evaluate_compression([("bytes", Tokenizer([]))], [("t", "<|endoftext|>")])
    assert report.texts[0].tokens == (13,)


def test_words_are_whitespace_separated_runs() -> None:
    report = evaluate_compression([("m", Tokenizer([]))], [("t", "  one\ttwo\n\nthree 中文  ")])
    assert report.texts[0].words == 4


def test_the_page_is_self_contained_and_escapes_every_name() -> None:
    tokenizer = Tokenizer.train("hello world " * 10, vocab_size=270)
    report = evaluate_compression(
        [(HOSTILE, tokenizer), ("bytes", Tokenizer([]))],
        [(f"text {HOSTILE}", "hello world"), ("second", "hello")],
    )
    page = report.to_html()
    dom = parse(page)
    assert dom.tags["script"] == 0 and dom.tags["b"] == 0  # escaped, never markup
    assert HOSTILE in "".join(dom.text)
    for forbidden in ("http:", "https:", "src=", "url(", "@import", "<link", "<img"):
        assert forbidden not in page
    csp = [meta for meta in dom.metas if meta.get("http-equiv") == "Content-Security-Policy"]
    assert csp == [
        {"http-equiv": "Content-Security-Policy",
         "content": "default-src 'none'; style-src 'unsafe-inline'"}
    ]  # fmt: skip
    # One bar per model per text, plus the overall chart; each carries its exact figure.
    assert len(dom.bars) == 2 * 3
    expected = [
        (model, len(model_tokenizer.encode_ordinary(text)))
        for text in ("hello world", "hello", "hello worldhello")
        for model, model_tokenizer in ((HOSTILE, tokenizer), ("bytes", Tokenizer([])))
    ]
    sizes = [11, 11, 5, 5, 16, 16]
    for bar, (model, tokens), size in zip(dom.bars, expected, sizes, strict=True):
        assert bar["data-model"] == model
        assert bar["data-value"] == str(round(size / tokens, 4))


def test_a_long_model_name_is_labelled_whole_and_the_chart_makes_room() -> None:
    """A model is named by its path, which can be long: the label keeps all of it."""
    long_name = "/home/someone/experiments/2024-run-17/tokenizers/" + "中" * 20 + "/vocab.json"
    short = evaluate_compression([("m", Tokenizer([]))], [("t", "hello")]).to_html()
    page = evaluate_compression([(long_name, Tokenizer([]))], [("t", "hello")]).to_html()
    assert long_name in parse(page).text
    assert "…" not in "".join(parse(page).text)
    widths = re.findall(r'<svg [^>]*width="(\d+)"', page)
    short_widths = re.findall(r'<svg [^>]*width="(\d+)"', short)
    assert len(widths) == len(short_widths) == 2
    assert all(int(wide) > int(narrow) for wide, narrow in zip(widths, short_widths, strict=True))


def test_tables_give_counts_separators_and_each_figure_column_fixed_decimals() -> None:
    """Bytes alone vs "ab" merged: figures such as 1.0 and 2.999 bytes per token, or a
    ratio of 0.3334, must read alike on every row of a column."""
    trained = Tokenizer.train("ab ab", vocab_size=258)
    report = evaluate_compression(
        [("bytes", Tokenizer([])), ("trained", trained)],
        [("many", " ".join(["ab"] * 1000)), ("empty", "")],
    )
    assert report.table() == [
        ("text", "model", "tokens", "bytes/token", "tokens/word", "ratio"),
        ("many", "bytes", "2,999", "1.00", "3.00", "1.000"),
        ("many", "trained", "1,000", "3.00", "1.00", "0.333"),
        ("empty", "bytes", "0", "-", "-", "-"),
        ("empty", "trained", "0", "-", "-", "-"),
        ("overall", "bytes", "2,999", "1.00", "3.00", "1.000"),
        ("overall", "trained", "1,000", "3.00", "1.00", "0.333"),
    ]
    dom = parse(report.to_html())
    text = "".join(dom.text)
    assert "2,999 bytes, 1,000 words" in text
    for cells in ("bytes2,9991.003.001.000", "trained1,0003.001.000.333", "bytes0---"):
        assert cells in text
    assert "0.3333" not in text and "1.0<" not in report.to_html()


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def models(tmp_path: Path) -> list[Path]:
    first = tmp_path / "small.json"
    Tokenizer.train("the cat sat on the mat " * 20, vocab_size=270).save(first)
    second = tmp_path / "large.json"
    Tokenizer.train("the cat sat on the mat " * 20, vocab_size=290).save(second)
    return [first, second]


@pytest.fixture
def texts(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "texts"
    folder.mkdir()
    paths = [folder / "a.txt", folder / "b.txt"]
    paths[0].write_bytes(b"the cat sat\r\non the mat")
    paths[1].write_bytes("中文 and the cat 😀".encode())
    return paths


def test_eval_prints_json_and_a_plain_table(
    capsys: pytest.CaptureFixture[str], models: list[Path], texts: list[Path], tmp_path: Path
) -> None:
    result = run(
        capsys, "eval", "--model", models[0], "--model", models[1], "--input", tmp_path / "texts"
    )
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["models"] == ["small.json", "large.json"]
    assert [text["name"] for text in report["texts"]] == [str(path) for path in texts]
    for text, path in zip(report["texts"], texts, strict=True):
        data = path.read_bytes()
        counts = [len(Tokenizer.load(m).encode_ordinary(data.decode())) for m in models]
        assert [entry["tokens"] for entry in text["results"]] == counts
        assert text["bytes"] == len(data)
        assert text["results"][1]["ratio"] == round(counts[1] / counts[0], 4)
    lines = result.err.splitlines()
    assert lines[0].split() == ["text", "model", "tokens", "bytes/token", "tokens/word", "ratio"]
    assert len(lines) == 1 + 2 * 3
    assert lines[-1].split()[:2] == ["overall", "large.json"]
    overall = report["overall"]["results"][1]
    assert lines[-1].split()[2:] == [
        f"{overall['tokens']:,}",
        f"{report['overall']['bytes'] / overall['tokens']:.2f}",
        f"{overall['tokens'] / report['overall']['words']:.2f}",
        f"{overall['tokens'] / report['overall']['results'][0]['tokens']:.3f}",
    ]
    assert len({len(line) for line in lines}) == 1  # right-aligned columns end together


def test_eval_reads_a_tiktoken_file_as_a_model(
    capsys: pytest.CaptureFixture[str], models: list[Path], texts: list[Path], tmp_path: Path
) -> None:
    exported = tmp_path / "small.tiktoken"
    assert run(capsys, "export", "--model", models[0], "--format", "tiktoken",
               "--output", exported).code == 0  # fmt: skip
    result = run(capsys, "eval", "--model", models[0], "--model", exported, "--input", *texts)
    assert result.code == 0, result.err
    overall = json.loads(result.out)["overall"]["results"]
    assert overall[0]["tokens"] == overall[1]["tokens"] and overall[1]["ratio"] == 1.0


def test_eval_writes_the_html_page_atomically(
    capsys: pytest.CaptureFixture[str], models: list[Path], texts: list[Path], tmp_path: Path
) -> None:
    page = tmp_path / "report.html"
    argv = ["eval", "--model", models[0], "--input", texts[0], "--html", page]
    assert run(capsys, *argv).code == 0
    assert len(parse(page.read_text(encoding="utf-8")).bars) == 2
    again = run(capsys, *argv)
    assert again.code == 1 and "already exists; pass --force" in again.err and again.out == ""
    assert run(capsys, *argv, "--force").code == 0


def test_eval_mistakes_are_one_line(
    capsys: pytest.CaptureFixture[str], models: list[Path], texts: list[Path], tmp_path: Path
) -> None:
    (tmp_path / "bad.txt").write_bytes(b"ok \xff")
    (tmp_path / "junk.json").write_text("{}", encoding="utf-8")
    cases = [
        (["--model", tmp_path / "none.json", "--input", texts[0]], "does not exist"),
        (["--model", tmp_path / "junk.json", "--input", texts[0]], "not a valid bpetite artifact"),
        (["--model", models[0], "--input", tmp_path / "bad.txt"],
         "is not valid UTF-8: byte 0xff at byte offset 3"),
        (["--model", models[0], "--input", tmp_path / "gone.txt"], "does not exist"),
    ]  # fmt: skip
    for argv, message in cases:
        result = run(capsys, "eval", *argv, "--html", tmp_path / "r.html")
        assert result.code == 1, result
        assert result.out == ""
        assert message in result.err and len(result.err.splitlines()) == 1, result.err
        assert not (tmp_path / "r.html").exists()


def test_the_library_refuses_bad_arguments_with_its_own_errors() -> None:
    """Every error bpetite raises on purpose is a BpetiteError (docs/api.md, Errors)."""
    with pytest.raises(ParameterError, match="at least one model"):
        evaluate_compression([], [("x", "y")])
    with pytest.raises(TypeError, match="must be a str"):
        evaluate_compression([("m", Tokenizer.train("ab", 257))], [("x", b"y")])  # type: ignore[list-item]


def test_the_cli_loads_a_custom_pattern_model_when_trusted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    custom = Tokenizer.train("hello world " * 50, 280, pattern=r"\S+|\s+")
    custom.save(tmp_path / "custom.json")
    text = tmp_path / "t.txt"
    text.write_text("hello world hello", encoding="utf-8")
    argv = ["eval", "--model", tmp_path / "custom.json", "--input", text]
    refused = run(capsys, *argv)
    assert refused.code == 1 and "pass --trust-custom-pattern" in refused.err
    trusted = run(capsys, *argv, "--trust-custom-pattern")
    assert trusted.code == 0, trusted.err
    (result,) = json.loads(trusted.out)["overall"]["results"]
    assert result["tokens"] == len(custom.encode("hello world hello"))


def test_names_are_shown_without_their_control_characters() -> None:
    """A file name can hold an escape sequence or a byte that is not UTF-8: the table and
    the page show it (as error messages show the byte), the JSON keeps it exact."""
    name = "a\x1b[31m\x07\udcff.txt"
    report = evaluate_compression([("m\x01", Tokenizer([]))], [(name, "hi")])
    assert report.table()[1][:2] == ("a␛[31m␇\\udcff.txt", "m␁")
    assert report.to_json()["texts"][0]["name"] == name
    page = report.to_html()
    page.encode("utf-8")  # no surrogate left
    assert not [char for char in page if ord(char) < 0x20 and char not in "\n"]
    assert "a␛[31m␇\\udcff.txt" in "".join(parse(page).text)
