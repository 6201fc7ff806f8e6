"""Token ids back to bytes and text: concatenate every token's bytes, decode once.

Must equal ``bpetite.reference.decode``: the same text for the same ids, under the
default ``errors="strict"``. ``errors="replace"`` (and ``"ignore"``) is what tiktoken
and Python do with bytes that are not UTF-8: ``bytes.decode("utf-8", errors=...)`` of
the same bytes, so a loop decoding whatever a model samples never breaks.

:class:`StreamDecoder` is the same decoding fed one id at a time: each character comes
out once, as soon as its last byte arrives, and everything it returns, joined, is
``decode(ids, errors=...)``. :func:`decode_with_offsets` is tiktoken's method of that
name: the text and, for each token, the index of the character its first byte is in.
"""

from __future__ import annotations

import codecs
import operator
from collections.abc import Mapping, Sequence
from typing import Final

from bpetite.core._errors import ParameterError, TokenIdTypeError, UnknownTokenError

#: The usual ``errors`` policies for decoding: ``strict`` (the specification's) raises
#: UnicodeDecodeError; ``replace`` puts U+FFFD where bytes that are not UTF-8 were,
#: exactly as ``bytes.decode`` does; ``ignore`` drops them. Any other error handler
#: Python knows (``backslashreplace``, ``surrogateescape``...) works too, as in tiktoken.
DECODE_ERRORS: Final = ("strict", "replace", "ignore")

#: Ids are joined this many at a time, then the parts: ``bytes.join`` takes a buffer
#: view (about 80 bytes) of each item it joins, so one join of millions of ids would
#: hold gigabytes. Measurements: docs/design-notes.md#decoding-in-windows
JOIN_WINDOW = 1 << 16

#: The UTF-8 continuation bytes 0x80..0xBF: the bytes that do not start a character.
CONTINUATION_BYTES: Final = bytes(range(0x80, 0xC0))


def checked_errors(errors: object) -> str:
    """Return `errors` if Python has an error handler of that name, else raise naming the usual."""
    if errors in DECODE_ERRORS:  # the usual ones, without a lookup
        return errors
    if isinstance(errors, str):
        try:
            codecs.lookup_error(errors)
            return errors
        except LookupError:
            pass
    raise ParameterError(
        f"errors must be the name of a codec error handler such as "
        f"{', '.join(map(repr, DECODE_ERRORS))}, got {errors!r}"
    )


def decode_text(
    token_ids: Sequence[int], vocab: Mapping[int, bytes], errors: str = "strict"
) -> str:
    """Return the text of `token_ids`.

    Raises UnknownTokenError (a KeyError) naming the first id that is not a token
    (negative or too large), TokenIdTypeError (also a TypeError) for one that is not an
    integer (see :func:`listed_ids`), and, with ``errors="strict"``, UnicodeDecodeError
    when the bytes are not UTF-8 (a multi-byte character cut between two ids is fine as
    long as both halves are there).
    """
    return decode_bytes(token_ids, vocab).decode("utf-8", errors=errors)


def decode_bytes(token_ids: Sequence[int], vocab: Mapping[int, bytes]) -> bytes:
    """Return the concatenated bytes of `token_ids`; unknown ids raise UnknownTokenError."""
    return _joined(listed_ids(token_ids, "decode()"), vocab)


def _joined(token_ids: Sequence[int], vocab: Mapping[int, bytes]) -> bytes:
    """:func:`decode_bytes` of ids :func:`listed_ids` has checked already."""
    token_bytes = vocab.__getitem__
    try:
        if len(token_ids) <= JOIN_WINDOW:
            return b"".join(map(token_bytes, token_ids))
        windows = range(0, len(token_ids), JOIN_WINDOW)
        return b"".join(
            [b"".join(map(token_bytes, token_ids[i : i + JOIN_WINDOW])) for i in windows]
        )
    except KeyError:
        raise UnknownTokenError(_describe_unknown_id(token_ids, vocab)) from None


def tokens_bytes(token_ids: Sequence[int], vocab: Mapping[int, bytes]) -> list[bytes]:
    """Return each token's bytes, in order; unknown ids raise UnknownTokenError."""
    token_ids = listed_ids(token_ids, "decode_tokens_bytes()")
    try:
        return list(map(vocab.__getitem__, token_ids))
    except KeyError:
        raise UnknownTokenError(_describe_unknown_id(token_ids, vocab)) from None


