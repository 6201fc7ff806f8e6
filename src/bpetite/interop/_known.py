"""OpenAI's published vocabularies, recognised by the sha256 of their files.

A ``.tiktoken`` file holds only ranks: not the split pattern the vocabulary was made
for, nor its special tokens. For the official files those are known (tiktoken's
``tiktoken_ext/openai_public.py`` pins them), so a file whose hash matches gets them,
with tiktoken's ids, and then encodes exactly as tiktoken's encoding of that name.
The table is the one :func:`bpetite.get_encoding` builds its vocabularies from, and a
recognised file imports as ``get_encoding``'s tokenizer of that name, whose merges were
recovered from that very file; the hashes are the ones tiktoken itself checks before
using a downloaded file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from bpetite._internal import BUILTIN_VOCABULARIES, BuiltinVocabulary


def _first_per_file() -> dict[str, BuiltinVocabulary]:
    """The first encoding of each rank file, after ``gpt2``: tiktoken reads ``gpt2``
    from GPT-2's ``encoder.json`` and ``vocab.bpe``, so r50k's file is ``r50k_base``;
    ``p50k_edit`` and ``o200k_harmony`` add special tokens to ``p50k_base``'s and
    ``o200k_base``'s files, which are recognised as the base encodings."""
    known: dict[str, BuiltinVocabulary] = {}
    for vocabulary in BUILTIN_VOCABULARIES.values():
        if vocabulary.name != "gpt2":
            known.setdefault(vocabulary.rank_file_sha256, vocabulary)
    return known


#: sha256 of the file -> what tiktoken attaches to it.
KNOWN_TIKTOKEN_FILES: Final[Mapping[str, BuiltinVocabulary]] = MappingProxyType(_first_per_file())


def recognise(data: bytes) -> BuiltinVocabulary | None:
    """The official vocabulary whose ``.tiktoken`` file is exactly `data`, if any."""
    return KNOWN_TIKTOKEN_FILES.get(hashlib.sha256(data).hexdigest())
