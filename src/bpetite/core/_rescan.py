"""One merge in a huge word held as a ``str``, with no Python step per character.

The trainer and the encoder both hold tokens as characters (``chr(id)``), so a word is
a ``str`` and a pair a two-character ``str``. ``word.replace(pair, new)`` is then the
definition's merge of one pair, non-overlapping and left to right (``reference.merge``),
done in C. What the merge does to the word's pair counts follows from the characters
beside each new token: writing the merged word as ``s0 z s1 z ... z sk`` (``z`` the new
token, each ``si`` free of it), the word was ``s0 L R s1 L R ... L R sk``, so

* ``(L, R)`` loses ``k``, one per occurrence;
* a character ``x`` just before a ``z`` moves a count from ``(x, L)`` to ``(x, z)``;
* a character ``y`` just after a ``z`` moves one from ``(R, y)`` to ``(z, y)``;
* two adjacent ``z`` (an empty ``si``) move one from ``(R, L)`` to ``(z, z)``.

:func:`merge_word` counts those neighbours: with one ``str.find`` per occurrence when
they are few, with ``str.count`` when they are dense among few distinct characters,
else with a regex scan of the merged word and of its reverse (the scans find every
occurrence in C; the pattern is compiled once per new token and cached by ``re``). A
merge costs a few passes over the word in C plus little per occurrence, against a
Python step per occurrence for linked positions, so huge words can be rescanned about
a hundred times for the cost of laying them out position by position (``RESCANS``,
shared by the trainer and the encoder). :func:`moved_pairs` lists what one merge moves,
for both to apply. :class:`HugeWord` holds a word for both, one byte a token while its
distinct tokens fit in 256 code points.

Measurements: docs/design-notes.md#rescanned-words
"""

from __future__ import annotations

import re
import sys
from array import array
from collections import Counter
from collections.abc import Iterable
from itertools import islice
from operator import add

#: With at most this many distinct characters, a word's pairs (or a merge's neighbours)
#: are counted by one ``str.count`` per ordered pair of them, each a pass in C; with
#: more, by one pass that makes every pair (or by the regex scans).
SMALL_ALPHABET = 4
#: Occurrences at least one in this many characters of the merged word are dense: with
#: a small alphabet, their neighbours are counted by ``str.count``, not found one by one.
DENSE = 16
#: Occurrences up to this many are found by ``str.find``; more by the regex scans.
FIND_AT_MOST = 64
#: The regex scans list at most this many neighbours at a time, so their lists stay small.
WINDOW = 1 << 18
#: A huge word's tokens are held under code points below this while they fit in them
#: (:class:`HugeWord`): 256, so that the word is a latin-1 ``str``, one byte a token.
LOCAL_CODE_POINTS = 256
#: A huge word is rescanned until its rescans have cost this many times its length; then
#: it is laid out as linked positions, which cost a Python step per occurrence.
#: Measurements: docs/design-notes.md#rescanned-words
RESCANS = 100


def small_alphabet(word: str, most: int) -> set[str] | None:
    """The distinct characters of `word` if there are at most `most`, else None.

    One ``str.replace`` per character found, each a pass in C: ``set(word)`` would
    make a ``str`` object per character of a word of tokens past 255.
    """
    alphabet: set[str] = set()
    rest = word
    while rest:
        if len(alphabet) == most:
            return None
        alphabet.add(rest[0])
        rest = rest.replace(rest[0], "")
    return alphabet


def count_pairs(word: str) -> Counter[str]:
    """The adjacent pairs of `word` with their counts: ``"abab" -> {"ab": 2, "ba": 1}``.

    A run ``x x x`` holds ``(x, x)`` twice. With few distinct characters each pair is
    counted by ``str.count``: for ``x != y`` occurrences of ``xy`` cannot overlap, and
    ``(x, x)`` is every ``x`` but those that start a run (the first character, or one
    after another character). A word of one byte a character is counted by
    :func:`count_byte_pairs`.
    """
    alphabet = small_alphabet(word, SMALL_ALPHABET)
    if not word:
        return Counter()
    if alphabet is None:
        try:
            data = word.encode("latin-1")
        except UnicodeEncodeError:  # a token past 255: a str per pair
            return Counter(map(add, word, islice(word, 1, None)))
        return count_byte_pairs(data)
    counts: Counter[str] = Counter()
    for left in alphabet:
        for right in alphabet:
            if left != right:
                counts[left + right] = word.count(left + right)
    for char in alphabet:
        starts = sum(counts[other + char] for other in alphabet if other != char)
        counts[char + char] = word.count(char) - starts - (word[0] == char)
    return +counts  # without the pairs that do not occur


