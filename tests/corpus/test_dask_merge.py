"""The merge loop with its shares on Dask workers learns the reference's merges.

The oracles are ``bpetite.reference.train_counts`` and the local run. First the loop
itself on small corpora, for one to three shares (two workers, so a worker may hold
two); then ``train_files`` on a cluster, whose counts stay dealt into the shares
(no chunk in two of them) and to which counts held here are added, with the shares
kept on the workers (``SHARE_BYTES`` lowered to 0: these corpora are small) and, as
by default for a corpus this small, gathered here; last, a worker killed while
holding a share fails the run with one WorkerError, without hanging. One cluster for
the module: a scheduler and two single-threaded workers on 127.0.0.1.
"""

from __future__ import annotations

import io
import os
import pickle
import random
import signal
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

distributed = pytest.importorskip("distributed")

from bpetite import Progress, Tokenizer, count_chunks, reference, train_files  # noqa: E402
from bpetite._internal import dask_count_parts, train_counted  # noqa: E402
from bpetite.cli import main  # noqa: E402
from bpetite.core._patterns import resolve_pattern  # noqa: E402
from bpetite.core._trainer import train_merges, words_here  # noqa: E402
from bpetite.corpus import _dask_merge as dask_merge  # noqa: E402
from bpetite.corpus._counting import count_files  # noqa: E402
from bpetite.corpus._dask import CountsOnDask, file_batches  # noqa: E402
from bpetite.corpus._dask_merge import on_dask  # noqa: E402
from bpetite.errors import ParameterError, WorkerError  # noqa: E402
from tests.dask_cluster import dask_cluster  # noqa: E402
from tests.processes import watchdog  # noqa: E402

#: Hand-picked corpora: ties broken by the smaller pair ("cab" before "abc" tells
#: first-seen from lexicographic order), a merge that overlaps itself ("aaaa"), a word
#: longer than HUGE_CHUNK_BYTES (rescanned whole), a chunk of one byte (no pair), and
#: chunks with pairs in common, whose counts are sums over shares.
CORPORA = [
    {b"cab": 2, b"abc": 2, b"ab": 1},
    {b"aaaa": 3, b"aaa": 1, b"a": 7},
    {b"ab" * 200 + b"c": 1, b"abab": 5, b" ab": 2, b"x": 9},
    {b"hello": 4, b" world": 3, b" hello": 2, b"low": 5, b"lower": 1},
]


def seeded_corpus(seed: int) -> dict[bytes, int]:
    """Random words over four letters, weights 1 to 9: many ties and long merge chains."""
    rng = random.Random(seed)
    words = ("".join(rng.choice("abc ") for _ in range(rng.randint(1, 9))) for _ in range(60))
    return {word.encode(): rng.randint(1, 9) for word in words}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with dask_cluster(tmp_path_factory.mktemp("dask")) as address:
        yield address


@pytest.fixture(scope="module")
def client(cluster: str) -> Iterator[Any]:
    with distributed.Client(cluster) as connected:
        yield connected


def shares_of(client: Any, count: int) -> CountsOnDask:
    """`count` empty shares over the cluster's workers, in turn (a worker may hold two)."""
    workers = sorted(client.nthreads())
    return CountsOnDask(client, tuple(workers[k % len(workers)] for k in range(count)),
                        [[] for _ in range(count)], 0)  # fmt: skip


def test_the_shares_on_dask_learn_the_reference_merges(client: Any) -> None:
    corpora = [*CORPORA, *map(seeded_corpus, range(3))]
    for index, counts in enumerate(corpora):
        shares = index % 3 + 1
        options: dict[str, Any] = [{}, {"max_token_bytes": 3}, {"min_frequency": 3}][index % 3]
        expected = reference.train_counts(counts, 320, **options)
        lay_out = on_dask(shares_of(client, shares), share_bytes=0)
        learned = train_merges(dict(counts), 320, lay_out=lay_out, **options)
        assert learned == expected, (counts, shares, options)


def write_corpus(folder: Path) -> list[str]:
    """Files that share many of their chunks, one with a word of 400 bytes; their texts."""
    folder.mkdir()
    texts = []
    for index in range(5):
        rng = random.Random(index)
        stems = rng.choices(["the", "cat", "中文", "😀"], k=300)
        words = [stem + "".join(rng.choices("abcdefgh", k=rng.randint(1, 6))) for stem in stems]
        text = " ".join(words) + f" {index}" + (" " + "ab" * 200 if index == 2 else "")
        (folder / f"{index}.txt").write_text(text, encoding="utf-8")
        texts.append(text)
    return texts


@pytest.fixture(scope="module")
def corpus_merges(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[int, int]]:
    """The reference's merges, to 340, of :func:`write_corpus`'s texts, computed once."""
    texts = write_corpus(tmp_path_factory.mktemp("reference") / "corpus")
    return reference.train_counts(count_chunks(texts), 340)


