"""Text to token ids: the merges applied in rank order, without one pass per rank.

Semantics (the specification's): the caller splits out special tokens; the encoder
pre-tokenizes the rest with the tokenizer's split pattern, and in each chunk applies
every merge in rank order, each as one non-overlapping left-to-right pass. Only ranks
whose pair is present change anything, and a merge only creates pairs that contain
its new id, whose ranks are all higher; so "apply the lowest-ranked pair present, all
its occurrences left to right, until no ranked pair is left" gives the same ids while
doing work only for merges that apply.

Speed comes from three layers, cheapest first:

1. a table from the text of every whole token (a token whose bytes encode to exactly
   that token, which is every token of a trained vocabulary) to its id; when every
   chunk of a text is in it, the whole encode is the split plus one ``map`` at C speed,
   warm or cold;
2. a cache from chunk text to ids, flattened with ``chain``: it holds every whole
   token for good and other chunks up to a bound, so a chunk missing from it is
   exactly one that must be merged;
3. short chunks run a small "find the lowest rank, merge it" loop; long chunks (a
   million letters is one chunk) use a linked list and buckets of positions, O(n log n).

Tried and dropped: a second cache of whole lines, split at newlines between two
non-space characters (always a chunk of their own). Re-encoding the same text became
4x faster than the regex pass, but every line of new text paid for its own small
list, and encoding new text, the common case, became 1.4x slower. Flattening through
one ``bytes`` join of packed ids and ``memoryview.cast("I").tolist()`` was slower than
``chain`` (every id becomes a new int object); ``operator.itemgetter(*pieces)`` was no
faster than ``map``.
"""

from array import array
from collections.abc import Callable, MutableSequence, Sequence
from heapq import heapify, heappop, heappush
from itertools import chain, pairwise, repeat

from bpetite._constants import BASE_VOCAB_SIZE

Pair = tuple[int, int]

#: Chunks longer than this many bytes take the O(n log n) bucket path (measured: from
#: about 16 bytes on it is faster than the short loop).
LONG_CHUNK_BYTES = 16
#: The chunk cache's size, counted as characters of chunk text plus ids held (about 8
#: bytes each: the lists share the int objects); it is emptied when it would grow past.
CHUNK_CACHE_SIZE = 1 << 21
#: A text whose chunks are all whole tokens but one in this many (or fewer) has the
#: others patched in; with more, every chunk's ids are flattened from the cache. About
#: `_SAMPLE` chunks spread over the text decide which to try; a text with no more than
#: that many tries the whole-token pass, then flattens.
_PATCH_AT_MOST = 8
_SAMPLE = 256
#: Long chunks of more positions than this keep their links in arrays, not lists.
ARRAY_POSITIONS = 1 << 16
#: Chunks longer than this many characters are never cached (rare, and large).
CACHE_MAX_KEY_CHARS = 256


_NO_RANK = 1 << 62


