"""bpetite's one strict JSON reader: artifacts, counts files, foreign vocabularies, id lists.

Python's ``json`` is lenient where a file format must not be: it keeps the last of two
equal keys (so a second value can hide behind the first), accepts ``NaN`` and
``Infinity`` (not JSON), recurses once per nesting level (``RecursionError`` instead of
an error message), and reads a file of any size into memory. This reader refuses each of
those before it can matter: the size from ``fstat`` before reading, the depth by a
linear scan before parsing, duplicates and constants while parsing. Every refusal raises
the error class the caller names, with a message that starts with the source.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import stat
from typing import Any, Final, NoReturn

from bpetite.core._errors import ArtifactError, BpetiteError, ParameterError, shown

#: The deepest nesting accepted: bpetite's own documents are at most 3 levels deep and a
#: ``tokenizer.json`` about 6; the bound keeps ``json`` far from the interpreter's stack.
MAX_JSON_DEPTH: Final = 64

ErrorClass = type[BpetiteError]

# Deleting escapes, then strings, then every ASCII character but a bracket leaves the
# structural brackets of a valid document (outside strings, JSON is ASCII).
_ESCAPE: Final = re.compile(r"\\.", re.DOTALL)
_STRING: Final = re.compile(r'"[^"]*"')
_NOT_A_BRACKET: Final = {code: None for code in range(128) if chr(code) not in "[]{}"}
# One level of pairs: a single pass never removes a pair that an earlier removal formed.
_INNERMOST_PAIR: Final = re.compile(r"\[\]|\{\}")


def _fail(error: ErrorClass, source: str, message: str) -> NoReturn:
    raise error(f"{source}: {message}")


#: How much of a file is read at a time: the most a read allocates beyond the data itself.
_READ_BLOCK = 1 << 20


def read_limited(
    path: str | os.PathLike[str], *, max_bytes: int, error: ErrorClass, what: str
) -> bytes:
    """The bytes of the file at `path`, refused before reading if there are more than `max_bytes`.

    A regular file is judged by its size from ``fstat``, so an oversized one costs
    nothing; anything else (a pipe) is read up to one byte past the limit. OSErrors
    propagate. `what` names the document in the message (``artifact``).
    """
    from pathlib import Path  # here: `import bpetite` need not load pathlib

    check_max_bytes(max_bytes)
    source = os.fspath(path)
    with Path(path).open("rb") as file:
        info = os.fstat(file.fileno())
        if stat.S_ISREG(info.st_mode) and info.st_size > max_bytes:
            too_big(error, source, what, info.st_size, max_bytes)
        # Read in blocks: ``read(max_bytes + 1)`` would allocate the whole limit up front,
        # the artifact default's 64 MiB even for a tiny file.
        blocks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            block = file.read(min(_READ_BLOCK, max_bytes + 1 - size))
            if not block:
                break
            blocks.append(block)
            size += len(block)
    if size > max_bytes:
        too_big(error, source, what, None, max_bytes)
    return b"".join(blocks)


def check_max_bytes(max_bytes: object) -> int:
    """`max_bytes` if it is an int of at least 0: TypeError for another type (a bool
    included), ParameterError for a negative one, each naming the keyword."""
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
        raise TypeError(f"max_bytes must be an int, got {max_bytes!r}")
    if max_bytes < 0:
        raise ParameterError(f"max_bytes must be at least 0, got {max_bytes}")
    return max_bytes


def too_big(
    error: ErrorClass,
    source: str,
    what: str,
    size: int | None,
    limit: int,
    trusted: str = "the file",
) -> NoReturn:
    """Refuse a document of `size` bytes (None: more than `limit`), naming `source`."""
    shown = f"{size:,} bytes" if size is not None else f"more than {limit:,} bytes"
    _fail(
        error,
        source,
        f"the {what} is {shown}, over the limit of {limit:,} bytes; pass a larger "
        f"max_bytes if {trusted} is trusted",
    )


def loads_json(
    data: bytes | str,
    *,
    source: str,
    error: ErrorClass = ArtifactError,
    max_depth: int = MAX_JSON_DEPTH,
) -> Any:
    """Parse one JSON document strictly, raising `error` (``"source: ..."``) for any defect.

    Refused: bytes that are not UTF-8, invalid JSON, duplicate object keys, ``NaN`` and
    the infinities, integers past Python's digit limit, and nesting deeper than
    `max_depth` (checked before parsing, in linear time, so never a RecursionError).
    """
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            _fail(error, source, f"not valid UTF-8 at byte offset {exc.start}: {exc.reason}")
    else:
        text = data
    if _nesting_exceeding(text, max_depth):
        _fail(error, source, f"not valid JSON: nested too deeply (more than {max_depth} levels)")
    try:
        return json.loads(
            text,
            object_pairs_hook=_unique_keys,
            parse_constant=_no_constant,
            parse_float=_finite_float,
        )
    except RecursionError:  # pragma: no cover - the depth check keeps json shallow
        _fail(error, source, f"not valid JSON: nested too deeply (more than {max_depth} levels)")
    except ValueError as exc:  # JSONDecodeError, our hooks, over-long integers
        _fail(error, source, f"not valid JSON: {exc}")


def _nesting_exceeding(text: str, max_depth: int) -> bool:
    """Whether `text` nests brackets more than `max_depth` deep, in linear time.

    Strings are deleted first (a bracket inside one is text), leaving only brackets. A
    run of more than `max_depth` opening brackets settles it at once (the usual hostile
    document). Otherwise each round deletes the innermost ``[]`` and ``{}`` pairs: a pair
    deleted in round k encloses one deleted in round k - 1, so a pair still deletable
    after `max_depth` rounds proves a deeper nesting. Brackets that never pair up are
    unbalanced, which the parser reports more precisely. Deleting a level can only
    lengthen runs, so the run test is repeated each round.
    """
    unescaped = _ESCAPE.sub("", text) if "\\" in text else text
    brackets = _STRING.sub("", unescaped).translate(_NOT_A_BRACKET)
    too_long_a_run = _opening_run(max_depth + 1)
    for _ in range(max_depth):
        if not brackets:
            return False
        if too_long_a_run.search(brackets):
            return True
        brackets = _INNERMOST_PAIR.sub("", brackets)
    return _INNERMOST_PAIR.search(brackets) is not None


@functools.cache
def _opening_run(length: int) -> re.Pattern[str]:
    return re.compile(rf"[\[{{]{{{length}}}")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's dict, refusing a key given twice (json would keep the last silently).

    Linear: one dict build, and a set walk only when the sizes show a duplicate.
    """
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate object key {_quoted(key)}")
            seen.add(key)
    return result


