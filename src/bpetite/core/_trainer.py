"""Learn BPE merges from chunk counts, exactly as the naive definition, without recounting.

The fast reading of the one training algorithm: it must equal
``bpetite.reference.train_counts`` (the naive reading, which recounts every pair after
every merge) on every input; tests/reference/ proves it. ``trace_train_counts``
(``bpetite/visualize/_trace.py``) is the reading in between: the same lazy heap over
live pair counts, on lists of ids, keeping every decision for a reader.

The definition: count every adjacent pair inside every chunk (weighted by how often the
chunk occurs), merge the most frequent pair (ties: the smallest ``(left, right)``),
replace it non-overlapping left to right, repeat. Recounting after every merge costs
O(corpus) per merge; here each merge only touches the words that hold its pair:

* a token is one character (``chr(id)``), so a pair is a two-character string, and
  these compare exactly like the ``(left, right)`` tuples;
* ``pair_counts`` holds the live count of every pair, and a heap of ``(-count, pair)``
  entries picks the winner. Entries go stale lazily: a pair's count only ever *falls*
  after it is first pushed (every pair a merge creates contains the new id, so it is
  new), so a popped entry whose count is out of date is pushed back with the live
  count, and the first up-to-date entry popped is exactly the naive
  ``min(key=(-count, pair))``;
* the words are held in three layouts (the glossary's short, huge and long words):

  - a *short* word, a chunk of at most ``HUGE_CHUNK_BYTES`` bytes, is a ``str``:
    ``str.replace`` does the non-overlapping merge in C, then one Python step per new
    token fixes the counts around it;
  - a *huge* word, a longer chunk, is a ``str`` rescanned whole by
    ``_rescan.merge_word``, which also counts the new token's neighbours in C, until
    its rescans have cost ``RESCANS`` times its length;
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

from array import array
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from heapq import heapify, heappop, heappush, heapreplace
from itertools import chain
from operator import add
from typing import AnyStr

from bpetite.core._constants import BASE_VOCAB_SIZE, MAX_VOCAB_SIZE
from bpetite.core._errors import ParameterError
from bpetite.core._gc import gc_paused
from bpetite.core._progress import Progress, ProgressCallback, ignore_progress
from bpetite.core._rescan import RESCANS, count_pairs, merge_word, moved_pairs

#: How often (in merges) the trainer reports progress between start and done.
PROGRESS_EVERY = 100

#: Chunks longer than this many bytes are huge words, merged by whole-word rescans in C
#: (``merge_word``), not by a Python step per occurrence: it bounds what a rescan of one
#: short word can cost (see the module docstring).
HUGE_CHUNK_BYTES = 256

Pair = tuple[int, int]


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
    """
    first_id = BASE_VOCAB_SIZE if token_lengths is None else len(token_lengths)
    target = check_vocab_size(vocab_size) - first_id
    if vocab_size > MAX_VOCAB_SIZE:
        raise ParameterError(
            f"vocab_size must be at most {MAX_VOCAB_SIZE:,} (token ids are stored as "
            f"characters while training), got {vocab_size:,}"
        )
    longest = check_limit(
        "max_token_bytes", max_token_bytes, 2, "every merged token has two bytes or more"
    )
    least = check_limit("min_frequency", min_frequency, 1, "a pair that occurs has count 1")
    report = progress or ignore_progress
    report(Progress("merge", "start", 0, target))

    # The corpus's tables are millions of acyclic containers (a list per pair in the
    # index): collections would walk them again and again and free nothing.
    with gc_paused():
        corpus = _Corpus(chunk_counts)
        pair_counts = corpus.pair_counts
        heap = [(-count, pair) for pair, count in pair_counts.items()]
        heapify(heap)
        # Byte length of every token, only kept when `max_token_bytes` needs it.
        lengths = list(token_lengths or [1] * BASE_VOCAB_SIZE) if longest is not None else []

        merges: list[Pair] = []
        while len(merges) < target and heap:
            negative_count, pair = heap[0]
            live = pair_counts.get(pair, 0)
            if live != -negative_count:
                if live > 0:
                    heapreplace(heap, (-live, pair))
                else:
                    heappop(heap)
                continue
            heappop(heap)
            left, right = ord(pair[0]), ord(pair[1])
            if longest is not None:
                length = lengths[left] + lengths[right]
                if length > longest:
                    continue  # never a candidate: its length cannot change, so drop it for good
                lengths.append(length)
            if least is not None and live < least:
                break
            new_id = first_id + len(merges)
            merges.append((left, right))
            for new_pair, count in corpus.merge(pair, chr(new_id)).items():
                if count > 0:
                    heappush(heap, (-count, new_pair))
            if len(merges) % PROGRESS_EVERY == 0:
                report(Progress("merge", "update", len(merges), target))

    report(Progress("merge", "done", len(merges), target))
    return merges


