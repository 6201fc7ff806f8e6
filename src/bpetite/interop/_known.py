"""OpenAI's published vocabularies, recognised by the sha256 of their files.

A ``.tiktoken`` file holds only ranks: not the split pattern the vocabulary was made
for, nor its special tokens. For the official files those are known (tiktoken's
``tiktoken_ext/openai_public.py`` pins them), so a file whose hash matches gets them,
with tiktoken's ids, and then encodes exactly as tiktoken's encoding of that name.
The hashes are the ones tiktoken itself checks before using a downloaded file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from bpetite._internal import END_OF_TEXT_TOKEN


@dataclass(frozen=True, slots=True)
class KnownVocabulary:
    """What a recognised file leaves out: its name, split pattern and special tokens."""

    name: str
    pattern: str
    special_tokens: Mapping[str, int]
    ranks: int


#: sha256 of the file -> what tiktoken attaches to it. GPT-2's ``gpt2.tiktoken`` is
#: ``r50k_base``; its pattern is GPT-2's, which bpetite's ``gpt2`` preset splits the
#: same way (tests/interop/test_formats.py checks the ids on TinyShakespeare).
KNOWN_TIKTOKEN_FILES: Final[Mapping[str, KnownVocabulary]] = MappingProxyType(
    {
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930": KnownVocabulary(
            "r50k_base", "gpt2", MappingProxyType({END_OF_TEXT_TOKEN: 50256}), 50256
        ),
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7": KnownVocabulary(
            "cl100k_base",
            "cl100k",
            MappingProxyType(
                {
                    END_OF_TEXT_TOKEN: 100257,
                    "<|fim_prefix|>": 100258,
                    "<|fim_middle|>": 100259,
                    "<|fim_suffix|>": 100260,
                    "<|endofprompt|>": 100276,
                }
            ),
            100256,
        ),
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d": KnownVocabulary(
            "o200k_base",
            "o200k",
            MappingProxyType({END_OF_TEXT_TOKEN: 199999, "<|endofprompt|>": 200018}),
            199998,
        ),
    }
)


def recognise(data: bytes) -> KnownVocabulary | None:
    """The official vocabulary whose ``.tiktoken`` file is exactly `data`, if any."""
    return KNOWN_TIKTOKEN_FILES.get(hashlib.sha256(data).hexdigest())
