"""write_dataset: the .bin read as nanoGPT reads it, equal to encode per document.

The oracle for every array is ``tokenizer.encode_ordinary`` on each file's text
(itself checked against the naive encoder elsewhere) plus the separator, read back
with ``numpy.memmap`` and the manifest parsed with ``json``.
"""

from __future__ import annotations

import hashlib
import io
import json
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpetite import Progress, Tokenizer, write_dataset
from bpetite.corpus._streaming import encode_pieces
from bpetite.errors import InvalidUtf8Error, OutputExistsError, ParameterError, WorkerError
from bpetite.interop import import_vocabulary
from tests.strategies import texts

SPECIAL = "<|endoftext|>"

# Text that exercises every cut the streaming encoder makes: contractions at block
# ends, whitespace runs before letters, multi-byte characters, special-token text,
# and "X\nY" lines where the planner may split a file.
SAMPLE = (
    "It'll be fine, they'd said.  \n\nThe cat sat on the mat; the hat's flat!\n"
    "中文 and 😀👍🏽 mixed   in\r\n<|endoftext|> inside a document is text\n"
    "a trailing space \nthen a letter, x\ny\nlast line without newline"
)


@pytest.fixture(autouse=True)
def stream_every_piece_larger_than_a_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests here pick small blocks to make the streaming encoder cut: without this,
    pieces of up to WHOLE_PIECE_BYTES would be encoded whole (forked workers inherit it)."""
    from bpetite.corpus import _encoding

    monkeypatch.setattr(_encoding, "WHOLE_PIECE_BYTES", 0)


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer.train(SAMPLE * 3, vocab_size=400)


@pytest.fixture
def corpus(tmp_path: Path) -> list[Path]:
    """Eight documents of different sizes, one empty, in a directory of their own."""
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    paths = []
    for index in range(8):
        path = folder / ("sub" if index % 3 == 0 else ".") / f"doc{index}.txt"
        path.write_bytes(
            (SAMPLE * (index * 7) + f" end {index}").encode("utf-8") if index != 5 else b""
        )
        paths.append(path)
    return sorted(paths, key=lambda path: path.relative_to(folder).parts)


def expected_ids(tokenizer: Tokenizer, paths: Sequence[Path], separator: bool = True) -> list[int]:
    special = tokenizer.special_tokens[SPECIAL]
    ids: list[int] = []
    for path in paths:
        ids += tokenizer.encode_ordinary(path.read_bytes().decode("utf-8"))
        if separator:
            ids.append(special)
    return ids


def read_bin(path: Path, dtype: str = "<u2") -> list[int]:
    array = numpy.memmap(path, dtype=numpy.dtype(dtype), mode="r")
    return [int(value) for value in array]


def manifest(path: Path) -> dict[str, Any]:
    return json.loads(path.with_name(path.name + ".json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name != "corpus")


# --------------------------------------------------------------------------- content


def test_memmap_reads_encode_ordinary_per_document(
    tokenizer: Tokenizer, corpus: list[Path], tmp_path: Path
) -> None:
    output = tmp_path / "train.bin"
    result = write_dataset([tmp_path / "corpus"], output, tokenizer, workers=1)
    ids = read_bin(output)
    assert ids == expected_ids(tokenizer, corpus)
    assert output.stat().st_size == 2 * len(ids)
    found = manifest(output)
    assert found["dtype"] == "uint16" and found["byteorder"] == "little"
    assert found["tokens"] == len(ids) == result.train.tokens
    assert found["documents"] == len(corpus) == result.train.documents
    assert found["document_sources"] == [str(path) for path in corpus]
    # Each offset is where that document's ids start, and the one before ends in a separator.
    special = tokenizer.special_tokens[SPECIAL]
    starts = found["document_offsets"]
    for index, path in enumerate(corpus):
        own = tokenizer.encode_ordinary(path.read_bytes().decode("utf-8"))
        assert ids[starts[index] : starts[index] + len(own) + 1] == [*own, special]
    assert found["separator"] == {"text": SPECIAL, "id": special}
    assert result.val is None and not (tmp_path / "val.bin").exists()


def test_manifest_names_the_model_file_and_its_hash(
    tokenizer: Tokenizer, corpus: list[Path], tmp_path: Path
) -> None:
    model = tmp_path / "tok.json"
    tokenizer.save(model)
    output = tmp_path / "train.bin"
    write_dataset(corpus, output, str(model), workers=1, dtype="uint32")
    found = manifest(output)
    assert found["model"]["name"] == "tok.json"
    assert found["model"]["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    assert found["dtype"] == "uint32"
    assert found["options"]["dtype"] == "uint32"
    assert read_bin(output, "<u4") == expected_ids(tokenizer, corpus)
    # Given the tokenizer itself, the hash is that of the file `save` writes.
    write_dataset(corpus, tmp_path / "again.bin", tokenizer, workers=1)
    again = manifest(tmp_path / "again.bin")["model"]
    assert again["sha256"] == found["model"]["sha256"] and again["name"] is None


def test_manifest_hash_of_a_model_with_its_own_byte_order(
    tokenizer: Tokenizer, corpus: list[Path], tmp_path: Path
) -> None:
    """An imported vocabulary numbers its bytes its own way; the hash is still its file's."""
    ordered = Tokenizer(tokenizer.merges, byte_order=[*range(255, -1, -1)])
    ordered.save(tmp_path / "ordered.json")
    write_dataset(corpus, tmp_path / "train.bin", ordered, workers=1)
    found = manifest(tmp_path / "train.bin")["model"]
    assert found["sha256"] == hashlib.sha256((tmp_path / "ordered.json").read_bytes()).hexdigest()


