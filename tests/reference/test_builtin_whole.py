"""Every token of a built-in vocabulary encodes to itself, so get_encoding marks its merges
as learned (``LearnedMerges``) and the encoder proves no token whole on the first encode.

Two checks of each shipped model file: the encoder's own proof (``Encoder.is_whole``,
which tests/core/test_encoder.py proves equal to the reference) settles every token,
and ``bpetite.reference`` encodes a sample of tokens (the longest of the file among
them) to themselves. OpenAI's rank files have the same property ("BPE on its own bytes
with all ranks gives the token itself"); this proves it of the files bpetite ships.
"""

from __future__ import annotations

import random
from functools import cache
from typing import Any

import pytest

from bpetite import reference as ref
from bpetite.core import _builtin, _tokenizer
from bpetite.core._constants import BASE_VOCAB_SIZE
from bpetite.core._encoder import Encoder
from bpetite.core._model import LearnedMerges, Merges, mergeable_tokens
from bpetite.core._patterns import resolve_pattern

#: One name per shipped file (names that share a file share its tokens).
FILES = sorted({v.file: name for name, v in _builtin.BUILTIN_VOCABULARIES.items()}.items())


@cache
def _shipped(file: str) -> tuple[Merges, tuple[int, ...], list[bytes]]:
    """A shipped file's merges (in indices), byte order, and every token's bytes by index."""
    vocabulary = next(v for v in _builtin.BUILTIN_VOCABULARIES.values() if v.file == file)
    merges, byte_order = _builtin._model(file, vocabulary.file_sha256)
    return merges, byte_order, mergeable_tokens(merges, byte_order)


@pytest.mark.parametrize(("file", "name"), FILES)
def test_the_encoder_proves_every_token_of_a_shipped_file_whole(file: str, name: str) -> None:
    merges, byte_order, tokens = _shipped(file)
    assert isinstance(merges, LearnedMerges)  # what lets the encoder skip the proof
    byte_ids = bytes(sorted(range(BASE_VOCAB_SIZE), key=byte_order.__getitem__))
    # A plain tuple is not marked, so this encoder proves each token, lazily.
    encoder = Encoder(
        tuple(merges), tokens, resolve_pattern("gpt2").split, byte_ids, prove_up_to=-1
    )
    not_whole = [token for token in range(len(tokens)) if not encoder.is_whole(token)]
    assert not_whole == [], f"{name}: tokens that do not encode to themselves: {not_whole[:5]}"


@pytest.mark.parametrize(("file", "name"), FILES)
def test_the_reference_encodes_sampled_tokens_of_a_shipped_file_to_themselves(
    file: str, name: str
) -> None:
    merges, byte_order, tokens = _shipped(file)
    longest = sorted(range(len(tokens)), key=lambda token: len(tokens[token]))[-20:]
    sample = longest + random.Random(name).sample(range(len(tokens)), 300)
    encode_chunk = ref.chunk_encoder(merges, byte_order)  # its tables built once
    for token in sample:
        assert encode_chunk(tokens[token]) == [token], (name, token)


@pytest.mark.parametrize("name", sorted(_builtin.BUILTIN_VOCABULARIES))
def test_every_builtin_encoder_is_built_marked_whole(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mark survives the model's checks, p50k's special id among the merged ones too.

    ``Encoder`` is wrapped to record what each build is told; a fresh tokenizer (not
    the cached one, whose encoder may exist already) builds its encoder on first use.
    """
    expected = _builtin.get_encoding(name).encode_ordinary(" hello world")
    told: list[object] = []
    real = Encoder  # what _tokenizer builds with

    def recording(*args: Any, **kwargs: Any) -> Encoder:
        told.append(kwargs.get("trained"))
        return real(*args, **kwargs)

    monkeypatch.setattr(_tokenizer, "Encoder", recording)
    fresh = _builtin._built.__wrapped__(name)
    assert fresh.encode_ordinary(" hello world") == expected
    assert told == [True]
