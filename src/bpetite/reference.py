"""Byte-level BPE as the specification defines it: naive, literal, and slow on purpose.

Read this first. Training recounts every pair after every merge; encoding merges one
pair at a time. Everything fast in :mod:`bpetite.core` computes exactly what these
functions compute, and the tests prove it (``tests/reference/``: exhaustive small
cases and hypothesis). Nothing here calls the fast code: a tokenizer is anything with
the four plain attributes of :class:`Model` (``merges``, ``pattern``,
``special_tokens``, ``byte_order``), a bpetite ``Tokenizer`` included.

>>> merges = train("ab ab ab", vocab_size=258)
>>> merges
[(97, 98), (32, 256)]
>>> model = Model(merges)
>>> encode(model, "ab<|endoftext|> ab")
[256, 258, 257]
>>> decode(model, [256, 258, 257])
'ab<|endoftext|> ab'
>>> print(render_trace(trace_encode(model, " ab")))
chunk ' ab': ' ' 'a' 'b'
  merge 0: (97, 98) -> 256 'ab' gives ' ' 'ab'
  merge 1: (32, 256) -> 257 ' ab' gives ' ab'

A bpetite Tokenizer is read the same way, which is how the tests use this module:

>>> from bpetite import Tokenizer
>>> tokenizer = Tokenizer.train("ab ab ab", vocab_size=258)
>>> encode(tokenizer, "ab<|endoftext|> ab") == tokenizer.encode("ab<|endoftext|> ab")
True

How to read it: the helpers (``split``, ``get_stats``, ``merge``), the model and its
vocabulary, training (the loop is in ``trace_train``), encoding, decoding, and last the
traces: the same loops with every decision kept, for a reader to follow.

Ids and indices: merge ``r`` makes the token of *index* ``256 + r``, and its id is that
too unless a special token's id falls among the merged tokens' (p50k_base's
``<|endoftext|>`` at 50256, which the merged ids skip: see :func:`mergeable_ids`).
Training and encoding work in indices; what goes in and comes out is ids.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal, Protocol

from bpetite.core._constants import BASE_VOCAB_SIZE, END_OF_TEXT_TOKEN, PRETOKENIZER_PATTERN
from bpetite.core._regex import compile_pattern

Pair = tuple[int, int]
#: Which special texts an encode call turns into ids: "all", or a set of them.
AllowedSpecial = Literal["all"] | Collection[str]

# --------------------------------------------------------------------------- helpers


def split(text: str, pattern: str = PRETOKENIZER_PATTERN) -> list[str]:
    """Cut text into the chunks no merge ever crosses.

    >>> split("it's  ab")
    ['it', "'s", ' ', ' ab']
    """
    return compile_pattern(pattern).findall(text)


def get_stats(ids: Sequence[int], counts: dict[Pair, int] | None = None) -> dict[Pair, int]:
    """Count adjacent pairs, optionally adding to `counts`.

    >>> get_stats([1, 2, 3, 1, 2])
    {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    """
    counts = {} if counts is None else counts
    for pair in pairwise(ids):  # each element and the next
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def merge(ids: Sequence[int], pair: Pair, new_id: int) -> list[int]:
    """Replace each occurrence of `pair` by `new_id`, left to right, never overlapping.

    >>> merge([1, 2, 3, 1, 2], (1, 2), 4)
    [4, 3, 4]
    >>> merge([7, 7, 7], (7, 7), 8)  # the first two merge; the third has no partner
    [8, 7]
    """
    result = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            result.append(new_id)
            i += 2  # skip both: the right one cannot start another pair
        else:
            result.append(ids[i])
            i += 1
    return result


def show(token: bytes) -> str:
    """A token's bytes for a reader: its text if they are UTF-8, else hex.

    >>> show(b" th"), show(b"\\xe2\\x80")
    ("' th'", '<e2 80>')
    """
    try:
        return repr(token.decode("utf-8"))
    except UnicodeDecodeError:
        return "<" + token.hex(" ") + ">"


# --------------------------------------------------------------------------- the model


class ModelLike(Protocol):
    """What the functions read from a tokenizer: a :class:`Model` or a bpetite Tokenizer."""

    @property
    def merges(self) -> Sequence[Pair]: ...
    @property
    def pattern(self) -> str: ...
    @property
    def special_tokens(self) -> Mapping[str, int] | None: ...
    @property
    def byte_order(self) -> Sequence[int] | None: ...


@dataclass(frozen=True, slots=True)
class Model:
    """A tokenizer as plain data; ``Model(merges)`` is the specification's configuration.

    Merge ``r`` joins ``(left, right)`` into id ``256 + r``, or, where special tokens
    hold ids among the merged tokens', the ``256 + r``-th id no special token holds
    (:func:`mergeable_ids`); the pairs are ids. `special_tokens` maps each special text
    to its id; None means the spec's ``<|endoftext|>`` right after the merges.
    `byte_order[i]` is the byte of id ``i``; None means id ``i`` is byte ``i`` (other
    orders come from imported vocabularies, such as GPT-2's).
    """

    merges: Sequence[Pair]
    pattern: str = PRETOKENIZER_PATTERN
    special_tokens: Mapping[str, int] | None = None
    byte_order: Sequence[int] | None = None


def vocab(
    merges: Sequence[Pair],
    *,
    byte_order: Sequence[int] | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> dict[int, bytes]:
    """Every id's bytes, from the merges: a merged token is its two parts joined, a
    special token its text (the first listed, where two texts share an id).

    >>> vocab([(97, 98), (256, 99)])[257], vocab([])[256]
    (b'abc', b'<|endoftext|>')
    """
    byte_order = byte_order or range(BASE_VOCAB_SIZE)
    ids = mergeable_ids(merges, special_tokens)
    table = {idx: bytes([byte_order[idx]]) for idx in range(BASE_VOCAB_SIZE)}
    for rank, (left, right) in enumerate(merges):
        table[ids[BASE_VOCAB_SIZE + rank]] = table[left] + table[right]
    for text, idx in _specials(merges, special_tokens).items():
        table.setdefault(idx, text.encode("utf-8"))  # two texts of one id: the first's
    return table


def mergeable_ids(
    merges: Sequence[Pair], special_tokens: Mapping[str, int] | None = None
) -> list[int]:
    """Each mergeable token's id, by index (the bytes, then merge ``r`` at ``256 + r``):
    the ids in order, skipping the ones special tokens hold.

    >>> mergeable_ids([(97, 98), (256, 98)], {"<|a|>": 257})[256:]  # <|a|> is skipped
    [256, 258]
    """
    size = BASE_VOCAB_SIZE + len(merges)
    held = set(_specials(merges, special_tokens).values())
    return [idx for idx in range(size + len(held)) if idx not in held][:size]


def _indexed(tokenizer: ModelLike) -> tuple[list[Pair], list[int]]:
    """The merges written in indices, where merge ``r`` makes ``256 + r``, and each
    index's id: what training and encoding work in, and the way back."""
    ids = mergeable_ids(tokenizer.merges, tokenizer.special_tokens)
    index = {idx: i for i, idx in enumerate(ids)}
    return [(index[left], index[right]) for left, right in tokenizer.merges], ids


def _specials(merges: Sequence[Pair], specials: Mapping[str, int] | None) -> Mapping[str, int]:
    """The special tokens; None means the spec's: ``<|endoftext|>`` right after the merges."""
    if specials is None:
        return {END_OF_TEXT_TOKEN: BASE_VOCAB_SIZE + len(merges)}
    return specials


# --------------------------------------------------------------------------- training


def train(
    text: str,
    vocab_size: int,
    *,
    pattern: str = PRETOKENIZER_PATTERN,
    max_token_bytes: int | None = None,
    min_frequency: int | None = None,
) -> list[Pair]:
    """Learn up to ``vocab_size - 256`` merges from `text`: split, count chunks, merge.

    Training read naively, and its definition: the core's ``train_merges`` (fast) and
    ``visualize._trace.trace_train_counts`` (incremental) must equal it. A special
    token's text in the corpus is ordinary characters here; the specials get their ids
    after training (see :class:`Model`).

    >>> train("cab", 257)  # (99, 97) and (97, 98) tie at 1: the smaller pair wins
    [(97, 98)]
    """
    # chunks merges never cross, each distinct one counted once with its frequency
    chunk_counts = Counter(chunk.encode("utf-8") for chunk in split(text, pattern))
    return train_counts(
        chunk_counts, vocab_size, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )


def train_counts(
    chunk_counts: Mapping[bytes, int],
    vocab_size: int,
    *,
    max_token_bytes: int | None = None,
    min_frequency: int | None = None,
) -> list[Pair]:
    """Learn merges from chunk counts: each distinct chunk's bytes and how often it occurs.

    >>> train_counts({b"ab": 1, b" ab": 2}, 300)  # stops early: every chunk is one token
    [(97, 98), (32, 256)]
    """
    steps = trace_train(
        chunk_counts, vocab_size, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    return [step.pair for step in steps]


def extend(
    model: ModelLike,
    text_or_counts: str | Mapping[bytes, int],
    vocab_size: int,
    *,
    max_token_bytes: int | None = None,
    min_frequency: int | None = None,
) -> list[Pair]:
    """Continue training `model`: its merges, then more, learned on the chunks it encodes.

    Each chunk starts as the tokens the model gives it, and the loop goes on from there,
    the new tokens after the model's. The merges come back in training's layout, the
    special tokens after them (so ids are indices: ``Tokenizer.extended`` with
    ``renumber_specials=True``). Training to m, then on to n, is training to n:

    >>> extend(Model(train("ab ab ab", 257)), "ab ab ab", 258) == train("ab ab ab", 258)
    True
    """
    merges, _ = _indexed(model)
    steps = trace_train(
        text_or_counts,
        vocab_size,
        pattern=model.pattern,
        max_token_bytes=max_token_bytes,
        min_frequency=min_frequency,
        start=model,
    )
    return [*merges, *(step.pair for step in steps)]


@dataclass(frozen=True, slots=True)
class TrainStep:
    """One merge training made, and why: `pair` won with `count` over `runners_up`.

    `tied` holds the pairs exactly as frequent, which lost only for being larger;
    `token` is the new token's bytes; `total_tokens` counts the corpus after the merge.
    Training places the special tokens after the merges, so ids are indices here.
    """

    rank: int
    pair: Pair
    count: int
    runners_up: tuple[tuple[Pair, int], ...]
    tied: tuple[Pair, ...]
    token: bytes
    total_tokens: int

    @property
    def new_id(self) -> int:
        return BASE_VOCAB_SIZE + self.rank


def trace_train(
    text_or_counts: str | Mapping[bytes, int],
    vocab_size: int,
    *,
    pattern: str = PRETOKENIZER_PATTERN,
    max_token_bytes: int | None = None,
    min_frequency: int | None = None,
    start: ModelLike | None = None,
) -> list[TrainStep]:
    """The training loop, each merge kept as a :class:`TrainStep`.

    The naive reading: every pair is recounted after every merge. The incremental
    ``visualize._trace.trace_train_counts`` equals it step for step on chunk counts, and
    the fast ``core._trainer.train_merges`` merge for merge.

    A pair is a candidate only if its token has at most `max_token_bytes` bytes.
    Training stops after ``vocab_size - 256`` merges, when no candidate is left, or
    when the best occurs fewer than `min_frequency` times. From a model `start`, it
    continues that model's training (see :func:`extend`), in indices: the pairs and ids
    of the steps are those of the model's merges written in indices.

    >>> [(step.pair, step.count, step.tied) for step in trace_train("cab", 257)]
    [((97, 98), 1, ((99, 97),))]
    """
    if vocab_size < BASE_VOCAB_SIZE:
        raise ValueError(f"vocab_size must be at least {BASE_VOCAB_SIZE}, got {vocab_size}")
    if isinstance(text_or_counts, str):
        text_or_counts = Counter(chunk.encode("utf-8") for chunk in split(text_or_counts, pattern))
    # each distinct chunk as a tuple of ids, and its count: the indices `start` encodes
    # it to, which with no model to start from are its bytes
    start = start or Model([])
    merges, _ = _indexed(start)
    ranks, byte_ids = _ranks(merges), _byte_ids(start.byte_order)
    words = {tuple(_encode_chunk(c, ranks, byte_ids)): n for c, n in text_or_counts.items()}
    token_bytes = vocab(merges, byte_order=start.byte_order, special_tokens={})
    steps: list[TrainStep] = []
    for new_id in range(BASE_VOCAB_SIZE + len(merges), vocab_size):
        # count the adjacent pairs inside each chunk, times the chunk's count
        stats: dict[Pair, int] = {}
        for word, count in words.items():
            for pair in pairwise(word):
                stats[pair] = stats.get(pair, 0) + count
        # keep the candidates: pairs whose token would not be too long
        if max_token_bytes is not None:
            stats = {
                pair: n
                for pair, n in stats.items()
                if len(token_bytes[pair[0]] + token_bytes[pair[1]]) <= max_token_bytes
            }
        if not stats:
            break  # nothing left to merge: stop early, which is no error
        # the most frequent pair wins, the smallest (left, right) on a tie: the spec's
        # min(stats.items(), key=lambda item: (-item[1], item[0])) is ranked[0]
        ranked = sorted(stats.items(), key=lambda item: (-item[1], item[0]))
        pair, count = ranked[0]
        if min_frequency is not None and count < min_frequency:
            break
        # mint a new token, and merge the pair in every chunk
        token_bytes[new_id] = token_bytes[pair[0]] + token_bytes[pair[1]]
        # (distinct chunks stay distinct: a chunk's tokens always spell its bytes; one
        # without the pair's left token cannot change, and is kept as it is)
        words = {
            tuple(merge(word, pair, new_id)) if pair[0] in word else word: n
            for word, n in words.items()
        }
        steps.append(
            TrainStep(
                rank=new_id - BASE_VOCAB_SIZE,
                pair=pair,
                count=count,
                runners_up=tuple(ranked[1:4]),
                tied=tuple(other for other, n in ranked[1:] if n == count),
                token=token_bytes[new_id],
                total_tokens=sum(len(word) * n for word, n in words.items()),
            )
        )
    return steps


# --------------------------------------------------------------------------- encoding


def encode_chunk(
    chunk: bytes, merges: Sequence[Pair], byte_order: Sequence[int] | None = None
) -> list[int]:
    """One chunk's bytes -> ids: merge the lowest-ranked pair present until none is ranked.

    Merge ``r`` makes id ``256 + r`` here; a model whose special tokens sit among the
    merged ids encodes with :func:`encode`.

    >>> encode_chunk(b"abab", [(97, 98), (256, 256)])
    [257]
    """
    return chunk_encoder(merges, byte_order)(chunk)


def chunk_encoder(
    merges: Sequence[Pair], byte_order: Sequence[int] | None = None
) -> Callable[[bytes], list[int]]:
    """:func:`encode_chunk` for many chunks of one merge list, its tables built once.

    >>> chunk_encoder([(97, 98), (256, 256)])(b"ababab")
    [257, 256]
    """
    ranks, byte_ids = _ranks(merges), _byte_ids(byte_order)
    return lambda chunk: _encode_chunk(chunk, ranks, byte_ids)


def _encode_chunk(
    chunk: bytes, ranks: Mapping[Pair, int], byte_ids: Mapping[int, int]
) -> list[int]:
    """One chunk's bytes -> indices, given each pair's rank (in indices) and byte's id."""
    # The specification sketches one pass per merge rank, in rank order. Merging the
    # lowest-ranked pair present (minbpe's loop) gives the same ids: merge r's parts are
    # ids below its own, so every pair that merging rank r makes has a rank above r,
    # and after it no pair of rank r or lower is left. The ranks merged only rise, and
    # the ranks skipped are the passes that would have found nothing.
    tokens = [byte_ids[byte] for byte in chunk]  # the bytes as ids
    while (pair := _lowest_ranked(tokens, ranks)) is not None:
        tokens = merge(tokens, pair, BASE_VOCAB_SIZE + ranks[pair])
    return tokens


def _lowest_ranked(tokens: Sequence[int], ranks: Mapping[Pair, int]) -> Pair | None:
    """Of the adjacent pairs, the one training merged first; None if none was merged."""
    pair = min(get_stats(tokens), key=lambda p: ranks.get(p, math.inf), default=None)
    return pair if pair in ranks else None


def _ranks(merges: Sequence[Pair]) -> dict[Pair, int]:
    """Each pair's rank; a pair listed twice keeps its first, as the second never applies."""
    ranks: dict[Pair, int] = {}
    for rank, pair in enumerate(merges):
        ranks.setdefault(pair, rank)
    return ranks


def _byte_ids(byte_order: Sequence[int] | None) -> dict[int, int]:
    """Each byte's id: the byte order inverted."""
    return {byte: idx for idx, byte in enumerate(byte_order or range(BASE_VOCAB_SIZE))}


def _segments(tokenizer: ModelLike, text: str, allowed_special: AllowedSpecial) -> list[str | int]:
    """Text cut at its allowed special tokens: the segments between (str) and their ids (int).

    The leftmost special wins, and of those starting there the longest.
    """
    specials = _specials(tokenizer.merges, tokenizer.special_tokens)
    if allowed_special != "all":  # the others are ordinary text
        specials = {text: specials[text] for text in allowed_special}
    segments: list[str | int] = []
    start = 0
    while found := [(i, -len(s), s) for s in specials if (i := text.find(s, start)) >= 0]:
        at, _, special = min(found)
        segments += [text[start:at], specials[special]]
        start = at + len(special)
    segments.append(text[start:])
    return [segment for segment in segments if segment != ""]


def encode(
    tokenizer: ModelLike, text: str, *, allowed_special: AllowedSpecial = "all"
) -> list[int]:
    """Text -> ids: find the special tokens, split the rest into chunks, encode each.

    >>> encode(Model([(97, 98)]), "ab<|endoftext|>")
    [256, 257]
    >>> encode(Model([(97, 98)]), "ab<|endoftext|>", allowed_special=set())[:4]
    [256, 60, 124, 101]
    """
    merges, ids_of = _indexed(tokenizer)
    ranks, byte_ids = _ranks(merges), _byte_ids(tokenizer.byte_order)
    ids: list[int] = []
    for segment in _segments(tokenizer, text, allowed_special):
        if isinstance(segment, int):
            ids.append(segment)  # a special token is its id, never split or merged
            continue
        for chunk in split(segment, tokenizer.pattern):
            ids += [ids_of[i] for i in _encode_chunk(chunk.encode("utf-8"), ranks, byte_ids)]
    return ids


# --------------------------------------------------------------------------- decoding


def decode_bytes(tokenizer: ModelLike, ids: Iterable[int]) -> bytes:
    """Ids -> bytes: look each id up and join them; an unknown id raises KeyError."""
    table = vocab(
        tokenizer.merges, byte_order=tokenizer.byte_order, special_tokens=tokenizer.special_tokens
    )
    return b"".join(table[idx] for idx in ids)


def decode(tokenizer: ModelLike, ids: Iterable[int], errors: str = "strict") -> str:
    """Ids -> text: the bytes joined, then decoded once (a character may span tokens).

    >>> decode(Model([]), [0xE2, 0x82, 0xAC])
    '€'
    """
    return decode_bytes(tokenizer, ids).decode("utf-8", errors=errors)


# --------------------------------------------------------------------------- traces


@dataclass(frozen=True, slots=True)
class EncodeStep:
    """One step of encoding: a chunk starts (`rank` is None), or one merge applies to it.

    `tokens` are the chunk's ids after the step, `pieces` their bytes; the merge of rank
    `rank` joins `pair` into `new_id`. A special token is a chunk of its own, one step,
    with `special` set.
    """

    chunk: bytes
    tokens: tuple[int, ...]
    pieces: tuple[bytes, ...]
    rank: int | None = None
    pair: Pair | None = None
    new_id: int | None = None
    special: bool = False


def trace_encode(
    tokenizer: ModelLike, text: str, *, allowed_special: AllowedSpecial = "all"
) -> list[EncodeStep]:
    """Every step :func:`encode` takes: per chunk, its bytes, then each merge applied.

    The ids ``encode`` returns are, chunk after chunk, the tokens of each chunk's last step.
    """
    merges, ids_of = _indexed(tokenizer)
    ranks, byte_ids = _ranks(merges), _byte_ids(tokenizer.byte_order)
    table = vocab(
        tokenizer.merges, byte_order=tokenizer.byte_order, special_tokens=tokenizer.special_tokens
    )
    steps: list[EncodeStep] = []
    for segment in _segments(tokenizer, text, allowed_special):
        if isinstance(segment, int):
            steps.append(EncodeStep(table[segment], (segment,), (table[segment],), special=True))
            continue
        for chunk in split(segment, tokenizer.pattern):
            # _encode_chunk's loop in indices, keeping the tokens (as ids) after every merge
            data = chunk.encode("utf-8")
            tokens = [byte_ids[byte] for byte in data]
            ids = tuple(ids_of[i] for i in tokens)
            steps.append(EncodeStep(data, ids, tuple(table[t] for t in ids)))
            while (pair := _lowest_ranked(tokens, ranks)) is not None:
                rank = ranks[pair]
                tokens = merge(tokens, pair, BASE_VOCAB_SIZE + rank)
                ids = tuple(ids_of[i] for i in tokens)
                pieces = tuple(table[t] for t in ids)
                new_id = ids_of[BASE_VOCAB_SIZE + rank]
                steps.append(EncodeStep(data, ids, pieces, rank, tokenizer.merges[rank], new_id))
    return steps


def render_trace(steps: Iterable[TrainStep | EncodeStep]) -> str:
    """A trace as plain text, one line per step.

    >>> print(render_trace(trace_train("cab", 257)))
    merge 0: (97, 98) -> 256 'ab', count 1, tie won against (99, 97); 2 tokens after
    """
    return "\n".join(_render(step) for step in steps)


def _render(step: TrainStep | EncodeStep) -> str:
    if isinstance(step, TrainStep):
        line = f"merge {step.rank}: {step.pair} -> {step.new_id} {show(step.token)}, "
        line += f"count {step.count}"
        if step.tied:
            line += ", tie won against " + ", ".join(map(str, step.tied[:3]))
            line += f" and {len(step.tied) - 3} more" if len(step.tied) > 3 else ""
        elif step.runners_up:
            line += ", next " + ", ".join(f"{pair} x{n}" for pair, n in step.runners_up)
        return line + f"; {step.total_tokens} tokens after"
    pieces = " ".join(map(show, step.pieces))
    if step.special:
        return f"special {show(step.chunk)} -> {step.tokens[0]}"
    if step.new_id is None:  # the chunk's bytes, before any merge
        return f"chunk {show(step.chunk)}: {pieces}"
    token = step.pieces[step.tokens.index(step.new_id)]
    return f"  merge {step.rank}: {step.pair} -> {step.new_id} {show(token)} gives {pieces}"
