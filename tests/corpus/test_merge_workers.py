"""The merge loop spread over workers learns the reference's merges, for any number of them.

Two readings are held to ``bpetite.reference.train_counts``: the shares all held in
this process (``spread_over(n, here=True)``: the sums the workers compute, without
the processes), exhaustively on small corpora and by hypothesis; and the shares in
real worker processes, before and after they are gathered back, by hypothesis with
fewer examples (each starts processes) and on TinyShakespeare. Then what the pool
promises: a killed worker fails the run in one error, a worker's own error reaches
the caller, an orphaned worker stops, and no worker outlives the call. Last, every
way to train on many chunks spreads its merge loop: ``train_files``, ``train_counts``
and ``bpetite train`` on files or counts files (a killed worker there is one line).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import re
import signal
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import product
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpetite import Progress, Tokenizer, count_chunks, reference, train_counts, train_files
from bpetite.cli import main
from bpetite.core import _trainer
from bpetite.core._trainer import train_merges
from bpetite.corpus import _counting as counting
from bpetite.corpus import _merge_workers as merging
from bpetite.corpus import _workers as pool
from bpetite.corpus import save_counts
from bpetite.corpus._merge_workers import deal, merge_workers, spread_over
from bpetite.errors import WorkerError
from tests.processes import watchdog
from tests.strategies import texts

needs_proc = pytest.mark.skipif(
    not Path("/proc/self/stat").exists() or os.name != "posix", reason="needs /proc and signals"
)
needs_fork = pytest.mark.skipif(
    multiprocessing.get_start_method() != "fork",
    reason="patches the parent's module, which only forked workers share",
)


#: Every string of up to five characters over a three-letter alphabet, as chunk counts.
SMALL_CORPORA = [count_chunks(["".join(c)]) for n in range(6) for c in product("ab ", repeat=n)]
SHARES = (1, 2, 3, 4)
weighted_chunks = st.dictionaries(
    st.binary(min_size=1, max_size=12).map(lambda b: bytes(x % 4 + 97 for x in b)),
    st.integers(1, 5),
    max_size=12,
)
limits = st.one_of(st.none(), st.integers(2, 6))
frequencies = st.one_of(st.none(), st.integers(1, 6))


def merge_children() -> list[multiprocessing.process.BaseProcess]:
    return [p for p in multiprocessing.active_children() if p.name.startswith("bpetite-merge-")]


@pytest.fixture
def always_spread(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Workers for any corpus, however small (the rule would keep a small one here)."""
    monkeypatch.setattr(merging, "SHARE_BYTES", 1)
    yield
    assert merge_children() == []  # no worker outlives the call


# --------------------------------------------------------------------------- shares held here


def test_every_small_corpus_in_every_number_of_shares() -> None:
    """Ties and overlapping runs everywhere, and shares with no words at all."""
    for counts, vocab_size in product(SMALL_CORPORA, (257, 260, 300)):
        expected = reference.train_counts(counts, vocab_size)
        for shares in SHARES:
            assert train_merges(counts, vocab_size, lay_out=spread_over(shares, here=True)) == (
                expected
            ), (counts, shares)


@given(weighted_chunks, st.integers(256, 300), st.sampled_from(SHARES), limits, frequencies)
def test_shares_match_the_reference_on_weighted_chunks(
    chunks: dict[bytes, int],
    vocab_size: int,
    shares: int,
    max_token_bytes: int | None,
    min_frequency: int | None,
) -> None:
    fast = train_merges(
        chunks,
        vocab_size,
        max_token_bytes=max_token_bytes,
        min_frequency=min_frequency,
        lay_out=spread_over(shares, here=True),
    )
    expected = reference.train_counts(
        chunks, vocab_size, max_token_bytes=max_token_bytes, min_frequency=min_frequency
    )
    assert fast == expected


