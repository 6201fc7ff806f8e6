"""The merge loop with its words spread over worker processes: the same merges as one process.

Must equal ``bpetite.reference.train_counts``: it is ``core._trainer.train_merges``'s
loop, with the words held elsewhere.

The loop in this process keeps the pair counts and the candidates, and picks every
merge by the specification's rule. The words are split into *shares*, dealt out in
turn (:class:`Share`), or, for counts the counting workers left in parts
(``CountParts``), a part of every counting worker's a share (:class:`PartsShare`,
added up by the process that holds it): this process holds share 0, worker ``k``
share ``k``, each as a :class:`~bpetite.core._trainer.Words`. At the start each share
counts its pairs and this process adds the counts up; then for every batch of merges
(the best pair and the pairs tied with it that it cannot lower:
``Candidates.pop_next_tied``), the pairs and their new tokens go to every worker, each
share merges them in turn in its own words and reports the pairs each merge created
with their counts, summed per pair, and this process adds those up. A pair's count
is a sum over words, so the sums are what one process holding every word would
have counted, and the merges are the same, byte for byte, for any number of workers.
What a merge takes from the older pairs follows from what it created
(``core._trainer.replaced_pair``), so that is all a worker sends.

A batch costs a message each way per worker, which only pays where merges have many
words to rewrite: with fewer than :data:`SHARE_BYTES` bytes of distinct chunks per
worker, fewer workers are used, down to this process alone; and once merges have
grown so light that the messages have cost more than gathering the words would
(:func:`spreading_pays`), the workers send their words here, where the loop goes on
alone. When that happens depends on the machine's speed and load, never on what is
learned.
Measurements: docs/design-notes.md#trainer-merge-workers
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from itertools import accumulate, chain
from time import perf_counter
from typing import Any, AnyStr, Final

from bpetite.core._progress import ProgressCallback
from bpetite.core._trainer import (
    LayOut,
    MergeWords,
    Pair,
    PairCounts,
    Words,
    train_merges,
)
from bpetite.corpus._counting import CountParts, add_counts, add_up_parts
from bpetite.corpus._workers import Channel, Peer, Role, conversing, forking

#: Each worker the merge loop uses holds at least this many bytes of distinct chunks:
#: below that, its messages cost more than the merging they spread.
#: Measurements: docs/design-notes.md#trainer-merge-workers
SHARE_BYTES: Final = 1 << 20

#: Every this many merges, the loop adds up what spreading them lost (:func:`time_lost`)
#: and checks that spreading still pays (:func:`spreading_pays`); once it does not, the
#: workers send their words here and the loop goes on in this process alone. The late
#: merges are many and light, and a message each way per merge can cost more than the
#: merging it spreads.
#: Measurements: docs/design-notes.md#trainer-merge-workers
GATHER_WINDOW: Final = 32

#: How many index entries a gathered worker sends a message: each message is pickled
#: whole at both ends, so the index is sent in pieces, never all at once.
INDEX_PIECE: Final = 1 << 20

#: How merge workers are named in errors.
_ROLE: Final = Role("merge", "merge", "the pairs its merge created")


def merge_workers(chunk_counts: Mapping[Any, int] | CountParts, workers: int) -> int:
    """How many processes the merge loop uses for `chunk_counts`: at most `workers`,
    each with at least :data:`SHARE_BYTES` of distinct chunks (at least one); counts
    still in parts are taken to hold their pickled size (:meth:`CountParts.size`)."""
    if isinstance(chunk_counts, CountParts):
        total = chunk_counts.size()
    else:
        total = sum(map(len, chunk_counts))
    return max(1, min(workers, total // SHARE_BYTES))


def train_merges_in_workers(
    chunk_counts: MutableMapping[AnyStr, int] | CountParts,
    vocab_size: int,
    progress: ProgressCallback | None = None,
    *,
    workers: int,
    max_token_bytes: int | None = None,
    min_frequency: int | None = None,
    token_lengths: Sequence[int] | None = None,
) -> list[Pair]:
    """``train_merges`` with the words spread over up to `workers` processes (this one included).

    The same merges whatever `workers`; :func:`merge_workers` says how many are used.
    Takes `chunk_counts`: it is emptied once the words are laid out, so that the
    table is not kept through the loop (nor handed to the workers). Counts still in
    parts (:class:`CountParts`) are added up by the shares, a part each, where there
    are as many shares as parts; otherwise here, first. A worker that dies raises
    WorkerError naming its pid and how it died; no worker outlives the call, however
    it ends.
    """
    counts: MutableMapping[Any, int] = {}
    parts: list[list[bytes]] | None = None
    if isinstance(chunk_counts, CountParts):
        if merge_workers(chunk_counts, workers) == chunk_counts.parts:
            parts = chunk_counts.take()
        else:
            counts = chunk_counts.joined()
    else:
        counts = chunk_counts
    processes = len(parts) if parts is not None else merge_workers(counts, workers)
    return train_merges(
        counts,
        vocab_size,
        progress,
        max_token_bytes=max_token_bytes,
        min_frequency=min_frequency,
        token_lengths=token_lengths,
        lay_out=(
            spread_over(processes, release=True, parts=parts)
            if processes > 1
            else _words_here_released
        ),
    )


@contextmanager
def _words_here_released(
    chunk_counts: Mapping[Any, int],
) -> Iterator[tuple[PairCounts, MergeWords]]:
    """``words_here``, then the counts emptied: the words hold chunks of their own."""
    words = Words(chunk_counts)
    if isinstance(chunk_counts, dict):
        chunk_counts.clear()
    yield words.take_pair_counts(), words.merge_in_turn


def spread_over(
    shares: int,
    *,
    here: bool = False,
    release: bool = False,
    parts: list[list[bytes]] | None = None,
) -> LayOut:
    """A `lay_out` for ``train_merges`` that deals the words out into `shares` shares.

    Share 0 stays in this process, each other goes to a worker of its own; with
    `here`, every share stays in this process, merged one after the other: what the
    workers compute, without them (as the loop goes on once it has gathered them).
    With `release`, the chunk counts handed in (a dict) are emptied once dealt, before
    any worker starts: each process then holds its own share's words and nothing of
    the table. With `parts` (``CountParts.take``: one list of pickled parts a share),
    the chunk counts handed in are not used: each share adds its own parts up.
    """

    @contextmanager
    def lay_out(chunk_counts: Mapping[Any, int]) -> Iterator[tuple[PairCounts, MergeWords]]:
        # One list per share, holding it: a forked worker empties every other one, so
        # that it drops the shares it inherited and does not need.
        holders: list[list[Share | PartsShare]]
        if parts is None:
            holders = [[share] for share in deal(chunk_counts, shares)]
        else:
            holders = [[PartsShare(share)] for share in parts]
            parts.clear()  # the holders have them, until each process takes its own
        if release and isinstance(chunk_counts, dict):
            chunk_counts.clear()
        inherit = not here and forking()
        sent = (
            [] if here else [(k, holders) if inherit else holders[k][0] for k in range(1, shares)]
        )
        with conversing(_hold_words, sent, _ROLE) as started:
            peers = list(started)  # the workers still holding words
            del sent
            start = perf_counter()
            held = [Words(holder.pop().unpacked()) for holder in holders[: shares - len(peers)]]
            # What gathering the workers' words is expected to cost: laying each out again
            # here, about what laying out a share took (the index is rebuilt either way).
            gathering = (perf_counter() - start) / len(held) * len(peers)
            for holder in holders:
                holder.clear()  # each worker has its own now
            pair_counts = held[0].take_pair_counts()
            for more in chain(
                (words.take_pair_counts() for words in held[1:]),
                (peer.receive() for peer in peers),
            ):
                add_counts(pair_counts, more)
            # Seconds merging share 0, and in all (with the workers), this window; and
            # what spreading has lost so far against merging every share here.
            seconds_here = seconds_in_all = lost = 0.0
            merged = 0

            def merge(
                batch: Sequence[tuple[str, str]], gone: Sequence[str]
            ) -> list[dict[str, int]]:
                nonlocal seconds_here, seconds_in_all, merged, lost
                start = perf_counter()
                for peer in peers:
                    peer.send((batch, gone))
                created = held[0].merge_in_turn(batch, gone)  # while the workers merge theirs
                done_here = perf_counter()
                for more in chain(
                    (words.merge_in_turn(batch, gone) for words in held[1:]),
                    (peer.receive() for peer in peers),
                ):
                    for counts, added in zip(created, more, strict=True):
                        add_counts(counts, added)
                if peers:
                    seconds_here += done_here - start
                    seconds_in_all += perf_counter() - start
                    merged += len(batch)
                    if merged >= GATHER_WINDOW:
                        lost += time_lost(seconds_here, seconds_in_all, len(peers))
                        if not spreading_pays(lost, gathering):
                            for peer in peers:
                                peer.send(None)
                            for peer in peers:
                                _gather(peer, held)
                            peers.clear()
                        seconds_here = seconds_in_all = 0.0
                        merged = 0
                return created

            yield pair_counts, merge

    return lay_out


def time_lost(here: float, spread: float, workers: int) -> float:
    """How much longer some merges took with the words spread than held here (or 0).

    `here` is the time this process spent merging its own share over the last
    :data:`GATHER_WINDOW` merges, `spread` the time those merges took in all (the
    messages, and waiting for the workers, included). Held here, every share would
    take about `here` again, so spreading loses ``spread - here * (workers + 1)``
    where that is positive: the wait beyond what the workers' shares would cost here.
    A loaded machine, whose workers wait for a CPU, loses sooner.
    """
    return max(spread - here * (workers + 1), 0.0)


def spreading_pays(lost: float, gathering: float) -> bool:
    """Whether to keep the words spread, having `lost` that much time by spreading them,
    when gathering them is expected to cost `gathering`.

    Ski rental: renting (spreading at a loss) until the losses reach the price of
    buying (gathering), then buying, never costs more than twice what knowing when the
    merges end would. It gathers soon where a gather is cheap (one or two workers) or
    the losses come fast (a loaded machine, whose workers wait for a CPU); with many
    workers the gather costs seconds and the late merges lose little, so the words
    stay spread to the end.
    """
    return lost < gathering


class Share:
    """Some chunk counts packed in three flat objects: the chunks' text joined, where each
    chunk ends, and the counts.

    A dict of chunks holds two objects per chunk; these three are freed at once by
    whichever process drops them, which is how a forked worker lets go of the shares
    it inherited and does not merge.
    """

    __slots__ = ("counts", "ends", "text")

    def __init__(self, chunks: Sequence[AnyStr], counts: Sequence[int]) -> None:
        joined = chunks[0][:0].join(chunks) if chunks else ""
        # A byte is the token of the same id, as in Words: latin-1 maps each byte to it.
        self.text = joined if isinstance(joined, str) else joined.decode("latin-1")
        self.ends = array("q", accumulate(map(len, chunks)))
        self.counts: Sequence[int]
        try:
            self.counts = array("q", counts)
        except OverflowError:  # a count past 2**63 (counts files may hold any integer)
            self.counts = list(counts)

    def unpacked(self) -> dict[str, int]:
        """The chunk counts as a dict, each chunk a str of token characters."""
        slices = map(slice, chain((0,), self.ends), self.ends)
        return dict(zip(map(self.text.__getitem__, slices), self.counts, strict=True))


class PartsShare:
    """A share of counts still in the counting workers' parts: a part of each worker's,
    pickled (``CountParts.take``)."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[bytes]) -> None:
        self.parts = parts

    def unpacked(self) -> dict[bytes, int]:
        """The share's chunk counts, its parts added up (each chunk in UTF-8)."""
        return add_up_parts(self.parts)


