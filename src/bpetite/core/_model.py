"""The model: a merge list, the rules a model's fields keep, and the vocabulary it defines.

Ids 0..255 are the single bytes (``byte_order[i]`` is the byte of id ``i``); merge
``r`` joins two ids below ``256 + r`` into the new id ``256 + r``. That rule is what
makes every token's bytes well defined. The vocabulary follows from the merges as
:func:`bpetite.reference.vocab` defines it.

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

from bpetite.core._constants import BASE_VOCAB_SIZE
from bpetite.core._errors import ParameterError
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


@dataclass(frozen=True, slots=True)
class Model:
    """A model's fields, checked by :func:`define`: everything a tokenizer is built from.

    The merges, the split pattern, the special tokens (text to id) and the byte order
    decide every id; the training record and the name are provenance and decide none.
    """

    merges: Merges
    pattern: SplitPattern
    special_tokens: Mapping[str, int]
    byte_order: tuple[int, ...]
    training: Mapping[str, int]
    name: str | None = None

    @property
    def mergeable_size(self) -> int:
        """The byte tokens plus the merges: every id ordinary text can encode to."""
        return BASE_VOCAB_SIZE + len(self.merges)


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
    the wrong kind) whose message names the field.
    """
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str or None, got {type(name).__name__}")
    checked = check_merges(merges)
    split = resolve_pattern(pattern)
    order = check_byte_order(byte_order)
    record = check_training(training)
    specials = check_special_tokens(special_tokens, BASE_VOCAB_SIZE + len(checked))
    return Model(checked, split, MappingProxyType(specials), order, MappingProxyType(record), name)


def check_byte_order(byte_order: Sequence[int] | None) -> tuple[int, ...]:
    """Return the byte order as a tuple; it must be a permutation of 0..255 (None: 0..255)."""
    if byte_order is None:
        return IDENTITY_BYTE_ORDER
    if isinstance(byte_order, (str, Mapping)):
        raise TypeError(
            f"byte_order must be a sequence of 256 ints, got {type(byte_order).__name__}"
        )
    order = tuple(byte_order)
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
    """Return text -> id for the special tokens, each distinct, non-empty, past the merges.

    A sequence of texts gives them the ids from `mergeable_size` on, in order; a mapping
    gives each its own id, which must be at or after `mergeable_size`.
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
    taken: set[int] = set()
    for text, token_id in pairs:
        if not isinstance(text, str) or not text:
            raise ParameterError(f"a special token must be a non-empty str, got {text!r}")
        require_utf8(text, "special token")
        if text in ids:
            raise ParameterError(f"special token {text!r} is given twice")
        if type(token_id) is not int or token_id < mergeable_size or token_id in taken:
            raise ParameterError(
                f"special token {text!r} needs an id of its own at or after {mergeable_size} "
                f"(past the mergeable vocabulary), got {token_id!r}"
            )
        ids[text] = token_id
        taken.add(token_id)
    return ids
