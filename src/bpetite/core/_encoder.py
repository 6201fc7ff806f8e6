"""Text to token ids: the merges applied in rank order, without one pass per rank.

Must equal ``bpetite.reference.encode_chunk`` on every chunk (and, through the
Tokenizer, ``bpetite.reference.encode`` on every text); tests/reference/ proves it.

The caller has split out the special tokens; the encoder cuts the rest into chunks
with the tokenizer's split pattern and encodes each chunk on its own. The reference
applies every merge in rank order, each as one non-overlapping left-to-right pass over
the chunk. Only ranks whose pair is present change anything, and a merge only creates
pairs that contain its new id, whose ranks are all higher; so "merge the lowest-ranked
pair present, at all its occurrences left to right, until no ranked pair is left"
gives the same ids while doing work only for merges that apply.

A chunk is answered by the cheapest of three layers that knows it:

1. a table from the text of every whole token (a token whose bytes encode to exactly
   that token, which is every token of a trained or built-in vocabulary) to its id,
   filled when the encoder is built, or as chunks meet them for vocabularies past
   ``EAGER_PROOF_MERGES``; when every chunk of a text is in it, the whole encode is the
   split plus one ``map`` at C speed;
2. a cache from chunk text to ids (:class:`ChunkCache`), flattened into one list: it
   holds every whole token met for good and other chunks up to a bound; a chunk it
   lacks is looked up among the tokens (and proven whole, once per token, where the
   merge list is not known to be all whole) or encoded;
3. the encoding itself. A chunk of multi-byte characters (Cyrillic, CJK, Thai...) is
   put together from its characters' ids, kept in a cache of pieces, and encoded again
   only where a merge crosses between two pieces (:meth:`Encoder.from_pieces`): most
   of its merges only rebuild characters. Other chunks are merged from their bytes: a
   short word runs a small "find the lowest rank, merge it" loop over a list; a long
   word keeps a doubly linked list over positions and a bucket of positions per merge,
   O(n log n); a huge word (a million letters is one chunk) is rescanned whole in C,
   merge by merge, and finishes as a long word if that grows costly.

Measurements: docs/design-notes.md#encoder
"""

from array import array
from collections import deque
from collections.abc import Callable, MutableSequence, Sequence
from heapq import heapify, heappop, heappush
from itertools import chain, pairwise, repeat
from operator import itemgetter
from typing import TypeVar

from bpetite.core._constants import BASE_VOCAB_SIZE
from bpetite.core._rescan import RESCANS, HugeWord, moved_pairs

Pair = tuple[int, int]

#: Chunks longer than this many bytes are long words, merged by the O(n log n) bucket
#: path (``merge_long``); shorter ones are short words, merged by the simple loop
#: (``merge_short``), whose quadratic worst case cannot matter at this length and whose
#: small constant cost wins on the few bytes most chunks have.
#: Measurements: docs/design-notes.md#encoder-long-chunks
LONG_CHUNK_BYTES = 32
#: The chunk cache's size, counted as characters of chunk text plus ids held; it is
#: emptied when it would grow past, so its memory has a fixed ceiling whatever the input.
#: Measurements: docs/design-notes.md#encoder-chunk-cache
CHUNK_CACHE_SIZE = 1 << 21
#: A text whose chunks are all whole tokens but one in this many (or fewer) has the
#: others patched in; with more, every chunk's ids are flattened from the cache. About
#: `_SAMPLE` chunks spread over the text decide which to try; a text with no more than
#: that many tries the whole-token pass, then flattens.
_PATCH_AT_MOST = 8
_SAMPLE = 256
#: Long words of more positions than this keep their links in machine-integer arrays,
#: not lists: a list holds a pointer and an int object per position, an array 8 bytes.
ARRAY_POSITIONS = 1 << 16
#: Merge lists up to this long have every token's wholeness proven (unless every token
#: is known whole) and the whole-token text table filled when the encoder is built, so
#: that a first encode pays nothing; longer ones do both lazily, paying only for the
#: tokens texts use, so that a large vocabulary loads without proving or decoding
#: tokens no text needs (see Encoder).
#: Measurements: docs/design-notes.md#encoder-whole-token-proof
EAGER_PROOF_MERGES = 1 << 15
#: Chunks longer than this many bytes are huge words, merged rank by rank with whole-word
#: rescans in C (``merge_huge``), until their rescans have cost ``RESCANS`` times their
#: length (a vocabulary that applies many merges to the chunk); then they finish as long
#: words. A huge word takes a few bytes of memory a byte, where linked positions take dozens.
#: Measurements: docs/design-notes.md#rescanned-words
HUGE_CHUNK_BYTES = 1 << 16
#: A huge word first takes the merges in rank order, each looked for (``in``) and, if
#: present, applied (``str.replace``), until this many have been looked for in vain;
#: only then are its pairs counted, a cost of dozens of scans, to skip to the ranks
#: present. A small vocabulary is thus applied with no count at all.
#: Measurements: docs/design-notes.md#rescanned-words
RANK_PASS_MISSES = 16
#: Chunks longer than this many characters are never cached (rare, and large).
CACHE_MAX_KEY_CHARS = 256
#: A chunk of two characters or more with at least this many bytes a character on
#: average (Cyrillic, Greek, Arabic, Devanagari, CJK, Hangul, Thai...) is encoded from
#: its characters' ids (``Encoder.from_pieces``), up to HUGE_CHUNK_BYTES.
#: Measurements: docs/design-notes.md#encoder-pieces
MULTIBYTE_CHUNK = 2
#: A piece that grows past this many characters (merges cross between all its
#: characters) ends ``from_pieces``: the chunk's bytes are merged instead, so a piece
#: is never encoded again and again as it grows.
MAX_PIECE_CHARS = 16
#: The caches of pieces (units as in the chunk cache) and of pairs that stay apart
#: (entries); each is emptied when it would grow past.
PIECE_CACHE_SIZE = 1 << 18
PAIR_CACHE_SIZE = 1 << 16