def test_no_separator(tokenizer: Tokenizer, corpus: list[Path], tmp_path: Path) -> None:
    output = tmp_path / "train.bin"
    write_dataset(corpus, output, tokenizer, separator=None, workers=1)
    assert read_bin(output) == expected_ids(tokenizer, corpus, separator=False)
    assert manifest(output)["separator"] is None


def test_any_single_token_can_separate(
    tokenizer: Tokenizer, corpus: list[Path], tmp_path: Path
) -> None:
    output = tmp_path / "train.bin"
    write_dataset(corpus[:2], output, tokenizer, separator="\n", workers=1)
    ids = read_bin(output)
    newline = tokenizer.encode_single_token("\n")
    assert ids == [
        *tokenizer.encode_ordinary(corpus[0].read_bytes().decode()),
        newline,
        *tokenizer.encode_ordinary(corpus[1].read_bytes().decode()),
        newline,
    ]
    with pytest.raises(ParameterError, match="'no such' is not a single token"):
        write_dataset(corpus, tmp_path / "other.bin", tokenizer, separator="no such")


# --------------------------------------------------------------------------- determinism


@pytest.mark.parametrize(
    ("workers", "block_size", "piece_bytes"),
    [(1, 1 << 20, None), (1, 1, 64), (2, 7, 100), (3, 4096, 1), (2, 1 << 20, None)],
)
def test_bytes_never_depend_on_workers_blocks_or_pieces(
    tokenizer: Tokenizer,
    corpus: list[Path],
    tmp_path: Path,
    workers: int,
    block_size: int,
    piece_bytes: int | None,
) -> None:
    output = tmp_path / "train.bin"
    write_dataset(
        [tmp_path / "corpus"],
        output,
        tokenizer,
        workers=workers,
        block_size=block_size,
        piece_bytes=piece_bytes,
        val_fraction=0.25,
    )
    train = [path for index, path in enumerate(corpus) if index % 4 != 3]
    val = [path for index, path in enumerate(corpus) if index % 4 == 3]
    assert read_bin(output) == expected_ids(tokenizer, train)
    assert read_bin(tmp_path / "val.bin") == expected_ids(tokenizer, val)
    # The manifests do not record workers or block sizes: they are identical too.
    assert manifest(output)["options"] == {
        "dtype": None,
        "inputs": [str(tmp_path / "corpus")],
        "separator": SPECIAL,
        "bos": None,
        "val_fraction": 0.25,
        "format": "bin",
        "shard_tokens": None,
        "val_shards": 0,
        "text_column": "text",
        "doc_delimiter": None,
        "max_chars": None,
        "doc_cap": None,
    }
    assert manifest(tmp_path / "val.bin")["document_sources"] == [str(path) for path in val]


