"""Adapters for the Rust libraries bpetite is measured against: HF ``tokenizers`` and tiktoken.

Both are configured to do exactly bpetite's job, so the comparison is like for like:

* the HF trainer splits with bpetite's regex (``Split(..., behavior="isolated")``), then
  maps bytes to GPT-2's printable alphabet (``ByteLevel(add_prefix_space=False,
  use_regex=False)``) and starts from all 256 bytes, so its merges are byte-pair merges
  on the same chunks;
* the encoders (tiktoken, and HF's ``BPE`` model) are built in memory from a bpetite
  vocabulary, and the harness checks that their ids equal bpetite's.

Both libraries are imported lazily: the harness still runs, with a note, without them.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from bpetite.core._constants import END_OF_TEXT_TOKEN, PRETOKENIZER_PATTERN

BytePair = tuple[bytes, bytes]


def available(module: str) -> bool:
    """Whether `module` can be imported (the bench dependency group may be missing)."""
    return importlib.util.find_spec(module) is not None


@cache
def _byte_to_char() -> dict[int, str]:
    """GPT-2's byte-to-printable-character table, the alphabet of HF's ByteLevel."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    table = {byte: chr(byte) for byte in printable}
    shifted = 0
    for byte in range(256):
        if byte not in table:
            table[byte] = chr(256 + shifted)
            shifted += 1
    return table


@cache
def _char_to_byte() -> dict[str, int]:
    return {char: byte for byte, char in _byte_to_char().items()}


def to_byte_level(token: bytes) -> str:
    return "".join(_byte_to_char()[byte] for byte in token)


def from_byte_level(token: str) -> bytes:
    return bytes(_char_to_byte()[char] for char in token)


def hf_pre_tokenizer() -> Any:
    from tokenizers import Regex, pre_tokenizers

    return pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PRETOKENIZER_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )


def hf_train(corpus: str, vocab_size: int) -> tuple[float, list[BytePair]]:
    """Train HF's BPE on `corpus` like bpetite would; return (seconds, merges as bytes).

    The corpus goes in as one sequence, so the regex sees exactly the text bpetite
    sees (feeding lines would change the chunks around newlines). HF counts the 256
    initial-alphabet entries in `vocab_size`, so the same number means the same
    number of merges. Its thread pool is rayon's default unless RAYON_NUM_THREADS is set.
    """
    import time

    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = hf_pre_tokenizer()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=0,
        show_progress=False,
        special_tokens=[],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    started = time.perf_counter()
    tokenizer.train_from_iterator([corpus], trainer=trainer)
    seconds = time.perf_counter() - started
    raw_merges = json.loads(tokenizer.to_str())["model"]["merges"]
    merges: list[BytePair] = []
    for merge in raw_merges:
        # Older releases store "left right", newer ones ["left", "right"].
        left, right = merge.split(" ") if isinstance(merge, str) else merge
        merges.append((from_byte_level(left), from_byte_level(right)))
    return seconds, merges


def compare_merges(ours: Sequence[BytePair], theirs: Sequence[BytePair]) -> dict[str, int]:
    """How alike two merge lists are: identical prefix, same merge at same rank, shared.

    Exact ties between equally frequent pairs may legitimately be broken differently
    (bpetite: the smallest id pair), after which the lists drift apart.
    """
    prefix = 0
    for mine, other in zip(ours, theirs, strict=False):
        if mine != other:
            break
        prefix += 1
    return {
        "ours": len(ours),
        "theirs": len(theirs),
        "identical_prefix": prefix,
        "same_rank": sum(a == b for a, b in zip(ours, theirs, strict=False)),
        "shared": len(set(ours) & set(theirs)),
    }


def tiktoken_encoding(vocab: Mapping[int, bytes], special_id: int) -> Any:
    """A tiktoken ``Encoding`` with bpetite's regex, ranks and special token, in memory."""
    import tiktoken

    return tiktoken.Encoding(
        "bpetite-bench",
        pat_str=PRETOKENIZER_PATTERN,
        mergeable_ranks={vocab[i]: i for i in range(special_id)},
        special_tokens={END_OF_TEXT_TOKEN: special_id},
    )


def hf_encoder(vocab: Mapping[int, bytes], merges: Sequence[tuple[int, int]]) -> Any:
    """An HF ``Tokenizer`` whose BPE model holds bpetite's vocabulary and merges.

    Ids line up by construction: byte ``b`` is id ``b`` and merge ``r`` is ``256 + r``
    in both, and the special token is added next, at ``256 + len(merges)``.
    """
    from tokenizers import Tokenizer, models

    special_id = 256 + len(merges)
    model = models.BPE(
        vocab={to_byte_level(vocab[i]): i for i in range(special_id)},
        merges=[
            (to_byte_level(vocab[left]), to_byte_level(vocab[right])) for left, right in merges
        ],
    )
    tokenizer = Tokenizer(model)
    tokenizer.pre_tokenizer = hf_pre_tokenizer()
    tokenizer.add_special_tokens([END_OF_TEXT_TOKEN])
    return tokenizer


def hf_threads_note() -> str:
    """What decides HF's thread count here, for the report."""
    import os

    setting = os.environ.get("RAYON_NUM_THREADS")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if setting:
        return f"RAYON_NUM_THREADS={setting}"
    return f"rayon default: one thread per available CPU ({cpus} here)"
