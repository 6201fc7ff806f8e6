"""Artifact schema v1: canonical bytes out, strictly validated state back in.

The artifact is one JSON object with six keys. Writing it is deterministic (sorted
keys, compact separators, no trailing newline) so the same state always gives the same
bytes; reading it walks a fixed checklist so a corrupt or hand-edited file fails loudly
instead of producing a tokenizer that silently encodes differently. Nothing in a file
is ever evaluated: it is parsed as JSON data and compared against the schema.
"""

import contextlib
import gc
import json
import operator
import os
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from typing import Any, Final, NoReturn

from bpetite._atomic import write_atomically
from bpetite._constants import (
    BASE_VOCAB_SIZE,
    END_OF_TEXT_TOKEN,
    PRETOKENIZER_PATTERN,
    SCHEMA_VERSION,
)
from bpetite._errors import ArtifactError, MissingKeyError
from bpetite._json import loads_json, read_limited

#: The largest artifact :func:`load` reads unless told otherwise: an artifact of
#: o200k_base's size (200k tokens) is about 10 MiB, and parsing needs about 30 bytes of
#: memory per byte of file, so the default bounds a hostile file to about 2 GB.
MAX_ARTIFACT_BYTES: Final = 64 * 1024 * 1024

_REQUIRED_KEYS: Final = frozenset(
    {
        "mergeable_vocab_size",
        "merges",
        "pretokenizer_pattern",
        "schema_version",
        "special_tokens",
        "vocab",
    }
)
_SPECIAL_BYTES: Final = END_OF_TEXT_TOKEN.encode("utf-8")
_INT_ONLY: Final = frozenset({int})
_LIST_ONLY: Final = frozenset({list})
_TWO_ONLY: Final = frozenset({2})
# Error messages quote offending values; a whole vocab list in a message helps nobody.
_MAX_SHOWN_CHARS: Final = 80

State = tuple[dict[int, bytes], list[tuple[int, int]], dict[str, int]]


# --------------------------------------------------------------------------- writing


def dumps_artifact(
    vocab: Mapping[int, bytes],
    merges: Sequence[tuple[int, int]],
    special_tokens: Mapping[str, int],
) -> bytes:
    """Return the canonical artifact bytes for a tokenizer state.

    `vocab` includes the special token's id. `mergeable_vocab_size` is recomputed from
    `merges` so it cannot drift from the list it describes, and `sort_keys` makes the
    bytes independent of the caller's dict order. The result is run through
    :func:`parse_artifact` before it is returned, so no caller can ever write an
    artifact that :func:`load` would reject (ValueError/KeyError naming the defect).
    """
    artifact = {
        "mergeable_vocab_size": BASE_VOCAB_SIZE + len(merges),
        "merges": [list(merge) for merge in merges],
        "pretokenizer_pattern": PRETOKENIZER_PATTERN,
        "schema_version": SCHEMA_VERSION,
        "special_tokens": dict(special_tokens),
        "vocab": {str(token_id): list(token) for token_id, token in vocab.items()},
    }
    data = json.dumps(artifact, sort_keys=True, separators=(",", ":")).encode("utf-8")
    parse_artifact(data, source="tokenizer state to save")
    return data


def save(
    path: str | os.PathLike[str],
    vocab: Mapping[int, bytes],
    merges: Sequence[tuple[int, int]],
    special_tokens: Mapping[str, int],
    *,
    overwrite: bool = False,
) -> None:
    """Write the artifact to `path` atomically and durably.

    Readers see either the previous file or the complete new one, never a partial
    write; after a crash the temp file may remain only if the process was killed
    outright. Raises FileExistsError if `path` exists and `overwrite` is false (also
    when the file appears while we are writing), FileNotFoundError if the parent
    directory is missing, NotADirectoryError / IsADirectoryError for a parent that is
    not a directory or a destination that is one.
    """
    data = dumps_artifact(vocab, merges, special_tokens)
    write_atomically(path, data, overwrite=overwrite)


# --------------------------------------------------------------------------- reading


def load(path: str | os.PathLike[str], *, max_bytes: int = MAX_ARTIFACT_BYTES) -> State:
    """Read and validate the artifact at `path`; OSErrors from reading propagate.

    A file larger than `max_bytes` is refused from its size, before it is read: parsing
    takes about 30 times the file's size in memory.
    """
    data = read_limited(path, max_bytes=max_bytes, error=ArtifactError, what="artifact")
    return parse_artifact(data, source=os.fspath(path))