@given(texts, st.sampled_from(SHARES), st.sampled_from([1, 8, 10**9]))
def test_shares_match_the_reference_on_text_in_every_layout(
    corpus: str, shares: int, huge_chunk_bytes: int
) -> None:
    """Short, huge and long words (``HUGE_CHUNK_BYTES`` 1 makes every word huge)."""
    chunks = count_chunks([corpus])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_trainer, "HUGE_CHUNK_BYTES", huge_chunk_bytes)
        fast = train_merges(chunks, 320, lay_out=spread_over(shares, here=True))
    assert fast == reference.train_counts(chunks, 320)


def batches_of(sizes: list[int]) -> _trainer.LayOut:
    """The default `lay_out`, noting how many merges each call to merge carries."""

    @contextlib.contextmanager
    def lay_out(counts: Mapping[Any, int]) -> Iterator[tuple[_trainer.PairCounts, Any]]:
        with _trainer.words_here(counts) as (pair_counts, merge):

            def noted(
                batch: Sequence[tuple[str, str]], gone: Sequence[str]
            ) -> list[dict[str, int]]:
                sizes.append(len(batch))
                return merge(batch, gone)

            yield pair_counts, noted

    return lay_out


@pytest.mark.parametrize(
    ("counts", "vocab_size", "batches"),
    [
        # Three pairs tied, sharing no token: one call merges all three.
        ({b"ab": 1, b"cd": 1, b"ef": 1}, 259, [3]),
        # (a, b) then (b, c): merging the first lowers the second, which must wait.
        ({b"abc": 1}, 258, [1, 1]),
        # (b, c) then (c, d) tied after (a, b)...: each shares a token with the one before.
        ({b"abcd": 1}, 259, [1, 1, 1]),
        # (a, b), then (c, a), which merging (a, b) lowers: the batch stops there, though
        # (d, e) shares nothing. Taking (d, e) would be wrong: merging (a, b) creates
        # (c, z), as frequent and smaller than (d, e), the next merge.
        ({b"cab": 1, b"de": 1}, 259, [1, 2]),
        # (a, b) and (c, d) first; (x, a) has lost its count by then.
        ({b"xab": 2, b"cd": 2}, 259, [2, 1]),
        # The same count, but the batch stops at the target.
        ({b"ab": 1, b"cd": 1, b"ef": 1}, 258, [2]),
    ],
)
def test_tied_pairs_independent_of_the_merges_before_them_share_a_call(
    counts: dict[bytes, int], vocab_size: int, batches: list[int]
) -> None:
    """Batches are what make fewer round trips; the merges stay the reference's."""
    sizes: list[int] = []
    merges = train_merges(counts, vocab_size, lay_out=batches_of(sizes))
    assert merges == reference.train_counts(counts, vocab_size)
    assert sizes == batches


@given(weighted_chunks, st.integers(256, 300), limits)
def test_batches_hold_every_merge_once(
    chunks: dict[bytes, int], vocab_size: int, max_token_bytes: int | None
) -> None:
    sizes: list[int] = []
    merges = train_merges(
        chunks, vocab_size, max_token_bytes=max_token_bytes, lay_out=batches_of(sizes)
    )
    assert merges == reference.train_counts(chunks, vocab_size, max_token_bytes=max_token_bytes)
    assert sum(sizes) == len(merges)
    assert 0 not in sizes


