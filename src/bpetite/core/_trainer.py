"""Learn BPE merges from chunk counts, exactly as the naive definition, without recounting.

The fast reading of the one training algorithm: it must equal
``bpetite.reference.train_counts`` (the naive reading, which recounts every pair after
every merge) on every input; tests/reference/ proves it. ``trace_train_counts``
(``bpetite/visualize/_trace.py``) is the reading in between: a lazy heap over live
pair counts, on lists of ids, keeping every decision for a reader.

The definition: count every adjacent pair inside every chunk (weighted by how often the
chunk occurs), merge the most frequent pair (ties: the smallest ``(left, right)``),
replace it non-overlapping left to right, repeat. Recounting after every merge costs
O(corpus) per merge; here each merge only touches the words that hold its pair:

* a token is one character (``chr(id)``), so a pair is a two-character string, and
  these compare exactly like the ``(left, right)`` tuples;
* ``pair_counts`` holds the live count of every pair, and :class:`Candidates`, a
  bucket queue, picks the winner. A pair's count only ever *falls* after it is created
  (every pair a merge creates contains the new id, so it is new), and a created pair
  is never more frequent than the pair merged, so a pair waits in the bucket of the
  count it was filed under until the best count comes down to it; it is checked then,
  and filed again if its count fell. The first pair found at its filed count is
  exactly the naive ``min(key=(-count, pair))``;
* a merge reports only the pairs it created, with their counts summed per distinct
  pair; what each took from the older pairs follows from it (:func:`replaced_pair`),
  so the counts are fixed once per distinct pair, not once per occurrence. The words
  are then all a merge needs, and they can be split among processes, each reporting
  its own (``bpetite.corpus._merge_workers``);
* the words (:class:`Words`) are held in three layouts (the glossary's short, huge and
  long words):

  - a *short* word, a chunk of at most ``HUGE_CHUNK_BYTES`` bytes, is a ``str``:
    ``str.replace`` does the non-overlapping merge in C, then one Python step per new
    token lists the pairs it creates;
  - a *huge* word, a longer chunk, is a ``_rescan.HugeWord`` (a ``str``, one byte a
    token while it can be) rescanned whole by ``_rescan.merge_word``, which also
    counts the new token's neighbours in C, until its rescans have cost ``RESCANS``
    times its length;
  - then it is laid out as a *long* word, position by position in linked lists, so a
    merge edits only the positions holding its pair and never rescans it.

All three are near-linear in the corpus. A short word is rescanned on each visit, but
it is visited only for pairs created inside it, at most three times its length, so its
cost is bounded by ``HUGE_CHUNK_BYTES`` times its length. A huge word's rescans cost at
most ``RESCANS`` times its length, and a long word costs O(1) per occurrence. Short
words stay strings because one ``str.replace`` in C costs less than Python work per
position; huge ones are rescanned because a pass in C costs less than the Python work
of laying them out, until rescanning them would grow quadratic.

Measurements: docs/design-notes.md#trainer
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from heapq import heapify, heappop, heappush
from itertools import islice
from operator import add
from typing import Any, AnyStr

from bpetite.core._constants import BASE_VOCAB_SIZE, MAX_VOCAB_SIZE
from bpetite.core._errors import ParameterError
from bpetite.core._gc import gc_paused
from bpetite.core._progress import Progress, ProgressCallback, ignore_progress
from bpetite.core._rescan import RESCANS, HugeWord, count_pairs, moved_pairs

#: How often (in merges) the trainer reports progress between start and done.
PROGRESS_EVERY = 100

#: Chunks longer than this many bytes are huge words, merged by whole-word rescans in C
#: (``merge_word``), not by a Python step per occurrence: it bounds what a rescan of one
#: short word can cost (see the module docstring).
HUGE_CHUNK_BYTES = 256

#: An index list at least this long has its entries of words that occur once counted by
#: bisection, not summed (:meth:`Words._summed`).
BISECT_AT_LEAST = 16

Pair = tuple[int, int]
#: The live count of every pair, keyed by the pair as two characters.
PairCounts = defaultdict[str, int]


def check_vocab_size(vocab_size: object) -> int:
    """Return `vocab_size` if it is an int of at least 256; otherwise raise."""
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an integer, got {vocab_size!r}")
    if vocab_size < BASE_VOCAB_SIZE:
        raise ParameterError(
            f"vocab_size must be at least {BASE_VOCAB_SIZE} (one token per byte), got {vocab_size}"
        )
    return vocab_size


def check_limit(name: str, value: object, least: int, why: str) -> int | None:
    """Return `value` if it is None or an int of at least `least`; otherwise raise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer or None, got {value!r}")
    if value < least:
        raise ParameterError(f"{name} must be at least {least} ({why}), got {value}")
    return value