def parse_artifact(data: bytes, source: str = "<artifact>") -> State:
    """Validate raw artifact bytes step by step and return (vocab, merges, special_tokens).

    The checks run in a fixed order so a given defect always produces the same error.
    Missing keys raise KeyError, every other defect ValueError; messages start with
    `source` and name the failing field and value. `vocab` includes the special id.
    """
    with _gc_paused():
        return _parse_artifact(data, source)


def _parse_artifact(data: bytes, source: str) -> State:
    artifact = _decode_document(data, source)  # steps 1-3
    _check_schema_version(artifact, source)  # steps 4-6
    _check_top_level_keys(artifact, source)  # steps 7-8
    _check_pattern(artifact["pretokenizer_pattern"], source)  # steps 9-10
    merges = _parse_merges(artifact["merges"], source)  # step 11
    size = _parse_mergeable_vocab_size(artifact["mergeable_vocab_size"], merges, source)
    vocab = _parse_vocab(artifact["vocab"], source)  # step 14
    _check_mergeable_ids_present(vocab, size, source)  # step 15
    _check_base_bytes(vocab, source)  # step 16
    _check_merged_bytes(vocab, merges, source)  # step 17
    special_tokens = _parse_special_tokens(artifact["special_tokens"], vocab, size, source)
    _check_no_extra_ids(vocab, size, source)  # step 19
    return vocab, merges, special_tokens


def _fail(source: str, message: str) -> NoReturn:
    raise ArtifactError(f"{source}: {message}")


def _show(value: object) -> str:
    """repr(value), shortened so a huge value cannot flood an error message."""
    text = repr(value)
    if len(text) > _MAX_SHOWN_CHARS:
        text = text[: _MAX_SHOWN_CHARS - 3] + "..."
    return text


def _is_int(value: object) -> bool:
    """JSON integers only: bool is an int subclass in Python and 1.0 == 1, so both are out."""
    return type(value) is int


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Keep the cyclic garbage collector out of parsing and validating an artifact.

    Parsing allocates ~100k tracked containers (a list per entry, a tuple per key
    for object_pairs_hook, a tuple per merge), and the collections they trigger cost
    about as much as the work itself: json.loads of a 32k-entry artifact took 78 ms
    with the collector and 31 ms without, and pausing only around json.loads just
    moved the cost into the next steps. Nothing built here can form a reference
    cycle, so those collections never free anything. gc state is process-global: we
    only re-enable what we disabled ourselves.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _decode_document(data: bytes, source: str) -> dict[str, Any]:
    """Steps 1-3: UTF-8, strict JSON (see :mod:`bpetite._json`), and a top-level object."""
    document = loads_json(data, source=source, error=ArtifactError)
    if not isinstance(document, dict):
        _fail(source, f"top-level JSON value must be an object, got {type(document).__name__}")
    return document


def _check_schema_version(artifact: dict[str, Any], source: str) -> None:
    """Steps 4-6, before the other keys: a future schema may have different keys."""
    if "schema_version" not in artifact:
        raise MissingKeyError(f"{source}: missing required key 'schema_version'")
    version = artifact["schema_version"]
    if not _is_int(version):
        _fail(source, f"schema_version must be an integer, got {_show(version)}")
    if version != SCHEMA_VERSION:
        _fail(
            source,
            f"schema_version {_show(version)} is not supported; this bpetite reads only "
            f"version {SCHEMA_VERSION}",
        )


def _check_top_level_keys(artifact: dict[str, Any], source: str) -> None:
    """Steps 7-8: exactly the six keys, so nothing unvalidated can ride along."""
    missing = _REQUIRED_KEYS - artifact.keys()
    if missing:
        raise MissingKeyError(f"{source}: missing required key(s) {', '.join(sorted(missing))}")
    extra = artifact.keys() - _REQUIRED_KEYS
    if extra:
        shown = ", ".join(json.dumps(key) for key in sorted(extra))
        _fail(source, f"unexpected top-level key(s) {shown}; schema v1 allows only the six keys")


def _check_pattern(pattern: object, source: str) -> None:
    """Steps 9-10: an artifact is tied to the pre-tokenizer it was trained with."""
    if not isinstance(pattern, str):
        _fail(source, f"pretokenizer_pattern must be a string, got {_show(pattern)}")
    if pattern != PRETOKENIZER_PATTERN:
        _fail(
            source,
            f"pretokenizer_pattern {_show(pattern)} does not match this bpetite's "
            "pre-tokenizer; the artifact was made by an incompatible version",
        )


