"""The one strict JSON reader, and every document that goes through it.

Each hostile shape (duplicate keys, non-standard constants, deep nesting, an oversized
file) is fed to each reader that uses it: artifacts, counts files, foreign vocabularies
and id lists must refuse it with their own error class and one clear message.
"""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import bpetite
from bpetite import ArtifactError, BpetiteError, Tokenizer
from bpetite._internal import loads_json, parse_json_ids
from bpetite.core._artifact import MAX_ARTIFACT_BYTES, parse_artifact
from bpetite.core._json import MAX_JSON_DEPTH, read_limited
from bpetite.corpus._counts_file import parse_counts
from bpetite.errors import CountsFileError, InteropError, ParameterError
from bpetite.interop import import_vocabulary

# --------------------------------------------------------------------------- the reader


def test_valid_json_reads_as_json_does() -> None:
    text = '{"a": [1, 2.5, "x", null, true, {"b": []}], "c": "[{"}'
    assert loads_json(text, source="s") == json.loads(text)
    assert loads_json(text.encode(), source="s") == json.loads(text)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"a": 1, "a": 2}', 'duplicate object key "a"'),
        ('[{"k": 1, "j": 2, "k": 3}]', 'duplicate object key "k"'),
        ("[NaN]", "non-standard JSON constant NaN"),
        ("[-Infinity]", "non-standard JSON constant -Infinity"),
        ("[1e999]", "too large for a float"),
        ("[-1e400]", "too large for a float"),
        ("[" + "9" * 5000 + "]", "not valid JSON"),
        ("[1,]", "not valid JSON"),
        ("", "not valid JSON"),
    ],
)
def test_lenient_json_is_refused(text: str, fragment: str) -> None:
    with pytest.raises(ArtifactError) as excinfo:
        loads_json(text, source="doc.json")
    assert fragment in str(excinfo.value)
    assert str(excinfo.value).startswith("doc.json: ")


def test_the_error_class_is_the_callers() -> None:
    for error in (ArtifactError, CountsFileError, InteropError):
        with pytest.raises(error):
            loads_json("[NaN]", source="s", error=error)


def test_invalid_utf8_names_the_offset() -> None:
    with pytest.raises(ArtifactError, match="not valid UTF-8 at byte offset 3"):
        loads_json(b'["a\xff"]', source="s")


def _nested(depth: int, opener: str = "[", closer: str = "]") -> str:
    return opener * depth + closer * depth


def test_nesting_up_to_the_limit_is_read() -> None:
    assert loads_json(_nested(MAX_JSON_DEPTH), source="s") is not None
    alternating = '{"k":[' * (MAX_JSON_DEPTH // 2) + "]}" * (MAX_JSON_DEPTH // 2)
    assert loads_json(alternating, source="s") is not None


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(_nested(MAX_JSON_DEPTH + 1), id="one-past"),
        pytest.param(_nested(1_000_000), id="a-million"),
        # Every level also holds an empty list, so no run of openers is long.
        pytest.param("[[]," * 10_000 + "]" * 10_000, id="no-long-run"),
        pytest.param('{"k":[' * 40 + "]}" * 40, id="alternating"),
        pytest.param("[" + _nested(MAX_JSON_DEPTH, "[1,", "]") + "]", id="values-between"),
    ],
)
def test_deeper_nesting_is_refused_before_parsing(text: str) -> None:
    """json recurses per level: deep enough, it raises RecursionError, never an error message."""
    with pytest.raises(ArtifactError, match="nested too deeply"):
        loads_json(text, source="s")


def test_brackets_inside_strings_are_not_nesting() -> None:
    text = json.dumps(["[" * 1000, '\\"[[[', "{" * 1000])
    assert loads_json(text, source="s") == ["[" * 1000, '\\"[[[', "{" * 1000]


def test_unbalanced_brackets_are_reported_as_invalid_json() -> None:
    for text in ("[" * 10, "]" * 10, "[{]}", '{"a": [1}', "[é]", "[" * 60 + "é" + "]" * 60):
        with pytest.raises(ArtifactError, match="not valid JSON"):
            loads_json(text, source="s")