def train_merges(
    chunk_counts: Mapping[AnyStr, int],
    vocab_size: int,
    progress: ProgressCallback | None = None,
    *,
    max_token_bytes: int | None = None,
    min_frequency: int | None = None,
    token_lengths: Sequence[int] | None = None,
    lay_out: LayOut | None = None,
) -> list[Pair]:
    """Return the merges, in rank order, that BPE learns from `chunk_counts`.

    `chunk_counts` maps each distinct pre-tokenized chunk to its number of occurrences.
    A pair whose merged token would be longer than `max_token_bytes` bytes is never a
    candidate (at least 2, since every merged token has two bytes or more). Training
    stops early, without error, when no candidate pair is left or when the best one
    occurs fewer than `min_frequency` times (at least 1; 1 and None mean no limit).

    To continue training a model, `token_lengths` gives the byte length of each of its
    ids (new ids start at ``len(token_lengths)``) and `chunk_counts` maps words of those
    ids, one ``chr(id)`` per token, instead of bytes.

    `lay_out` holds the words while the loop runs: by default :func:`words_here`, one
    :class:`Words` in this process; ``bpetite.corpus`` hands in one that spreads them
    over worker processes. The merges are the same whoever holds the words.
    """
    first_id = BASE_VOCAB_SIZE if token_lengths is None else len(token_lengths)
    # Past the ids a character can hold the target is that many: a corpus runs out of
    # pairs long before, and training stops there, as the specification says; one that
    # does not is refused below.
    target = min(check_vocab_size(vocab_size), MAX_VOCAB_SIZE) - first_id
    longest = check_limit(
        "max_token_bytes", max_token_bytes, 2, "every merged token has two bytes or more"
    )
    least = check_limit("min_frequency", min_frequency, 1, "a pair that occurs has count 1")
    report = progress or ignore_progress
    report(Progress("merge", "start", 0, target))

    # The corpus's tables are millions of acyclic containers (a list per pair in the
    # index): collections would walk them again and again and free nothing.
    with gc_paused(), (lay_out or words_here)(chunk_counts) as (pair_counts, merge):
        candidates = Candidates(pair_counts)
        # Byte length of every token, only kept when `max_token_bytes` needs it.
        lengths = list(token_lengths or [1] * BASE_VOCAB_SIZE) if longest is not None else []
        merges: list[Pair] = []
        gone: list[str] = []  # pairs whose count fell to 0, for the words to forget
        while len(merges) < target:
            # Select: the most frequent pair, ties to the smallest; then the pairs tied
            # with it that are the next merges whatever the ones before them create
            # (Candidates.pop_next_tied), so that one call merges them all.
            best = candidates.pop(pair_counts)
            if best is None:
                break
            pair, count = best
            if least is not None and count < least:
                break
            batch: list[tuple[str, str]] = []  # (pair, new token), in merge order
            lefts: set[str] = set()  # the batch's left tokens,
            rights: set[str] = set()  # and its right ones
            while True:
                left, right = ord(pair[0]), ord(pair[1])
                # A pair too long is never a candidate: its length cannot change, so it
                # is dropped for good (and merges nothing that a later pair depends on).
                if longest is None or lengths[left] + lengths[right] <= longest:
                    if longest is not None:
                        lengths.append(lengths[left] + lengths[right])
                    batch.append((pair, chr(first_id + len(merges))))
                    merges.append((left, right))
                    lefts.add(pair[0])
                    rights.add(pair[1])
                    if len(merges) == target:
                        break
                found = candidates.pop_next_tied(pair_counts, lefts, rights)
                if found is None:
                    break
                pair = found
            if not batch:
                continue
            # Merge: every holder of words forgets the pairs gone since the last batch,
            # replaces each pair, in order, and reports the pairs each merge created.
            created_by = merge(batch, gone)
            gone = []
            # Count: each created pair took its count from the pair it replaced.
            add_created(pair_counts, batch, created_by, candidates, gone)
            # Each multiple of PROGRESS_EVERY the batch passed, as if reported merge by merge.
            before = len(merges) - len(batch)
            passed = before - before % PROGRESS_EVERY + PROGRESS_EVERY
            for reached in range(passed, len(merges) + 1, PROGRESS_EVERY):
                report(Progress("merge", "update", reached, target))
        # Stopped by the ids a character holds, not by the pairs: refused, not cut short.
        cut = len(merges) == target < vocab_size - first_id
        cut = cut and candidates.pop(pair_counts) is not None

    report(Progress("merge", "done", len(merges), target))
    if cut:
        raise ParameterError(
            f"the corpus has pairs for more than {MAX_VOCAB_SIZE:,} tokens, the most bpetite "
            f"holds (token ids are stored as characters while training): ask for at most "
            f"{MAX_VOCAB_SIZE:,}"
        )
    return merges


