"""The few values every stage must agree on, defined once.

The pre-tokenizer, trainer, encoder and persistence layer all import from here, so
a change to the regex or the special token cannot reach one stage and not another.
"""

from typing import Final

#: GPT-2's pre-tokenizer pattern, to the character. Compiled with `regex`, not `re`,
#: because ``\p{L}`` and ``\p{N}`` are Unicode property classes.
PRETOKENIZER_PATTERN: Final = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
)

#: Schema v1, the specification's artifact format; _persistence also reads and writes v2.
SCHEMA_VERSION: Final = 1

#: The one reserved special token. In training text it is ordinary characters.
END_OF_TEXT_TOKEN: Final = "<|endoftext|>"

#: Number of base tokens: one per byte value, id == byte value.
BASE_VOCAB_SIZE: Final = 256