def _no_constant(name: str) -> NoReturn:
    """NaN and the infinities are not JSON (RFC 8259), though Python accepts them."""
    raise ValueError(f"non-standard JSON constant {name} is not allowed")


def _finite_float(text: str) -> float:
    """A number too large for a float (``1e999``) is Infinity in disguise: refused too."""
    value = float(text)
    if value in (math.inf, -math.inf):
        raise ValueError(f"number {shown(text)} is too large for a float")
    return value


def _quoted(key: str) -> str:
    return shown(json.dumps(key, ensure_ascii=False))


def parse_json_ids(
    data: bytes | str, *, source: str, error: ErrorClass = ArtifactError
) -> list[int]:
    """Parse a JSON array of integer token ids, as ``bpetite encode`` prints them.

    Booleans and floats are refused (``true`` and ``1.0`` are not ids); the ids
    themselves are for the decoder to judge.

    >>> parse_json_ids("[104, 105]", source="ids")
    [104, 105]
    """
    value = loads_json(data, source=source, error=error)
    if not isinstance(value, list):
        _fail(error, source, f"must hold a JSON array of token ids, got {type(value).__name__}")
    for position, item in enumerate(value):
        if type(item) is not int:
            _fail(
                error,
                source,
                f"must hold a JSON array of integers, but item {position} is "
                f"{shown(json.dumps(item, ensure_ascii=False))}",
            )
    return value