class Encoder:
    """Encodes text with a fixed merge list; safe to share, its cache is only a cache."""

    __slots__ = (
        "_byte_ids",
        "_lefts",
        "_merge_ids",
        "_merges",
        "_rights",
        "_split",
        "chunk_cache",
        "token_of_text",
        "whole_tokens",
    )

    def __init__(
        self,
        merges: Sequence[Pair],
        vocab: Sequence[bytes],
        split: Callable[[str], list[str]],
        byte_ids: bytes | None = None,
    ) -> None:
        """`byte_ids[b]` is the id of byte ``b`` when the byte tokens are permuted."""
        self._merges = tuple(merges)
        self._byte_ids = byte_ids
        # The pair each id was merged from, indexed by id (-1 for the bytes).
        self._lefts = [-1] * BASE_VOCAB_SIZE + [left for left, _ in self._merges]
        self._rights = [-1] * BASE_VOCAB_SIZE + [right for _, right in self._merges]
        # The first rank wins if an (odd, hand-made) merge list repeats a pair.
        merge_ids: dict[Pair, int] = {}
        for rank, pair in enumerate(self._merges):
            merge_ids.setdefault(pair, BASE_VOCAB_SIZE + rank)
        self._merge_ids = merge_ids
        self._split = split
        self.whole_tokens = self._find_whole_tokens(vocab)
        self.token_of_text = _texts_of(self.whole_tokens)
        self.chunk_cache = ChunkCache(CHUNK_CACHE_SIZE, self.token_of_text, self._merge_text)

    def encode_chunk(self, chunk: bytes) -> list[int]:
        """Return the ids of one pre-tokenized chunk (uncached)."""
        whole = self.whole_tokens.get(chunk)
        if whole is not None:
            return [whole]
        return self._merge(chunk)

    def _merge_text(self, chunk: str) -> list[int]:
        return self._merge(chunk.encode("utf-8"))

    def _merge(self, chunk: bytes) -> list[int]:
        """Apply the merges to `chunk`'s bytes, by the loop that suits its length."""
        if self._byte_ids is not None:
            chunk = chunk.translate(self._byte_ids)  # bytes to their ids, still one byte each
        if len(chunk) > LONG_CHUNK_BYTES:
            return self.merge_long(list(chunk))
        return self.merge_short(list(chunk))

    def encode_text(self, text: str) -> list[int]:
        """Return the ids of `text`, every character ordinary (the caller checked it is a str)."""
        pieces = self._split(text)
        token_of_text = self.token_of_text
        # Each path is one C-speed pass over the chunks. The first answers a text whose
        # chunks are all whole tokens and stops with KeyError at the first that is not;
        # a long text tries it only when a sample of its chunks, spread evenly over it,
        # is all whole, since a failed pass over code (where most lines hold a chunk of
        # several tokens) cost a tenth of the encode.
        misses = None
        if len(pieces) > _SAMPLE:
            sample = pieces[:: len(pieces) // _SAMPLE]
            # -1, not None: ints compare with ints fast in count() and index().
            misses = list(map(token_of_text.get, sample, repeat(-1))).count(-1)
        if not misses:
            try:
                return list(map(token_of_text.__getitem__, pieces))
            except KeyError:
                pass
        # A long text with a few chunks of several tokens: mark those with -1 and patch
        # them in; a short one, or one with many, is cheaper to flatten.
        if misses is not None and misses * _PATCH_AT_MOST <= _SAMPLE:
            ids = list(map(token_of_text.get, pieces, repeat(-1)))
            missing = ids.count(-1)
            if missing * _PATCH_AT_MOST <= len(ids):
                return self._patched(ids, pieces, missing)
        # Many: flatten every chunk's tuple from the cache, which merges what it lacks.
        return list(chain.from_iterable(map(self.chunk_cache.__getitem__, pieces)))

    def _patched(self, ids: list[int], pieces: list[str], missing: int) -> list[int]:
        """`ids` with each -1 replaced by the ids of its chunk, in one left-to-right copy."""
        places = [ids.index(-1)]
        for _ in range(missing - 1):
            places.append(ids.index(-1, places[-1] + 1))
        chunk_ids = self.chunk_cache
        patched: list[int] = []
        start = 0
        for place in places:
            patched += ids[start:place]
            patched += chunk_ids[pieces[place]]
            start = place + 1
        patched += ids[start:]
        return patched

    def merge_short(self, tokens: list[int]) -> list[int]:
        """Quadratic in the worst case, but the fastest loop for the usual few bytes.

        `ranks[i]` is the id the pair at `i` merges into (an id is its rank), with a
        sentinel after the last token. Each step merges the leftmost lowest-ranked pair
        and re-ranks only its two neighbours: a merge only creates pairs of higher rank,
        so "leftmost lowest, repeatedly" is the rank-pass rule, overlaps included.
        ``min`` and ``index`` scan at C speed, so the Python work is a few statements
        per merge. Re-ranking every pair each round, with one ``map``, was 1.6-2x slower.
        """
        rank_of = self._merge_ids.get
        ranks = list(map(rank_of, pairwise(tokens), repeat(_NO_RANK)))
        ranks.append(_NO_RANK)
        while True:
            best = min(ranks)
            if best == _NO_RANK:
                return tokens
            i = ranks.index(best)
            tokens[i] = best
            del tokens[i + 1]
            del ranks[i]
            if i:
                ranks[i - 1] = rank_of((tokens[i - 1], best), _NO_RANK)
            if i + 1 < len(tokens):
                ranks[i] = rank_of((best, tokens[i + 1]), _NO_RANK)
            else:
                ranks[i] = _NO_RANK

    def merge_long(self, tokens: list[int]) -> list[int]:
        """O(n log n): a doubly linked list over positions and buckets of positions per merge.

        Merges are applied in rank order, each at its positions left to right, which is
        the non-overlapping rule. A merge only creates pairs of higher rank, so the
        positions of each pair go into a bucket for its rank, a small heap holds the
        ranks that have a bucket, and each bucket is sorted once when its turn comes.
        An entry is stale when either side has changed since it was added; ids only
        ever grow, so comparing both sides with the merge's pair detects that exactly.
        A consumed position holds -1.

        A heap of (rank, position) entries was the first design: 2.6x the time for
        twice the letters, and 3-5x slower, as every position paid a heap push and pop.
        """
        merge_ids = self._merge_ids
        lefts, rights = self._lefts, self._rights
        n = len(tokens)
        # Lists of ints cost about 36 bytes a position (every int past 256 is an object of
        # its own); for a huge chunk, machine-integer arrays cost 8, at a little speed.
        following: MutableSequence[int]
        preceding: MutableSequence[int]
        if n > ARRAY_POSITIONS:
            following = array("q", range(1, n + 1))  # n marks the end
            preceding = array("q", range(-1, n - 1))
        else:
            following = list(range(1, n + 1))  # n marks the end
            preceding = list(range(-1, n - 1))
        buckets: dict[int, list[int]] = {}
        for i, new_id in enumerate(map(merge_ids.get, pairwise(tokens))):
            if new_id is not None:
                bucket = buckets.get(new_id)
                if bucket is None:
                    buckets[new_id] = [i]
                else:
                    bucket.append(i)
        ranks = list(buckets)
        heapify(ranks)
        # The two neighbour updates below are written out rather than shared through a
        # helper: a call per merged position was a fifth of this loop's time.
        while ranks:
            new_id = heappop(ranks)
            left, right = lefts[new_id], rights[new_id]
            positions = buckets.pop(new_id)
            if len(positions) > 1:
                positions.sort()
            for i in positions:
                j = following[i]
                if j == n or tokens[i] != left or tokens[j] != right:
                    continue
                tokens[i] = new_id
                tokens[j] = -1
                k = following[j]
                following[i] = k
                if k < n:
                    preceding[k] = i
                    after = merge_ids.get((new_id, tokens[k]))
                    if after is not None:
                        bucket = buckets.get(after)
                        if bucket is None:
                            buckets[after] = [i]
                            heappush(ranks, after)
                        else:
                            bucket.append(i)
                h = preceding[i]
                if h >= 0:
                    before = merge_ids.get((tokens[h], new_id))
                    if before is not None:
                        bucket = buckets.get(before)
                        if bucket is None:
                            buckets[before] = [h]
                            heappush(ranks, before)
                        else:
                            bucket.append(h)
        return [token for token in tokens if token >= 0]

    def _find_whole_tokens(self, vocab: Sequence[bytes]) -> dict[bytes, int]:
        """Map the bytes of every token whose own encoding is exactly that token.

        Every token of a trained merge list has this property, but a hand-made artifact
        need not (``bc``, ``ab``, then ``ab+c``: ``abc`` encodes as ``a, bc``), so each
        token is checked, without encoding it: merge ``t = (l, r)`` encodes ``l + r`` to
        ``[t]`` exactly when ``l`` and ``r`` each encode to themselves and no merge ranked
        before ``t`` joins the two halves (see :func:`_halves_join`). That costs a few
        dictionary lookups per token instead of a full encode.
        """
        whole_ids = [True] * BASE_VOCAB_SIZE
        whole = {vocab[token_id]: token_id for token_id in range(BASE_VOCAB_SIZE)}
        for new_id in range(BASE_VOCAB_SIZE, BASE_VOCAB_SIZE + len(self._merges)):
            left, right = self._merges[new_id - BASE_VOCAB_SIZE]
            is_whole = (
                whole_ids[left]
                and whole_ids[right]
                and not _halves_join(left, right, new_id, self._merges, self._merge_ids)
            )
            whole_ids.append(is_whole)
            if is_whole:
                whole.setdefault(vocab[new_id], new_id)
        return whole


def _texts_of(whole_tokens: dict[bytes, int]) -> dict[str, int]:
    """The whole tokens keyed by their text; a token that is part of a character has none."""
    texts: dict[str, int] = {}
    for data, token in whole_tokens.items():
        try:
            texts[data.decode("utf-8")] = token
        except UnicodeDecodeError:
            continue
    return texts


def _halves_join(
    left: int, right: int, new_id: int, merges: Sequence[Pair], merge_ids: dict[Pair, int]
) -> bool:
    """Whether encoding ``bytes(left) + bytes(right)`` merges across the middle before `new_id`.

    While the halves evolve apart, the last token of the left half runs down the right
    spine of `left` (``left``, its right child, ...) and the first token of the right
    half down the left spine of `right`. Token ``x`` (created at rank ``x``; bytes exist
    from the start) is last until the merge that consumes it, exclusive: that merge's
    pair lies to its left and wins the left-to-right scan. Token ``y`` is first until
    the merge that consumes it, inclusive: there the boundary pair is further left and
    wins. A merge of ``(x, y)`` ranked inside both windows joins the halves.

    The windows of one spine are consecutive, so walking both spines back in time
    together visits each boundary pair once: O(a + b) lookups for spines of a and b
    tokens, where trying every (x, y) was O(a * b).
    """
    x, x_high = left, new_id
    y, y_high = right, new_id
    while True:
        x_low = x if x >= BASE_VOCAB_SIZE else -1
        y_low = y if y >= BASE_VOCAB_SIZE else -1
        joined = merge_ids.get((x, y))
        if joined is not None and x_low < joined < x_high and y_low < joined <= y_high:
            return True
        # Step back past the more recent of the two creations (both, if it is one id).
        if x_low >= y_low:
            if x_low < 0:
                return False  # two bytes: nothing earlier
            x_high, x = x, merges[x - BASE_VOCAB_SIZE][1]
            if x_low == y_low:
                y_high, y = y, merges[y - BASE_VOCAB_SIZE][0]
        else:
            y_high, y = y, merges[y - BASE_VOCAB_SIZE][0]


class ChunkCache(dict[str, tuple[int, ...]]):
    """A dict from chunk text to ids that merges a chunk it lacks: ``cache[chunk]`` always answers.

    It holds the `permanent` entries (the whole tokens, bounded by the vocabulary) for
    good and others up to `capacity` units, a unit being a character of a key or an id
    in a value, so the bound holds for any input: a huge, varied text empties the
    remembered part now and then instead of growing it. Emptying it whole is cheaper
    and more predictable than evicting entry by entry.

    Why a dict subclass with ``__missing__``: ``map(cache.__getitem__, chunks)`` stays
    the C-speed lookup of a plain dict for every chunk it holds and calls into Python
    only for a chunk it lacks, so text with new chunks costs one pass, not a pass that
    fails, a pass to find what is missing, and a pass to flatten. Values are tuples:
    immutable, and flattening them is a little faster than lists.
    """

    __slots__ = ("capacity", "merge", "permanent", "size")

    def __init__(
        self, capacity: int, permanent: dict[str, int], merge: Callable[[str], list[int]]
    ) -> None:
        super().__init__()
        self.capacity = capacity
        self.permanent = permanent
        self.merge = merge
        self.size = 0
        self._seed()

    def _seed(self) -> None:
        # zip(values) yields the 1-tuples at C speed: a comprehension took twice as long.
        self.update(zip(self.permanent, zip(self.permanent.values()), strict=True))

    def __missing__(self, chunk: str) -> tuple[int, ...]:
        ids = tuple(self.merge(chunk))
        if len(chunk) <= CACHE_MAX_KEY_CHARS:
            units = len(chunk) + len(ids)
            if self.size + units > self.capacity:
                self.clear()
                self._seed()
                self.size = 0
            self[chunk] = ids
            self.size += units
        return ids