def _parse_merges(merges: object, source: str) -> list[tuple[int, int]]:
    """Step 11: a list of [left, right] pairs of non-negative ids (upper bound: step 17).

    The common, valid case is checked with whole-list C-level passes; anything they do
    not accept goes through the element-by-element loop, which is the authority and
    finds the first defect to report.
    """
    if not isinstance(merges, list):
        _fail(source, f"merges must be a list, got {_show(merges)}")
    if set(map(type, merges)) <= _LIST_ONLY and set(map(len, merges)) <= _TWO_ONLY:
        flat = list(chain.from_iterable(merges))
        if set(map(type, flat)) <= _INT_ONLY and (not flat or min(flat) >= 0):
            return [(left, right) for left, right in merges]
    return _parse_merges_slowly(merges, source)


def _parse_merges_slowly(merges: list[Any], source: str) -> list[tuple[int, int]]:
    parsed: list[tuple[int, int]] = []
    for rank, merge in enumerate(merges):
        if not isinstance(merge, list) or len(merge) != 2:
            _fail(source, f"merges[{rank}] must be a list of two token ids, got {_show(merge)}")
        for side, token_id in enumerate(merge):
            if not _is_int(token_id):
                _fail(source, f"merges[{rank}][{side}] must be an integer, got {_show(token_id)}")
            if token_id < 0:
                _fail(source, f"merges[{rank}][{side}] must be non-negative, got {_show(token_id)}")
        parsed.append((merge[0], merge[1]))
    return parsed


def _parse_mergeable_vocab_size(size: object, merges: list[tuple[int, int]], source: str) -> int:
    """Steps 12-13: the stored size must agree with the merge list it describes."""
    if not _is_int(size):
        _fail(source, f"mergeable_vocab_size must be an integer, got {_show(size)}")
    expected = BASE_VOCAB_SIZE + len(merges)
    if size != expected:
        _fail(
            source,
            f"mergeable_vocab_size is {_show(size)}, but {len(merges)} merges + "
            f"{BASE_VOCAB_SIZE} base bytes = {expected}",
        )
    return size


def _parse_vocab(vocab: object, source: str) -> dict[int, bytes]:
    """Step 14: canonical decimal keys, values that are lists of byte values.

    Fast path: int() then str() must give each key back unchanged, which rejects
    signs, spaces, leading zeros, underscores and non-ASCII digits in one C-level
    pass; bytes() range-checks the values. Anything else takes the per-entry loop.
    """
    if not isinstance(vocab, dict):
        _fail(source, f"vocab must be an object, got {_show(vocab)}")
    keys = list(vocab)
    values = list(vocab.values())
    try:
        ids = list(map(int, keys))
    except ValueError:
        ids = None
    if (
        ids is not None
        and list(map(str, ids)) == keys
        and (not ids or min(ids) >= 0)
        and set(map(type, values)) <= _LIST_ONLY
        and set(map(type, chain.from_iterable(values))) <= _INT_ONLY
    ):
        with contextlib.suppress(ValueError):  # a byte value outside 0..255
            return dict(zip(ids, map(bytes, values), strict=True))
    return _parse_vocab_slowly(vocab, source)


def _parse_vocab_slowly(vocab: dict[str, Any], source: str) -> dict[int, bytes]:
    parsed: dict[int, bytes] = {}
    for key, value in vocab.items():
        try:
            token_id = _canonical_id(key)
        except ValueError:  # past int()'s digit limit, so far past any vocabulary
            _fail(source, f"vocab key {_show(key)} is too long to be a token id")
        if token_id is None:
            _fail(
                source,
                f"vocab key {json.dumps(key)} is not a canonical decimal token id "
                "(ASCII digits only, no sign, spaces or leading zeros)",
            )
        if not isinstance(value, list):
            _fail(source, f'vocab["{key}"] must be a list of byte values, got {_show(value)}')
        for index, byte in enumerate(value):
            if not _is_int(byte) or not 0 <= byte <= 255:
                _fail(
                    source,
                    f'vocab["{key}"][{index}] must be an integer in 0..255, got {_show(byte)}',
                )
        parsed[token_id] = bytes(value)
    return parsed


def _canonical_id(key: str) -> int | None:
    """The id a key spells, or None unless it is written exactly as str(id) would.

    ASCII digits only (Arabic-Indic digits pass str.isdigit and int()), no sign, no
    whitespace, no leading zero: so each id has exactly one spelling and duplicate
    keys cannot hide behind different spellings.
    """
    if not (key.isascii() and key.isdigit()) or (key[0] == "0" and len(key) > 1):
        return None
    return int(key)


