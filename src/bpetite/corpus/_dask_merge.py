"""The merge loop with its words in shares on Dask workers: the same merges as one process.

Must equal ``bpetite.reference.train_counts``: it is ``core._trainer.train_merges``'s
loop, with the words held by Dask actors, as ``_merge_workers`` holds them in local
worker processes.

The counts never come whole to this process. Each counting task deals its file's
counts into one part per worker by the CRC-32 of each chunk
(``_dask.dask_count_parts``); a :class:`ShareActor` per worker adds up part ``k`` of
every task, so a chunk counted in many files is one word of one share, and lays its
words out there. Counts held here (standard input, counts files) are dealt the same
way and sent to the shares. This process keeps the pair counts and the candidates, and
picks every merge by the specification's rule; for each batch of merges every share
merges them in turn in its words and answers with the pairs each merge created and
their counts, which this process adds up. A pair's count is a sum over words, so the
merges are the same, byte for byte, for any number of workers.

A batch costs a round trip to every worker, which only pays where merges have many
words to rewrite: with fewer than two shares' worth of distinct chunks
(:data:`SHARE_BYTES` each, counted exactly once the shares have added up their
parts), the shares send their counts here and the loop runs in this process alone.
Otherwise the shares are never gathered here, unlike the local merge workers': a
cluster is used because the words need not fit in one machine, so every batch costs
a round trip to every worker until the last merge (docs/scaling.md, "The merge loop
on a cluster", says for which corpora that pays).

A worker that dies holding a share takes with it words that exist nowhere else, with
the merges done so far; Dask cannot rebuild that from its task. So the run stops with
a WorkerError naming the worker. Every wait for a share is bounded: it checks, each
:data:`POLL_SECONDS`, that the scheduler still has every share's actor.
Measurements: docs/design-notes.md#trainer-merge-shares-on-dask
"""

from __future__ import annotations

import asyncio
import pickle
from collections import defaultdict
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from typing import Any, Final

from bpetite.core._errors import WorkerError
from bpetite.core._gc import gc_paused
from bpetite.core._progress import ProgressCallback
from bpetite.core._trainer import (
    LayOut,
    MergeWords,
    Pair,
    PairCounts,
    Words,
    train_merges,
    words_here,
)
from bpetite.corpus._counting import add_counts, add_up_parts, deal_encoded
from bpetite.corpus._dask import CountsOnDask

#: Each share on a Dask worker holds at least this many bytes of distinct chunks (all
#: of them together at least twice this): below that, a share's round trips cost more
#: than the merging they spread, and the words are merged in this process instead.
#: Measurements: docs/design-notes.md#trainer-merge-shares-on-dask
SHARE_BYTES: Final = 8 << 20

#: How often, in seconds, a wait for the shares' answers checks that every share is
#: still held: a worker lost without its connection closing (its machine gone) is then
#: noticed as soon as the scheduler notices it, however long a merge may take.
POLL_SECONDS: Final = 1.0


def dask_train_merges(
    remote: CountsOnDask,
    chunk_counts: MutableMapping[bytes, int],
    vocab_size: int,
    progress: ProgressCallback | None = None,
    *,
    max_token_bytes: int | None = None,
    min_frequency: int | None = None,
) -> list[Pair]:
    """``train_merges`` on the counts of `remote` plus `chunk_counts`, with the words on
    `remote`'s workers, one share each (in this process if they are few: :func:`on_dask`):
    the same merges as one process.

    Takes both: `chunk_counts` is emptied once dealt, and `remote`'s part futures once
    the shares hold them. A lost worker raises WorkerError; no share outlives the call.
    """
    return train_merges(
        chunk_counts,
        vocab_size,
        progress,
        max_token_bytes=max_token_bytes,
        min_frequency=min_frequency,
        lay_out=on_dask(remote),
    )


class ShareActor:
    """A Dask actor: one share's counts, added up from its parts; then either sent whole
    (:meth:`counts`) or laid out as words (:meth:`pair_counts`) and merged on request."""

    def __init__(self, parts: Sequence[bytes]) -> None:
        self._counts = add_up_parts(parts)  # each a pickled dict of UTF-8 chunks to counts
        self._words: Words | None = None
        self._merged = 0

    def size(self) -> int:
        """How many bytes of distinct chunks the share holds."""
        return sum(map(len, self._counts))

    def counts(self) -> bytes:
        """The share's chunk counts, pickled; the share lets go of them."""
        counts, self._counts = self._counts, {}
        return pickle.dumps(counts, pickle.HIGHEST_PROTOCOL)

    def pair_counts(self) -> bytes:
        """Lay the share's words out; the weighted count of every pair in them, pickled."""
        with gc_paused():  # the words are large acyclic tables (see core._gc)
            self._words = Words(self._counts)
            self._counts = {}
            return pickle.dumps(self._words.take_pair_counts(), pickle.HIGHEST_PROTOCOL)

    def merge_in_turn(self, batch: bytes, merged: int) -> bytes:
        """``Words.merge_in_turn`` on the pickled `batch` (the pairs to merge, and the
        pairs gone since the last batch), once the share has made the `merged` merges
        before; its answer pickled.

        Pickled here, not by Dask: Dask serializes a list item by item, which made a
        batch of many merges cost several times one of one. A share rebuilt from its
        task after its worker was lost has no words, or has made no merge: it
        refuses, rather than answer for words that are not the loop's.
        """
        if self._words is None or merged != self._merged:
            raise RuntimeError(
                f"this share has made {self._merged} merges, not the loop's {merged}"
            )
        pairs: list[tuple[str, str]]
        gone: list[str]
        pairs, gone = pickle.loads(batch)
        with gc_paused():
            created = self._words.merge_in_turn(pairs, gone)
        self._merged += len(pairs)
        return pickle.dumps(created, pickle.HIGHEST_PROTOCOL)