@pytest.mark.parametrize("kept", [True, False], ids=["shares-kept", "gathered"])
def test_train_files_on_dask_equals_the_local_run_and_the_reference(
    client: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kept: bool,
    corpus_merges: list[tuple[int, int]],
) -> None:
    expected = corpus_merges
    assert len(expected) == 84  # many batches: the shares change
    texts = write_corpus(tmp_path / "corpus")
    gathered = spy_on_gathering(monkeypatch)
    if kept:
        monkeypatch.setattr(dask_merge, "SHARE_BYTES", 0)
    on_dask = train_files([tmp_path / "corpus"], 340, dask=client)
    assert gathered == ([] if kept else [sum(map(len, count_chunks(texts)))])
    assert list(on_dask.merges) == expected
    local = train_files([tmp_path / "corpus"], 340, workers=1)
    local.save(tmp_path / "local.json")
    on_dask.save(tmp_path / "dask.json")
    assert (tmp_path / "dask.json").read_bytes() == (tmp_path / "local.json").read_bytes()


def spy_on_gathering(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The bytes of distinct chunks each gathering of the shares brought here."""
    gathered: list[int] = []

    def spy(chunk_counts: dict[bytes, int]) -> Any:
        gathered.append(sum(map(len, chunk_counts)))
        return words_here(chunk_counts)

    monkeypatch.setattr(dask_merge, "words_here", spy)
    return gathered


def test_the_counts_stay_dealt_on_the_cluster(client: Any, tmp_path: Path) -> None:
    """Each chunk in one share only, the shares adding up to the local count."""
    write_corpus(tmp_path / "corpus")
    remote = dask_count_parts([tmp_path / "corpus"], client)
    assert len(remote.shares) == len(remote.workers) == 2
    # one part per counting task: a batch of files each
    sizes = [path.stat().st_size for path in sorted((tmp_path / "corpus").rglob("*.txt"))]
    tasks = len(file_batches(sizes, workers=2))
    assert all(len(parts) == tasks for parts in remote.shares)
    shares = [Counter[bytes]() for _ in remote.shares]
    for share, parts in zip(shares, remote.shares, strict=True):
        for part in client.gather(parts):
            share.update(pickle.loads(part))
    assert all(shares) and not shares[0].keys() & shares[1].keys()
    assert shares[0] + shares[1] == count_files([tmp_path / "corpus"], workers=1)


def test_counts_held_here_join_the_shares(
    client: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    corpus_merges: list[tuple[int, int]],
) -> None:
    """Counts from standard input or counts files, dealt to the shares of the files'."""
    monkeypatch.setattr(dask_merge, "SHARE_BYTES", 0)
    texts = write_corpus(tmp_path / "corpus")
    here = count_chunks(["the cat sat on the hat, ab ab ab"])
    expected = reference.train_counts(count_chunks(texts) + here, 340)
    assert expected != corpus_merges  # `here` changes the merges
    remote = dask_count_parts([tmp_path / "corpus"], client)
    learned = train_counted(Counter(here), 340, pattern=resolve_pattern("gpt2"),
                            special_tokens=(), workers=1, remote=remote)  # fmt: skip
    assert list(learned.merges) == expected
    assert not any(remote.shares)  # taken by the shares, freed once they hold them


def test_the_cli_keeps_the_shares_on_the_cluster(
    cluster: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``bpetite train --dask`` with standard input beside the files: the stream counted
    here and dealt to the shares, the artifact the local run's."""
    texts = write_corpus(tmp_path / "corpus")
    monkeypatch.setattr(dask_merge, "SHARE_BYTES", 0)
    gathered = spy_on_gathering(monkeypatch)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"the hat sat, ab ab ab")))
    argv = ["train", "--input", "-", str(tmp_path / "corpus"), "--vocab-size", "340"]
    assert main([*argv, "--output", str(tmp_path / "dask.json"), "--dask", cluster]) == 0
    assert gathered == []
    capsys.readouterr()
    local = Tokenizer.train_from_counts(count_chunks(["the hat sat, ab ab ab", *texts]), 340)
    assert local.merges != Tokenizer.train_from_counts(count_chunks(texts), 340).merges
    local.save(tmp_path / "local.json")
    assert (tmp_path / "dask.json").read_bytes() == (tmp_path / "local.json").read_bytes()


def test_a_budget_cannot_be_used_on_dask(client: Any, tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="max_chars and doc_cap cannot be used with dask"):
        train_files([tmp_path], 300, dask=client, max_chars=10)


def test_a_killed_worker_holding_a_share_fails_the_run(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL a worker between two batches: its words are lost, so the run stops with
    one WorkerError naming the share, soon (the nanny restarts the worker, empty)."""
    monkeypatch.setattr(dask_merge, "SHARE_BYTES", 0)
    write_corpus(tmp_path / "corpus")  # 744 merges to vocab 1000: many after the 100th
    pids: dict[str, int] = client.run(os.getpid)
    killed: list[int] = []

    def kill_a_worker(event: Progress) -> None:
        if (event.task, event.stage) == ("merge", "update") and not killed:  # 100 merges
            killed.append(pids[sorted(pids)[1]])
            os.kill(killed[0], signal.SIGKILL)

    with watchdog(60), pytest.raises(WorkerError) as caught:
        train_files([tmp_path / "corpus"], 1000, dask=client, progress=kill_a_worker)
    assert killed
    message = str(caught.value)
    assert "Dask worker" in message and "of 2" in message and "training stopped" in message
    client.wait_for_workers(2, timeout=120)  # the nanny's new worker, for any test after
