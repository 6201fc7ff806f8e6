"""Pretraining shards: BOS per document, llm.c's header format, fixed-size shards, val splits.

The oracles are independent of the code under test: each document's ids from
``Tokenizer.encode_ordinary`` with BOS and separator added here, and a reader of
llm.c's and modded-nanogpt's ``.bin`` shards written from the format's facts, as
their loader (``_load_data_shard``) reads them: 256 little-endian int32 of header,
``header[0] == 20240520``, ``header[1] == 1``, ``header[2]`` tokens, then exactly
that many uint16 ids.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from bpetite import Tokenizer, write_dataset  # noqa: E402
from bpetite.corpus import _dataset  # noqa: E402
from bpetite.errors import OutputExistsError, ParameterError  # noqa: E402

BOS = "<|bos|>"
EOT = "<|endoftext|>"


def load_llmc_shard(path: Path) -> list[int]:
    """modded-nanogpt's ``_load_data_shard``, with numpy in place of torch."""
    header = np.fromfile(path, dtype="<i4", count=256)
    assert header[0] == 20240520, "magic number mismatch in the data .bin file"
    assert header[1] == 1, "unsupported version"
    num_tokens = int(header[2])
    with path.open("rb") as f:
        f.seek(256 * 4)
        tokens = np.frombuffer(f.read(), dtype="<u2")
    assert len(tokens) * 2 == num_tokens * 2, "number of tokens read does not match header"
    return [int(token) for token in tokens]


def load_flat(path: Path, dtype: str = "<u2") -> list[int]:
    return [int(token) for token in np.fromfile(path, dtype=dtype)]


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    corpus = "the cat sat on the mat; the hat's flat. 中文 😀 " * 30
    return Tokenizer.train(corpus, vocab_size=300, special_tokens=(EOT, BOS))


ROWS = [f"document {n}: {'the cat sat. ' * (n % 6)}中文 {n}\n" for n in range(60)]


