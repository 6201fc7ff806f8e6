"""GPT-2's byte alphabet: every byte written as one printable character, and its id order.

Byte-level BPE files (``encoder.json``, ``vocab.bpe``, ``tokenizer.json``) store tokens as
text, so GPT-2 gives each of the 256 bytes a visible stand-in: the 188 bytes that are
printable Latin-1 characters other than the space (33..126, 161..172, 174..255) stand for
themselves, and the other 68 (0..32, 127..160, 173) become ``chr(256 + n)`` in ascending
order, so the space 0x20 is written ``Ġ`` (U+0120) and the newline 0x0A ``Ċ`` (U+010A).
The same order numbers GPT-2's single-byte tokens: ids 0..187 are the printable bytes,
188..255 the others. bpetite instead gives byte ``b`` the id ``b``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Final


def _gpt2_byte_order() -> tuple[int, ...]:
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    others = [byte for byte in range(256) if byte not in printable]
    return (*printable, *others)


#: GPT-2's byte order: GPT-2 id -> byte value, for ids 0..255.
_BYTE_ORDER: Final = _gpt2_byte_order()
#: The number of bytes that stand for themselves in the alphabet.
_PRINTABLE: Final = 188

#: byte value -> its character in GPT-2's alphabet.
BYTE_TO_CHAR: Final[tuple[str, ...]] = tuple(
    chr(byte if position < _PRINTABLE else 256 + position - _PRINTABLE)
    for byte, position in sorted((byte, position) for position, byte in enumerate(_BYTE_ORDER))
)
#: character in GPT-2's alphabet -> byte value.
CHAR_TO_BYTE: Final[dict[str, int]] = {char: byte for byte, char in enumerate(BYTE_TO_CHAR)}

#: ``str.translate`` tables between a token's bytes, read as Latin-1 (one character per
#: byte), and its spelling in the alphabet: one call in C per token, not one per byte.
#: Reading back, a Latin-1 character outside the alphabet becomes U+FFFF, which (like
#: any character past U+00FF left as it is) Latin-1 cannot encode.
_TO_ALPHABET: Final = str.maketrans(dict(zip(map(chr, range(256)), BYTE_TO_CHAR, strict=True)))
_FROM_ALPHABET: Final = str.maketrans(
    {chr(code): "\uffff" for code in range(256)}
    | {char: chr(byte) for char, byte in CHAR_TO_BYTE.items()}
)


@dataclass(frozen=True, slots=True)
class BytePermutation:
    """How GPT-2 numbers the 256 single bytes, against bpetite's ``id == byte value``.

    >>> permutation = gpt2_byte_permutation()
    >>> permutation.byte_of_id[0], permutation.id_of_byte[ord("!")]
    (33, 0)
    >>> permutation.id_of_byte[ord(" ")], permutation.id_of_byte[ord("\\n")]
    (220, 198)
    """

    #: ``byte_of_id[gpt2_id]`` is the byte GPT-2's id 0..255 stands for.
    byte_of_id: tuple[int, ...]
    #: ``id_of_byte[byte]`` is GPT-2's id for that byte (bpetite's id for it is the byte).
    id_of_byte: tuple[int, ...]


@cache
def gpt2_byte_permutation() -> BytePermutation:
    """GPT-2's ids 0..255 as a permutation of the byte values, in both directions.

    Ids 0..187 are the bytes 33..126, 161..172, 174..255 in ascending order; ids
    188..255 are the remaining bytes 0..32, 127..160, 173 in ascending order. Tokens
    made by merges (ids 256 and up) and ``<|endoftext|>`` (50256) have the same ids in
    GPT-2 and in bpetite's import of it, so this is the whole difference.
    """
    id_of_byte = [0] * 256
    for gpt2_id, byte in enumerate(_BYTE_ORDER):
        id_of_byte[byte] = gpt2_id
    return BytePermutation(byte_of_id=_BYTE_ORDER, id_of_byte=tuple(id_of_byte))


def to_alphabet(token: bytes) -> str:
    """Write `token` in GPT-2's alphabet: ``b" the"`` -> ``"Ġthe"``."""
    return token.decode("latin-1").translate(_TO_ALPHABET)


def from_alphabet(text: str) -> bytes | None:
    """The bytes a string in GPT-2's alphabet stands for, or None if it uses other characters."""
    try:
        return text.translate(_FROM_ALPHABET).encode("latin-1")
    except UnicodeEncodeError:
        return None