def listed_ids(token_ids: Sequence[int], caller: str) -> list[int] | tuple[int, ...]:
    """`token_ids` as a list or tuple of Python ints, each checked to be an integer.

    Integers of other types are taken by their ``__index__``, as tiktoken takes them:
    numpy's (an array by its ``tolist``, which makes Python ints in C), an ``IntEnum``.
    A value that is no integer (a float, a string) or a bool raises TokenIdTypeError
    naming it and its position: ``True`` and ``1.0`` would otherwise find token 1 by
    hash equality. A string, bytes or a mapping for the whole sequence is a TypeError.
    """
    if isinstance(token_ids, (str, bytes, bytearray, Mapping)) or not hasattr(
        token_ids, "__iter__"
    ):
        raise TypeError(f"{caller} takes a sequence of ints, got {type(token_ids).__name__}")
    if not isinstance(token_ids, (list, tuple)):
        tolist = getattr(token_ids, "tolist", None)  # numpy's arrays, array.array
        token_ids = tolist() if callable(tolist) else list(token_ids)
        if not isinstance(token_ids, list):  # a numpy scalar's tolist is the scalar
            raise TypeError(f"{caller} takes a sequence of ints, got {token_ids!r}")
    if set(map(type, token_ids)) <= {int}:  # the usual case, checked in C
        return token_ids
    return [checked_id(token_id, f" at position {i}") for i, token_id in enumerate(token_ids)]


def checked_id(token_id: object, where: str = "") -> int:
    """`token_id` as an int: an integer of any type by its ``__index__``, not a bool."""
    if type(token_id) is int:
        return token_id
    if not isinstance(token_id, bool):
        try:
            return operator.index(token_id)  # type: ignore[arg-type]
        except TypeError:
            pass
    raise TokenIdTypeError(f"token id{where} must be an int, got {token_id!r}")


def decode_with_offsets(
    token_ids: Sequence[int], vocab: Mapping[int, bytes]
) -> tuple[str, list[int]]:
    """Return the text of `token_ids`, strictly decoded, and where each token starts in it.

    A token's offset is the index of the character holding its first byte; a token
    that starts inside a character (its first byte continues one) gets that
    character's index, so it shares the offset of the token before it. This is
    tiktoken's ``decode_with_offsets``, result for result.

    >>> vocab = {0: b"h", 1: b"\\xc3", 2: b"\\xa9", 3: b"\\xc3\\xa9!"}
    >>> decode_with_offsets([0, 1, 2, 3], vocab)
    ('héé!', [0, 1, 1, 2])
    """
    token_ids = listed_ids(token_ids, "decode_with_offsets()")
    data = _joined(token_ids, vocab)
    offsets = token_starts(token_ids, vocab)
    return data.decode("utf-8", errors="strict"), offsets


def token_starts(token_ids: Sequence[int], vocab: Mapping[int, bytes]) -> list[int]:
    """For each token, the index of the character its first byte belongs to.

    Characters are counted by the bytes that start one (every byte but 0x80..0xBF), so
    for valid UTF-8 this is exact; the caller has checked the ids.
    """
    starts: list[int] = []
    characters = 0  # characters started by the bytes before this token
    for token_id in token_ids:
        data = vocab[token_id]
        inside = 0x80 <= data[0] < 0xC0  # its first byte continues a character
        starts.append(characters - 1 if inside and characters else characters)
        characters += len(data.translate(None, CONTINUATION_BYTES))
    return starts


def token_spans(token_ids: Sequence[int], vocab: Mapping[int, bytes]) -> list[tuple[int, int]]:
    """For each token, the ``(start, end)`` of the smallest slice of the text holding its bytes.

    ``start`` is the character its first byte is in (as :func:`token_starts`), ``end``
    one past the character its last byte is in. A character split between tokens lies
    in the span of each of them, so such spans overlap by that character; every other
    span is exactly the token's text. The ids must decode to valid UTF-8.
    """
    spans: list[tuple[int, int]] = []
    characters = 0
    for token_id in token_ids:
        data = vocab[token_id]
        inside = 0x80 <= data[0] < 0xC0
        start = characters - 1 if inside and characters else characters
        characters += len(data.translate(None, CONTINUATION_BYTES))
        spans.append((start, characters))
    return spans