@pytest.fixture
def shards(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "in"
    folder.mkdir()
    paths = []
    for number, (first, last) in enumerate([(0, 25), (25, 60)]):
        path = folder / f"shard_{number:05}.parquet"
        pq.write_table(pa.table({"text": ROWS[first:last]}), path, row_group_size=7)
        paths.append(path)
    return paths


def stream(tokenizer: Tokenizer, rows: list[str], bos: bool, separator: bool) -> list[int]:
    """The ids every layout must hold: each document's, with BOS before and EOT after."""
    ids: list[int] = []
    for row in rows:
        ids += [tokenizer.encode_single_token(BOS)] if bos else []
        ids += tokenizer.encode_ordinary(row)
        ids += [tokenizer.encode_single_token(EOT)] if separator else []
    return ids


def starts(tokenizer: Tokenizer, rows: list[str], bos: bool, separator: bool) -> list[int]:
    """Where each document starts in the stream."""
    found, position = [], 0
    for row in rows:
        found.append(position)
        position += len(tokenizer.encode_ordinary(row)) + bos + separator
    return found


def manifest(path: Path) -> dict[str, object]:
    loaded: dict[str, object] = json.loads(Path(f"{path}.json").read_text("utf-8"))
    return loaded


def test_bos_is_written_before_each_document(
    tokenizer: Tokenizer, shards: list[Path], tmp_path: Path
) -> None:
    output = tmp_path / "train.bin"
    result = write_dataset(shards, output, tokenizer, bos=BOS, separator=None, workers=1)
    assert load_flat(output) == stream(tokenizer, ROWS, bos=True, separator=False)
    assert result.train.documents == len(ROWS)
    assert manifest(output)["document_offsets"] == starts(tokenizer, ROWS, True, False)
    assert manifest(output)["bos"] == {"text": BOS, "id": tokenizer.encode_single_token(BOS)}


def test_bos_and_separator_together_on_text_files(tokenizer: Tokenizer, tmp_path: Path) -> None:
    paths = []
    for index, row in enumerate(ROWS[:5]):
        path = tmp_path / f"{index}.txt"
        path.write_text(row, encoding="utf-8")
        paths.append(path)
    output = tmp_path / "train.bin"
    write_dataset(paths, output, tokenizer, bos=BOS, workers=2, piece_bytes=8)
    assert load_flat(output) == stream(tokenizer, ROWS[:5], bos=True, separator=True)


def test_llmc_format_is_read_back_by_the_llmc_loader(
    tokenizer: Tokenizer, shards: list[Path], tmp_path: Path
) -> None:
    output = tmp_path / "train.bin"
    write_dataset(shards, output, tokenizer, bos=BOS, separator=None, file_format="llmc")
    assert load_llmc_shard(output) == stream(tokenizer, ROWS, bos=True, separator=False)
    assert manifest(output)["layout"] == "llmc"
    assert manifest(output)["header_bytes"] == 1024


@pytest.mark.parametrize("file_format", ["bin", "llmc"])
@pytest.mark.parametrize("shard_tokens", [1, 97, 500, 10**6])
def test_shards_hold_exactly_n_tokens_and_join_to_the_whole(
    tokenizer: Tokenizer, shards: list[Path], tmp_path: Path, file_format: str, shard_tokens: int
) -> None:
    output = tmp_path / "out" / "train_{shard}.bin"
    output.parent.mkdir()
    result = write_dataset(
        shards,
        output,
        tokenizer,
        bos=BOS,
        file_format=file_format,  # type: ignore[arg-type]
        shard_tokens=shard_tokens,
        workers=1,
    )
    whole = stream(tokenizer, ROWS, bos=True, separator=True)
    count = -(-len(whole) // shard_tokens)
    names = [tmp_path / "out" / f"train_{number:06d}.bin" for number in range(count)]
    assert list(result.train.paths) == [str(name) for name in names]
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == sorted(
        [name.name for name in names] + [f"{name.name}.json" for name in names]
    )
    read = load_llmc_shard if file_format == "llmc" else load_flat
    joined: list[int] = []
    document_starts: list[int] = []
    for number, name in enumerate(names):
        ids = read(name)
        assert len(ids) == (shard_tokens if number < count - 1 else len(whole) - len(joined))
        offsets = manifest(name)["document_offsets"]
        assert isinstance(offsets, list)
        document_starts += [len(joined) + offset for offset in offsets]
        assert manifest(name)["tokens"] == len(ids)
        joined += ids
    assert joined == whole
    assert document_starts == starts(tokenizer, ROWS, True, True)
    assert result.train.documents == len(ROWS)


def test_val_shards_are_the_first_shards(
    tokenizer: Tokenizer, shards: list[Path], tmp_path: Path
) -> None:
    result = write_dataset(
        shards,
        tmp_path / "fineweb_train_{shard}.bin",
        tokenizer,
        bos=BOS,
        separator=None,
        file_format="llmc",
        shard_tokens=300,
        val_shards=1,
        val_output=tmp_path / "fineweb_val_{shard}.bin",
    )
    whole = stream(tokenizer, ROWS, bos=True, separator=False)
    assert result.val is not None
    assert load_llmc_shard(tmp_path / "fineweb_val_000000.bin") == whole[:300]
    train = [load_llmc_shard(Path(path)) for path in result.train.paths]
    assert [token for shard in train for token in shard] == whole[300:]
    assert manifest(tmp_path / "fineweb_val_000000.bin")["split"] == "val"
    assert manifest(Path(result.train.paths[0]))["split"] == "train"


def test_val_by_document_works_on_a_single_parquet_file(
    tokenizer: Tokenizer, shards: list[Path], tmp_path: Path
) -> None:
    """One input file, many documents: the split is by row, floor((i+1)F) > floor(iF)."""
    output = tmp_path / "train.bin"
    result = write_dataset([shards[1]], output, tokenizer, val_fraction=0.1, workers=2)
    rows = ROWS[25:60]
    val = [row for index, row in enumerate(rows) if index % 10 == 9]
    train = [row for index, row in enumerate(rows) if index % 10 != 9]
    assert load_flat(output) == stream(tokenizer, train, bos=False, separator=True)
    assert load_flat(tmp_path / "val.bin") == stream(tokenizer, val, bos=False, separator=True)
    assert result.val is not None and result.val.documents == 3


def test_val_by_document_with_shards(
    tokenizer: Tokenizer, shards: list[Path], tmp_path: Path
) -> None:
    result = write_dataset(
        shards, tmp_path / "train_{shard}.bin", tokenizer, val_fraction=0.2, shard_tokens=400
    )
    val_rows = [row for index, row in enumerate(ROWS) if index % 5 == 4]
    assert result.val is not None
    joined = [token for path in result.val.paths for token in load_flat(Path(path))]
    assert joined == stream(tokenizer, val_rows, bos=False, separator=True)
    assert Path(result.val.paths[0]).name == "val_000000.bin"


def test_every_byte_is_the_same_for_any_number_of_workers(
    tokenizer: Tokenizer, shards: list[Path], tmp_path: Path
) -> None:
    outputs = []
    for workers in (1, 3):
        folder = tmp_path / f"w{workers}"
        folder.mkdir()
        write_dataset(
            shards,
            folder / "t_{shard}.bin",
            tokenizer,
            bos=BOS,
            file_format="llmc",
            shard_tokens=250,
            val_fraction=0.3,
            max_chars=900,
            doc_cap=30,
            workers=workers,
            piece_bytes=1,
        )
        outputs.append({path.name: path.read_bytes() for path in folder.iterdir()})
    assert outputs[0] == outputs[1]


def test_the_budget_takes_nanochats_documents(
    tokenizer: Tokenizer, shards: list[Path], tmp_path: Path
) -> None:
    from tests.nanochat import nanochat_text_iterator

    output = tmp_path / "train.bin"
    write_dataset(shards, output, tokenizer, max_chars=500, doc_cap=20, workers=2)
    taken = list(nanochat_text_iterator(ROWS, 500, 20))
    assert load_flat(output) == stream(tokenizer, taken, bos=False, separator=True)


def test_a_failure_while_publishing_shards_leaves_none(
    tokenizer: Tokenizer, shards: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The third shard fails to publish: the two already published are removed."""
    real = _dataset.publish_atomically  # type: ignore[attr-defined]
    calls = []

    def fail_third(temp: Path, path: Path, *, overwrite: bool) -> None:
        calls.append(path)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        real(temp, path, overwrite=overwrite)

    monkeypatch.setattr(_dataset, "publish_atomically", fail_third)
    folder = tmp_path / "out"
    folder.mkdir()
    with pytest.raises(OSError, match="No space left"):
        write_dataset(shards, folder / "t_{shard}.bin", tokenizer, shard_tokens=100, workers=1)
    assert list(folder.iterdir()) == []


def test_an_existing_shard_is_kept_unless_overwrite(
    tokenizer: Tokenizer, shards: list[Path], tmp_path: Path
) -> None:
    existing = tmp_path / "t_000001.bin"
    existing.write_bytes(b"keep")
    with pytest.raises(OutputExistsError):
        write_dataset(shards, tmp_path / "t_{shard}.bin", tokenizer, shard_tokens=300)
    assert existing.read_bytes() == b"keep"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["in", "t_000001.bin"]
    write_dataset(shards, tmp_path / "t_{shard}.bin", tokenizer, shard_tokens=300, overwrite=True)
    assert existing.read_bytes() != b"keep"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"shard_tokens": 10}, "must hold {shard}"),
        ({"val_shards": 1}, "val_shards needs shard_tokens"),
        ({"shard_tokens": 0}, "shard_tokens must be a positive integer"),
        ({"file_format": "npy"}, "file_format must be 'bin' or 'llmc'"),
        ({"file_format": "llmc", "dtype": "uint32"}, "llmc format stores uint16"),
        ({"bos": "<|nope|>"}, "bos '<|nope|>' is not a single token"),
        ({"shard_tokens": 10, "val_shards": 1, "val_fraction": 0.5}, "not both"),
    ],
)
def test_bad_options_fail_before_any_work(
    tokenizer: Tokenizer, tmp_path: Path, options: dict[str, object], message: str
) -> None:
    with pytest.raises(ParameterError, match=message.replace("{", r"\{").replace("|", r"\|")):
        write_dataset(
            [tmp_path / "missing"],
            tmp_path / "t.bin",
            tokenizer,
            **options,  # type: ignore[arg-type]
        )
    assert sorted(path.name for path in tmp_path.iterdir()) == []


def test_val_shards_that_leave_no_training_shard_are_refused(
    tokenizer: Tokenizer, shards: list[Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ParameterError, match="leaves no shard for training"):
        write_dataset(shards, out / "t_{shard}.bin", tokenizer, shard_tokens=10**6, val_shards=1)
    assert list(out.iterdir()) == []


def names(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


def test_a_rerun_with_overwrite_removes_the_shards_it_does_not_write(
    tokenizer: Tokenizer, shards: list[Path], tmp_path: Path
) -> None:
    """Loaders glob the shards: a second run with fewer shards must not leave the first's."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("kept", encoding="utf-8")  # not named like a shard
    pattern = out / "t_{shard}.bin"
    many = write_dataset(shards, pattern, tokenizer, shard_tokens=100, workers=1)
    assert len(many.train.paths) > 3
    few = write_dataset(shards, pattern, tokenizer, shard_tokens=10**6, overwrite=True)
    assert few.train.paths == (str(out / "t_000000.bin"),)
    assert names(out) == ["notes.txt", "t_000000.bin", "t_000000.bin.json"]
    assert load_flat(out / "t_000000.bin") == stream(tokenizer, ROWS, bos=False, separator=True)


def test_files_named_like_shards_are_refused_without_overwrite(
    tokenizer: Tokenizer, shards: list[Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    for name in ("t_000009.bin", "t_000009.bin.json", "t_1234567.bin"):
        (out / name).write_bytes(b"old")
    with pytest.raises(OutputExistsError) as caught:
        write_dataset(shards, out / "t_{shard}.bin", tokenizer, shard_tokens=10**6, workers=1)
    assert f"'{out / 't_000009.bin'}' and 2 more file(s) named like the shards of" in str(
        caught.value
    )
    assert "overwrite=True" in str(caught.value)
    assert names(out) == ["t_000009.bin", "t_000009.bin.json", "t_1234567.bin"]


def test_a_failed_rerun_keeps_the_old_shards(
    tokenizer: Tokenizer, shards: list[Path], tmp_path: Path
) -> None:
    """The old shards are removed only once the new ones are all written."""
    out = tmp_path / "out"
    out.mkdir()
    pattern = out / "t_{shard}.bin"
    write_dataset(shards, pattern, tokenizer, shard_tokens=100, workers=1)
    before = {name: (out / name).read_bytes() for name in names(out)}
    with pytest.raises(ParameterError, match="leaves no shard for training"):
        write_dataset(shards, pattern, tokenizer, shard_tokens=10**6, val_shards=1, overwrite=True)
    assert {name: (out / name).read_bytes() for name in names(out)} == before


def test_a_file_named_like_a_shard_that_is_an_input_is_never_removed(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    (tmp_path / "t_000005.bin").write_text(ROWS[0], encoding="utf-8")
    with pytest.raises(ParameterError, match="is the input") as caught:
        write_dataset([tmp_path], tmp_path / "t_{shard}.bin", tokenizer, shard_tokens=10**6,
                      overwrite=True)  # fmt: skip
    assert "replacing or removing it would destroy the input" in str(caught.value)
    assert names(tmp_path) == ["t_000005.bin"]
