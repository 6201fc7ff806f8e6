"""Counting, training and dataset encoding on a Dask cluster of processes on 127.0.0.1.

The oracle is always the local run: the same counts, the same artifact bytes, the same
.bin bytes, also when a worker process is killed in the middle of the work. The merge
loop's shares on the cluster are tested in test_dask_merge.py; here, through the CLI.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest

distributed = pytest.importorskip("distributed")

from bpetite import Progress, Tokenizer, count_chunks, train_files, write_dataset  # noqa: E402
from bpetite._internal import dask_count_files, dask_count_parts  # noqa: E402
from bpetite.corpus import _dask  # noqa: E402
from bpetite.corpus._counting import count_files  # noqa: E402
from bpetite.corpus._dask import file_batches  # noqa: E402
from bpetite.errors import InvalidUtf8Error  # noqa: E402
from tests.dask_cluster import dask_cluster  # noqa: E402

TEXT = "The cat sat on the mat. It'll be fine, 中文 😀\r\n  spaces \nend of line\n"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real cluster on 127.0.0.1: a scheduler and two single-threaded workers."""
    with dask_cluster(tmp_path_factory.mktemp("dask")) as address:
        yield address


@pytest.fixture
def client(cluster: str) -> Iterator[Any]:
    with distributed.Client(cluster) as connected:
        connected.wait_for_workers(2, timeout=120)  # a worker killed earlier is back
        yield connected


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    for index in range(12):
        where = folder / "sub" if index % 4 == 0 else folder
        (where / f"{index:02}.txt").write_text(
            f"{index} {TEXT}" * (50 * (index + 1)), encoding="utf-8", newline=""
        )
    (folder / "empty.txt").write_bytes(b"")
    return folder


def texts_of(folder: Path) -> list[str]:
    files = sorted((p for p in folder.rglob("*") if p.is_file()), key=lambda p: p.parts)
    return [path.read_bytes().decode("utf-8") for path in files]


def test_counts_on_dask_equal_the_local_counts(client: Any, corpus: Path) -> None:
    on_dask = dask_count_files([corpus, corpus / "01.txt"], client)
    assert on_dask == count_files([corpus, corpus / "01.txt"], workers=1)
    # Independent of both: count_chunks over each file's text, one document per file.
    assert on_dask == count_chunks([*texts_of(corpus), (corpus / "01.txt").read_bytes().decode()])


def test_many_small_files_are_counted_in_a_few_batches(client: Any, tmp_path: Path) -> None:
    """40 files on 2 workers: 8 tasks of 5 files (4 per worker), the same counts."""
    folder = tmp_path / "small"
    folder.mkdir()
    for index in range(40):
        (folder / f"{index:02}.txt").write_text(f"{index:02} {TEXT}", encoding="utf-8")
    with distributed.get_task_stream(client) as stream:
        on_dask = dask_count_files([folder], client)
    assert on_dask == count_files([folder], workers=1)
    counting = [task for task in stream.data if task["key"].startswith("_count_files")]
    assert len(counting) == 8


