"""The model: a merge list, the rules a model's fields keep, and the vocabulary it defines.

Ids 0..255 are the single bytes (``byte_order[i]`` is the byte of id ``i``); merge
``r`` joins two ids below ``256 + r`` into the new id ``256 + r``. That rule is what
makes every token's bytes well defined. The vocabulary follows from the merges as
:func:`bpetite.reference.vocab` defines it. A special token may hold an id among the
merged tokens' (p50k_base's ``<|endoftext|>``); then the mergeable ids skip it, merge
``r`` makes the ``256 + r``-th id no special token holds, and the encoder works in
indices (:mod:`bpetite.core._ids`).

:func:`define` is the one validation of a model's fields (merges, split pattern,
special tokens, byte order, training record, name), and :class:`Model` what it
returns. The :class:`~bpetite.Tokenizer` constructor calls it on its arguments and the
artifact loader on what a file holds, as the last step of its checklist, so nothing
the constructor refuses loads; the loader reports a refusal as the file's defect.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter, lt
from types import MappingProxyType
from typing import Final

from bpetite.core._constants import BASE_VOCAB_SIZE, BYTE_TOKENS, MAX_TOKEN_ID
from bpetite.core._decoder import checked_id
from bpetite.core._errors import ParameterError, TokenIdTypeError
from bpetite.core._ids import index_table, mergeable_ids, skipped_ids, to_ids
from bpetite.core._patterns import SplitPattern, resolve_pattern
from bpetite.core._pretokenizer import require_utf8

Merge = tuple[int, int]

#: Ids 0..255 in the default layout: id ``i`` is the byte ``i``.
IDENTITY_BYTE_ORDER: Final = tuple(range(BASE_VOCAB_SIZE))

#: The options a model records about how its merges were learned, each with its least
#: value; they change no id (the constructor and the artifact both keep them).
TRAINING_OPTIONS: Final[Mapping[str, int]] = MappingProxyType(
    {"max_token_bytes": 2, "min_frequency": 1}
)

#: Why each training option's least value is the least, for the messages refusing less.
TRAINING_LEAST_BECAUSE: Final[Mapping[str, str]] = MappingProxyType(
    {
        "max_token_bytes": "every merged token has two bytes or more",
        "min_frequency": "a pair that occurs has count 1",
    }
)


class Merges(tuple[Merge, ...]):
    """A merge list that has passed :func:`check_merges`: int pairs that keep the rule,
    merge ``r`` joining two indices below ``256 + r``.

    The loader hands the constructor one of these, so a list checked once, step by step
    in the loader's own words, is not walked a second time. A model's merges in ids are
    one only when its ids are its indices; where they skip a special token's id, the
    merges in indices are (:attr:`Model.indexed`).
    """

    __slots__ = ()


class IndexedMerges(Merges):
    """Checked merges in indices, handed to :func:`define` by bpetite's own code (the
    trainer, the loader, a shipped model file, surgery): define gives them the ids the
    special tokens leave free. A model's ``merges`` is never one, so merges read back
    from a tokenizer and passed to the constructor are read as ids, as any others are.
    """

    __slots__ = ()


class LearnedMerges(Merges):
    """A merge list the trainer learned from byte chunks, from scratch, or a built-in's.

    Every token of such a list encodes to itself (for the trainer's, the proof is in
    :class:`~bpetite.core._encoder.Encoder`; for the built-ins, a test proves each
    token), so the encoder proves nothing for it.
    """

    __slots__ = ()


class LearnedIndexedMerges(IndexedMerges, LearnedMerges):
    """Learned merges in indices, for a model whose special ids lie among the learned
    tokens' (p50k_base's ``<|endoftext|>``, a trained model's special at a chosen id):
    read as :class:`IndexedMerges`, every token whole as :class:`LearnedMerges`.
    """

    __slots__ = ()


def misplaced_id(merges: Sequence[Merge]) -> tuple[int, int] | None:
    """The ``(rank, side)`` of the first id not below its merge's own id, or None.

    `merges` must hold pairs of non-negative ints. Two whole-list comparisons decide
    the common, valid case; only a list that fails them is walked, in rank order, so
    the answer is the first offender whichever comparison noticed.

    >>> misplaced_id([(97, 98), (256, 99)]) is None
    True
    >>> misplaced_id([(97, 98), (99, 257)])
    (1, 1)
    """
    new_ids = range(BASE_VOCAB_SIZE, BASE_VOCAB_SIZE + len(merges))
    if all(map(lt, map(itemgetter(0), merges), new_ids)) and all(
        map(lt, map(itemgetter(1), merges), new_ids)
    ):
        return None
    for rank, merge in enumerate(merges):
        for side, token_id in enumerate(merge):
            if token_id >= BASE_VOCAB_SIZE + rank:
                return rank, side
    return None  # pragma: no cover - the comparisons above found an offender


def check_merges(merges: Sequence[Merge]) -> Merges:
    """Return `merges` as :class:`Merges`, or raise ParameterError naming the first bad one.

    Each merge must be a pair (tuple or list) of integers that :func:`misplaced_id`
    accepts; an integer of another type (numpy's) is taken by its ``__index__``, as
    decode takes ids, and made an int. Exact tuples and lists of two ints are checked
    with whole-list passes; anything else is walked in rank order, which names the
    first bad entry.
    """
    if isinstance(merges, Merges):
        return merges
    if isinstance(merges, (str, bytes, Mapping)):
        raise TypeError(
            f"merges must be a sequence of (left, right) pairs, got {type(merges).__name__}"
        )
    pairs = _int_pairs(merges)
    if pairs is not None and misplaced_id(pairs) is None:
        return Merges(pairs)
    checked = []
    for rank, merge in enumerate(merges):
        checked.append(_checked_pair(rank, merge, BASE_VOCAB_SIZE + rank))
    return Merges(checked)


def check_ids(merges: Sequence[Merge], skipped: Sequence[int]) -> tuple[list[Merge], list[Merge]]:
    """`merges`, written in ids that skip the `skipped` ids, as pairs in ids and in
    indices; or ParameterError naming the first bad one.

    Merge ``r`` must join two mergeable ids below its own (the ``256 + r``-th id that
    `skipped` leaves free).
    """
    count = BASE_VOCAB_SIZE + len(merges)
    table = index_table(count, skipped)
    pairs = _int_pairs(merges)
    if pairs is not None:
        in_indices = indexed(pairs, table)
        if (not in_indices or min(map(min, in_indices)) >= 0) and misplaced_id(in_indices) is None:
            return pairs, in_indices
    ids = mergeable_ids(count, skipped)
    checked = []
    for rank, merge in enumerate(merges):
        pair = _checked_pair(rank, merge, ids[BASE_VOCAB_SIZE + rank])
        if -1 in (table[pair[0]], table[pair[1]]):
            raise ParameterError(
                f"merges[{rank}] is {merge!r}, but a merge joins mergeable tokens and a "
                "special token holds one of those ids"
            )
        checked.append(pair)
    # Every merge valid, some of integers of other types (numpy's), now ints.
    return checked, indexed(checked, table)


def _checked_pair(rank: int, merge: object, below: int) -> Merge:
    """Merge `rank` as a pair of ints below `below`, or ParameterError naming it."""
    pair = _id_pair(merge)
    if pair is None or not all(0 <= part < below for part in pair):
        raise ParameterError(
            f"merges[{rank}] must be two token ids below {below} (a tuple or list of "
            f"two integers), got {merge!r}"
        )
    return pair


def _id_pair(merge: object) -> Merge | None:
    """`merge` as a pair of ints, integers of any type by their ``__index__`` (not a
    bool), as decode takes ids; None if it is not a tuple or list of two integers."""
    if not (isinstance(merge, (tuple, list)) and len(merge) == 2):
        return None
    try:
        return checked_id(merge[0]), checked_id(merge[1])
    except TokenIdTypeError:
        return None


def _int_pairs(merges: Sequence[Merge]) -> list[Merge] | None:
    """`merges` as a list of tuples when each is a tuple or list of two non-negative ints
    (whole-list passes at C speed); None when any is not, for the caller's walk to name."""
    if not (set(map(type, merges)) <= _PAIR_TYPES and set(map(len, merges)) <= _TWO_ONLY):
        return None
    pairs = list(map(tuple, merges))
    lefts = list(map(itemgetter(0), pairs))
    rights = list(map(itemgetter(1), pairs))
    if set(map(type, lefts)) | set(map(type, rights)) <= _INT_ONLY and (
        not pairs or min(min(lefts), min(rights)) >= 0
    ):
        return pairs  # type: ignore[return-value]
    return None


def indexed(merges: Sequence[Merge], table: list[int]) -> list[Merge]:
    """`merges`, pairs of non-negative ids, with each id replaced by its index in `table`
    (:func:`~bpetite.core._ids.index_table`); -1 for an id no mergeable token holds.

    >>> indexed([(97, 98), (256, 99), (258, 256)], [*range(257), -1, 257])
    [(97, 98), (256, 99), (257, 256)]
    """
    top = max(map(max, merges), default=-1)
    if top >= len(table):
        table = table + [-1] * (top + 1 - len(table))
    return list(
        zip(
            map(table.__getitem__, map(itemgetter(0), merges)),
            map(table.__getitem__, map(itemgetter(1), merges)),
            strict=True,
        )
    )


def mergeable_tokens(merges: Iterable[Merge], byte_order: Sequence[int]) -> list[bytes]:
    """The bytes of every mergeable token, by index: the byte order's, then each pair joined.

    The merges, written in indices, must keep the rule (:func:`check_merges`), so both
    parts exist already. Tokens holding more than :data:`MAX_TOKEN_BYTES` in all raise
    ParameterError, before the token that would pass it is made; a merge list the
    trainer learned, or a built-in's (:class:`LearnedMerges`), is not counted.

    >>> mergeable_tokens([(97, 98), (256, 99)], IDENTITY_BYTE_ORDER)[256:]
    [b'ab', b'abc']
    """
    tokens = list(map(BYTE_TOKENS.__getitem__, byte_order))
    append = tokens.append
    if isinstance(merges, LearnedMerges):  # made from text, or a verified package file
        for left, right in merges:
            append(tokens[left] + tokens[right])
        return tokens
    room = MAX_TOKEN_BYTES
    for left, right in merges:
        first, second = tokens[left], tokens[right]
        room -= len(first) + len(second)
        if room < 0:
            raise ParameterError(
                f"merges[{len(tokens) - BASE_VOCAB_SIZE}] would take the tokens past "
                f"{MAX_TOKEN_BYTES:,} bytes in all; real vocabularies hold a few megabytes "
                "(merges that double a token each reach any size in a few dozen)"
            )
        append(first + second)
    return tokens


#: The most bytes a model's mergeable tokens may hold in all: each merge can double a
#: token, so a file of 40 merges could ask for a terabyte. Real vocabularies hold a few
#: megabytes (o200k_base 1.4 MB); one trained on one character repeated for half a
#: gigabyte comes near this. Measurements: docs/design-notes.md#the-tokens-bound
MAX_TOKEN_BYTES: Final = 1 << 30


#: What the whole-list check accepts: exact tuples or lists of two exact ints.
_PAIR_TYPES: Final = frozenset({tuple, list})
_TWO_ONLY: Final = frozenset({2})
_INT_ONLY: Final = frozenset({int})


@dataclass(frozen=True, slots=True)
class Model:
    """A model's fields, checked by :func:`define`: everything a tokenizer is built from.

    The merges, the split pattern, the special tokens (text to id) and the byte order
    decide every id; the training record and the name are provenance and decide none.
    Two texts may share a special id: the first listed is the one the id decodes to,
    the others are its aliases. `mergeable_ids` (the id of each mergeable token, by
    index) and `indexed` (the merges in indices) follow from the merges and the special
    ids; they are `range` and `merges` themselves unless a special token sits among the
    mergeable ids.
    """

    merges: tuple[Merge, ...]
    pattern: SplitPattern
    special_tokens: Mapping[str, int]
    byte_order: tuple[int, ...]
    training: Mapping[str, int]
    name: str | None
    mergeable_ids: Sequence[int]
    indexed: Merges

    @property
    def mergeable_size(self) -> int:
        """The byte tokens plus the merges: how many tokens ordinary text can encode to."""
        return BASE_VOCAB_SIZE + len(self.merges)

    @property
    def id_end(self) -> int:
        """One past the largest id, special tokens included (tiktoken's ``n_vocab``)."""
        return max((self.mergeable_ids[-1], *self.special_tokens.values())) + 1

    def special_bytes(self) -> dict[int, bytes]:
        """Each special id's bytes: the UTF-8 of the first text listed with that id."""
        found: dict[int, bytes] = {}
        for text, token_id in self.special_tokens.items():
            if token_id not in found:
                found[token_id] = text.encode("utf-8")
        return found


def define(
    merges: Sequence[Merge],
    *,
    pattern: str | SplitPattern,
    special_tokens: Sequence[str] | Mapping[str, int],
    byte_order: Sequence[int] | None = None,
    training: Mapping[str, int] | None = None,
    name: str | None = None,
) -> Model:
    """Check every field of a model, in this order, and return them as a :class:`Model`.

    The arguments are :class:`~bpetite.Tokenizer`'s (its docstring says what each
    means). A field that breaks a rule raises ParameterError (TypeError for a value of
    the wrong kind) whose message names the field. The special tokens come before the
    merges, whose ids skip any special id among theirs; :class:`IndexedMerges` are
    read as indices.
    """
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str or None, got {type(name).__name__}")
    if isinstance(merges, (str, bytes, Mapping)):
        raise TypeError(
            f"merges must be a sequence of (left, right) pairs, got {type(merges).__name__}"
        )
    count = BASE_VOCAB_SIZE + len(merges)
    specials = check_special_tokens(special_tokens, count)
    skipped = skipped_ids(count, specials.values())
    ids = mergeable_ids(count, skipped)
    in_ids: tuple[Merge, ...]
    in_indices_checked: Merges
    if isinstance(merges, IndexedMerges):
        in_indices_checked = merges
        in_ids = Merges(to_ids(merges, ids, skipped) if skipped else merges)  # not Indexed
    elif not skipped:
        in_ids = in_indices_checked = check_merges(merges)
    else:
        pairs, in_index_pairs = check_ids(merges, skipped)
        in_ids, in_indices_checked = tuple(pairs), Merges(in_index_pairs)
    split = resolve_pattern(pattern)
    order = check_byte_order(byte_order)
    record = check_training(training)
    return Model(
        in_ids,
        split,
        MappingProxyType(specials),
        order,
        MappingProxyType(record),
        name,
        ids,
        in_indices_checked,
    )


def check_byte_order(byte_order: Sequence[int] | None) -> tuple[int, ...]:
    """Return the byte order as a tuple; it must be a permutation of 0..255 (None: 0..255)."""
    if byte_order is None:
        return IDENTITY_BYTE_ORDER
    if isinstance(byte_order, (str, Mapping)):
        raise TypeError(
            f"byte_order must be a sequence of 256 ints, got {type(byte_order).__name__}"
        )
    order = tuple(byte_order)
    if order == IDENTITY_BYTE_ORDER and set(map(type, order)) == {int}:  # usual, in C
        return IDENTITY_BYTE_ORDER
    if len(order) != BASE_VOCAB_SIZE or any(type(byte) is not int for byte in order):
        raise ParameterError("byte_order must hold 256 ints: the byte of each id 0..255")
    if sorted(order) != list(IDENTITY_BYTE_ORDER):
        missing = sorted(set(IDENTITY_BYTE_ORDER) - set(order))
        raise ParameterError(
            f"byte_order must be a permutation of 0..255; byte {missing[0]} is missing"
        )
    return order


def check_training(training: Mapping[str, int] | None) -> dict[str, int]:
    """Return the training record as a dict of known options, each at least its least value."""
    if not training:
        return {}
    checked = {}
    for name, value in training.items():
        least = TRAINING_OPTIONS.get(name)
        if least is None:
            raise ParameterError(
                f"unknown training option {name!r}: known are {', '.join(TRAINING_OPTIONS)}"
            )
        if type(value) is not int or value < least:
            raise ParameterError(f"training[{name!r}] must be an int of at least {least}")
        checked[name] = value
    return checked


def check_special_tokens(
    special_tokens: Sequence[str] | Mapping[str, int], mergeable_size: int
) -> dict[str, int]:
    """Return text -> id for the special tokens: distinct non-empty texts, ids past the bytes.

    A sequence of texts gives them the ids from `mergeable_size` on, in order; a mapping
    gives each its own id, any from 256 (the bytes hold 0..255) to ``MAX_TOKEN_ID``, the
    largest an artifact stores. An id among the mergeable tokens' is skipped by them;
    an id given to two texts makes the later an alias of the earlier (o200k_harmony's
    ``<|reserved_200018|>`` of ``<|endofprompt|>``).
    """
    if isinstance(special_tokens, str):
        raise TypeError(
            f"special_tokens must be a sequence of texts, not one string: "
            f"write ({special_tokens!r},)"
        )
    if isinstance(special_tokens, Mapping):
        pairs = list(special_tokens.items())
    else:
        pairs = [(text, mergeable_size + index) for index, text in enumerate(special_tokens)]
    ids: dict[str, int] = {}
    for text, token_id in pairs:
        if not isinstance(text, str) or not text:
            raise ParameterError(f"a special token must be a non-empty str, got {text!r}")
        require_utf8(text, "special token")
        if text in ids:
            raise ParameterError(f"special token {text!r} is given twice")
        if type(token_id) is not int or token_id < BASE_VOCAB_SIZE:
            raise ParameterError(
                f"special token {text!r} needs an int id of at least {BASE_VOCAB_SIZE} (ids "
                f"0..{BASE_VOCAB_SIZE - 1} are the bytes), got {token_id!r}"
            )
        if token_id > MAX_TOKEN_ID:
            raise ParameterError(
                f"special token {text!r} cannot take id {token_id}: ids run from 0 to "
                f"{MAX_TOKEN_ID} (an artifact stores no larger one)"
            )
        ids[text] = token_id
    return ids
