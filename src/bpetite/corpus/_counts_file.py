"""The chunk-counts file: counting done anywhere, merged and trained on one machine.

Format version 1 is one JSON object with exactly four keys::

    {"format":"bpetite-chunk-counts","version":1,"pretokenizer_pattern":"...","counts":[
    ["\\n",120],
    [" the",75]
    ]}

``counts`` pairs each distinct chunk (as JSON text: chunks are pieces of valid
UTF-8 text, so a string is exact, readable and shorter than base64) with how often
it occurs, a positive integer. bpetite writes the pairs sorted by the chunk's UTF-8
bytes, one per line, ASCII only, so the same counts always give the same bytes; the
reader accepts any order and any JSON layout, so other tools (Spark, Ray, a shell
script) need not reproduce the layout, only the content.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final, NoReturn

from bpetite.core._atomic import write_atomically
from bpetite.core._errors import CountsFileError, MissingKeyError, ParameterError, shown
from bpetite.core._json import loads_json
from bpetite.core._patterns import PRESETS, SplitPattern, resolve_pattern


class _MissingCountsKey(CountsFileError, MissingKeyError):
    """A counts file without one of its four keys: a CountsFileError and a KeyError."""


class _OtherPattern(CountsFileError):
    """A valid counts file counted with another split pattern than the one asked for.

    `recorded_pattern` is the pattern source the file records, for a caller to name it.
    """

    def __init__(self, message: str, recorded_pattern: str) -> None:
        super().__init__(message)
        self.recorded_pattern = recorded_pattern

    def __reduce__(self) -> tuple[type[_OtherPattern], tuple[str, str]]:
        return (type(self), (str(self), self.recorded_pattern))


FORMAT_NAME: Final = "bpetite-chunk-counts"
FORMAT_VERSION: Final = 1
_KEYS: Final = ("format", "version", "pretokenizer_pattern", "counts")


# --------------------------------------------------------------------------- writing


def dumps_counts(counts: Mapping[bytes, int], *, pattern: str | SplitPattern = "gpt2") -> bytes:
    """Return the canonical bytes of a counts file for `counts` (chunk bytes -> count).

    The file records `pattern`'s source: chunks cut by another pattern are other chunks.

    Raises ParameterError (a ValueError) for a chunk that is not valid UTF-8 or not exactly one
    pre-tokenizer chunk, or a count that is not a positive integer: such a file could
    never have come from counting text, and the reader would reject it.
    """
    split = resolve_pattern(pattern)
    lines = []
    for chunk in sorted(counts):
        n = counts[chunk]
        try:
            text = chunk.decode("utf-8")
        except (UnicodeDecodeError, AttributeError):
            raise ParameterError(f"chunk {chunk!r} is not UTF-8 bytes") from None
        problem = _chunk_problem(text, split)
        if problem:
            raise ParameterError(f"chunk {chunk!r} {problem}")
        if type(n) is not int or n < 1:
            raise ParameterError(
                f"the count of chunk {chunk!r} must be a positive integer, got {n!r}"
            )
        lines.append(json.dumps([text, n], ensure_ascii=True, separators=(",", ":")))
    header = json.dumps(
        {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "pretokenizer_pattern": split.source,
        },
        ensure_ascii=True,
        separators=(",", ":"),
    )
    body = "[\n" + ",\n".join(lines) + "\n]" if lines else "[]"
    return f'{header[:-1]},"counts":{body}}}\n'.encode("ascii")


def save_counts(
    path: str | os.PathLike[str],
    counts: Mapping[bytes, int],
    *,
    overwrite: bool = False,
    pattern: str | SplitPattern = "gpt2",
) -> None:
    """Write a counts file atomically: readers see the old file or the whole new one.

    Raises FileExistsError if `path` exists and `overwrite` is false, FileNotFoundError
    if its directory is missing.
    """
    write_atomically(path, dumps_counts(counts, pattern=pattern), overwrite=overwrite)


# --------------------------------------------------------------------------- reading


def load_counts(
    path: str | os.PathLike[str], *, pattern: str | SplitPattern = "gpt2"
) -> Counter[bytes]:
    """Read and fully validate the counts file at `path`; OSErrors from reading propagate."""
    return parse_counts(Path(path).read_bytes(), source=os.fspath(path), pattern=pattern)


def load_and_merge(
    paths: Iterable[str | os.PathLike[str]], *, pattern: str | SplitPattern = "gpt2"
) -> Counter[bytes]:
    """Sum the counts of several files: the counts of all their inputs together."""
    split = resolve_pattern(pattern)
    if isinstance(paths, (str, bytes, os.PathLike)):
        raise TypeError("paths must be a list of paths, not one path: write [path]")
    paths = list(paths)
    if not paths:  # as for the files counted: a glob that matched nothing
        raise ParameterError("no counts files were given")
    total: Counter[bytes] = Counter()
    for path in paths:
        counts = load_counts(path, pattern=split)
        if not total:
            total = counts
            continue
        get = total.get
        for chunk, n in counts.items():
            total[chunk] = get(chunk, 0) + n
    return total


def parse_counts(
    data: bytes, source: str = "<counts>", *, pattern: str | SplitPattern = "gpt2"
) -> Counter[bytes]:
    """Validate a counts document and return its counts; every defect names its place.

    The document must record `pattern` (the file's chunks are checked against it; the
    file's own pattern is only compared, never run).

    Missing keys raise a CountsFileError that is also a KeyError; anything else wrong
    (not UTF-8, not JSON, duplicate keys, wrong format, version or pattern, wrong
    types, booleans used as numbers, counts below 1, a string that is not exactly one
    chunk, a chunk listed twice) raises CountsFileError (a ValueError).
    """

    split = resolve_pattern(pattern)

    def fail(message: str) -> NoReturn:
        raise CountsFileError(f"{source}: {message}")

    document = loads_json(data, source=source, error=CountsFileError)
    if not isinstance(document, dict):
        fail(f"must be a JSON object, got {type(document).__name__}")
    for key in _KEYS:
        if key not in document:
            raise _MissingCountsKey(f"{source}: missing key '{key}'")
    extra = sorted(set(document) - set(_KEYS))
    if extra:
        fail(f"unexpected key '{extra[0]}'; a version {FORMAT_VERSION} file has {list(_KEYS)}")
    if document["format"] != FORMAT_NAME:
        fail(f"format must be '{FORMAT_NAME}', got {_show(document['format'])}")
    version = document["version"]
    if type(version) is not int or version != FORMAT_VERSION:
        fail(f"version must be {FORMAT_VERSION}, the only one this bpetite reads; got {version!r}")
    recorded = document["pretokenizer_pattern"]
    if recorded != split.source:
        detail = (
            f"pretokenizer_pattern differs from the {_pattern_name(split.source)} "
            f"pattern asked for, so its chunks would not be ours: got {_pattern_name(recorded)}"
        )
        if not isinstance(recorded, str):
            fail(detail)
        raise _OtherPattern(f"{source}: {detail}", recorded)
    pairs = document["counts"]
    if not isinstance(pairs, list):
        fail(f"counts must be a list of [chunk, count] pairs, got {_show(pairs)}")
    counts: Counter[bytes] = Counter()
    for index, pair in enumerate(pairs):
        where = f"counts[{index}]"
        if type(pair) is not list or len(pair) != 2:
            fail(f"{where} must be a [chunk, count] pair, got {_show(pair)}")
        chunk, n = pair
        if type(chunk) is not str:
            fail(f"{where}[0] must be a string, got {_show(chunk)}")
        problem = _chunk_problem(chunk, split)
        if problem:
            fail(f"{where}[0] {problem}")
        if type(n) is not int:
            fail(f"{where}[1] must be an integer, got {_show(n)}")
        if n < 1:
            fail(f"{where}[1] must be a positive count, got {n}")
        chunk_bytes = chunk.encode("utf-8")
        if chunk_bytes in counts:
            first = next(i for i, other in enumerate(pairs) if other[0] == chunk)
            fail(f"{where}[0] {_show(chunk)} is listed twice (also at counts[{first}])")
        counts[chunk_bytes] = n
    return counts


def _pattern_name(source: object) -> str:
    """``'cl100k' preset`` for a preset's source, the shown source for any other pattern."""
    for name, preset in PRESETS.items():
        if source == preset:
            return f"'{name}' preset"
    return _show(source)


def _chunk_problem(text: str, pattern: SplitPattern) -> str | None:
    """What is wrong with `text` as a chunk, or None: it must be valid Unicode and one chunk.

    ``match`` finds the first chunk findall would find; if it covers the whole string,
    the string is exactly one chunk.
    """
    if not text:
        return "must not be empty"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return f"holds a lone surrogate, which is not valid Unicode: {_show(text)}"
    match = pattern.compiled.match(text)
    if match is None or match.end() != len(text):
        return f"is not a single pre-tokenizer chunk: {_show(text)}"
    return None


def _show(value: object) -> str:
    return shown(json.dumps(value, ensure_ascii=True))