def test_file_batches_take_files_in_order_within_the_bound() -> None:
    for sizes in ([], [5], [1] * 40, [10, 10, 10, 50, 10], [3, 200, 1, 1, 1, 90, 4] * 7):
        for workers in (1, 2, 3, 16):
            batches = file_batches(sizes, workers)
            assert [index for batch in batches for index in batch] == list(range(len(sizes)))
            most = max(1, sum(sizes) // (4 * workers))
            for batch in batches:
                assert len(batch) == 1 or sum(sizes[index] for index in batch) <= most
            # a batch ends only where the next file would have passed the bound
            for batch, following in itertools.pairwise(batches):
                assert sum(sizes[index] for index in batch) + sizes[following[0]] > most
    with patch.object(_dask, "BATCH_BYTES", 100):  # below 1,110 // 4: the bound is 100
        batches = file_batches([300, 60, 60, 30, 30, 30, 600], workers=1)
    assert batches == [range(1), range(1, 2), range(2, 4), range(4, 6), range(6, 7)]


def test_invalid_utf8_on_a_worker_names_the_file(client: Any, corpus: Path) -> None:
    bad = corpus / "05.txt"
    bad.write_bytes(b"ok " * 10 + b"\xfe")
    with pytest.raises(InvalidUtf8Error) as caught:
        dask_count_files([corpus], client)
    assert (caught.value.source, caught.value.offset) == (str(bad), 30)


def test_a_dataset_on_dask_is_byte_identical(client: Any, corpus: Path, tmp_path: Path) -> None:
    model = tmp_path / "tok.json"
    Tokenizer.train(TEXT * 5, vocab_size=320).save(model)
    local = tmp_path / "local"
    remote = tmp_path / "remote"
    local.mkdir()
    remote.mkdir()
    write_dataset([corpus], local / "train.bin", model, workers=1, val_fraction=0.25)
    write_dataset([corpus], remote / "train.bin", model, dask=client, val_fraction=0.25)
    for name in ("train.bin", "train.bin.json", "val.bin", "val.bin.json"):
        assert (remote / name).read_bytes() == (local / name).read_bytes(), name
    assert sorted(path.name for path in remote.iterdir()) == [
        "train.bin", "train.bin.json", "val.bin", "val.bin.json"
    ]  # fmt: skip


def test_delimited_counts_on_dask_equal_the_local_counts(client: Any, corpus: Path) -> None:
    on_dask = dask_count_files([corpus], client, doc_delimiter="\n")
    assert on_dask == count_files([corpus], workers=2, piece_bytes=500, doc_delimiter="\n")
    documents = [d for text in texts_of(corpus) for d in text.split("\n") if d.strip()]
    assert on_dask == count_chunks(documents)


def test_delimited_documents_on_dask_are_byte_identical(
    client: Any, corpus: Path, tmp_path: Path
) -> None:
    """One task per file there, pieces of whole documents here: the same documents."""
    model = Tokenizer.train(TEXT * 5, vocab_size=320)
    outputs = []
    runs = {"local": {"workers": 2, "piece_bytes": 300}, "remote": {"dask": client}}
    for name, where in runs.items():
        folder = tmp_path / name
        folder.mkdir()
        result = write_dataset([corpus], folder / "train.bin", model, doc_delimiter="\n",
                               val_fraction=0.25, **where)  # fmt: skip
        assert result.train.documents > 12 * 50
        outputs.append([(folder / array).read_bytes() for array in ("train.bin", "val.bin")])
    assert outputs[0] == outputs[1]


def test_a_dataset_on_dask_names_the_first_bad_file(
    client: Any, corpus: Path, tmp_path: Path
) -> None:
    """Two bad files: the error is the first one's in input order, and nothing is written."""
    first, later = corpus / "03.txt", corpus / "09.txt"
    first.write_bytes(b"ok " * 10 + b"\xfe")
    later.write_bytes(b"\xff")
    model = tmp_path / "tok.json"
    Tokenizer.train(TEXT * 5, vocab_size=320).save(model)
    output = tmp_path / "out"
    output.mkdir()
    with pytest.raises(InvalidUtf8Error) as caught:
        write_dataset([corpus], output / "train.bin", model, dask=client)
    assert (caught.value.source, caught.value.offset) == (str(first), 30)
    assert list(output.iterdir()) == []


def test_the_cli_on_dask_writes_what_the_local_run_writes(
    cluster: str, corpus: Path, tmp_path: Path
) -> None:
    address = cluster

    def bpetite(*argv: object) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "bpetite", *map(str, argv)],
            capture_output=True, timeout=300, check=False,
        )  # fmt: skip

    for suffix, extra in (("local", ["--workers", "1"]), ("dask", ["--dask", address])):
        result = bpetite("count", "--input", corpus, "--output", tmp_path / f"c-{suffix}.json",
                         *extra)  # fmt: skip
        assert result.returncode == 0, result.stderr
        result = bpetite("train", "--input", corpus, "--vocab-size", 300,
                         "--output", tmp_path / f"t-{suffix}.json", *extra)  # fmt: skip
        assert result.returncode == 0, result.stderr
        result = bpetite("dataset", "--model", tmp_path / "t-local.json", "--input", corpus,
                         "--output", tmp_path / f"d-{suffix}.bin", *extra)  # fmt: skip
        assert result.returncode == 0, result.stderr
    # Counts files loaded here, dealt to the cluster's merge shares.
    result = bpetite("train", "--counts", tmp_path / "c-local.json", "--vocab-size", 300,
                     "--output", tmp_path / "t-counts-dask.json", "--dask", address)  # fmt: skip
    assert result.returncode == 0, result.stderr
    for local, remote in (("c-local.json", "c-dask.json"), ("t-local.json", "t-dask.json"),
                          ("t-local.json", "t-counts-dask.json"),
                          ("d-local.bin", "d-dask.bin")):  # fmt: skip
        assert (tmp_path / remote).read_bytes() == (tmp_path / local).read_bytes(), remote
    assert (tmp_path / "t-dask.json").read_bytes() == _artifact(
        train_files([corpus], 300, workers=1)
    )
    summary = json.loads((tmp_path / "d-dask.bin.json").read_text(encoding="utf-8"))
    assert summary["documents"] == 13