@pytest.mark.parametrize("workers", [1, 2])
def test_an_imported_vocabulary_keeps_its_own_ids_in_every_worker(
    workers: int, corpus: list[Path], tmp_path: Path, gpt2_dir: Path
) -> None:
    """GPT-2's ids 0..255 name the bytes in GPT-2's order; workers must rebuild that too."""
    gpt2 = import_vocabulary([gpt2_dir / "gpt2.tiktoken"]).tokenizer
    assert gpt2.byte_order != tuple(range(256))
    output = tmp_path / "gpt2.bin"
    write_dataset(corpus, output, gpt2, workers=workers, block_size=16, piece_bytes=32)
    assert read_bin(output) == expected_ids(gpt2, corpus)


@pytest.mark.parametrize("preset", ["cl100k", "o200k"])
def test_every_preset_streams_in_pieces_exactly(
    preset: str, corpus: list[Path], tmp_path: Path
) -> None:
    model = Tokenizer.train(SAMPLE * 3, 400, pattern=preset)
    output = tmp_path / f"{preset}.bin"
    write_dataset(corpus, output, model, workers=2, block_size=8, piece_bytes=24)
    assert read_bin(output) == expected_ids(model, corpus)


@settings(max_examples=int(os.environ.get("BPETITE_HYPOTHESIS_EXAMPLES", "40")))
@given(
    st.lists(st.lists(texts, max_size=4).map("\n".join), min_size=1, max_size=4),
    st.integers(1, 64),
    st.integers(1, 200),
)
def test_any_documents_any_blocks_any_pieces(
    documents: list[str], block_size: int, piece_bytes: int
) -> None:
    """Random documents, cut into random blocks and pieces: memmap equals encode per file."""
    tokenizer = _small_tokenizer()
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for index, document in enumerate(documents):
            path = Path(folder, f"{index}.txt")
            path.write_bytes(document.encode("utf-8"))
            paths.append(path)
        output = Path(folder, "out.bin")
        write_dataset(
            paths, output, tokenizer, workers=1, block_size=block_size, piece_bytes=piece_bytes
        )
        assert read_bin(output) == expected_ids(tokenizer, paths)


def test_whitespace_before_a_letter_across_a_cut() -> None:
    """ " \\nl" is " ", "\\n", "l" whole, but " \\n" alone is one chunk: a naive cut breaks it."""
    tokenizer = _small_tokenizer()
    pieces = ["a b \nl x", " y z"]  # the first buffer's final chunks end with " ", "\n"
    batches = list(encode_pieces(tokenizer, pieces, allowed_special=set(), disallowed_special=()))
    assert [token for batch in batches for token in batch] == tokenizer.encode_ordinary(
        "".join(pieces)
    )
    assert len(batches) > 1  # the stream really was cut


_SMALL: list[Tokenizer] = []


def _small_tokenizer() -> Tokenizer:
    if not _SMALL:
        _SMALL.append(Tokenizer.train("a \n b \n l ll 'll it'll " * 5 + SAMPLE, vocab_size=300))
        assert _SMALL[0].encode_ordinary(" \n") != [*_SMALL[0].encode_ordinary(" "), 10]
    return _SMALL[0]


# --------------------------------------------------------------------------- splits