#: Forgets the pairs of the second argument (gone from every word: see
#: :func:`add_created`), then merges each ``(pair, new_token)`` of the first in turn in
#: every word it holds; returns, for each, the pairs that merge created, each with its
#: count (weights summed over occurrences; a count may be 0).
MergeWords = Callable[[Sequence[tuple[str, str]], Sequence[str]], list[dict[str, int]]]
#: Lays out the words of some chunk counts for the merge loop, for as long as it runs:
#: yields the pair counts (a table the loop then owns) and the call that merges.
LayOut = Callable[[Mapping[Any, int]], AbstractContextManager[tuple["PairCounts", MergeWords]]]


@contextmanager
def words_here(chunk_counts: Mapping[AnyStr, int]) -> Iterator[tuple[PairCounts, MergeWords]]:
    """The default `lay_out`: one :class:`Words` in this process holds every word."""
    words = Words(chunk_counts)
    yield words.take_pair_counts(), words.merge_in_turn


def replaced_pair(created: str, pair: str, new_token: str) -> str:
    """The pair whose occurrences `created` took over when `pair` merged into `new_token`.

    Each occurrence of a pair holding the new token ``z`` was, before the merge, one
    pair of the tokens around ``L R``: ``(x, z)`` was ``(x, L)``, ``(z, y)`` was
    ``(R, y)``, and ``(z, z)`` was ``(R, L)``. So what a merge takes from the older
    pairs follows from what it creates: the holders of words report only that.

    >>> [replaced_pair(created, "LR", "z") for created in ("xz", "zy", "zz")]
    ['xL', 'Ry', 'RL']
    """
    first, second = created[0], created[1]
    if first != new_token:
        return first + pair[0]
    return pair[1] + (pair[0] if second == new_token else second)


def add_created(
    pair_counts: PairCounts,
    batch: Sequence[tuple[str, str]],
    created_by: Sequence[Mapping[str, int]],
    candidates: Candidates,
    gone: list[str],
) -> None:
    """Count the pairs each merge of `batch` created, in turn, and take their counts
    from those replaced.

    `batch` holds ``(pair, new_token)`` and `created_by` the pairs each created. Once
    per distinct pair created, not per occurrence; each merged pair is then gone. A
    replaced pair whose count falls to 0 is gone for good (a pair's count never rises
    after it is created), so it leaves `pair_counts` and is appended to `gone`, for the
    words to drop from their indexes, which would otherwise hold it to the end.
    :func:`replaced_pair` and :meth:`Candidates.add` are inlined, and the names bound
    once a batch: this runs once per pair created, about as often as the words' own
    loop runs.
    Measurements: docs/design-notes.md#trainer
    """
    top, tied, buckets, counts = (
        candidates.top,
        candidates.tied,
        candidates.buckets,
        candidates.counts,
    )
    get = buckets.get
    for (pair, new_token), created in zip(batch, created_by, strict=True):
        left, right = pair[0], pair[1]
        for new_pair, count in created.items():
            if count <= 0:
                continue
            first, second = new_pair[0], new_pair[1]
            if first != new_token:
                replaced = first + left
            elif second == new_token:
                replaced = right + left
            else:
                replaced = right + second
            remaining = pair_counts[replaced] - count
            if remaining:
                pair_counts[replaced] = remaining
            else:
                del pair_counts[replaced]
                gone.append(replaced)
            pair_counts[new_pair] = count
            if count == top:
                heappush(tied, new_pair)
                continue
            bucket = get(count)
            if bucket is None:
                buckets[count] = [new_pair]
                heappush(counts, -count)
            else:
                bucket.append(new_pair)
        pair_counts.pop(pair, None)  # gone already if it replaced itself: ``a a a`` -> ``z a``