class StreamDecoder:
    """Decodes ids one at a time, returning each character once, as soon as it is whole.

    Made by :meth:`Tokenizer.stream_decoder`. :meth:`step` takes the next id and
    returns the text it completes (``""`` while a character is still missing bytes);
    :meth:`flush` ends the stream. Whatever the ids and however they are fed, the
    strings returned, joined, are ``tokenizer.decode(ids, errors=errors)``, and none
    holds part of a character. With ``errors="strict"`` a step whose bytes cannot
    continue valid UTF-8 raises UnicodeDecodeError, and an unknown id
    UnknownTokenError; either way the step changes nothing, so the stream can go on
    with the next id. :meth:`flush` raises if the ids end inside a character; with
    ``errors="replace"`` it returns U+FFFD for those bytes instead.

    >>> from bpetite import Tokenizer
    >>> tokenizer = Tokenizer.train("héé", vocab_size=256)
    >>> stream = tokenizer.stream_decoder()
    >>> [stream.step(token) for token in tokenizer.encode("hé")]
    ['h', '', 'é']
    >>> stream.step(0xC3), stream.flush()
    Traceback (most recent call last):
      ...
    UnicodeDecodeError: 'utf-8' codec can't decode byte 0xc3 in position 0: unexpected end of data
    """

    #: The usual ``errors`` policies: ``strict``, ``replace``, ``ignore``; as for
    #: ``decode``, any other error handler's name works too.
    ERRORS: Final = DECODE_ERRORS

    __slots__ = ("_decoder", "_errors", "_vocab")

    def __init__(self, vocab: Mapping[int, bytes], errors: str = "strict") -> None:
        self._vocab = vocab
        self._errors = checked_errors(errors)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors)

    @property
    def errors(self) -> str:
        """The policy for bytes that are not UTF-8: ``strict``, ``replace``, ``ignore``..."""
        return self._errors

    @property
    def pending(self) -> bytes:
        """The bytes received that do not yet make a whole character (at most three)."""
        return self._decoder.getstate()[0]

    def step(self, token_id: int) -> str:
        """Feed one id; return the characters it completes, possibly ``""``."""
        token_id = checked_id(token_id)
        data = self._vocab.get(token_id)
        if data is None:
            raise UnknownTokenError(unknown_id(token_id, self._vocab))
        # The incremental decoder keeps its pending bytes unless the decode succeeds,
        # so a step that raises leaves the stream as it was.
        state = self._decoder.getstate()
        text = self._decoder.decode(data)
        if _cannot_continue(self._decoder.getstate()[0]):
            # CPython's decoder holds ED A0..BF (the start of an encoded surrogate)
            # for more bytes, though no continuation makes it a character: settle it
            # now, as a whole decode would, and as a step that raises, change nothing.
            try:
                text += self._decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                self._decoder.setstate(state)
                raise
        return text

    def flush(self) -> str:
        """End the stream: return what the pending bytes decode to, and start afresh.

        Empty when the ids ended on a character boundary. Otherwise, under ``strict``
        UnicodeDecodeError (the pending bytes stay, so a caller may still feed the
        rest), under ``replace`` one U+FFFD, under ``ignore`` nothing.
        """
        text = self._decoder.decode(b"", final=True)
        self._decoder.reset()
        return text

    def reset(self) -> None:
        """Drop any pending bytes and start a new stream."""
        self._decoder.reset()

    def __repr__(self) -> str:
        return f"<StreamDecoder errors={self._errors!r} pending={self.pending!r}>"


#: The second bytes that can follow each lead byte of a multi-byte UTF-8 character.
_SECOND_BYTES: Final = dict.fromkeys(range(0xC2, 0xF5), (0x80, 0xBF)) | {
    0xE0: (0xA0, 0xBF),
    0xED: (0x80, 0x9F),
    0xF0: (0x90, 0xBF),
    0xF4: (0x80, 0x8F),
}


def _cannot_continue(pending: bytes) -> bool:
    """Whether no bytes can follow `pending` to make a character (see StreamDecoder.step)."""
    if len(pending) < 2:
        return False
    low, high = _SECOND_BYTES[pending[0]]
    return not low <= pending[1] <= high


def _describe_unknown_id(token_ids: Sequence[int], vocab: Mapping[int, bytes]) -> str:
    for position, token_id in enumerate(token_ids):
        if token_id not in vocab:
            return unknown_id(token_id, vocab, f" at position {position}")
    return "invalid token ids"  # pragma: no cover - only called on an unknown id


def unknown_id(token_id: int, vocab: Mapping[int, bytes], where: str = "") -> str:
    """Why `token_id` (not in `vocab`) is unknown: out of the ids' range, or a gap in it
    (``cl100k_base`` has no token 100256), never a range that holds it called valid."""
    top = max(vocab)
    if 0 <= token_id <= top:
        return (
            f"unknown token id {token_id}{where}: no token has it (this vocabulary's ids "
            f"run from 0 to {top} with some unused)"
        )
    return f"unknown token id {token_id}{where}: valid ids are 0..{top}"