def test_val_split_is_by_document_and_spread_evenly(
    tokenizer: Tokenizer, corpus: list[Path], tmp_path: Path
) -> None:
    """F = 0.5 of 8 documents: exactly 1, 3, 5, 7 (floor((i+1)/2) > floor(i/2))."""
    output = tmp_path / "train.bin"
    result = write_dataset(
        corpus, output, tokenizer, workers=1, val_fraction=0.5, val_output=tmp_path / "v.bin"
    )
    assert result.val is not None and result.val.documents == 4
    assert read_bin(tmp_path / "v.bin") == expected_ids(tokenizer, corpus[1::2])
    assert read_bin(output) == expected_ids(tokenizer, corpus[0::2])
    assert manifest(tmp_path / "v.bin")["split"] == "val"


def test_a_fraction_that_selects_no_document_is_refused(
    tokenizer: Tokenizer, corpus: list[Path], tmp_path: Path
) -> None:
    with pytest.raises(ParameterError, match="selects none"):
        write_dataset(corpus[:3], tmp_path / "t.bin", tokenizer, val_fraction=0.1)
    for bad in (1.0, -0.1):
        with pytest.raises(ParameterError, match="val_fraction"):
            write_dataset(corpus, tmp_path / "t.bin", tokenizer, val_fraction=bad)
    assert leftovers(tmp_path) == []


# --------------------------------------------------------------------------- dtype


def test_uint32_when_an_id_does_not_fit_uint16(tmp_path: Path) -> None:
    tokenizer = Tokenizer([(97, 98)], special_tokens={SPECIAL: 70_000})
    (tmp_path / "a.txt").write_text("ab", encoding="utf-8")
    output = tmp_path / "train.bin"
    write_dataset([tmp_path / "a.txt"], output, tokenizer, workers=1)
    assert manifest(output)["dtype"] == "uint32"
    assert read_bin(output, "<u4") == [256, 70_000]
    with pytest.raises(ParameterError, match="70000, which does not fit in uint16") as refused:
        write_dataset([tmp_path / "a.txt"], tmp_path / "b.bin", tokenizer, dtype="uint16")
    assert str(refused.value).endswith('; pass dtype="uint32"')  # the keyword that fixes it


@pytest.fixture(scope="module")
def every_pair_tokenizer() -> Tokenizer:
    """Every byte pair as a merge, with "ab" last."""
    pairs = [
        (left, right) for left in range(256) for right in range(256) if (left, right) != (97, 98)
    ]
    return Tokenizer([*pairs, (97, 98)])


@pytest.mark.parametrize("workers", [1, 2])
def test_a_merged_id_past_uint16_is_an_error_not_a_wrap(
    every_pair_tokenizer: Tokenizer, tmp_path: Path, workers: int
) -> None:
    """Every byte pair as a merge, with "ab" last: "ab" encodes to 65791, past 65535."""
    tokenizer = every_pair_tokenizer
    assert tokenizer.encode_ordinary("ab") == [65_791]
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "1.txt").write_text("zz", encoding="utf-8")
    (folder / "2.txt").write_text("x\nab", encoding="utf-8")
    with pytest.raises(ParameterError, match=r"2\.txt: token id 65791 does not fit in uint16"):
        write_dataset(
            [folder], tmp_path / "t.bin", tokenizer, dtype="uint16", separator=None, workers=workers
        )
    assert leftovers(tmp_path) == []


# --------------------------------------------------------------------------- failures