def test_deal_gives_every_chunk_to_exactly_one_share() -> None:
    """Each chunk once, in one share, as a str of its bytes' token characters."""
    counts = {bytes([97 + i % 26, 200 + i % 50]) * (1 + i // 26): i + 1 for i in range(100)}
    counts[b"\xff" * 300] = 2**70  # a huge word, and a count past a machine integer
    as_tokens = {chunk.decode("latin-1"): count for chunk, count in counts.items()}
    for shares in SHARES:
        dealt = [share.unpacked() for share in deal(counts, shares)]
        assert len(dealt) == shares
        assert sum(map(len, dealt)) == len(counts)
        assert Counter() + sum(map(Counter, dealt), Counter()) == Counter(as_tokens)
        assert max(map(len, dealt)) - min(map(len, dealt)) <= 1


def test_a_share_of_token_words_keeps_every_token() -> None:
    """Words of ids past 255 (continued training) are dealt as they are."""
    counts = {"\u0100a\u4e00": 3, "b": 1, "\U0001f600\u0101": 2}
    assert deal(counts, 1)[0].unpacked() == counts
    assert deal({}, 2)[1].unpacked() == {}


def test_time_is_lost_by_waiting_beyond_the_other_shares_cost() -> None:
    """Held here, each of the other shares would cost about what this one did."""
    assert merging.time_lost(1.0, 1.5, workers=1) == 0.0
    assert merging.time_lost(1.0, 2.5, workers=1) == 0.5
    assert merging.time_lost(1.0, 3.9, workers=3) == 0.0
    assert merging.time_lost(1.0, 4.25, workers=3) == 0.25


def test_spreading_pays_until_its_losses_reach_the_price_of_gathering() -> None:
    assert merging.spreading_pays(0.0, 0.5)
    assert merging.spreading_pays(0.49, 0.5)
    assert not merging.spreading_pays(0.5, 0.5)
    assert not merging.spreading_pays(1.0, 0.0)  # nothing to gather: gather at once


def test_the_rule_keeps_small_corpora_in_one_process() -> None:
    """At least ``SHARE_BYTES`` of distinct chunks per process, never more than asked."""
    small = {b"ab": 5, b"cd": 1}
    assert merge_workers(small, 4) == 1
    big = {bytes([i % 256, i // 256 % 256, i // 65536]) * 100: 1 for i in range(40_000)}
    total = sum(map(len, big))
    assert merge_workers(big, 64) == total // merging.SHARE_BYTES
    assert merge_workers(big, 2) == 2
    assert merge_workers(big, 1) == 1


# --------------------------------------------------------------------------- worker processes


@needs_fork
@settings(max_examples=25, deadline=None)
@given(weighted_chunks, st.integers(256, 300), st.sampled_from([2, 3, 4]), st.booleans())
def test_workers_match_the_reference(
    chunks: dict[bytes, int], vocab_size: int, workers: int, gather: bool
) -> None:
    """Real workers, kept to the end or gathered back after the first few merges (each
    list counted by bisection, the gathered words' ranges of weight 1 included)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_trainer, "BISECT_AT_LEAST", 1)
        patch.setattr(merging, "SHARE_BYTES", 1)
        patch.setattr(merging, "spreading_pays", lambda *_: not gather)
        patch.setattr(merging, "GATHER_WINDOW", 2)
        with watchdog():
            fast = merging.train_merges_in_workers(dict(chunks), vocab_size, workers=workers)
    assert fast == reference.train_counts(chunks, vocab_size)
    assert merge_children() == []


@needs_fork
@settings(max_examples=15, deadline=None)
@given(texts, st.sampled_from([2, 3]), st.sampled_from([1, 8, 10**9]))
def test_gathered_workers_match_the_reference_in_every_layout(
    corpus: str, workers: int, huge_chunk_bytes: int
) -> None:
    """Short, huge and long words gathered back, their indexes sent a few entries a piece."""
    chunks = count_chunks([corpus])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_trainer, "HUGE_CHUNK_BYTES", huge_chunk_bytes)
        patch.setattr(merging, "SHARE_BYTES", 1)
        patch.setattr(merging, "spreading_pays", lambda *_: False)
        patch.setattr(merging, "GATHER_WINDOW", 2)
        patch.setattr(merging, "INDEX_PIECE", 3)
        with watchdog():
            fast = merging.train_merges_in_workers(dict(chunks), 320, workers=workers)
    assert fast == reference.train_counts(chunks, 320)
    assert merge_children() == []


def test_pickled_words_are_the_words_sharing_an_int_per_word() -> None:
    """What a gathered worker's words come back as: equal, and no larger (an unpickled
    list of ints holds an int object per entry past 256)."""
    corpus = " ".join(f"w{n} w{n}x" for n in range(400)) + " " + "ab" * 200
    words = _trainer.Words(count_chunks([corpus]))
    words.take_pair_counts()
    for pair, token in [(" w", "\u0100"), ("\u0100" + "1", "\u0101"), ("ab", "\u0102")]:
        words.merge(pair, token)
    copy = pickle.loads(pickle.dumps(words))
    assert copy.__dict__ == words.__dict__
    assert len(copy.words) > 256
    entries = [n for listed in copy.where.values() for n in listed]
    assert len({id(n) for n in entries}) <= len(copy.words) < len(entries)


@needs_fork
@pytest.mark.parametrize("workers", [2, 3, 4])
@pytest.mark.parametrize("gather", [False, True])
def test_tinyshakespeare_in_workers_matches_the_reference(
    shakespeare_reference: tuple[Counter[bytes], list[tuple[int, int]]],
    workers: int,
    gather: bool,
    always_spread: None,
) -> None:
    """Kept to the end, or gathered back after ``GATHER_WINDOW`` merges."""
    chunks, expected = shakespeare_reference
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(merging, "spreading_pays", lambda *_: not gather)
        with watchdog():
            fast = merging.train_merges_in_workers(Counter(chunks), 400, workers=workers)
    assert fast == expected


def test_train_files_spreads_the_merge_loop_and_learns_the_same(
    shakespeare_path: Path, shakespeare_reference: tuple[Counter[bytes], list[tuple[int, int]]]
) -> None:
    """TinyShakespeare counted and merged by three processes: the reference's merges."""
    _, expected = shakespeare_reference
    merging_beside: list[int] = []

    def watch(event: Progress) -> None:
        if event.task == "merge" and event.stage == "update":
            merging_beside.append(len(merge_children()))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(merging, "SHARE_BYTES", 1)
        patch.setattr(merging, "spreading_pays", lambda *_: True)
        with watchdog():
            tokenizer = train_files([shakespeare_path], 400, workers=3, progress=watch)
    assert list(tokenizer.merges) == expected
    assert merging_beside == [2]  # two workers beside this process, at merge 100
    assert merge_children() == []


@needs_fork
@pytest.mark.parametrize("workers", [1, 2])
def test_the_loop_takes_the_counts(always_spread: None, workers: int) -> None:
    """Emptied once dealt, so that the table is not kept through the loop."""
    counts = count_chunks(["the cat sat on the mat " * 3])
    expected = reference.train_counts(counts, 270)
    with watchdog():
        assert merging.train_merges_in_workers(counts, 270, workers=workers) == expected
    assert counts == {}


def test_progress_is_the_loops_own(always_spread: None) -> None:
    events: list[Progress] = []
    corpus = " ".join(f"w{i}x{i * 7}" for i in range(400))
    merges = merging.train_merges_in_workers(
        count_chunks([corpus]), 256 + 250, events.append, workers=2
    )
    assert merges == reference.train_counts(count_chunks([corpus]), 256 + 250)
    assert events[0] == Progress("merge", "start", 0, 250)
    assert [e.done for e in events if e.stage == "update"] == [100, 200]
    assert events[-1] == Progress("merge", "done", 250, 250)


@needs_proc
@needs_fork
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGUSR1])
@pytest.mark.parametrize("dead_before_the_next_merge", [False, True])
def test_a_killed_merge_worker_fails_the_run_in_one_error(
    shakespeare_text: str,
    signum: int,
    dead_before_the_next_merge: bool,
    monkeypatch: pytest.MonkeyPatch,
    always_spread: None,
) -> None:
    """Killed while the loop runs: a WorkerError naming it, not a hang. Dead before the
    next merge is sent, the request meets a broken pipe, not the answer's end."""
    monkeypatch.setattr(merging, "spreading_pays", lambda *_: True)  # workers to the end
    previous = signal.signal(signal.SIGUSR1, signal.SIG_DFL)  # forked workers inherit it
    killed: list[int] = []

    def kill_a_worker(event: Progress) -> None:
        if event.stage == "update" and not killed:
            worker = merge_children()[0]
            killed.append(worker.pid or 0)
            os.kill(killed[0], signum)
            if dead_before_the_next_merge:
                worker.join()

    try:
        with watchdog(), pytest.raises(WorkerError) as caught:
            merging.train_merges_in_workers(
                count_chunks([shakespeare_text]), 2000, kill_a_worker, workers=3
            )
    finally:
        signal.signal(signal.SIGUSR1, previous)
    name = signal.Signals(signum).name
    assert str(caught.value).startswith(f"a merge worker (pid {killed[0]}) was killed by {name}")
    assert merge_children() == []


def unpicklable() -> Exception:
    """An exception the parent could not rebuild: its constructor needs two arguments.

    Its class is made anew when the test runs: importing ``distributed`` gives every
    exception class that exists by then a pickling that bypasses the constructor
    (tblib's), so a class made when this module was collected travelled whole whenever
    a Dask test module was collected after it, as running this module first does.
    """

    class Unpicklable(Exception):
        def __init__(self, first: str, second: str) -> None:
            super().__init__(f"{first} {second}")

    return Unpicklable("cannot", "travel")


@needs_fork
@pytest.mark.parametrize(
    ("make_error", "raised", "message"),
    [
        (lambda: MemoryError("no room"), MemoryError, "no room"),
        (unpicklable, WorkerError, "a merge worker failed: Unpicklable"),
    ],
)
def test_an_error_in_a_merge_worker_reaches_the_caller(
    shakespeare_text: str,
    monkeypatch: pytest.MonkeyPatch,
    always_spread: None,
    make_error: Callable[[], Exception],
    raised: type[Exception],
    message: str,
) -> None:
    error = make_error()
    parent = os.getpid()
    real = _trainer.Words.merge

    def fail_in_a_worker(self: Any, pair: str, new_token: str) -> dict[str, int]:
        if os.getpid() != parent and ord(new_token) == 300:
            raise error
        return real(self, pair, new_token)

    monkeypatch.setattr(merging, "spreading_pays", lambda *_: True)
    monkeypatch.setattr(_trainer.Words, "merge", fail_in_a_worker)
    with watchdog(), pytest.raises(raised, match=message):
        merging.train_merges_in_workers(count_chunks([shakespeare_text]), 400, workers=2)


def test_an_orphaned_merge_worker_stops() -> None:
    """A worker blocked on its next request checks its parent's pid while it waits."""
    inbox, parent_end = multiprocessing.Pipe(duplex=False)  # open, and silent
    _, outbox = multiprocessing.Pipe(duplex=False)
    channel = pool.Channel(inbox, outbox, parent=-1, role="merge")
    with watchdog(), pytest.raises(WorkerError, match="parent process is gone"):
        channel.receive()
    parent_end.close()


# --------------------------------------------------------------------------- every way to train


@pytest.fixture
def spread_calls(monkeypatch: pytest.MonkeyPatch, always_spread: None) -> list[int]:
    """The number of shares of every spread merge loop started while the test runs."""
    calls: list[int] = []
    real = merging.spread_over

    def recording(shares: int, **options: Any) -> _trainer.LayOut:
        calls.append(shares)
        return real(shares, **options)

    monkeypatch.setattr(merging, "spread_over", recording)
    monkeypatch.setattr(merging, "spreading_pays", lambda *_: True)  # workers to the end
    return calls


@needs_fork
def test_train_counts_spreads_the_merge_loop_and_learns_the_same(
    shakespeare_path: Path,
    shakespeare_reference: tuple[Counter[bytes], list[tuple[int, int]]],
    spread_calls: list[int],
    tmp_path: Path,
) -> None:
    chunks, expected = shakespeare_reference
    counts_path = tmp_path / "c.counts.json"
    save_counts(counts_path, chunks)
    with watchdog():
        tokenizer = train_counts([counts_path], 400, workers=3)
    assert list(tokenizer.merges) == expected
    assert spread_calls == [3]


@needs_fork
@pytest.mark.parametrize(
    ("workers", "share_bytes", "spread"),
    [(2, 1, [(2, True)]), (3, 1, [(3, True)]), (3, 10**12, [])],
)
def test_train_files_shares_add_up_the_counting_workers_parts(
    shakespeare_text: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    workers: int,
    share_bytes: int,
    spread: list[tuple[int, bool]],
) -> None:
    """Counted in parts (however small the corpus), each share adds up one part of
    every counting worker's; where the rule wants other than one share a part (here,
    one process), the parts are added up here first. The reference's merges either way."""
    texts = [shakespeare_text[k * 6000 : (k + 1) * 6000] for k in range(6)]
    for k, text in enumerate(texts):
        (tmp_path / f"{k}.txt").write_text(text, encoding="utf-8")
    calls: list[tuple[int, bool]] = []
    real = merging.spread_over

    def recording(shares: int, **options: Any) -> _trainer.LayOut:
        calls.append((shares, options.get("parts") is not None))
        return real(shares, **options)

    monkeypatch.setattr(counting, "PARTED_BYTES", 0)
    monkeypatch.setattr(merging, "SHARE_BYTES", share_bytes)
    monkeypatch.setattr(merging, "spread_over", recording)
    monkeypatch.setattr(merging, "spreading_pays", lambda *_: True)  # workers to the end
    with watchdog():
        tokenizer = train_files([tmp_path], 300, workers=workers)
    assert list(tokenizer.merges) == reference.train_counts(count_chunks(texts), 300)
    assert calls == spread
    assert merge_children() == []


@needs_fork
@pytest.mark.parametrize("source", ["--input", "--counts"])
def test_the_train_command_spreads_the_merge_loop_and_learns_the_same(
    shakespeare_path: Path,
    shakespeare_reference: tuple[Counter[bytes], list[tuple[int, int]]],
    spread_calls: list[int],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    source: str,
) -> None:
    chunks, expected = shakespeare_reference
    given = shakespeare_path
    if source == "--counts":
        given = tmp_path / "c.counts.json"
        save_counts(given, chunks)
    output = tmp_path / "tok.json"
    with watchdog():
        code = main(["train", source, str(given), "--workers", "2", "--vocab-size", "400",
                     "--output", str(output)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert list(Tokenizer.load(output).merges) == expected
    assert spread_calls == [2]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_special_id_among_the_learned_ones_is_skipped_as_in_train_from_counts(
    tmp_path: Path, always_spread: None, workers: int
) -> None:
    """A special token given the id the third merge would take: the learned tokens skip it."""
    text = "the cat sat on the mat, the cat ate the hat " * 20
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")
    specials = {"<|x|>": 258}
    expected = Tokenizer.train_from_counts(count_chunks([text]), 280, special_tokens=specials)
    with watchdog():
        tokenizer = train_files([tmp_path / "a.txt"], 280, special_tokens=specials, workers=workers)
    assert tokenizer.merges == expected.merges
    assert tokenizer.encode(text, allowed_special="all") == expected.encode(
        text, allowed_special="all"
    )


@needs_proc
@needs_fork
def test_the_train_command_reports_a_killed_merge_worker_in_one_line(
    shakespeare_path: Path,
    spread_calls: list[int],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A worker killed by SIGKILL (as the OOM killer does) in the merge phase: exit 1, one
    line naming it, no artifact, no worker left."""
    parent = os.getpid()
    real = _trainer.Words.merge

    def die_in_a_worker(self: Any, pair: str, new_token: str) -> dict[str, int]:
        if os.getpid() != parent and ord(new_token) == 300:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(self, pair, new_token)

    monkeypatch.setattr(_trainer.Words, "merge", die_in_a_worker)
    output = tmp_path / "out" / "tok.json"
    output.parent.mkdir()
    with watchdog():
        code = main(["train", "--input", str(shakespeare_path), "--workers", "2",
                     "--vocab-size", "400", "--output", str(output)])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == ""
    assert "Traceback" not in captured.err
    assert re.fullmatch(
        r"bpetite: error: a merge worker \(pid \d+\) was killed by SIGKILL; "
        r"the machine may be out of memory",
        captured.err.splitlines()[-1],
    ), captured.err
    assert list(output.parent.iterdir()) == []
    assert spread_calls == [2]