#: Stands for "no merge" among the ids a pair merges into: above every id.
_NO_MERGE = 1 << 62


class Encoder:
    """Encodes text with a fixed merge list; safe to share, its cache is only a cache."""

    __slots__ = (
        "_byte_ids",
        "_lefts",
        "_merge_ids",
        "_merges",
        "_pieces",
        "_rights",
        "_split",
        "_stay_apart",
        "_token_ids",
        "_whole",
        "chunk_cache",
        "packed_caches",
        "token_of_text",
    )

    def __init__(
        self,
        merges: Sequence[Pair],
        vocab: Sequence[bytes],
        split: Callable[[str], list[str]],
        byte_ids: bytes | None = None,
        *,
        prove_up_to: int = EAGER_PROOF_MERGES,
        trained: bool = False,
    ) -> None:
        """`vocab[i]` is the bytes of id ``i`` (entries past the merges' ids are ignored);
        `byte_ids[b]` is the id of byte ``b`` when the byte tokens are permuted.

        The tables are C-speed passes over the merges. Which tokens are whole (encode to
        themselves) is proven here for up to `prove_up_to` merges, and the text table
        filled, so that the first encode pays nothing; past that, lazily, token by
        token, the first time a chunk needs it, so that loading a 200,000-merge
        vocabulary (o200k_base) does not pay for tokens no text uses.

        `trained` says every token is whole, so nothing needs proving: true of merges
        the trainer learned from byte chunks, from scratch, and of the built-in
        vocabularies (tests/reference/test_builtin_whole.py proves each of their
        tokens). For the trainer's: at its merge, a token's bytes stood in some chunk
        as one stretch whose edges no earlier merge had crossed (merges only join), and
        a left-to-right merge pass treats that stretch as it treats the same bytes
        alone (an occurrence across an edge was never merged, so it blocked nothing
        inside): alone, the bytes go through the same merges and end as the token.
        tests/core/test_trained_whole.py checks it against the proof on every trained
        merge list it can make.
        """
        self._merges = tuple(merges)
        self._byte_ids = byte_ids
        # The pair each id was merged from, indexed by id (-1 for the bytes). Tuples, not
        # lists: the collector stops scanning a tuple of ints after its first pass
        # (docs/design-notes.md#gc-pause).
        self._lefts = (-1,) * BASE_VOCAB_SIZE + tuple(map(itemgetter(0), self._merges))
        self._rights = (-1,) * BASE_VOCAB_SIZE + tuple(map(itemgetter(1), self._merges))
        # Built back to front so that the first rank wins if an (odd, hand-made) merge
        # list repeats a pair; and the first id of repeated bytes, likewise.
        end = BASE_VOCAB_SIZE + len(self._merges)
        self._merge_ids: dict[Pair, int] = dict(
            zip(reversed(self._merges), range(end - 1, BASE_VOCAB_SIZE - 1, -1), strict=True)
        )
        ids = range(end - 1, -1, -1)
        self._token_ids: dict[bytes, int] = dict(zip(reversed(vocab[:end]), ids, strict=True))
        self._split = split
        # Per id: 0 not yet known, 1 whole, 2 not whole. The bytes are whole.
        self._whole = bytearray([1]) * BASE_VOCAB_SIZE + bytearray(len(self._merges))
        #: The text of every whole token known, to its id: a text made only of these is
        #: encoded by one ``map``, with no flattening. All of them when filled here,
        #: else those met so far.
        self.token_of_text: dict[str, int] = {}
        if trained:
            self._whole[BASE_VOCAB_SIZE:] = bytes([1]) * len(self._merges)
        if len(self._merges) <= prove_up_to:
            if not trained:
                self._prove_all()
            self._fill_texts(vocab[:end])
        self.chunk_cache = ChunkCache(CHUNK_CACHE_SIZE, self.token_of_text, self._encode_new)
        self._pieces = PieceCache(PIECE_CACHE_SIZE, self._encode_piece)
        self._stay_apart = PairCache(PAIR_CACHE_SIZE, self.stay_apart)
        #: The packed caches, by array typecode, each made on first use.
        self.packed_caches: dict[str, PackedCache] = {}

    def _prove_all(self) -> None:
        """Settle every token's wholeness, in rank order: its parts are settled before it."""
        for token in range(BASE_VOCAB_SIZE, len(self._whole)):
            self.is_whole(token)  # asks only its (settled) parts

    def _fill_texts(self, vocab: Sequence[bytes]) -> None:
        """Fill the text table with every token settled whole."""
        whole = self._whole
        # In id order, so that the frequent (early) tokens' texts are made first and lie
        # close together in memory, where the lookups of a warm encode find them.
        # A try block, not contextlib.suppress: a context manager per token made building
        # a small model's encoder take up to twice as long.
        texts, first_ids = self.token_of_text, self._token_ids
        for token, data in enumerate(vocab):
            if whole[token] != 1 or first_ids[data] != token:  # not whole, or a later id
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:  # part of a character
                continue
            texts[text] = token

    def encode_chunk(self, chunk: bytes) -> list[int]:
        """Return the ids of one pre-tokenized chunk (uncached)."""
        whole = self.whole_token(chunk)
        if whole is not None:
            return [whole]
        return self._merge(chunk)

    def whole_token(self, data: bytes) -> int | None:
        """The id of the token whose bytes are `data` if it encodes to itself, else None.

        Every token of a trained merge list encodes to itself, but a hand-made list
        need not (``bc``, ``ab``, then ``ab+c``: ``abc`` encodes as ``a, bc``); see
        :meth:`is_whole`. With several tokens of the same bytes, the first is asked.
        """
        token = self._token_ids.get(data)
        if token is None or not self.is_whole(token):
            return None
        return token

    def is_whole(self, token: int) -> bool:
        """Whether encoding the bytes of `token` gives exactly ``[token]``; remembered.

        Merge ``t = (l, r)`` encodes ``l + r`` to ``[t]`` exactly when ``l`` and ``r``
        each encode to themselves and no merge ranked before ``t`` joins the two halves
        (see :func:`halves_join`): a few dictionary lookups per token instead of a
        full encode. Asked lazily, so loading a 200,000-token vocabulary does not pay
        for tokens no text uses; children are settled first, with a stack instead of
        recursion (a hand-made list can nest merges as deep as it is long).
        """
        whole = self._whole
        if whole[token]:
            return whole[token] == 1
        pending = [token]
        while pending:
            current = pending[-1]
            if whole[current]:
                pending.pop()
                continue
            left, right = self._lefts[current], self._rights[current]
            if not whole[left] or not whole[right]:
                pending += [child for child in (left, right) if not whole[child]]
                continue
            pending.pop()
            joined = whole[left] == 2 or whole[right] == 2
            if not joined:
                joined = halves_join(left, right, current, self._merges, self._merge_ids)
            whole[current] = 2 if joined else 1
        return whole[token] == 1

    def stay_apart(self, pair: Pair) -> bool:
        """Whether two tokens that each encode to themselves encode their joined bytes as
        ``[left, right]``: no merge ever joins the halves (see :func:`halves_join`)."""
        left, right = pair
        return not halves_join(left, right, _NO_MERGE, self._merges, self._merge_ids)

    def _encode_new(self, chunk: str) -> Sequence[int]:
        """The ids of a chunk the cache lacks.

        A tuple for a chunk the cache may keep; the fresh list itself for one too long
        to keep, so that the ids of a huge chunk are never copied.
        """
        data = chunk.encode("utf-8")
        token = self.whole_token(data)
        if token is not None:
            return (token,)
        ids = None
        if len(chunk) > 1 and MULTIBYTE_CHUNK * len(chunk) <= len(data) <= HUGE_CHUNK_BYTES:
            ids = self.from_pieces(chunk)
        if ids is None:
            ids = self._merge(data)
        return ids if len(chunk) > CACHE_MAX_KEY_CHARS else tuple(ids)

    def _encode_piece(self, piece: str) -> tuple[int, ...]:
        """The ids of a piece of a chunk (see from_pieces), merged from its bytes."""
        data = piece.encode("utf-8")
        token = self.whole_token(data)
        return (token,) if token is not None else tuple(self._merge(data))

    def from_pieces(self, chunk: str) -> list[int] | None:
        """The ids of `chunk` from the ids of its characters; None if a piece grows long.

        Two encodings side by side are the encoding of the two texts joined when the
        last token of the one and the first of the other encode their own bytes as
        themselves, ``[x, y]`` (:meth:`stay_apart`): a sequence of tokens that each
        encode to themselves, every adjacent pair staying apart, is the encoding of
        its bytes (docs/design-notes.md#encoder-pieces has the proof). So each
        character's ids come from a cache of pieces, and where a merge crosses between
        two pieces, they are joined into one piece and encoded again. For characters
        of several bytes most merges only rebuild characters, which the cache does once.
        """
        pieces, stay_apart = self._pieces, self._stay_apart
        encodings = list(map(pieces.__getitem__, chunk))
        lasts = map(itemgetter(-1), encodings[:-1])
        firsts = map(itemgetter(0), encodings[1:])
        if all(map(stay_apart.__getitem__, zip(lasts, firsts, strict=True))):
            return list(chain.from_iterable(encodings))
        texts: list[str] = []
        done: list[tuple[int, ...]] = []
        for text, ids in zip(chunk, encodings, strict=True):
            while done and not stay_apart[done[-1][-1], ids[0]]:
                text = texts.pop() + text
                if len(text) > MAX_PIECE_CHARS:
                    return None
                done.pop()
                ids = pieces[text]
            texts.append(text)
            done.append(ids)
        return list(chain.from_iterable(done))

    def _merge(self, chunk: bytes) -> list[int]:
        """Apply the merges to `chunk`'s bytes, by the loop that suits its length."""
        if self._byte_ids is not None:
            chunk = chunk.translate(self._byte_ids)  # bytes to their ids, still one byte each
        if len(chunk) > HUGE_CHUNK_BYTES:
            return self.merge_huge(chunk.decode("latin-1"))  # id b -> chr(b)
        if len(chunk) > LONG_CHUNK_BYTES:
            return self.merge_long(list(chunk))
        return self.merge_short(list(chunk))

    def encode_text(self, text: str) -> list[int]:
        """Return the ids of `text`, every character ordinary (the caller checked it is a str)."""
        chunks = self._split(text)
        token_of_text = self.token_of_text
        # Each path is one C-speed pass over the chunks. The first answers a text whose
        # chunks are all whole tokens and stops with KeyError at the first that is not;
        # a long text tries it only when a sample of its chunks, spread evenly over it,
        # is all whole, since a pass that fails late is wasted, and in code most lines
        # hold a chunk of several tokens.
        misses = None
        if len(chunks) > _SAMPLE:
            sample = chunks[:: len(chunks) // _SAMPLE]
            # -1, not None: ints compare with ints fast in count() and index().
            misses = list(map(token_of_text.get, sample, repeat(-1))).count(-1)
        if not misses:
            try:
                return list(map(token_of_text.__getitem__, chunks))
            except KeyError:
                pass
        # A long text with a few chunks of several tokens: mark those with -1 and patch
        # them in; a short one, or one with many, is cheaper to flatten.
        if misses is not None and misses * _PATCH_AT_MOST <= _SAMPLE:
            ids = list(map(token_of_text.get, chunks, repeat(-1)))
            missing = ids.count(-1)
            if missing * _PATCH_AT_MOST <= len(ids):
                return self._patched(ids, chunks, missing)
        if len(chunks) == 1:  # one chunk, maybe of megabytes: its ids, copied only if cached
            only = self.chunk_cache[chunks[0]]
            return only if type(only) is list else list(only)
        # Many: flatten every chunk's tuple from the cache, which merges what it lacks.
        # ``list.extend`` of a tuple copies it without an iterator object, and the
        # zero-length deque drives the map at C speed; ``chain.from_iterable`` would
        # make an iterator per chunk.
        flat: list[int] = []
        deque(map(flat.extend, map(self.chunk_cache.__getitem__, chunks)), maxlen=0)
        return flat

    def count_text(self, text: str) -> int:
        """``len(self.encode_text(text))``, from the same cache, without the list of ids."""
        return sum(map(len, map(self.chunk_cache.__getitem__, self._split(text))))

    def encode_text_packed(self, text: str, typecode: str) -> bytes:
        """The ids of `text` as the machine bytes of an ``array(typecode)``.

        Each chunk's ids are cached already packed, so the encode is the split and one
        ``bytes.join``: no Python int for any id, and no list of them. OverflowError if
        an id does not fit `typecode`.
        """
        packed = self.packed_caches.get(typecode)
        if packed is None:
            packed = self.packed_caches[typecode] = PackedCache(
                CHUNK_CACHE_SIZE, typecode, self._encode_new
            )
        return b"".join(map(packed.__getitem__, self._split(text)))

    def _patched(self, ids: list[int], chunks: list[str], missing: int) -> list[int]:
        """`ids` with each -1 replaced by the ids of its chunk, in one left-to-right copy."""
        places = [ids.index(-1)]
        for _ in range(missing - 1):
            places.append(ids.index(-1, places[-1] + 1))
        chunk_cache = self.chunk_cache
        patched: list[int] = []
        start = 0
        for place in places:
            patched += ids[start:place]
            patched += chunk_cache[chunks[place]]
            start = place + 1
        patched += ids[start:]
        return patched

    def merge_short(self, tokens: list[int]) -> list[int]:
        """Quadratic in the worst case, but the fastest loop for the usual few bytes.

        `new_ids[i]` is the id the pair at `i` merges into (merge ``r`` makes id
        ``256 + r``, so the smallest id is the lowest rank), with a sentinel after the
        last token. Each step merges the leftmost lowest-ranked pair and looks up only
        its two neighbours again: a merge only creates pairs of higher rank, so
        "leftmost lowest, repeatedly" is the rank-pass rule, overlaps included.
        ``min`` and ``index`` scan at C speed, so the Python work is a few statements
        per merge.
        """
        merged_id = self._merge_ids.get
        new_ids = list(map(merged_id, pairwise(tokens), repeat(_NO_MERGE)))
        new_ids.append(_NO_MERGE)
        while True:
            best = min(new_ids)
            if best == _NO_MERGE:
                return tokens
            i = new_ids.index(best)
            tokens[i] = best
            del tokens[i + 1]
            del new_ids[i]
            if i:
                new_ids[i - 1] = merged_id((tokens[i - 1], best), _NO_MERGE)
            if i + 1 < len(tokens):
                new_ids[i] = merged_id((best, tokens[i + 1]), _NO_MERGE)
            else:
                new_ids[i] = _NO_MERGE

    def merge_huge(self, word: str) -> list[int]:
        """Rank by rank, each merge a whole-word rescan in C; for huge words (megabytes).

        `word` holds one character per token (``chr(id)``), in a :class:`HugeWord` (one
        byte a token while it can be). Each merge present, lowest rank first, is one
        ``str.replace``: the rank pass of the reference itself. The lowest ranks are
        taken in turn, each looked for, until ``RANK_PASS_MISSES`` scans found nothing;
        then the word's pairs are counted once, and followed through the neighbours of
        each new token (:func:`merge_word`), so the next rank present is known without
        a scan. Either way a merge creates only pairs of higher rank, so every pair
        present ranks after the last merge done. Memory is a few times the word,
        against dozens of bytes a position for linked positions. Once the rescans have
        cost ``RESCANS`` times the word's length (a vocabulary that applies many merges
        to it), the rest is :meth:`merge_long`'s, from where the merges got to.
        """
        merge_ids, lefts, rights = self._merge_ids, self._lefts, self._rights
        huge = HugeWord(word, set(word))  # one byte a token while it can be
        del word  # `huge` holds it from here: freed at the first merge
        budget = RESCANS * len(huge)
        misses = 0
        for new_id in range(BASE_VOCAB_SIZE, len(lefts)):
            if misses == RANK_PASS_MISSES:
                break
            pair = chr(lefts[new_id]) + chr(rights[new_id])
            if not huge.has_tokens(pair):
                continue  # a token the word never held: known absent without a scan
            if pair not in huge:
                misses += 1
            elif budget < 0:
                return self.merge_long(huge.ids())
            else:
                budget -= len(huge)
                huge.replace(pair, chr(new_id))
        else:
            return huge.ids()  # every merge taken in turn
        counts = huge.pairs()
        # The ids the pairs present merge into, lowest (the lowest rank) first.
        pending = [
            new_id
            for new_id in map(merge_ids.get, ((ord(pair[0]), ord(pair[1])) for pair in counts))
            if new_id is not None
        ]
        heapify(pending)
        while pending:
            new_id = heappop(pending)
            pair = chr(lefts[new_id]) + chr(rights[new_id])
            if counts.get(pair, 0) <= 0:
                continue  # merged away since it was pushed
            if budget < 0:
                return self.merge_long(huge.ids())
            budget -= len(huge)
            new = chr(new_id)
            before, after, doubled = huge.merge(pair, new)
            del counts[pair]
            for lost, created, count in moved_pairs(pair, new, before, after, doubled):
                counts[lost] -= count
                counts[created] += count
                created_id = merge_ids.get((ord(created[0]), ord(created[1])))
                if created_id is not None:
                    heappush(pending, created_id)
        return huge.ids()

    def merge_long(self, tokens: list[int]) -> list[int]:
        """O(n log n): a doubly linked list over positions and buckets of positions per merge.

        Merges are applied in rank order, each at its positions left to right, which is
        the non-overlapping rule. A merge only creates pairs of higher rank, so the
        positions of each pair go into a bucket for the id it merges into (merge ``r``
        makes id ``256 + r``: ids order merges as ranks do), a small heap holds the ids
        that have a bucket, and each bucket is sorted once when its turn comes. An
        entry is stale when either side has changed since it was added; ids only ever
        grow, so comparing both sides with the merge's pair detects that exactly. A
        consumed position holds -1. The heap holds ids, not positions, so a position
        costs a list append, never a heap push and pop.
        """
        merge_ids = self._merge_ids
        lefts, rights = self._lefts, self._rights
        n = len(tokens)
        # For a word of many positions, machine-integer arrays (see ARRAY_POSITIONS)
        # instead of lists: far less memory, at a little speed.
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
        pending = list(buckets)
        heapify(pending)
        # The two neighbour updates below are written out rather than shared through a
        # helper, which would cost a Python call per merged position in the hottest loop.
        while pending:
            new_id = heappop(pending)
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
                            heappush(pending, after)
                        else:
                            bucket.append(i)
                h = preceding[i]
                if h >= 0:
                    before = merge_ids.get((tokens[h], new_id))
                    if before is not None:
                        bucket = buckets.get(before)
                        if bucket is None:
                            buckets[before] = [h]
                            heappush(pending, before)
                        else:
                            bucket.append(h)
        return [token for token in tokens if token >= 0]


def halves_join(
    left: int, right: int, new_id: int, merges: Sequence[Pair], merge_ids: dict[Pair, int]
) -> bool:
    """Whether encoding ``bytes(left) + bytes(right)`` merges across the middle before `new_id`.

    While the halves evolve apart, the last token of the left half runs down the right
    spine of `left` (``left``, its right child, ...) and the first token of the right
    half down the left spine of `right`. Token ``x`` (made at its own merge; a byte
    exists from the start) is last until the merge that consumes it, exclusive: that
    merge's pair lies to its left and wins the left-to-right scan. Token ``y`` is first
    until the merge that consumes it, inclusive: there the boundary pair is further left
    and wins. A merge of ``(x, y)`` whose id lies inside both windows joins the halves.

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


_Value = TypeVar("_Value")


class _BoundedCache(dict[str, _Value]):
    """A dict from chunk text to a value, emptied whole when it would grow past `capacity`.

    A unit is a character of a key or an id in a value, so the bound holds for any
    input: a huge, varied text empties the cache now and then instead of growing it.
    Emptying it whole is cheaper and more predictable than evicting entry by entry.
    Chunks longer than CACHE_MAX_KEY_CHARS are never kept (rare, and large).
    """

    __slots__ = ("capacity", "size")

    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity
        self.size = 0

    def _keep(self, chunk: str, value: _Value, ids: int) -> None:
        if len(chunk) > CACHE_MAX_KEY_CHARS:
            return
        units = len(chunk) + ids
        if self.size + units > self.capacity:
            self.clear()
            self.size = 0
            self._refill()
        self[chunk] = value
        self.size += units

    def _refill(self) -> None:
        """What an emptied cache starts from again: nothing, unless a subclass says."""


class ChunkCache(_BoundedCache[Sequence[int]]):
    """Chunk text to ids, encoding a chunk it lacks: ``cache[chunk]`` always answers.

    `encode_new` gives a missing chunk's ids. A chunk of one token is the text of a
    whole token (it encodes to that token): those go into `permanent` (text to id,
    bounded by the vocabulary) and stay for good, through every emptying; other chunks
    are kept within the bound.

    Why a dict subclass with ``__missing__``: ``map(cache.__getitem__, chunks)`` stays
    the C-speed lookup of a plain dict for every chunk it holds and calls into Python
    only for a chunk it lacks, so text with new chunks costs one pass, not a pass that
    fails, a pass to find what is missing, and a pass to flatten. Values are tuples:
    immutable, and smaller than lists (a chunk too long to keep is answered with its
    fresh list of ids, which nothing else holds).
    """

    __slots__ = ("encode_new", "permanent")

    def __init__(
        self,
        capacity: int,
        permanent: dict[str, int],
        encode_new: Callable[[str], Sequence[int]],
    ) -> None:
        super().__init__(capacity)
        self.permanent = permanent
        self.encode_new = encode_new
        self._refill()

    def _refill(self) -> None:
        # zip(values) makes the 1-tuples in C, with no Python step per entry. From a
        # copy (one call in C): where threads run at once, another may add to
        # `permanent` meanwhile, and iterating it would then fail.
        permanent = self.permanent.copy()
        self.update(zip(permanent, zip(permanent.values()), strict=True))

    def __missing__(self, chunk: str) -> Sequence[int]:
        ids = self.encode_new(chunk)
        if len(ids) == 1:
            self.permanent[chunk] = ids[0]
            self[chunk] = ids
        else:
            self._keep(chunk, ids, len(ids))
        return ids


class PackedCache(_BoundedCache[bytes]):
    """Chunk text to its ids as ``array(typecode)`` bytes, encoding a chunk it lacks.

    The packed twin of :class:`ChunkCache`, for output that is machine bytes (a dataset
    file): flattening becomes one ``bytes.join``, with no Python int per id.
    """

    __slots__ = ("encode_new", "typecode")

    def __init__(
        self,
        capacity: int,
        typecode: str,
        encode_new: Callable[[str], Sequence[int]],
    ) -> None:
        super().__init__(capacity)
        self.typecode = typecode
        self.encode_new = encode_new

    def __missing__(self, chunk: str) -> bytes:
        ids = self.encode_new(chunk)
        try:
            data = array(self.typecode, ids).tobytes()
        except OverflowError:
            raise OverflowError(
                f"token id {max(ids)} does not fit in array typecode {self.typecode!r}"
            ) from None
        self._keep(chunk, data, len(ids))
        return data


class PieceCache(_BoundedCache[tuple[int, ...]]):
    """Piece text to its ids (see ``Encoder.from_pieces``), encoding a piece it lacks."""

    __slots__ = ("encode_piece",)

    def __init__(self, capacity: int, encode_piece: Callable[[str], tuple[int, ...]]) -> None:
        super().__init__(capacity)
        self.encode_piece = encode_piece

    def __missing__(self, piece: str) -> tuple[int, ...]:
        ids = self.encode_piece(piece)
        self._keep(piece, ids, len(ids))
        return ids


class PairCache(dict[Pair, bool]):
    """A pair of tokens to whether they stay apart, asked on first use; emptied when full."""

    __slots__ = ("capacity", "stay_apart")

    def __init__(self, capacity: int, stay_apart: Callable[[Pair], bool]) -> None:
        super().__init__()
        self.capacity = capacity
        self.stay_apart = stay_apart

    def __missing__(self, pair: Pair) -> bool:
        if len(self) >= self.capacity:
            self.clear()
        apart = self[pair] = self.stay_apart(pair)
        return apart