@pytest.mark.parametrize("workers", [1, 2])
def test_invalid_utf8_names_the_file_and_offset_and_writes_nothing(
    tokenizer: Tokenizer, corpus: list[Path], tmp_path: Path, workers: int
) -> None:
    bad = corpus[6]
    bad.write_bytes(b"fine text\n" * 100 + b"x\xffy")
    with pytest.raises(InvalidUtf8Error) as caught:
        write_dataset([tmp_path / "corpus"], tmp_path / "t.bin", tokenizer, workers=workers)
    assert caught.value.source == str(bad)
    assert caught.value.offset == 1001
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_of_several_bad_files_the_first_in_input_order_is_named(
    tokenizer: Tokenizer, tmp_path: Path, workers: int
) -> None:
    """Documents 3 and 7 of 10 are bad. Document 3 is one long line (no split point, so
    one slow piece) whose last byte is bad, and documents 4 to 7 are many small pieces:
    another worker meets document 7's bad byte first, yet the error must be document
    3's, the one a single process meets, whatever the worker count and timing."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    paths = [folder / f"{index}.txt" for index in range(10)]
    for path in paths:
        path.write_bytes(SAMPLE.encode("utf-8") * 10)
    paths[3].write_bytes(b"word " * 400_000 + b"\xff")
    paths[7].write_bytes(b"\xc3(" + SAMPLE.encode("utf-8"))
    with pytest.raises(InvalidUtf8Error) as caught:
        write_dataset(
            [folder], tmp_path / "t.bin", tokenizer, workers=workers, piece_bytes=64, block_size=256
        )
    assert (caught.value.source, caught.value.offset) == (str(paths[3]), 2_000_000)
    assert leftovers(tmp_path) == []
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("workers", [1, 2])
def test_invalid_utf8_on_standard_input_names_it_dash(
    tokenizer: Tokenizer,
    corpus: list[Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    workers: int,
) -> None:
    """Standard input is read from a spool file; the error names ``-``, not the spool."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"fine\nx\xfe")))
    with pytest.raises(InvalidUtf8Error) as caught:
        write_dataset([tmp_path / "corpus", "-"], tmp_path / "t.bin", tokenizer, workers=workers)
    assert (caught.value.source, caught.value.offset, caught.value.byte) == ("-", 6, 0xFE)
    assert leftovers(tmp_path) == []


def test_existing_outputs_are_kept_unless_overwrite(
    tokenizer: Tokenizer, corpus: list[Path], tmp_path: Path
) -> None:
    (tmp_path / "val.bin.json").write_text("mine", encoding="utf-8")
    with pytest.raises(OutputExistsError, match=r"val\.bin\.json"):
        write_dataset(corpus, tmp_path / "train.bin", tokenizer, val_fraction=0.5)
    assert leftovers(tmp_path) == ["val.bin.json"]
    assert (tmp_path / "val.bin.json").read_text(encoding="utf-8") == "mine"
    write_dataset(corpus, tmp_path / "train.bin", tokenizer, val_fraction=0.5, overwrite=True)
    assert manifest(tmp_path / "val.bin")["split"] == "val"


