"""OpenAI's published vocabularies, recognised by the sha256 of their files.

A ``.tiktoken`` file holds only ranks: not the split pattern the vocabulary was made
for, nor its special tokens. For the official files those are known (tiktoken's
``tiktoken_ext/openai_public.py`` pins them), so a file whose hash matches gets them,
with tiktoken's ids, and then encodes exactly as tiktoken's encoding of that name.
The table is the one :func:`bpetite.get_encoding` builds its vocabularies from; the
hashes are the ones tiktoken itself checks before using a downloaded file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from bpetite._internal import BUILTIN_VOCABULARIES, BuiltinVocabulary

#: sha256 of the file -> what tiktoken attaches to it. ``gpt2`` and ``r50k_base`` share
#: one file, which is recognised as ``r50k_base``: tiktoken reads ``gpt2`` from GPT-2's
#: ``encoder.json`` and ``vocab.bpe`` instead.
KNOWN_TIKTOKEN_FILES: Final[Mapping[str, BuiltinVocabulary]] = MappingProxyType(
    {
        vocabulary.rank_file_sha256: vocabulary
        for vocabulary in BUILTIN_VOCABULARIES.values()
        if vocabulary.name != "gpt2"
    }
)


def recognise(data: bytes) -> BuiltinVocabulary | None:
    """The official vocabulary whose ``.tiktoken`` file is exactly `data`, if any."""
    return KNOWN_TIKTOKEN_FILES.get(hashlib.sha256(data).hexdigest())
