"""Text that is not valid Unicode, and bytes that are not UTF-8: tiktoken's lenient paths.

The specification's encoder takes valid text: a ``str`` holding a lone surrogate has no
UTF-8 bytes, so by default bpetite refuses it (``errors="strict"``). tiktoken instead
repairs it, and ``errors="replace"`` does what tiktoken does: :func:`repair_surrogates`.

:func:`encode_invalid_utf8` is tiktoken's ``Encoding._encode_bytes``, result for
result: bytes that are valid UTF-8 encode as their text; otherwise the valid prefix is
encoded as text, and its last chunk (with any whitespace-only tokens before it) is
merged again together with the rest of the bytes, as one chunk (the unstable end of
``core/_unstable.py``). The bytes of the ids are always exactly the input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from bpetite.core._errors import ParameterError
from bpetite.core._pretokenizer import require_utf8
from bpetite.core._unstable import all_space, last_chunk_length, widened_end

#: The ``errors`` policies encoding takes for a ``str`` holding lone surrogates.
ENCODE_ERRORS: Final = ("strict", "replace")


def checked_text(text: str, errors: str, what: str = "text") -> str:
    """`text` ready to encode: refused if not valid Unicode (strict), else repaired (replace).

    Callers compare `errors` with ``"strict"`` first and only call this otherwise, so
    the usual call costs one comparison.
    """
    if errors == "strict":
        require_utf8(text, what)
        return text
    if errors != "replace":
        raise ParameterError(
            f"errors must be one of {', '.join(map(repr, ENCODE_ERRORS))}, got {errors!r}"
        )
    return repair_surrogates(text)


def repair_surrogates(text: str) -> str:
    """tiktoken's repair: a surrogate pair becomes its character, a lone surrogate U+FFFD.

    >>> repair_surrogates("\\ud83d\\udc4d, \\ud83d!")
    '👍, �!'
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # UTF-16 joins a high and a low surrogate into one character; what is left alone
        # is not UTF-16 either, and "replace" makes it U+FFFD.
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def encode_invalid_utf8(
    data: bytes,
    *,
    split: Callable[[str], list[str]],
    encode_ordinary: Callable[[str], list[int]],
    encode_chunk: Callable[[bytes], list[int]],
    mergeable_id: Callable[[bytes], int | None],
    token_bytes: Callable[[int], bytes],
) -> list[int]:
    """The ids tiktoken's ``_encode_bytes`` gives `data`; decoded, they are `data` again.

    `mergeable_id` finds the mergeable token whose bytes are exactly its argument (or
    None); `encode_chunk` merges one chunk's bytes.
    """
    try:
        return encode_ordinary(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        valid = error.start
    text = data[:valid].decode("utf-8")
    ids = encode_ordinary(text)
    last_chunk = last_chunk_length(text, split, encode_chunk)
    unstable = widened_end(ids, last_chunk, lambda token_id: all_space(token_bytes(token_id)))
    if unstable:
        rest = b"".join(map(token_bytes, ids[-unstable:])) + data[valid:]
        del ids[-unstable:]
    else:
        rest = data[valid:]
    if rest:
        whole = mergeable_id(rest)
        ids += [whole] if whole is not None else encode_chunk(rest)
    return ids
