"""The model: a merge list, the one rule it must keep, and the vocabulary it defines.

Ids 0..255 are the single bytes (``byte_order[i]`` is the byte of id ``i``); merge
``r`` joins two ids below ``256 + r`` into the new id ``256 + r``. That rule is what
makes every token's bytes well defined, so it is checked here once, for the
:class:`~bpetite.Tokenizer` constructor and the artifact loader alike; each caller
words the failure for its own input. The vocabulary follows from the merges as
:func:`bpetite.reference.vocab` defines it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter, lt
from types import MappingProxyType
from typing import Final

from bpetite.core._constants import BASE_VOCAB_SIZE
from bpetite.core._errors import ParameterError

Merge = tuple[int, int]

#: Ids 0..255 in the default layout: id ``i`` is the byte ``i``.
IDENTITY_BYTE_ORDER: Final = tuple(range(BASE_VOCAB_SIZE))

#: The options a model records about how its merges were learned, each with its least
#: value; they change no id (the constructor and the artifact both keep them).
TRAINING_OPTIONS: Final[Mapping[str, int]] = MappingProxyType(
    {"max_token_bytes": 2, "min_frequency": 1}
)


class Merges(tuple[Merge, ...]):
    """A merge list that has passed :func:`check_merges`: int pairs that keep the rule.

    The loader hands the constructor one of these, so a list checked once, step by step
    in the loader's own words, is not walked a second time.
    """

    __slots__ = ()


class LearnedMerges(Merges):
    """A merge list the trainer learned from byte chunks, from scratch.

    Every token of such a list encodes to itself (the proof is in
    :class:`~bpetite.core._encoder.Encoder`), so the encoder proves nothing for it.
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

    Each merge must be a pair (tuple or list) of ints that :func:`misplaced_id`
    accepts. Exact tuples and lists of two ints are checked with whole-list passes;
    anything else is walked in rank order, which names the first bad entry.
    """
    if isinstance(merges, Merges):
        return merges
    if isinstance(merges, (str, bytes, Mapping)):
        raise TypeError(
            f"merges must be a sequence of (left, right) pairs, got {type(merges).__name__}"
        )
    if set(map(type, merges)) <= _PAIR_TYPES and set(map(len, merges)) <= _TWO_ONLY:
        pairs = tuple(map(tuple, merges))
        lefts = list(map(itemgetter(0), pairs))
        rights = list(map(itemgetter(1), pairs))
        if (
            set(map(type, lefts)) | set(map(type, rights)) <= _INT_ONLY
            and (not pairs or min(min(lefts), min(rights)) >= 0)
            and misplaced_id(pairs) is None  # type: ignore[arg-type]
        ):
            return Merges(pairs)  # type: ignore[arg-type]
    for rank, merge in enumerate(merges):
        new_id = BASE_VOCAB_SIZE + rank
        if not (isinstance(merge, (tuple, list)) and len(merge) == 2) or not all(
            type(part) is int and 0 <= part < new_id for part in merge
        ):
            raise ParameterError(
                f"merges[{rank}] must be two token ids below {new_id}, got {merge!r}"
            )
    return Merges((merge[0], merge[1]) for merge in merges)  # tuple subclasses, for one


def mergeable_tokens(merges: Iterable[Merge], byte_order: Sequence[int]) -> list[bytes]:
    """The bytes of every id the merges define: the byte order's, then each pair joined.

    The merges must keep the rule (:func:`check_merges`), so both parts exist already.

    >>> mergeable_tokens([(97, 98), (256, 99)], IDENTITY_BYTE_ORDER)[256:]
    [b'ab', b'abc']
    """
    tokens = [bytes((byte,)) for byte in byte_order]
    for left, right in merges:
        tokens.append(tokens[left] + tokens[right])
    return tokens


#: What the whole-list check accepts: exact tuples or lists of two exact ints.
_PAIR_TYPES: Final = frozenset({tuple, list})
_TWO_ONLY: Final = frozenset({2})
_INT_ONLY: Final = frozenset({int})