def _check_mergeable_ids_present(vocab: dict[int, bytes], size: int, source: str) -> None:
    """Step 15: every id below mergeable_vocab_size has an entry."""
    if all(map(vocab.__contains__, range(size))):
        return
    missing = next(token_id for token_id in range(size) if token_id not in vocab)
    _fail(source, f'vocab has no entry "{missing}"; ids 0..{size - 1} must all be present')


def _check_base_bytes(vocab: dict[int, bytes], source: str) -> None:
    """Step 16: base token i is the single byte i, or byte-level decoding breaks."""
    for token_id in range(BASE_VOCAB_SIZE):
        if vocab[token_id] != bytes((token_id,)):
            _fail(
                source,
                f'vocab["{token_id}"] must be [{token_id}] (a base token is its own byte), '
                f"got {_show(list(vocab[token_id]))}",
            )


def _check_merged_bytes(
    vocab: dict[int, bytes], merges: list[tuple[int, int]], source: str
) -> None:
    """Step 17: in rank order, each merge uses only earlier ids and spells their concatenation.

    Fast path: two whole-list comparisons; on a mismatch the rank-order loop finds the
    first bad merge, so the report does not depend on which comparison noticed.
    """
    size = BASE_VOCAB_SIZE + len(merges)
    new_ids = range(BASE_VOCAB_SIZE, size)
    lefts = [left for left, _ in merges]
    rights = [right for _, right in merges]
    if all(map(operator.lt, lefts, new_ids)) and all(map(operator.lt, rights, new_ids)):
        table = list(map(vocab.__getitem__, range(size)))  # ids are contiguous by now
        joined = map(bytes.__add__, map(table.__getitem__, lefts), map(table.__getitem__, rights))
        if list(joined) == table[BASE_VOCAB_SIZE:]:
            return
    for rank, merge in enumerate(merges):
        new_id = BASE_VOCAB_SIZE + rank
        for side, token_id in enumerate(merge):
            if token_id >= new_id:
                _fail(
                    source,
                    f"merges[{rank}][{side}] is {_show(token_id)}, but merge {rank} creates id "
                    f"{new_id} and may only use ids below it",
                )
        expected = vocab[merge[0]] + vocab[merge[1]]
        if vocab[new_id] != expected:
            _fail(
                source,
                f'vocab["{new_id}"] must be the bytes of merges[{rank}] = {list(merge)} '
                f"concatenated, {_show(list(expected))}, got {_show(list(vocab[new_id]))}",
            )


def _parse_special_tokens(
    special_tokens: object, vocab: dict[int, bytes], size: int, source: str
) -> dict[str, int]:
    """Step 18: exactly one special token, at id mergeable_vocab_size, with its own bytes."""
    if not isinstance(special_tokens, dict):
        _fail(source, f"special_tokens must be an object, got {_show(special_tokens)}")
    if special_tokens.keys() != {END_OF_TEXT_TOKEN}:
        keys = ", ".join(json.dumps(key) for key in sorted(special_tokens))
        _fail(
            source,
            f"special_tokens must have exactly the key {json.dumps(END_OF_TEXT_TOKEN)}, "
            f"got [{keys}]",
        )
    special_id = special_tokens[END_OF_TEXT_TOKEN]
    field = f"special_tokens[{json.dumps(END_OF_TEXT_TOKEN)}]"
    if not _is_int(special_id):
        _fail(source, f"{field} must be an integer, got {_show(special_id)}")
    if special_id != size:
        _fail(source, f"{field} is {_show(special_id)}, but must equal mergeable_vocab_size {size}")
    if special_id not in vocab:
        _fail(source, f'vocab has no entry "{special_id}" for the special token')
    if vocab[special_id] != _SPECIAL_BYTES:
        _fail(
            source,
            f'vocab["{special_id}"] must be the UTF-8 bytes of {END_OF_TEXT_TOKEN} '
            f"{list(_SPECIAL_BYTES)}, got {_show(list(vocab[special_id]))}",
        )
    return {END_OF_TEXT_TOKEN: special_id}


def _check_no_extra_ids(vocab: dict[int, bytes], size: int, source: str) -> None:
    """Step 19: nothing past the special token, so the id space has no stray entries."""
    if len(vocab) > size + 1:
        extra = min(token_id for token_id in vocab if token_id > size)
        _fail(
            source,
            f'vocab["{extra}"] is outside the vocabulary: ids run from 0 to the special '
            f"token id {size}",
        )