def on_dask(remote: CountsOnDask, *, share_bytes: int | None = None) -> LayOut:
    """A `lay_out` for ``train_merges`` whose shares are actors (:class:`ShareActor`) on
    `remote`'s workers, one each; the chunk counts handed in are dealt among them.

    With fewer than two shares' worth of distinct chunks (`share_bytes` each, by
    default :data:`SHARE_BYTES`), the shares send their counts here instead and the
    words are merged in this process (``words_here``): the same merges either way.
    """
    least = SHARE_BYTES if share_bytes is None else share_bytes

    @contextmanager
    def lay_out(chunk_counts: Mapping[Any, int]) -> Iterator[tuple[PairCounts, MergeWords]]:
        client = remote.client
        shares = [list(parts) for parts in remote.shares]
        for parts in remote.shares:
            parts.clear()  # the shares take them: freed once each share holds its words
        if chunk_counts:
            dealt = deal_encoded(chunk_counts.items(), len(shares))
            for parts, part, worker in zip(shares, dealt, remote.workers, strict=True):
                parts.append(client.scatter(part, workers=[worker], hash=False))
            del dealt
            if isinstance(chunk_counts, dict):
                chunk_counts.clear()
        # Each share meant for its worker; another may take it if that one is gone now.
        holders = [
            client.submit(
                ShareActor,
                parts,
                actor=True,
                workers=[worker],
                allow_other_workers=True,
                pure=False,
            )
            for worker, parts in zip(remote.workers, shares, strict=True)
        ]
        del shares
        try:
            actors = []
            for index, holder in enumerate(holders):
                try:
                    actors.append(holder.result())
                except Exception as error:  # its worker ran out of memory, or died
                    raise WorkerError(
                        f"a Dask worker failed adding up merge share {index + 1} of "
                        f"{len(holders)} ({type(error).__name__}: {error})"
                    ) from None
            total = sum(_answers(client, [actor.size() for actor in actors], actors, holders))
            if total < 2 * least:
                # Too few words to gain from the round trips: merged here instead.
                gathered: dict[bytes, int] = {}
                calls = [actor.counts() for actor in actors]
                for pickled in _answers(client, calls, actors, holders):
                    gathered.update(pickle.loads(pickled))  # no chunk is in two shares
            else:
                with gc_paused():  # the pair counts are a large acyclic table
                    pair_counts: PairCounts = defaultdict(int)
                    calls = [actor.pair_counts() for actor in actors]
                    for more in _answers(client, calls, actors, holders):
                        add_counts(pair_counts, pickle.loads(more))
                merged = 0

                def merge(
                    batch: Sequence[tuple[str, str]], gone: Sequence[str]
                ) -> list[dict[str, int]]:
                    nonlocal merged
                    pickled = pickle.dumps((list(batch), list(gone)), pickle.HIGHEST_PROTOCOL)
                    calls = [actor.merge_in_turn(pickled, merged) for actor in actors]
                    answers = map(pickle.loads, _answers(client, calls, actors, holders))
                    created: list[dict[str, int]] = next(answers)
                    for more in answers:
                        for counts, added in zip(created, more, strict=True):
                            add_counts(counts, added)
                    merged += len(batch)
                    return created

                yield pair_counts, merge
                return
        finally:
            client.cancel(holders)  # each actor, and what it holds, is dropped on its worker
        with words_here(gathered) as laid_out:
            yield laid_out

    return lay_out


def _answers(
    client: Any, calls: Sequence[Any], actors: Sequence[Any], holders: Sequence[Any]
) -> list[Any]:
    """What each share answered to its call, in order; WorkerError if one cannot answer.

    All the calls are awaited at once, in the client's event loop (one hand-over from
    this thread, not one per share). A wait is bounded: every :data:`POLL_SECONDS`
    without every answer, each share's actor must still be held (its future finished)
    or the call fails.
    """
    while True:
        try:
            answers: list[Any] = client.sync(_gather, calls, callback_timeout=POLL_SECONDS)
            break
        except TimeoutError:
            for lost, holder in enumerate(holders):
                if holder.status != "finished":
                    raise _lost(lost, actors, f"its actor is {holder.status}") from None
    for index, answer in enumerate(answers):
        if isinstance(answer, BaseException):  # the worker is gone, or the share failed there
            raise _lost(index, actors, f"{type(answer).__name__}: {answer}")
    return answers


async def _gather(calls: Sequence[Any]) -> list[Any]:
    """Each call's answer, or the exception it raised, once every call has one."""
    return await asyncio.gather(*calls, return_exceptions=True)


def _lost(index: int, actors: Sequence[Any], why: str) -> WorkerError:
    """The error for share `index`, which cannot answer for `why`."""
    where = getattr(actors[index], "_address", "an unknown worker")
    return WorkerError(
        f"the Dask worker {where} holding merge share {index + 1} of {len(actors)} "
        f"failed ({why}); its words were only there, so training stopped"
    )