def test_an_unreachable_scheduler_is_one_line(corpus: Path, tmp_path: Path) -> None:
    extra = {"count": [], "train": ["--vocab-size", "300"], "dataset": ["--model", "gpt2"]}
    for command, arguments in extra.items():
        result = subprocess.run(
            [sys.executable, "-m", "bpetite", command, "--input", str(corpus), "--dask",
             "tcp://127.0.0.1:9", "--output", str(tmp_path / "c.json"), *arguments],
            capture_output=True, timeout=300, check=False,
            env={**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "0.2s"},
        )  # fmt: skip
        assert result.returncode == 1, command
        assert result.stdout == b""
        assert b"Traceback" not in result.stderr
        assert result.stderr.decode().strip().startswith("bpetite: error: cannot use the Dask")
        assert not (tmp_path / "c.json").exists()


def test_a_killed_worker_still_gives_the_exact_result(
    client: Any, corpus: Path, tmp_path: Path
) -> None:
    """SIGKILL a worker process while it holds a task: Dask reruns the task elsewhere."""
    big = tmp_path / "big"
    big.mkdir()
    for index in range(6):
        (big / f"{index}.txt").write_text(f"{index} {TEXT}" * 8000, encoding="utf-8")
    expected = count_files([big], workers=1)
    pids: dict[str, int] = client.run(os.getpid)
    killed: list[int] = []

    def kill_a_busy_worker(event: Progress) -> None:
        if killed or event.stage == "done":
            return
        for address, keys in client.processing().items():
            if keys:
                os.kill(pids[address], signal.SIGKILL)
                killed.append(pids[address])
                return

    counts = dask_count_files([big], client, progress=kill_a_busy_worker)
    assert killed, "no worker was busy when the count started"
    assert killed[0] not in client.run(os.getpid).values()  # that process is gone
    assert counts == expected


def _artifact(tokenizer: Tokenizer) -> bytes:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "a.json"
        tokenizer.save(path)
        return path.read_bytes()


def test_parquet_bytes_on_dask_are_the_local_runs(client: Any, tmp_path: Path) -> None:
    """Progress and corpus_bytes count a Parquet file's text in UTF-8, on Dask as locally."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = ["héllo wörld", None, "naïve ☃", "x" * 300]
    shard = tmp_path / "s.parquet"
    pq.write_table(pa.table({"text": rows}), shard, row_group_size=2)
    text = tmp_path / "t.txt"
    text.write_text(TEXT, encoding="utf-8")
    size = sum(len(row.encode("utf-8")) for row in rows if row) + len(TEXT.encode("utf-8"))
    local: list[Progress] = []
    remote: list[Progress] = []
    count_files([shard, text], workers=1, progress=local.append)
    dask_count_files([shard, text], client, progress=remote.append)
    assert local[-1] == remote[-1] == Progress("count", "done", size, size)
    assert dask_count_parts([shard, text], client).corpus_bytes == size


def test_invalid_utf8_in_a_parquet_row_on_dask_names_the_row(client: Any, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    bad = pa.Array.from_buffers(
        pa.string(), 1, [None, pa.py_buffer(b"\0\0\0\0\3\0\0\0"), pa.py_buffer(b"a\xffb")]
    )
    shard = tmp_path / "s.parquet"
    pq.write_table(pa.table({"text": pa.concat_arrays([pa.array(["ok"]), bad])}), shard)
    with pytest.raises(InvalidUtf8Error, match="in the text of row 1 of row group 0") as raised:
        dask_count_files([shard], client)
    assert (raised.value.source, raised.value.offset) == (str(shard), 1)