def count_byte_pairs(data: bytes) -> Counter[str]:
    """:func:`count_pairs` of a word of characters below 256, given as its latin-1 bytes.

    The bytes read as 16-bit numbers (an ``array("H")``) are the pairs at even
    positions, and from the second byte on those at odd positions: ``Counter`` counts
    the numbers in C, with no two-character ``str`` made per position as a ``map`` of
    the pairs would, then each distinct number is turned back into its pair. A window
    of ``WINDOW`` pairs at a time, so that the arrays stay small.
    Measurements: docs/design-notes.md#rescanned-words
    """
    codes: Counter[int] = Counter()
    for start in range(0, len(data) - 1, WINDOW):
        end = min(start + WINDOW + 1, len(data))  # one past the window: its last pair
        for first in (start, start + 1):
            numbers = array("H", data[first : first + (end - first) // 2 * 2])
            if sys.byteorder == "big":
                numbers.byteswap()  # the first byte of each pair in the low bits
            codes.update(numbers)
    return Counter({chr(code & 0xFF) + chr(code >> 8): count for code, count in codes.items()})


def merge_word(word: str, pair: str, new: str) -> tuple[str, int, Counter[str], Counter[str], int]:
    """Merge `pair` into `new` in `word`: ``(merged, k, before, after, doubled)``.

    `k` is the number of occurrences merged; `before` counts the characters other than
    `new` just before a `new` in `merged`, `after` those just after one, and `doubled`
    is the number of adjacent ``new new`` (see the module docstring for what each moves).
    """
    merged = word.replace(pair, new)
    occurrences = len(word) - len(merged)  # each one takes two characters to one
    before: Counter[str] = Counter()
    after: Counter[str] = Counter()
    if not occurrences:
        return merged, 0, before, after, 0
    alphabet = None
    if occurrences * DENSE >= len(merged):
        alphabet = small_alphabet(merged, SMALL_ALPHABET)
    if alphabet is not None:
        # Few characters, dense occurrences: one str.count per neighbour. For x != new,
        # occurrences of `x new` cannot overlap; every `new` not after another is after
        # some x or first.
        for char in alphabet - {new}:
            before[char] = merged.count(char + new)
            after[char] = merged.count(new + char)
        doubled = occurrences - before.total() - (merged[0] == new)
        return merged, occurrences, +before, +after, doubled
    if occurrences <= FIND_AT_MOST:
        doubled = 0
        last = len(merged) - 1
        i = merged.find(new)
        while i >= 0:
            if i and merged[i - 1] != new:
                before[merged[i - 1]] += 1
            if i < last:
                if merged[i + 1] == new:
                    doubled += 1
                else:
                    after[merged[i + 1]] += 1
            i = merged.find(new, i + 1)
        return merged, occurrences, before, after, doubled
    # `new` then a lookahead: consecutive `new`s are each found, and each sees its next
    # character; the characters before each `new` are those after it in the reversed
    # word. A pattern that starts with its literal is searched fast; one that starts
    # with "(.)" would be tried at every position.
    following = re.compile(re.escape(new) + "(?=(.))", re.DOTALL)
    for start in range(0, len(merged), WINDOW):
        end = start + WINDOW + 1  # one past the window: the last `new`'s neighbour is seen
        after.update(following.findall(merged, start, end))
    backwards = merged[::-1]
    for start in range(0, len(backwards), WINDOW):
        before.update(following.findall(backwards, start, start + WINDOW + 1))
    del backwards
    doubled = after.pop(new, 0)
    before.pop(new, None)
    return merged, occurrences, before, after, doubled


def moved_pairs(
    pair: str, new: str, before: Counter[str], after: Counter[str], doubled: int
) -> list[tuple[str, str, int]]:
    """What merging `pair` into `new` moves, from :func:`merge_word`'s counts.

    Each entry is ``(lost, created, count)``: `count` occurrences of the pair `lost`
    become the pair `created` (see the module docstring). No `lost` pair holds `new` and
    every `created` one does, so the entries can be applied in any order.
    """
    left, right = pair[0], pair[1]
    moves = [(neighbour + left, neighbour + new, count) for neighbour, count in before.items()]
    moves += [(right + neighbour, new + neighbour, count) for neighbour, count in after.items()]
    if doubled:
        moves.append((right + left, new + new, doubled))
    return moves


class HugeWord:
    """A huge word for :func:`merge_word`, one byte a token under its own alphabet while it can be.

    Each token met has a local character: a byte keeps its own, and a new token takes
    the lowest code point below ``LOCAL_CODE_POINTS`` that no token of the word has
    taken (those of tokens merged away are not looked for: that would be a scan more).
    So the word stays a latin-1 ``str``, one byte a token: each pass in C reads half of
    what a word of tokens past 255 takes, and the neighbours found are cached
    one-character strings, not a new object each. A merge translates its pair and new
    token to local characters, and the neighbours it counts back, once per distinct
    neighbour. When no code point is left, the word is widened once to token characters
    (``str.translate``) and from then on merged as it is.
    """

    def __init__(self, word: str, pairs: Iterable[str]) -> None:
        """`word` in token characters (``chr(id)``); `pairs` the pairs it holds, or any
        strings that hold every token of the word between them (its characters)."""
        alphabet = {char for pair in pairs for char in pair}
        alphabet.update(word[:1])  # a word of one token holds no pair
        #: The word as :func:`merge_word` sees it: local characters (tokens once wide).
        self.text = word
        #: Each token met by its local character, and back.
        self._tokens = {char: char for char in alphabet}
        self._locals = dict(self._tokens)
        #: The code points no token has taken, the lowest last; None once wide.
        self._free: list[str] | None = None
        if all(ord(char) < LOCAL_CODE_POINTS for char in alphabet):
            free = map(chr, reversed(range(LOCAL_CODE_POINTS)))
            self._free = [char for char in free if char not in alphabet]

    def __len__(self) -> int:
        return len(self.text)

    def __contains__(self, pair: str) -> bool:
        return self.has_tokens(pair) and self._locals[pair[0]] + self._locals[pair[1]] in self.text

    def has_tokens(self, pair: str) -> bool:
        """Whether both tokens of `pair` have been in the word: if not, it cannot hold it."""
        return pair[0] in self._locals and pair[1] in self._locals

    def merge(self, pair: str, new: str) -> tuple[Counter[str], Counter[str], int]:
        """Merge `pair` (present) into `new`: ``before, after, doubled`` of :func:`merge_word`."""
        local_pair, local = self._locals_for(pair, new)
        self.text, _, before, after, doubled = merge_word(self.text, local_pair, local)
        if self._free is None:
            return before, after, doubled
        tokens = self._tokens
        before = Counter({tokens[char]: count for char, count in before.items()})
        after = Counter({tokens[char]: count for char, count in after.items()})
        return before, after, doubled

    def replace(self, pair: str, new: str) -> None:
        """Merge `pair` (present) into `new`, counting nothing: one ``str.replace``."""
        local_pair, local = self._locals_for(pair, new)
        self.text = self.text.replace(local_pair, local)

    def pairs(self) -> Counter[str]:
        """:func:`count_pairs` of the word, in token characters."""
        counts = count_pairs(self.text)
        if self._free is None:
            return counts
        tokens = self._tokens
        return Counter({tokens[pair[0]] + tokens[pair[1]]: n for pair, n in counts.items()})

    def _locals_for(self, pair: str, new: str) -> tuple[str, str]:
        """`pair` in local characters, and the local character `new` takes from now on."""
        if self._free == []:
            self._widen()
        local_pair = self._locals[pair[0]] + self._locals[pair[1]]
        local = new if self._free is None else self._free.pop()
        self._tokens[local], self._locals[new] = new, local
        return local_pair, local

    def __eq__(self, other: object) -> bool:
        """The same word held the same way (as pickling gives it back)."""
        return isinstance(other, HugeWord) and self.__dict__ == other.__dict__

    def tokens(self) -> str:
        """The word in token characters."""
        if all(local == token for local, token in self._tokens.items()):
            return self.text
        return self.text.translate({ord(local): token for local, token in self._tokens.items()})

    def ids(self) -> list[int]:
        """The word's token ids, one int object per distinct id."""
        ids = {local: ord(token) for local, token in self._tokens.items()}
        return list(map(ids.__getitem__, self.text))

    def _widen(self) -> None:
        """Hold the word in token characters from now on: no code point is free."""
        self.text = self.tokens()
        self._tokens = {token: token for token in self._tokens.values()}
        self._locals = dict(self._tokens)
        self._free = None