class Candidates:
    """The pairs that may win, highest count first, ties to the smallest pair: a bucket queue.

    The highest count can only fall from one merge to the next: counts of existing
    pairs only fall, and a created pair occurs at most as often as the pair merged to
    make it (each of its occurrences holds one of those). So a pair filed under its
    count need not be looked at until the highest count comes down to it:

    * `buckets` maps a count to the pairs filed under it, a list each; `counts` is a
      max-heap (negated) of those counts, one entry per bucket;
    * `top` is the count being taken, and `tied` a heap of the pairs filed under it,
      so that the smallest comes first.

    A pair is filed once, under the count it had when it was created (or last
    checked), which its live count can only have fallen from. :meth:`pop` checks each
    pair it takes against the live count and files it again under that if it fell,
    so the first pair it finds at its filed count is exactly the naive
    ``min(key=(-count, pair))``. Adding a pair is an append to a list, not a push on
    a heap of every pair.
    """

    def __init__(self, pair_counts: Mapping[str, int]) -> None:
        buckets: dict[int, list[str]] = {}
        get = buckets.get
        for pair, count in pair_counts.items():
            if count > 0:
                bucket = get(count)
                if bucket is None:
                    buckets[count] = [pair]
                else:
                    bucket.append(pair)
        self.buckets = buckets
        self.counts = [-count for count in buckets]
        heapify(self.counts)
        self.top = 0
        self.tied: list[str] = []

    def add(self, pair: str, count: int) -> None:
        """File `pair` under `count` (at most :attr:`top`, once the first pair is taken)."""
        if count == self.top:
            heappush(self.tied, pair)
            return
        bucket = self.buckets.get(count)
        if bucket is None:
            self.buckets[count] = [pair]
            heappush(self.counts, -count)
        else:
            bucket.append(pair)

    def pop(self, pair_counts: Mapping[str, int]) -> tuple[str, int] | None:
        """Take the most frequent pair (ties: the smallest) with its count; None if none is left."""
        tied = self.tied
        get = pair_counts.get
        while True:
            while tied:
                pair = heappop(tied)
                live = get(pair, 0)
                if live == self.top:
                    return pair, live
                if live > 0:
                    self.add(pair, live)  # its count fell since it was filed
            if not self.counts:
                return None
            self.top = -heappop(self.counts)
            tied = self.tied = self.buckets.pop(self.top)
            heapify(tied)

    def pop_next_tied(
        self, pair_counts: Mapping[str, int], lefts: set[str], rights: set[str]
    ) -> str | None:
        """The next pair of the count just taken, if it is the next merge whatever the
        merges taken since :meth:`pop` create; None if it may not be.

        `lefts` and `rights` are the left and the right tokens of the pairs taken since
        (all of :attr:`top`'s count, still unmerged). The merge of ``L R`` lowers only
        the pairs ``(x, L)`` and ``(R, y)``, so the next pair ``a b`` keeps its count
        when ``b`` is no ``L`` and ``a`` no ``R`` of theirs. A pair it creates can come
        before ``a b`` only with the same count and a smaller first token: ``(x, z)``
        with ``x < a`` (``z``, the new token, is larger than every older one). Every
        ``z`` then follows an ``x``, so ``(x, L)`` had that count too and, being
        smaller than ``a b``, was taken before it: merged already (then it is gone), or
        merged after ``L R`` (then ``a b`` was refused), or ``L R`` itself, ``(L, L)``,
        whose merge never puts an ``L`` before a ``z``, or dropped as too long (then so
        is ``(x, z)``, which merges nothing either way). So ``a b`` is what :meth:`pop`
        would return once those merges are counted.
        """
        tied = self.tied
        get = pair_counts.get
        while tied:
            pair = tied[0]
            live = get(pair, 0)
            if live != self.top:
                heappop(tied)
                if live > 0:
                    self.add(pair, live)  # its count fell since it was filed
                continue
            if pair[1] in lefts or pair[0] in rights:
                return None
            return heappop(tied)
        return None