def deal(chunk_counts: Mapping[Any, int], processes: int) -> list[Share]:
    """`chunk_counts` dealt out in turn into `processes` shares, as cards are.

    Chunks come in the order they were counted, so each share gets about as many
    chunks, and as many bytes, as every other.
    """
    chunks, counts = list(chunk_counts), list(chunk_counts.values())
    return [Share(chunks[k::processes], counts[k::processes]) for k in range(processes)]


def _hold_words(
    slot: int,
    given: Share | PartsShare | tuple[int, list[list[Share | PartsShare]]],
    channel: Channel,
) -> None:
    """A merge worker: lay out its share's words, send their pair counts, then merge on request.

    `given` is its share, or, in a forked worker, its slot's place in the holders of
    every share, which it empties: the others' shares are dropped here too. Each
    request is a list of ``(pair, new_token)``, merged in turn, and the pairs gone since
    the last one; each answer the pairs each merge created in this share, with their
    counts (``Words.merge_in_turn``). A request of None gathers the words: the worker
    sends them whole and is done.
    """
    if isinstance(given, (Share, PartsShare)):
        share = given
    else:
        index, holders = given
        share = holders[index].pop()
        for holder in holders:
            holder.clear()
    del given
    words = Words(share.unpacked())
    del share
    channel.send(dict(words.take_pair_counts()))
    while (request := channel.receive()) is not None:
        channel.send(words.merge_in_turn(*request))
    words.reindex()  # what is sent, and then held there, is only what the words hold
    pieces = words.take_indexes(INDEX_PIECE)
    channel.send(words)
    for piece in pieces:
        channel.send(piece)
    channel.send(None)


def _gather(peer: Peer, held: list[Words]) -> None:
    """Take in a merge worker's words, sent once it was sent None: the words, then
    their indexes a piece at a time (``Words.take_indexes``), then None. They join
    the first words held here (``Words.absorb``), or, holding long words, are held
    beside them.
    """
    words: Words = peer.receive()
    pieces = iter(peer.receive, None)
    if not held[0].absorb(words, pieces):
        words.add_indexes(pieces)
        held.append(words)