def test_duplicate_keys_in_a_big_vocabulary_are_found_in_linear_time(tmp_path: Path) -> None:
    """A quadratic duplicate check (a slice of the key list per key) would not finish here."""
    pairs = [f'"k{i}": {i}' for i in range(100_000)]
    path = tmp_path / "vocab.json"
    path.write_text("{" + ", ".join([*pairs, '"k99999": 0']) + "}", encoding="utf-8")
    with pytest.raises(InteropError, match='duplicate object key "k99999"'):
        import_vocabulary([path])


# --------------------------------------------------------------------------- id lists


def test_id_lists() -> None:
    assert parse_json_ids("[104, 105]", source="ids") == [104, 105]
    assert parse_json_ids(b"[]", source="ids") == []
    assert parse_json_ids("[-1]", source="ids") == [-1]  # the decoder judges ids


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("{}", "must hold a JSON array of token ids, got dict"),
        ("[1, true]", "item 1 is true"),
        ("[1.0]", "item 0 is 1.0"),
        ('["1"]', 'item 0 is "1"'),
        ("[[1]]", "item 0 is [1]"),
        (_nested(100_000), "nested too deeply"),
        ("[1, NaN]", "NaN"),
    ],
)
def test_bad_id_lists(text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=r"^ids: ") as excinfo:
        parse_json_ids(text, source="ids", error=ParameterError)
    assert type(excinfo.value) is ParameterError
    assert fragment in str(excinfo.value)


# --------------------------------------------------------------------------- each reader


_DEEP = b'{"x": ' + _nested(100_000).encode() + b"}"
_DUPLICATE = b'{"x": 1, "x": 1}'


@pytest.mark.parametrize("document", [_DEEP, _DUPLICATE, b'{"x": NaN}'])
def test_every_reader_refuses_hostile_json_with_its_own_error(
    document: bytes, tmp_path: Path
) -> None:
    readers: list[tuple[type[BpetiteError], Callable[[], Any]]] = [
        (ArtifactError, lambda: parse_artifact(document, "a.json")),
        (CountsFileError, lambda: parse_counts(document, "c.json")),
        (InteropError, lambda: import_vocabulary([tmp_path / "v.json"])),
    ]
    (tmp_path / "v.json").write_bytes(document)
    for error, read in readers:
        with pytest.raises(error) as excinfo:
            read()
        assert "not valid JSON" in str(excinfo.value)


def test_the_interop_error_is_bpetites() -> None:
    assert bpetite.interop.InteropError is InteropError
    assert issubclass(bpetite.interop.InteropError, BpetiteError)


# --------------------------------------------------------------------------- size limits


def test_an_artifact_over_the_default_limit_is_refused_from_its_size(tmp_path: Path) -> None:
    """A sparse file: refusing it must not read it (the old loader read, then failed on JSON)."""
    path = tmp_path / "huge.json"
    with path.open("wb") as file:
        file.truncate(MAX_ARTIFACT_BYTES + 1)
    with pytest.raises(ArtifactError, match="over the limit of 67,108,864 bytes") as excinfo:
        Tokenizer.load(path)
    assert "max_bytes" in str(excinfo.value)


def test_the_limit_is_a_keyword(tmp_path: Path) -> None:
    tokenizer = Tokenizer.train("ab ab ab", 258)
    path = tmp_path / "tok.json"
    tokenizer.save(path)
    size = path.stat().st_size
    with pytest.raises(ArtifactError, match=f"is {size:,} bytes"):
        Tokenizer.load(path, max_bytes=size - 1)
    assert Tokenizer.load(path, max_bytes=size).merges == tokenizer.merges


def test_a_stream_is_read_only_up_to_the_limit() -> None:
    """Not a regular file, so no size to check: read one byte past the limit and stop."""
    if not Path("/dev/zero").exists():  # pragma: no cover - POSIX only
        pytest.skip("no /dev/zero on this platform")
    with pytest.raises(ArtifactError, match="more than 1,000 bytes"):
        read_limited("/dev/zero", max_bytes=1000, error=ArtifactError, what="x")


def test_oserrors_pass_through(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Tokenizer.load(tmp_path / "missing.json")
