"""The reference-equivalence tests: bpetite.reference itself, then every fast path against it.

This package shadows the old ``tests/reference.py`` module. Until ``tests/corpus/``
imports :mod:`bpetite.reference` directly, the three names it still takes from there
are kept here, unchanged in meaning; delete them with its last such import.
"""

import regex

from bpetite.reference import train_counts as naive_train_chunks

#: The specification's pattern, written out: the code's constant is checked against it.
SPEC_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def naive_pretokenize(text: str) -> list[bytes]:
    return [chunk.encode("utf-8") for chunk in regex.findall(SPEC_PATTERN, text)]


__all__ = ["SPEC_PATTERN", "naive_pretokenize", "naive_train_chunks"]