def _pairs(word: Sequence[str]) -> Iterator[str]:
    """The adjacent pairs of a word as two-character strings: 'abc' -> 'ab', 'bc'.

    On a list of tokens with ``""`` separators, a pair that touches one is one character.
    """
    return map(add, word, word[1:])


def _positions() -> array[int]:
    """An empty list of positions, stored as machine integers rather than boxed ones."""
    return array("q")


#: A piece of an index of word numbers, packed flat: the index's name, its pairs, how
#: many entries each has, and the entries, one after the other.
IndexPiece = tuple[str, list[str], "array[int]", "array[int]"]


def _index_pieces(
    indexes: Iterable[tuple[str, MutableMapping[str, list[int]]]], entries: int
) -> Iterator[IndexPiece]:
    """Each of the named `indexes` packed flat, about `entries` entries a piece, emptied
    as the pieces are made."""
    for name, index in indexes:
        while index:
            pairs: list[str] = []
            lengths, listed = array("q"), array("q")
            while index and len(listed) < entries:
                pair, numbers = index.popitem()
                pairs.append(pair)
                lengths.append(len(numbers))
                listed.extend(numbers)
            yield name, pairs, lengths, listed


class Words:
    """The distinct chunks as words, and where each pair occurs: what a merge rewrites.

    Short words are ``words`` (a str each, with its weight) and ``where`` maps a pair to
    the indices of the words it was created in; those that occur once come first, their
    indices in the ranges of ``once`` (see :meth:`_summed`). Huge words are ``huge_words``, likewise
    with ``huge_weights`` and ``huge_where``, and ``rescanned`` adds up what rescanning
    each has cost. Long words share one flat layout of linked positions,
    ``[sep, a, b, c, sep, d, e, ..., sep]``: ``tokens`` (``""`` for a separator or a
    position merged away), ``after`` and ``before`` (the neighbouring positions),
    ``position_weights``, and ``where_at`` mapping a pair to the positions of its left
    token. Positions are arrays of machine integers, 8 bytes each, where a list would
    hold an int object per position. Entries in the indexes go stale; a merge skips
    those that no longer hold the pair, and each entry is visited at most once, when
    its pair is merged.

    The words keep no pair counts: they count their pairs once, for the loop to take
    (:meth:`take_pair_counts`), and then :meth:`merge` reports only the pairs it
    creates (see :func:`replaced_pair`). So the words can be split among processes,
    each set of words reporting what its own merges created.
    """

    def __init__(self, chunk_counts: Mapping[str, int] | Mapping[bytes, int]) -> None:
        once: list[str] = []  # the short words that occur once, numbered first
        self.words: list[str] = []
        self.weights: list[int] = []
        huge_chunks: list[tuple[str, int]] = []
        # Chunks of one byte hold no pair and never change: leave them out entirely.
        for chunk, count in chunk_counts.items():
            if len(chunk) > 1 and count > 0:
                # byte b -> chr(b), i.e. token id b; a word of ids is one already
                word = chunk if isinstance(chunk, str) else chunk.decode("latin-1")
                if len(chunk) > HUGE_CHUNK_BYTES:
                    huge_chunks.append((word, count))
                elif count == 1:
                    once.append(word)
                else:
                    self.words.append(word)
                    self.weights.append(count)
        self.words[:0] = once
        self.weights[:0] = [1] * len(once)
        #: The ranges ``[start, stop)`` of word numbers whose weight is 1 (see :meth:`_summed`).
        self.once = [(0, len(once))]
        self.where = self._index_word_pairs()
        pair_counts: PairCounts = defaultdict(int, self._summed(self.where))
        # Huge words: each a HugeWord, rescanned in C (see _merge_huge_words).
        self.huge_words: list[HugeWord] = []
        self.huge_weights: list[int] = []
        self.huge_where: defaultdict[str, list[int]] = defaultdict(list)
        self.rescanned: list[int] = []
        for index, (word, count) in enumerate(huge_chunks):
            word_pairs = count_pairs(word)
            for pair, occurrences in word_pairs.items():
                pair_counts[pair] += occurrences * count
                self.huge_where[pair].append(index)
            self.huge_words.append(HugeWord(word, word_pairs))
            self.huge_weights.append(count)
            self.rescanned.append(0)
        self._pair_counts: PairCounts | None = pair_counts
        # Long words, as linked positions: the huge words whose rescans grew too costly.
        self.tokens: list[str] = [""]
        self.position_weights = [0]
        self.after = array("q", [1])
        self.before = array("q", [-1])
        self.where_at: defaultdict[str, array[int]] = defaultdict(_positions)

    def reindex(self) -> None:
        """Index the short words afresh: each pair they now hold, with the words holding it.

        Merges leave stale entries behind (a merge skips them), so the index only
        grows; made afresh, it lists what the words hold, a fraction of that late in
        training. Any index that lists every word holding a pair gives the same merges.
        """
        self.where.clear()  # freed before the new one is built
        self.where = self._index_word_pairs()

    def take_indexes(self, entries: int) -> Iterator[IndexPiece]:
        """Take out the indexes of word numbers (``where``, ``huge_where``), packed flat in
        pieces of about `entries` entries each; the words hold empty ones from now on.

        A merge worker sends its words back so, a piece a message, and
        :meth:`add_indexes` or :meth:`absorb` puts them back: neither end then holds a
        whole index pickled beside the index itself.
        """
        taken = [("where", self.where), ("huge_where", self.huge_where)]
        self.where, self.huge_where = defaultdict(list), defaultdict(list)
        return _index_pieces(taken, entries)

    def add_indexes(self, pieces: Iterable[IndexPiece], short: int = 0, huge: int = 0) -> None:
        """Add the index pieces :meth:`take_indexes` took (here or in another process),
        their short words numbered from `short` on and their huge ones from `huge`.

        In memory an index shares one int object per word among all its entries;
        unpickled, each entry would be an int of its own, several times the size, so
        each is replaced by its word's shared one.
        """
        shared = {  # an int per word numbered from `short` (or `huge`) on, by its number
            "where": list(range(short, len(self.words))).__getitem__,
            "huge_where": list(range(huge, len(self.huge_words))).__getitem__,
        }
        for name, pairs, lengths, listed in pieces:
            entries = map(shared[name], listed)
            index: defaultdict[str, list[int]] = getattr(self, name)
            get = index.get
            for pair, length in zip(pairs, lengths, strict=True):
                numbers = list(islice(entries, length))
                known = get(pair)
                if known is None:
                    index[pair] = numbers
                else:
                    known += numbers

    def absorb(self, other: Words, pieces: Iterable[IndexPiece]) -> bool:
        """Take in `other`'s words and their index pieces (:meth:`take_indexes`), unless
        it holds long words; whether it did.

        One set of words, where keeping `other` beside this one would hold a second
        entry, list and key for every pair both index.
        """
        if len(other.tokens) > 1:
            return False
        short, huge = len(self.words), len(self.huge_words)
        self.words += other.words
        self.weights += other.weights
        self.once += [(start + short, stop + short) for start, stop in other.once]
        self.huge_words += other.huge_words
        self.huge_weights += other.huge_weights
        self.rescanned += other.rescanned
        self.add_indexes(pieces, short, huge)
        return True

    def __getstate__(self) -> dict[str, Any]:
        """The words as pickled: the indexes of word numbers packed flat (:meth:`add_indexes`)."""
        state = self.__dict__.copy()
        taken = [(name, dict(state.pop(name))) for name in ("where", "huge_where")]
        state["indexes"] = list(_index_pieces(taken, sys.maxsize))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """The words as :meth:`__getstate__` packed them."""
        indexes = state.pop("indexes")
        self.__dict__.update(state, where=defaultdict(list), huge_where=defaultdict(list))
        self.add_indexes(indexes)

    def take_pair_counts(self) -> PairCounts:
        """The weighted count of every pair in the words as laid out; once (then dropped)."""
        pair_counts = self._pair_counts
        if pair_counts is None:
            raise RuntimeError("the pair counts were taken already")
        self._pair_counts = None
        return pair_counts

    def _summed(self, index: Mapping[str, list[int]]) -> dict[str, int]:
        """The weighted count of each pair of an index of short words: an index lists a
        word once per occurrence of a pair, so the count is its words' weights summed,
        in C (``sum`` over ``map``), a Python step per distinct pair.

        Most of a large corpus's distinct chunks occur once, and their words are
        numbered in the ranges of :attr:`once`. An index's lists are ascending (each is
        listed in the order of the words), so the entries in such a range are counted
        by bisection, without fetching the word numbers and weights they point to,
        which are scattered in memory: only short lists are summed whole.
        Measurements: docs/design-notes.md#trainer
        """
        weight = self.weights.__getitem__
        once = self.once
        summed: dict[str, int] = {}
        for pair, listed in index.items():
            if len(listed) < BISECT_AT_LEAST:
                summed[pair] = sum(map(weight, listed))
                continue
            total = done = 0
            for start, stop in once:
                first = bisect_left(listed, start, done)
                last = bisect_left(listed, stop, first)
                total += sum(map(weight, listed[done:first])) + last - first
                done = last
            summed[pair] = total + sum(map(weight, listed[done:]))
        return summed

    def _index_word_pairs(self) -> defaultdict[str, list[int]]:
        """Map each pair to the indices of the short words holding it, once per
        occurrence: a word's entries are consecutive, as a merge lists them, and a merge
        skips the repeats (cheaper than a set per word to drop them here)."""
        where: defaultdict[str, list[int]] = defaultdict(list)
        for index, word in enumerate(self.words):
            for pair in _pairs(word):
                where[pair].append(index)
        return where

    def merge_in_turn(
        self, batch: Sequence[tuple[str, str]], gone: Sequence[str] = ()
    ) -> list[dict[str, int]]:
        """:meth:`forget` `gone`, then :meth:`merge` each ``(pair, new_token)`` of `batch`,
        in order; the pairs each created."""
        self.forget(gone)
        return [self.merge(pair, new_token) for pair, new_token in batch]

    def forget(self, gone: Iterable[str]) -> None:
        """Drop the index entries of pairs that no word holds any more (count 0)."""
        for index in (self.where, self.huge_where, self.where_at):
            if index:
                pop = index.pop
                for pair in gone:
                    pop(pair, None)

    def merge(self, pair: str, new_token: str) -> dict[str, int]:
        """Replace `pair` by `new_token` everywhere; return the pairs created, with counts."""
        created = self._merge_words(pair, new_token)
        costly: list[int] = []
        if self.huge_where:
            costly = self._merge_huge_words(pair, new_token, created)
        if self.where_at:
            self._merge_positions(pair, new_token, created)
        # Last, so that the new positions come after every position listed so far.
        for index in costly:
            self._lay_out(self.huge_words[index].tokens(), self.huge_weights[index])
            self.huge_words[index] = HugeWord("", ())  # holds no pair: later visits skip it
        return created

    def _merge_huge_words(self, pair: str, new_token: str, created: dict[str, int]) -> list[int]:
        """Merge `pair` in the huge words, each rescanned whole in C (``merge_word``).

        A word is listed once per pair created in it, so a visit costs a few passes
        over it plus a little per occurrence, never a Python step per character.
        Returns the words whose rescans have cost more than ``RESCANS`` times their
        length: laying those out as positions is cheaper from now on.
        """
        words, weights, rescanned = self.huge_words, self.huge_weights, self.rescanned
        fresh_where: defaultdict[str, list[int]] = defaultdict(list)
        costly: list[int] = []
        for index in self.huge_where.pop(pair, ()):
            word = words[index]
            rescanned[index] += len(word)
            if pair not in word:  # merged away since it was listed, or laid out
                continue
            before, after, doubled = word.merge(pair, new_token)
            weight = weights[index]
            for _, new_pair, count in moved_pairs(pair, new_token, before, after, doubled):
                created[new_pair] = created.get(new_pair, 0) + count * weight
                fresh_where[new_pair].append(index)
            if rescanned[index] > RESCANS * len(word):
                costly.append(index)
        self.huge_where.update(fresh_where)
        return costly

    def _lay_out(self, word: str, weight: int) -> None:
        """Append `word` to the linked positions and list its pairs (already counted)."""
        start = len(self.tokens)
        self.tokens += word
        self.tokens.append("")
        self.position_weights += [weight] * (len(word) + 1)
        self.after.extend(range(start + 1, len(self.tokens) + 1))
        self.before.extend(range(start - 1, len(self.tokens) - 1))
        where_at = self.where_at
        for position, pair in enumerate(_pairs(word), start):
            where_at[pair].append(position)

    def _merge_words(self, pair: str, new_token: str) -> dict[str, int]:
        """Merge `pair` in the short words: ``str.replace``, then list each ``z``'s neighbours.

        Each occurrence of ``z`` (the new token) creates ``(x, z)`` with the token
        before it and ``(z, y)`` with the one after, unless that is ``z`` too: a run
        ``a b a b`` -> ``z z`` creates one ``(z, z)``, listed by the second. The word's
        index is listed under each pair created, once per occurrence, always
        consecutively, so repeats are skipped by index: a rescan per repeat would make
        a word with many occurrences quadratic.

        This is the hot loop: names are bound to locals, and per occurrence nothing is
        called but ``str.find`` and an append; the counts are summed from the lists
        once per distinct pair created. What it takes from older pairs is left to the
        loop (:func:`replaced_pair`), once per distinct pair created too.
        """
        words = self.words
        fresh_where: defaultdict[str, list[int]] = defaultdict(list)
        previous = -1
        for index in self.where.pop(pair, ()):
            if index == previous:
                continue
            previous = index
            word = words[index]
            merged = word.replace(pair, new_token)
            # Occurrences replaced (each shortens the word by one), so the loop below
            # stops at the last one instead of calling `find` once more to learn it.
            left = len(word) - len(merged)
            if not left:  # the pair was created here, but merged away since
                continue
            words[index] = merged
            last = len(merged) - 1
            i = merged.find(new_token)
            while True:
                if i:
                    fresh_where[merged[i - 1] + new_token].append(index)
                if i < last:
                    neighbour = merged[i + 1]
                    if neighbour != new_token:
                        fresh_where[new_token + neighbour].append(index)
                left -= 1
                if not left:
                    break
                i = merged.find(new_token, i + 1)
        self.where.update(fresh_where)
        return self._summed(fresh_where)

    def _merge_positions(self, pair: str, new_token: str, created: dict[str, int]) -> None:
        """Merge `pair` in the long words, one listed position at a time.

        The positions of a pair are listed in ascending order (the initial index is
        built that way, and a merge appends them in the order it visits them), so a run
        ``a a a`` merges left to right: the middle ``a`` is gone when its own entry
        comes up. Each occurrence ``x a b y`` -> ``x z y`` creates ``(x, z)`` and
        ``(z, y)``; when ``x`` is ``z`` itself (``a b a b`` -> ``z z``), the ``(z, a)``
        the previous occurrence just created is gone again, so it is taken back.
        """
        tokens, after, before = self.tokens, self.after, self.before
        weights = self.position_weights
        left, right = pair[0], pair[1]
        fresh_where: defaultdict[str, array[int]] = defaultdict(_positions)
        for position in self.where_at.pop(pair, ()):
            if tokens[position] != left:
                continue  # merged away, or into a newer token, since it was listed
            following = after[position]
            if tokens[following] != right:
                continue
            weight = weights[position]
            preceding = before[position]
            neighbour = tokens[preceding]
            if neighbour:
                if neighbour == new_token:
                    created[neighbour + left] -= weight
                new_pair = neighbour + new_token
                created[new_pair] = created.get(new_pair, 0) + weight
                fresh_where[new_pair].append(preceding)
            next_position = after[following]
            neighbour = tokens[next_position]
            if neighbour:
                new_pair = new_token + neighbour
                created[new_pair] = created.get(new_pair, 0) + weight
                fresh_where[new_pair].append(position)
                before[next_position] = position
            after[position] = next_position
            tokens[position] = new_token
            tokens[following] = ""
        self.where_at.update(fresh_where)
