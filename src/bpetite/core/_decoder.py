"""Token ids back to bytes and text: concatenate every token's bytes, decode once, strictly.

Must equal ``bpetite.reference.decode``: the same text for the same ids.
"""

from collections.abc import Mapping, Sequence

from bpetite.core._errors import UnknownTokenError


def decode_text(token_ids: Sequence[int], vocab: Mapping[int, bytes]) -> str:
    """Return the text of `token_ids`.

    Raises UnknownTokenError (a KeyError) naming the first id that is not a token
    (negative, too large, or not an int: ``True`` and ``1.0`` would otherwise find
    token 1 by hash equality), and UnicodeDecodeError when the bytes are not UTF-8 (a
    multi-byte character cut between two ids is fine as long as both halves are there).
    """
    return decode_bytes(token_ids, vocab).decode("utf-8", errors="strict")


def decode_bytes(token_ids: Sequence[int], vocab: Mapping[int, bytes]) -> bytes:
    """Return the concatenated bytes of `token_ids`; unknown ids raise UnknownTokenError."""
    if isinstance(token_ids, (str, bytes, bytearray, Mapping)) or not hasattr(
        token_ids, "__iter__"
    ):
        raise TypeError(f"decode() takes a sequence of ints, got {type(token_ids).__name__}")
    if not isinstance(token_ids, (list, tuple)):
        token_ids = list(token_ids)
    try:
        if set(map(type, token_ids)) <= {int}:
            return b"".join(map(vocab.__getitem__, token_ids))
    except KeyError:
        pass
    raise UnknownTokenError(_describe_bad_id(token_ids, vocab)) from None


def _describe_bad_id(token_ids: Sequence[int], vocab: Mapping[int, bytes]) -> str:
    for position, token_id in enumerate(token_ids):
        if type(token_id) is not int:
            return f"token id at position {position} must be an int, got {token_id!r}"
        if token_id not in vocab:
            return (
                f"unknown token id {token_id} at position {position}: valid ids are 0..{max(vocab)}"
            )
    return "invalid token ids"  # pragma: no cover - decode() only calls this on a bad id
