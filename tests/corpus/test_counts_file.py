"""The counts file: canonical bytes out, strictly validated counts back in."""

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpetite import reference
from bpetite.core._constants import PRETOKENIZER_PATTERN
from bpetite.corpus._counts_file import (
    dumps_counts,
    load_and_merge,
    load_counts,
    parse_counts,
    save_counts,
)
from tests.strategies import texts


def _chunks(text: str) -> list[bytes]:
    """The chunks of `text` as the reference splits it, in UTF-8."""
    return [chunk.encode("utf-8") for chunk in reference.split(text)]


EXAMPLE = Counter({b"Hello": 2, b" world": 1, b"\n": 3, " caf\u00e9".encode(): 1})


def document(**changes: Any) -> bytes:
    base: dict[str, Any] = {
        "format": "bpetite-chunk-counts",
        "version": 1,
        "pretokenizer_pattern": PRETOKENIZER_PATTERN,
        "counts": [["Hello", 2], ["\n", 3]],
    }
    base.update(changes)
    return json.dumps({k: v for k, v in base.items() if v is not ...}).encode()


def test_the_exact_bytes_of_a_small_file() -> None:
    """Sorted by UTF-8 bytes, one pair per line, ASCII only: documented in docs/scaling.md."""
    pattern = json.dumps(PRETOKENIZER_PATTERN)
    assert dumps_counts(EXAMPLE).decode("ascii") == (
        '{"format":"bpetite-chunk-counts","version":1,'
        f'"pretokenizer_pattern":{pattern},"counts":[\n'
        '["\\n",3],\n'
        '[" caf\\u00e9",1],\n'
        '[" world",1],\n'
        '["Hello",2]\n'
        "]}\n"
    )
    assert dumps_counts(Counter()).endswith(b'"counts":[]}\n')


@given(st.lists(texts, max_size=4))
def test_roundtrip_and_same_counts_same_bytes(documents: list[str]) -> None:
    counts: Counter[bytes] = Counter()
    for text in documents:
        counts.update(_chunks(text))
    data = dumps_counts(counts)
    assert parse_counts(data) == counts
    shuffled = Counter(dict(reversed(list(counts.items()))))
    assert dumps_counts(shuffled) == data


def test_the_reader_accepts_any_order_and_layout() -> None:
    data = json.dumps(
        {
            "counts": [["\n", 3], ["Hello", 2]],
            "pretokenizer_pattern": PRETOKENIZER_PATTERN,
            "version": 1,
            "format": "bpetite-chunk-counts",
        },
        indent=4,
    ).encode()
    assert parse_counts(data) == Counter({b"\n": 3, b"Hello": 2})


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"\xff", "not valid UTF-8 at byte offset 0"),
        (b"{", "not valid JSON"),
        (b"[]", "must be a JSON object"),
        (b'{"format": 1, "format": 2}', 'duplicate object key "format"'),
        (document(extra=1), "unexpected key 'extra'"),
        (document(format="bpetite-counts"), "format must be 'bpetite-chunk-counts'"),
        (document(version=2), "version must be 1"),
        (document(version=True), "version must be 1"),
        (document(version="1"), "version must be 1"),
        (document(pretokenizer_pattern=r"\w+"), "pretokenizer_pattern differs"),
        (document(counts={"Hello": 2}), "counts must be a list"),
        (document(counts=[["Hello"]]), "counts[0] must be a [chunk, count] pair"),
        (document(counts=[["Hello", 1, 2]]), "counts[0] must be a [chunk, count] pair"),
        (document(counts=[[[72], 1]]), "counts[0][0] must be a string"),
        (document(counts=[["", 1]]), "counts[0][0] must not be empty"),
        (document(counts=[["Hello world", 1]]), "counts[0][0] is not a single pre-tokenizer"),
        (document(counts=[["a", 1], ["\ud800", 1]]), "counts[1][0] holds a lone surrogate"),
        (document(counts=[["Hello", True]]), "counts[0][1] must be an integer, got true"),
        (document(counts=[["Hello", 2.0]]), "counts[0][1] must be an integer, got 2.0"),
        (document(counts=[["Hello", 0]]), "counts[0][1] must be a positive count, got 0"),
        (document(counts=[["Hello", -3]]), "counts[0][1] must be a positive count"),
        (document(counts=[["a", 1], ["b", 1], ["a", 2]]), 'counts[2][0] "a" is listed twice'),
        (b'{"counts": [["a", NaN]]}', "non-standard JSON constant NaN"),
    ],
)
def test_every_defect_is_a_value_error_naming_it(data: bytes, fragment: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_counts(data, "c.json")
    assert str(caught.value).startswith("c.json: ")
    assert fragment in str(caught.value)


@pytest.mark.parametrize("key", ["format", "version", "pretokenizer_pattern", "counts"])
def test_a_missing_key_is_a_key_error(key: str) -> None:
    with pytest.raises(KeyError, match=f"c.json: missing key '{key}'"):
        parse_counts(document(**{key: ...}), "c.json")


@pytest.mark.parametrize(
    ("counts", "fragment"),
    [
        (Counter({b"\xff": 1}), "is not UTF-8"),
        (Counter({b"two words": 1}), "is not a single pre-tokenizer chunk"),
        (Counter({b"ok": 0}), "must be a positive integer"),
    ],
)
def test_the_writer_refuses_what_the_reader_would(counts: Counter[bytes], fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        dumps_counts(counts)


def test_save_is_atomic_and_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    save_counts(path, EXAMPLE)
    assert load_counts(path) == EXAMPLE
    with pytest.raises(FileExistsError, match="already exists"):
        save_counts(path, Counter({b"x": 1}))
    assert load_counts(path) == EXAMPLE
    save_counts(path, Counter({b"x": 1}), overwrite=True)
    assert load_counts(path) == Counter({b"x": 1})
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]  # no temp file left
    with pytest.raises(FileNotFoundError):
        save_counts(tmp_path / "missing" / "c.json", EXAMPLE)


def test_merging_files_sums_their_counts(tmp_path: Path) -> None:
    save_counts(tmp_path / "1.json", Counter({b"a": 1, b" b": 2}))
    save_counts(tmp_path / "2.json", Counter({b" b": 3, b"c": 4}))
    save_counts(tmp_path / "3.json", Counter())
    merged = load_and_merge([tmp_path / "1.json", tmp_path / "2.json", tmp_path / "3.json"])
    assert merged == Counter({b"a": 1, b" b": 5, b"c": 4})
