"""The few values every stage must agree on, each defined once, with one meaning.

The split, the trainer, the encoder, the artifact, interop and the CLI all take them
from here, so a change to the regex or the special token cannot reach one stage and
not another.
"""

from typing import Final

#: GPT-2's pre-tokenizer pattern, to the character. Compiled with `regex`, not `re`,
#: because ``\p{L}`` and ``\p{N}`` are Unicode property classes.
PRETOKENIZER_PATTERN: Final = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
)

#: Schema v1, the specification's artifact format; _artifact also reads and writes v2.
SCHEMA_VERSION: Final = 1

#: The one reserved special token. In training text it is ordinary characters.
END_OF_TEXT_TOKEN: Final = "<|endoftext|>"

#: Number of base tokens: one per byte value, id == byte value.
BASE_VOCAB_SIZE: Final = 256

#: Each base token's bytes, by id: the byte itself.
BYTE_TOKENS: Final = tuple(bytes((byte,)) for byte in range(BASE_VOCAB_SIZE))

#: The largest vocabulary training makes: the trainer keeps each id as one character
#: (``chr(id)``), and the last code point is 0x10FFFF.
MAX_VOCAB_SIZE: Final = 0x110000

#: The largest id an artifact may hold: tiktoken and Hugging Face store ids as signed
#: 32-bit integers, so a file with larger ids could not be exported.
MAX_TOKEN_ID: Final = 2**31 - 1