def test_a_killed_worker_fails_the_run_and_leaves_nothing(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    # Documents large enough that no worker can be done by the time "start" is reported
    # (the small corpus of the other tests could finish first on an idle core).
    folder = tmp_path / "corpus"
    folder.mkdir()
    for index in range(4):
        (folder / f"doc{index}.txt").write_text(SAMPLE * 20_000 + str(index), encoding="utf-8")
    killed: list[int] = []

    def kill_one(event: Progress) -> None:
        if event.stage == "start" and not killed:
            # bpetite's own workers only: another test's child may still be closing
            victim = next(
                child
                for child in multiprocessing.active_children()
                if child.name.startswith("bpetite-")
            )
            assert victim.pid is not None
            os.kill(victim.pid, signal.SIGKILL)
            killed.append(victim.pid)

    with pytest.raises(WorkerError, match="killed by SIGKILL"):
        write_dataset(
            [tmp_path / "corpus"],
            tmp_path / "t.bin",
            tokenizer,
            workers=2,
            piece_bytes=1,
            progress=kill_one,
        )
    assert killed
    assert leftovers(tmp_path) == []
    assert multiprocessing.active_children() == []


def test_an_interrupt_leaves_nothing(
    tokenizer: Tokenizer, corpus: list[Path], tmp_path: Path
) -> None:
    """KeyboardInterrupt part-way through (as Ctrl-C raises it): no file, no temp dir, no worker."""

    def interrupt(event: Progress) -> None:
        if event.stage == "update":
            raise KeyboardInterrupt

    for workers in (1, 2):
        with pytest.raises(KeyboardInterrupt):
            write_dataset(
                [tmp_path / "corpus"],
                tmp_path / "t.bin",
                tokenizer,
                workers=workers,
                block_size=64,
                progress=interrupt,
            )
        assert leftovers(tmp_path) == []
    assert multiprocessing.active_children() == []


def test_progress_counts_every_input_byte(
    tokenizer: Tokenizer, corpus: list[Path], tmp_path: Path
) -> None:
    events: list[Progress] = []
    write_dataset(
        corpus, tmp_path / "t.bin", tokenizer, workers=1, block_size=512, progress=events.append
    )
    total = sum(path.stat().st_size for path in corpus)
    assert events[0] == Progress("encode", "start", 0, total)
    assert events[-1] == Progress("encode", "done", total, total)
    updates = [event.done for event in events if event.stage == "update"]
    assert updates == sorted(updates) and updates[-1] == total


def test_bad_arguments_fail_before_any_work(
    tokenizer: Tokenizer, corpus: list[Path], tmp_path: Path
) -> None:
    with pytest.raises(TypeError, match="not one path"):
        write_dataset(str(corpus[0]), tmp_path / "t.bin", tokenizer)
    with pytest.raises(ParameterError, match="dtype must be"):
        write_dataset(corpus, tmp_path / "t.bin", tokenizer, dtype="int8")  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_dataset(corpus, tmp_path / "missing" / "t.bin", tokenizer)
    with pytest.raises(ParameterError, match="must all be different"):
        write_dataset(corpus, tmp_path / "val.bin", tokenizer, val_fraction=0.5)
    with pytest.raises(FileNotFoundError):
        write_dataset([tmp_path / "nope.txt"], tmp_path / "t.bin", tokenizer)
    assert leftovers(tmp_path) == []


def test_an_output_inside_an_input_directory_never_reads_its_own_temp_files(
    tokenizer: Tokenizer, corpus: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Standard input is spooled into the temp directory beside the output; listing the
    input directory after that would read the spool a second time as a document."""
    folder = tmp_path / "corpus"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"from stdin")))
    write_dataset(["-", folder], folder / "train.bin", tokenizer, workers=2, piece_bytes=1)
    assert read_bin(folder / "train.bin") == [
        *tokenizer.encode_ordinary("from stdin"),
        tokenizer.special_tokens[SPECIAL],
        *expected_ids(tokenizer, corpus),
    ]
    assert manifest(folder / "train.bin")["document_sources"][0] == "-"


def test_a_file_added_while_the_temp_folder_is_removed_leaves_nothing(
    tokenizer: Tokenizer, corpus: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Dask task cannot be interrupted: it may create its piece file while the failed
    run removes its temp folder. The folder must still go."""
    real_rmtree = shutil.rmtree
    calls: list[Path] = []

    def rmtree_raced_by_a_task(path: Any, *args: Any, **kwargs: Any) -> None:
        real_rmtree(path, *args, **kwargs)
        calls.append(Path(path))
        if len(calls) == 1:  # a task wrote its file just as the folder was emptied
            Path(path).mkdir()
            (Path(path) / "piece-7.bin").write_bytes(b"late")

    monkeypatch.setattr(shutil, "rmtree", rmtree_raced_by_a_task)
    corpus[6].write_bytes(b"x\xffy")
    with pytest.raises(InvalidUtf8Error):
        write_dataset([tmp_path / "corpus"], tmp_path / "t.bin", tokenizer, workers=1)
    assert len(calls) == 2
    assert leftovers(tmp_path) == []