def _pairs(word: Sequence[str]) -> Iterator[str]:
    """The adjacent pairs of a word as two-character strings: 'abc' -> 'ab', 'bc'.

    On a list of tokens with ``""`` separators, a pair that touches one is one character.
    """
    return map(add, word, word[1:])


def _positions() -> array[int]:
    """An empty list of positions, stored as machine integers rather than boxed ones."""
    return array("q")


class _Corpus:
    """The distinct chunks as words, the live pair counts, and where each pair occurs.

    Short words are ``words`` (a str each, with its weight) and ``where`` maps a pair to
    the indices of the words it was created in. Huge words are ``huge_words``, likewise
    with ``huge_weights`` and ``huge_where``, and ``rescanned`` adds up what rescanning
    each has cost. Long words share one flat layout of linked positions,
    ``[sep, a, b, c, sep, d, e, ..., sep]``: ``tokens`` (``""`` for a separator or a
    position merged away), ``after`` and ``before`` (the neighbouring positions),
    ``position_weights``, and ``where_at`` mapping a pair to the positions of its left
    token. Positions are arrays of machine integers, 8 bytes each, where a list would
    hold an int object per position. Entries in the indexes go stale; a merge skips
    those that no longer hold the pair, and each entry is visited at most once, when
    its pair is merged.
    """

    def __init__(self, chunk_counts: Mapping[AnyStr, int]) -> None:
        self.words: list[str] = []
        self.weights: list[int] = []
        huge_chunks: list[tuple[str, int]] = []
        # Chunks of one byte hold no pair and never change: leave them out entirely.
        for chunk, count in chunk_counts.items():
            if len(chunk) > 1 and count > 0:
                # byte b -> chr(b), i.e. token id b; a word of ids is one already
                word = chunk if isinstance(chunk, str) else chunk.decode("latin-1")
                if len(chunk) <= HUGE_CHUNK_BYTES:
                    self.words.append(word)
                    self.weights.append(count)
                else:
                    huge_chunks.append((word, count))
        self.pair_counts = self._count_word_pairs()
        self.where = self._index_word_pairs()
        # Huge words: each a str, rescanned in C (see _merge_huge_words).
        self.huge_words: list[str] = []
        self.huge_weights: list[int] = []
        self.huge_where: defaultdict[str, list[int]] = defaultdict(list)
        self.rescanned: list[int] = []
        for index, (word, count) in enumerate(huge_chunks):
            for pair, occurrences in count_pairs(word).items():
                self.pair_counts[pair] += occurrences * count
                self.huge_where[pair].append(index)
            self.huge_words.append(word)
            self.huge_weights.append(count)
            self.rescanned.append(0)
        # Long words, as linked positions: the huge words whose rescans grew too costly.
        self.tokens: list[str] = [""]
        self.position_weights = [0]
        self.after = array("q", [1])
        self.before = array("q", [-1])
        self.where_at: defaultdict[str, array[int]] = defaultdict(_positions)

    def _count_word_pairs(self) -> defaultdict[str, int]:
        """Weighted pair counts of the short words.

        Words are grouped by weight so each group is counted by ``Counter.update``, whose
        loop runs in C; a large corpus has hundreds of thousands of distinct chunks but
        only a few thousand distinct weights.
        """
        by_weight: defaultdict[int, list[str]] = defaultdict(list)
        for word, weight in zip(self.words, self.weights, strict=True):
            by_weight[weight].append(word)
        pair_counts: defaultdict[str, int] = defaultdict(int)
        for weight, group in by_weight.items():
            counted: Counter[str] = Counter()
            counted.update(chain.from_iterable(map(_pairs, group)))
            for pair, count in counted.items():
                pair_counts[pair] += count * weight
        return pair_counts

    def _index_word_pairs(self) -> defaultdict[str, list[int]]:
        """Map each pair to the indices of the short words holding it, each once."""
        where: defaultdict[str, list[int]] = defaultdict(list)
        for index, word in enumerate(self.words):
            for pair in set(_pairs(word)):
                where[pair].append(index)
        return where

    def merge(self, pair: str, new_token: str) -> dict[str, int]:
        """Replace `pair` by `new_token` everywhere; return the pairs created, with counts.

        Every pair that loses count is older than ``z`` (the new token) and every pair
        that gains holds ``z``, so the gains collect in fresh dictionaries that are
        folded in once at the end.
        """
        fresh_counts: defaultdict[str, int] = defaultdict(int)
        self._merge_words(pair, new_token, fresh_counts)
        costly: list[int] = []
        if self.huge_where:
            costly = self._merge_huge_words(pair, new_token, fresh_counts)
        if self.where_at:
            self._merge_positions(pair, new_token, fresh_counts)
        del self.pair_counts[pair]
        self.pair_counts.update(fresh_counts)
        # Last, so that the new positions come after every position listed so far.
        for index in costly:
            self._lay_out(self.huge_words[index], self.huge_weights[index])
            self.huge_words[index] = ""  # holds no pair: later visits skip it
        return fresh_counts

    def _merge_huge_words(
        self, pair: str, new_token: str, fresh_counts: defaultdict[str, int]
    ) -> list[int]:
        """Merge `pair` in the huge words, each rescanned whole in C (``merge_word``).

        A word is listed once per pair created in it, so a visit costs a few passes
        over it plus a little per occurrence, never a Python step per character.
        Returns the words whose rescans have cost more than ``RESCANS`` times their
        length: laying those out as positions is cheaper from now on.
        """
        words, weights, pair_counts = self.huge_words, self.huge_weights, self.pair_counts
        rescanned = self.rescanned
        fresh_where: defaultdict[str, list[int]] = defaultdict(list)
        costly: list[int] = []
        for index in self.huge_where.pop(pair, ()):
            word = words[index]
            rescanned[index] += len(word)
            if pair not in word:  # merged away since it was listed, or laid out
                continue
            word, _, before, after, doubled = merge_word(word, pair, new_token)
            words[index] = word
            weight = weights[index]
            for lost, created, count in moved_pairs(pair, new_token, before, after, doubled):
                pair_counts[lost] -= count * weight
                fresh_counts[created] += count * weight
                fresh_where[created].append(index)
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

    def _merge_words(self, pair: str, new_token: str, fresh_counts: defaultdict[str, int]) -> None:
        """Merge `pair` in the short words: ``str.replace``, then fix counts around each ``z``.

        A left neighbour that is an older token stood beside ``left`` before; one that
        is ``z`` itself was the previous occurrence, whose ``right`` stood there. A right
        neighbour that is ``z`` is left to that next occurrence, so ``a b a b`` ->
        ``z z`` nets out to -(b a) +(z z). A word is listed once per occurrence of a
        created pair, always consecutively, so repeats are skipped by index: a rescan
        per repeat would make a word with many occurrences quadratic.

        This is the hot loop: names are bound to locals and nothing is called per
        occurrence but ``str.find``.
        """
        words, weights, pair_counts = self.words, self.weights, self.pair_counts
        left, right = pair[0], pair[1]
        fresh_where: defaultdict[str, list[int]] = defaultdict(list)
        previous = -1
        for index in self.where.pop(pair, ()):
            if index == previous:
                continue
            previous = index
            word = words[index]
            if pair not in word:  # the pair was created here, but merged away since
                continue
            weight = weights[index]
            word = words[index] = word.replace(pair, new_token)
            last = len(word) - 1
            i = word.find(new_token)
            while i >= 0:
                if i:
                    neighbour = word[i - 1]
                    pair_counts[(right if neighbour == new_token else neighbour) + left] -= weight
                    created = neighbour + new_token
                    fresh_counts[created] += weight
                    fresh_where[created].append(index)
                if i < last:
                    neighbour = word[i + 1]
                    if neighbour != new_token:
                        pair_counts[right + neighbour] -= weight
                        created = new_token + neighbour
                        fresh_counts[created] += weight
                        fresh_where[created].append(index)
                i = word.find(new_token, i + 1)
        self.where.update(fresh_where)

    def _merge_positions(
        self, pair: str, new_token: str, fresh_counts: defaultdict[str, int]
    ) -> None:
        """Merge `pair` in the long words, one listed position at a time.

        The positions of a pair are listed in ascending order (the initial index is
        built that way, and a merge appends them in the order it visits them), so a run
        ``a a a`` merges left to right: the middle ``a`` is gone when its own entry
        comes up. Each occurrence ``x a b y`` -> ``x z y`` moves the weight from
        ``(x, a)`` and ``(b, y)`` to ``(x, z)`` and ``(z, y)``; when ``x`` is ``z``
        itself (``a b a b`` -> ``z z``), ``(x, a)`` is the fresh ``(z, a)`` the previous
        occurrence just counted, so that is what is taken back.
        """
        tokens, after, before = self.tokens, self.after, self.before
        weights, pair_counts = self.position_weights, self.pair_counts
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
                    fresh_counts[neighbour + left] -= weight
                else:
                    pair_counts[neighbour + left] -= weight
                created = neighbour + new_token
                fresh_counts[created] += weight
                fresh_where[created].append(preceding)
            next_position = after[following]
            neighbour = tokens[next_position]
            if neighbour:
                pair_counts[right + neighbour] -= weight
                created = new_token + neighbour
                fresh_counts[created] += weight
                fresh_where[created].append(position)
                before[next_position] = position
            after[position] = next_position
            tokens[position] = new_token
            tokens[following] = ""
        self.where_at.update(fresh_where)
