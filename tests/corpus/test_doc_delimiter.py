"""write_dataset(doc_delimiter=...): a text file cut into documents at a delimiter.

The oracle is written here from the rules alone: ``str.split`` of each file's whole
text, blank documents (``not d.strip()``) dropped, nanochat's budget as its loop
reads, ``Tokenizer.encode_ordinary`` of each document between the BOS and separator
ids, and document ``i`` to validation when ``floor((i+1)F) > floor(iF)``. The arrays
are read back with numpy.
"""

from __future__ import annotations

import io
import itertools
import json
import sys
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpetite import PRESETS, Progress, Tokenizer, reference, train_files, write_dataset
from bpetite.corpus import _delimited, count_files
from bpetite.corpus._counting import plan_inputs
from bpetite.corpus._delimited import find_cut, measure_documents, split_documents
from bpetite.errors import InvalidUtf8Error, ParameterError
from tests.strategies import texts

EOT = "<|endoftext|>"
BOS = "<|bos|>"

STORIES = [
    "Once upon a time, a cat sat on the mat. It'll be fine, they'd said.\n",
    "Tom had a red ball.  中文 and 😀👍🏽 mixed   in\r\nThe end.\n",
    "  \n",  # blank: dropped
    "A story with <|endoftext|> inside? No: that was the delimiter.\n" * 3,
    "x\ny\nlast line without newline",
    "Short.",
]


def tinystories(stories: Sequence[str] = STORIES) -> str:
    """TinyStories' layout: each story followed by the delimiter and a newline."""
    return "".join(story + EOT + "\n" for story in stories)


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    model = Tokenizer.train(tinystories() * 3, vocab_size=400)
    return model.with_special_tokens({BOS: model.n_vocab})


def oracle(
    tokenizer: Tokenizer,
    texts: Sequence[str],
    delimiter: str,
    *,
    bos: str | None = None,
    separator: str | None = EOT,
    val_fraction: float = 0.0,
    doc_cap: int | None = None,
    max_chars: int | None = None,
) -> tuple[list[int], list[int], int, int]:
    """The train and val ids and their document counts, from the rules."""
    documents = [d for text in texts for d in text.split(delimiter) if d.strip()]
    taken = []
    total = 0
    for document in documents:  # nanochat's loop
        document = document if doc_cap is None else document[:doc_cap]
        taken.append(document)
        total += len(document)
        if max_chars is not None and total > max_chars:
            break
    fraction = Fraction(repr(val_fraction))
    splits: dict[bool, list[int]] = {False: [], True: []}
    counts = {False: 0, True: 0}
    for index, document in enumerate(taken):
        in_val = (index + 1) * fraction // 1 > index * fraction // 1
        ids = [] if bos is None else [tokenizer.special_tokens[bos]]
        ids += tokenizer.encode_ordinary(document)
        if separator is not None:
            ids.append(tokenizer.special_tokens[separator])
        splits[in_val] += ids
        counts[in_val] += 1
    return splits[False], splits[True], counts[False], counts[True]


def read(path: Path) -> list[int]:
    return [int(value) for value in numpy.fromfile(path, dtype="<u2")]


def manifest(path: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(path.with_name(path.name + ".json").read_text("utf-8"))
    return result


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_bytes(text.encode("utf-8"))
    return path


# --------------------------------------------------------------------------- the splitter


DELIMITERS = ["a", "aa", "ab", "aba", "aab", "\n\n"]


@pytest.mark.parametrize("delimiter", DELIMITERS)
def test_split_documents_is_str_split_for_every_small_text_and_every_cut(delimiter: str) -> None:
    """Every text of up to 7 characters over a few letters, cut into pieces at every
    pair of places: self-overlapping delimiters (aa, aba) catch a cut that is not
    leftmost-first, and a delimiter split over two pieces catches a missing carry."""
    alphabet = sorted(set(delimiter + "b\n"))
    for length in range(8):
        for letters in itertools.product(alphabet, repeat=length):
            text = "".join(letters)
            expected = text.split(delimiter)
            for first, second in itertools.combinations_with_replacement(range(length + 1), 2):
                pieces = [text[:first], text[first:second], text[second:]]
                got = ["".join(document) for document in split_documents(pieces, delimiter)]
                assert got == expected, (text, pieces)


@given(
    documents=st.lists(texts, max_size=6),
    delimiter=st.sampled_from([*DELIMITERS, EOT, "<|", "é", "😀", " ", "\r\n"]),
    cuts=st.lists(st.integers(0, 400), max_size=6),
)
def test_split_documents_is_str_split(
    documents: list[str], delimiter: str, cuts: list[int]
) -> None:
    text = delimiter.join(documents)
    bounds = sorted({0, len(text), *(min(cut, len(text)) for cut in cuts)})
    pieces = [text[start:end] for start, end in itertools.pairwise(bounds)]
    got = ["".join(document) for document in split_documents(pieces, delimiter)]
    assert got == text.split(delimiter)


def test_a_document_not_read_by_the_caller_is_skipped() -> None:
    documents = split_documents(["one|two", "|three"], "|")
    first = next(documents)
    assert next(first) == "one"
    assert "".join(next(documents)) == "two"  # the rest of "one" was skipped
    assert ["".join(document) for document in documents] == ["three"]


# --------------------------------------------------------------------------- cut points


def grid(data: bytes, delimiter: bytes) -> set[int]:
    """The byte offsets just after each delimiter that bytes.split cuts at."""
    points, position = set(), 0
    for part in data.split(delimiter)[:-1]:
        position += len(part) + len(delimiter)
        points.add(position)
    return points


@pytest.mark.parametrize("delimiter", [b"a", b"aa", b"aba", b"aab", b"\n\n", b"ab"])
@pytest.mark.parametrize("window", [1, 2, 3, 64])
def test_find_cut_gives_only_points_of_the_whole_files_cut(
    delimiter: bytes, window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From every offset of every small file: a point of the left-to-right cut, never one
    inside a run that cuts elsewhere (aaa with aa cuts after the first two). The files
    are in memory: find_cut only seeks and reads its stream."""
    monkeypatch.setattr(_delimited, "CUT_SEARCH_BYTES", window)
    alphabet = sorted(set(delimiter + b"b"))
    for length in range(9):
        for letters in itertools.product(alphabet, repeat=length):
            data = bytes(letters)
            points = grid(data, delimiter)
            with io.BytesIO(data) as stream:
                for offset in range(length + 1):
                    cut = find_cut(stream, offset, delimiter)
                    if cut is not None:
                        assert cut in points and cut - len(delimiter) >= offset, (data, offset)
                    else:  # every point in the window was passed over for a reason
                        assert not any(
                            offset <= point - len(delimiter) < offset + window
                            and data.find(delimiter, max(point - 2 * len(delimiter) + 1, 0))
                            == point - len(delimiter)
                            for point in points
                        ), (data, offset)


def test_every_piece_starts_a_document(tmp_path: Path) -> None:
    """Pieces of a few bytes: each starts at 0 or just after a delimiter of the cut."""
    text = tinystories() * 4
    path = write(tmp_path, "stories.txt", text)
    pieces = plan_inputs([path], 16, doc_delimiter=EOT)
    assert len(pieces) > 10
    data = text.encode("utf-8")
    points = grid(data, EOT.encode("utf-8"))
    assert all(piece.start == 0 or piece.start in points for piece in pieces)
    ends = [piece.end for piece in pieces]
    assert ends[:-1] == [piece.start for piece in pieces[1:]] and ends[-1] is None


@pytest.mark.parametrize("cap", [None, 1, 5, 40])
def test_measure_documents_counts_capped_documents_up_to_the_one_past_the_limit(
    tmp_path: Path, cap: int | None
) -> None:
    text = tinystories()
    path = write(tmp_path, "stories.txt", text)
    documents = [d for d in text.split(EOT) if d.strip()]
    lengths = [len(d) if cap is None else min(len(d), cap) for d in documents]
    for limit in range(sum(lengths) + 2):
        taken, end = measure_documents(str(path), EOT, cap, limit, block_size=7)
        count = next((n for n in range(1, len(lengths) + 1) if sum(lengths[:n]) > limit), None)
        if count is None:
            assert (taken, end) == (sum(lengths), None)
            continue
        assert taken == sum(lengths[:count])
        # The end is where the last document taken ends, before its delimiter.
        assert end is not None
        head = text.encode("utf-8")[:end].decode("utf-8")
        assert [d for d in head.split(EOT) if d.strip()] == documents[:count]
        assert text.encode("utf-8")[end:].startswith(EOT.encode("utf-8")) or end == len(
            text.encode("utf-8")
        )


# --------------------------------------------------------------------------- write_dataset


@pytest.fixture(params=[False, True], ids=["whole", "streamed"])
def streamed(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Documents encoded whole, or streamed (every document past one block is, then)."""
    if request.param:
        from bpetite.corpus import _encoding

        monkeypatch.setattr(_encoding, "WHOLE_PIECE_BYTES", 0)
    return bool(request.param)


@pytest.mark.parametrize(
    ("workers", "block_size", "piece_bytes"),
    [(1, 1 << 20, None), (1, 1, 1), (2, 3, 7), (3, 5, 40), (2, 1 << 20, 1)],
)
def test_bytes_are_the_oracles_for_any_workers_blocks_or_pieces(
    tokenizer: Tokenizer,
    tmp_path: Path,
    streamed: bool,
    workers: int,
    block_size: int,
    piece_bytes: int | None,
) -> None:
    texts = [tinystories(), tinystories(STORIES[::-1]) * 3, "one document, no delimiter"]
    folder = tmp_path / "corpus"
    folder.mkdir()
    paths = [write(folder, f"{index}.txt", text) for index, text in enumerate(texts)]
    output = tmp_path / "train.bin"
    result = write_dataset(
        [folder],
        output,
        tokenizer,
        doc_delimiter=EOT,
        val_fraction=0.25,
        workers=workers,
        block_size=block_size,
        piece_bytes=piece_bytes,
    )
    train, val, train_docs, val_docs = oracle(tokenizer, texts, EOT, val_fraction=0.25)
    assert read(output) == train
    assert read(tmp_path / "val.bin") == val
    assert (result.train.documents, result.val and result.val.documents) == (train_docs, val_docs)
    assert result.input_bytes == sum(path.stat().st_size for path in paths)
    written = manifest(output)
    assert written["options"]["doc_delimiter"] == EOT
    assert written["documents"] == train_docs
    # Each document's offset (where its ids start in its split) and its file.
    expected: dict[bool, tuple[list[int], list[str]]] = {False: ([], []), True: ([], [])}
    positions = {False: 0, True: 0}
    documents = [(d, path) for path, text in zip(paths, texts, strict=True)
                 for d in text.split(EOT) if d.strip()]  # fmt: skip
    for index, (document, source) in enumerate(documents):
        in_val = (index + 1) // 4 > index // 4
        expected[in_val][0].append(positions[in_val])
        expected[in_val][1].append(str(source))
        positions[in_val] += len(tokenizer.encode_ordinary(document)) + 1
    for in_val, path in ((False, output), (True, tmp_path / "val.bin")):
        written = manifest(path)
        assert (written["document_offsets"], written["document_sources"]) == expected[in_val]


def test_each_document_names_its_file_in_the_manifest(tokenizer: Tokenizer, tmp_path: Path) -> None:
    first = write(tmp_path, "a.txt", f"one{EOT}two{EOT}")
    second = write(tmp_path, "b.txt", f"three{EOT}  {EOT}four")
    output = tmp_path / "train.bin"
    result = write_dataset([first, second], output, tokenizer, doc_delimiter=EOT, workers=1)
    assert result.train.documents == 4
    assert manifest(output)["document_sources"] == [str(first)] * 2 + [str(second)] * 2


@pytest.mark.parametrize(("bos", "separator"), [(BOS, None), (BOS, EOT), (None, None), (None, EOT)])
@pytest.mark.parametrize(("doc_cap", "max_chars"), [(None, None), (9, None), (None, 150), (12, 40)])
def test_bos_separator_and_budget_per_document(
    tokenizer: Tokenizer,
    tmp_path: Path,
    streamed: bool,
    bos: str | None,
    separator: str | None,
    doc_cap: int | None,
    max_chars: int | None,
) -> None:
    texts = [tinystories(), tinystories(STORIES[1:]) * 2]
    paths = [write(tmp_path, f"{index}.txt", text) for index, text in enumerate(texts)]
    outputs = []
    for workers, piece_bytes in ((1, None), (2, 11)):
        output = tmp_path / f"train-{workers}.bin"
        write_dataset(
            paths,
            output,
            tokenizer,
            doc_delimiter=EOT,
            bos=bos,
            separator=separator,
            doc_cap=doc_cap,
            max_chars=max_chars,
            val_fraction=0.5,
            val_output=tmp_path / f"val-{workers}.bin",
            workers=workers,
            block_size=4,
            piece_bytes=piece_bytes,
        )
        outputs.append((read(output), read(tmp_path / f"val-{workers}.bin")))
    train, val, _, _ = oracle(
        tokenizer,
        texts,
        EOT,
        bos=bos,
        separator=separator,
        val_fraction=0.5,
        doc_cap=doc_cap,
        max_chars=max_chars,
    )
    assert outputs == [(train, val), (train, val)]


@settings(deadline=None)
@given(
    documents=st.lists(texts, max_size=8),
    delimiter=st.sampled_from(["a", "aa", "\n\n", "\n", " ", EOT, "é", "<|"]),
    trailing=st.sampled_from(["", "\n"]),
    piece_bytes=st.integers(1, 64),
    block_size=st.integers(1, 16),
    val_fraction=st.sampled_from([0.0, 0.3, 0.5]),
)
def test_random_documents_and_delimiters(
    tokenizer: Tokenizer,
    tmp_path_factory: pytest.TempPathFactory,
    documents: list[str],
    delimiter: str,
    trailing: str,
    piece_bytes: int,
    block_size: int,
    val_fraction: float,
) -> None:
    folder = tmp_path_factory.mktemp("random")
    text = delimiter.join(documents) + trailing
    path = write(folder, "corpus.txt", text)
    train, val, train_docs, val_docs = oracle(
        tokenizer, [text], delimiter, val_fraction=val_fraction
    )
    if val_fraction and not val_docs:
        with pytest.raises(ParameterError, match="selects none for validation"):
            write_dataset([path], folder / "t.bin", tokenizer, doc_delimiter=delimiter,
                          val_fraction=val_fraction, workers=1)  # fmt: skip
        return
    result = write_dataset(
        [path],
        folder / "train.bin",
        tokenizer,
        doc_delimiter=delimiter,
        val_fraction=val_fraction,
        workers=1,
        block_size=block_size,
        piece_bytes=piece_bytes,
    )
    assert read(folder / "train.bin") == train
    assert result.train.documents == train_docs
    if val_fraction:
        assert read(folder / "val.bin") == val


def test_a_document_larger_than_a_piece_stays_whole(
    tokenizer: Tokenizer, tmp_path: Path, streamed: bool
) -> None:
    """A story of 20 kB between small ones, pieces of 100 bytes: no piece may cut it
    (the piece grows to the delimiter after it), and it is encoded as one document."""
    big = "The cat sat on the mat, and then it'll be fine.\n" * 400
    stories = ["first", big, "after", "last"]
    text = EOT.join(stories)
    path = write(tmp_path, "stories.txt", text)
    pieces = plan_inputs([path], 100, doc_delimiter=EOT)
    assert any(piece.size > len(big) for piece in pieces)
    for workers in (1, 2):
        output = tmp_path / f"{workers}.bin"
        write_dataset([path], output, tokenizer, doc_delimiter=EOT, bos=BOS, separator=None,
                      workers=workers, piece_bytes=100, block_size=64)  # fmt: skip
        assert read(output) == oracle(tokenizer, [text], EOT, bos=BOS, separator=None)[0]


def test_a_delimiter_that_overlaps_itself_cuts_as_str_split(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    """Paragraphs separated by runs of blank lines: a piece cut inside a run of three
    newlines would move a newline from one document to the next."""
    text = "one\n\n\ntwo\n\n\n\nthree\n\nfour\n\n\n\n\nfive" * 20
    path = write(tmp_path, "paragraphs.txt", text)
    expected = oracle(tokenizer, [text], "\n\n")[0]
    for piece_bytes in range(1, 12):
        output = tmp_path / f"{piece_bytes}.bin"
        write_dataset([path], output, tokenizer, doc_delimiter="\n\n", workers=1,
                      piece_bytes=piece_bytes, block_size=2)  # fmt: skip
        assert read(output) == expected, piece_bytes


def test_a_custom_pattern_model_is_cut_between_documents(tmp_path: Path) -> None:
    """A custom split pattern has no proven cut points inside a text, but documents are
    encoded apart, so files are still cut into pieces at delimiters: same bytes."""
    model = Tokenizer.train(tinystories(), vocab_size=300, pattern=r"\w+|\s+|[^\w\s]+")
    assert not model.split_pattern.is_preset
    text = tinystories() * 3
    path = write(tmp_path, "stories.txt", text)
    pieces = plan_inputs([path], 20, split_files=True, doc_delimiter=EOT)
    assert len(pieces) > 1
    for workers in (1, 2):
        output = tmp_path / f"{workers}.bin"
        write_dataset([path], output, model, doc_delimiter=EOT, workers=workers,
                      piece_bytes=20)  # fmt: skip
        assert read(output) == oracle(model, [text], EOT)[0]


def test_standard_input_is_cut_too(
    tokenizer: Tokenizer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = tinystories()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8"))))
    output = tmp_path / "train.bin"
    result = write_dataset(["-"], output, tokenizer, doc_delimiter=EOT, val_fraction=0.2,
                           workers=2, piece_bytes=16)  # fmt: skip
    train, val, train_docs, val_docs = oracle(tokenizer, [text], EOT, val_fraction=0.2)
    assert (read(output), read(tmp_path / "val.bin")) == (train, val)
    assert result.train.documents == train_docs and val_docs == 1
    assert set(manifest(output)["document_sources"]) == {"-"}


def test_a_single_file_splits_into_train_and_val_by_document(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    path = write(tmp_path, "stories.txt", tinystories())
    with pytest.raises(ParameterError, match="or a doc_delimiter to cut the text files"):
        write_dataset([path], tmp_path / "train.bin", tokenizer, val_fraction=0.2)
    assert not (tmp_path / "train.bin").exists()
    result = write_dataset([path], tmp_path / "train.bin", tokenizer, val_fraction=0.2,
                           doc_delimiter=EOT)  # fmt: skip
    assert result.val is not None
    _, _, train_docs, val_docs = oracle(tokenizer, [tinystories()], EOT, val_fraction=0.2)
    assert (result.train.documents, result.val.documents) == (train_docs, val_docs) == (7, 1)


def test_a_file_of_only_blank_documents_gives_none(tokenizer: Tokenizer, tmp_path: Path) -> None:
    """The newline after the last delimiter is no document; nor is an empty file."""
    paths = [write(tmp_path, "a.txt", f"{EOT}\n \n{EOT}{EOT}\n"), write(tmp_path, "b.txt", "")]
    result = write_dataset(paths, tmp_path / "train.bin", tokenizer, doc_delimiter=EOT)
    assert (result.train.documents, result.train.tokens) == (0, 0)
    assert (tmp_path / "train.bin").read_bytes() == b""
    with pytest.raises(ParameterError, match="of 0 document"):
        write_dataset(paths, tmp_path / "t.bin", tokenizer, doc_delimiter=EOT, val_fraction=0.5)


def test_shards_of_delimited_documents(tokenizer: Tokenizer, tmp_path: Path) -> None:
    text = tinystories() * 2
    path = write(tmp_path, "stories.txt", text)
    result = write_dataset([path], tmp_path / "train_{shard}.bin", tokenizer,
                           doc_delimiter=EOT, bos=BOS, separator=None, shard_tokens=50,
                           file_format="llmc",
                           workers=2, piece_bytes=30)  # fmt: skip
    ids: list[int] = []
    for shard in result.train.paths:
        header = numpy.fromfile(shard, dtype="<i4", count=256)
        assert header[0] == 20240520
        shard_ids = numpy.fromfile(shard, dtype="<u2", offset=1024)
        assert len(shard_ids) == header[2]
        ids += [int(value) for value in shard_ids]
    assert ids == oracle(tokenizer, [text], EOT, bos=BOS, separator=None)[0]


# --------------------------------------------------------------------------- errors


def invalid_at(data: bytes) -> int:
    with pytest.raises(UnicodeDecodeError) as caught:
        data.decode("utf-8")
    return caught.value.start


@pytest.mark.parametrize(
    "bad",
    [b"\xff", b"\xe4\xb8", b"\xc3" + EOT.encode("utf-8"), b"\x80", b"\xf0\x9f\x98"],
    ids=["ff", "truncated", "before-delimiter", "continuation", "truncated-emoji"],
)
@pytest.mark.parametrize(("workers", "piece_bytes"), [(1, None), (2, 9), (1, 1)])
def test_invalid_utf8_is_named_by_file_and_offset(
    tokenizer: Tokenizer, tmp_path: Path, bad: bytes, workers: int, piece_bytes: int | None
) -> None:
    good = write(tmp_path, "good.txt", tinystories())
    data = tinystories().encode("utf-8") + b"more " + bad + b" text" + EOT.encode("utf-8")
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    with pytest.raises(InvalidUtf8Error) as caught:
        write_dataset([good, path], tmp_path / "train.bin", tokenizer, doc_delimiter=EOT,
                      workers=workers, piece_bytes=piece_bytes, block_size=5)  # fmt: skip
    assert (caught.value.source, caught.value.offset) == (str(path), invalid_at(data))
    assert sorted(path.name for path in tmp_path.iterdir()) == ["bad.txt", "good.txt"]


def test_a_bad_byte_past_the_max_chars_cut_is_never_read(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    data = f"first{EOT}second{EOT}".encode() + b"\xff" + f"third{EOT}".encode()
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    output = tmp_path / "train.bin"
    write_dataset([path], output, tokenizer, doc_delimiter=EOT, max_chars=5, workers=1)
    assert read(output) == oracle(tokenizer, ["first", "second"], EOT, max_chars=5)[0]
    with pytest.raises(InvalidUtf8Error) as caught:
        write_dataset([path], tmp_path / "t.bin", tokenizer, doc_delimiter=EOT, max_chars=11)
    assert caught.value.offset == invalid_at(data)


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        ("", ParameterError, "doc_delimiter must not be empty"),
        (b"<|endoftext|>", TypeError, "doc_delimiter must be a string or None"),
        ("\ud800", ParameterError, "lone surrogate"),
    ],
)
def test_a_bad_delimiter_is_refused_before_reading(
    tokenizer: Tokenizer, tmp_path: Path, value: object, error: type[Exception], message: str
) -> None:
    path = write(tmp_path, "a.txt", "text")
    with pytest.raises(error, match=message):
        write_dataset([path], tmp_path / "t.bin", tokenizer, doc_delimiter=value)  # type: ignore[arg-type]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.txt"]


def test_a_parquet_input_with_a_delimiter_is_refused(tokenizer: Tokenizer, tmp_path: Path) -> None:
    """Parquet is known by its magic bytes, before any row is read."""
    path = tmp_path / "shard.bin"
    path.write_bytes(b"PAR1" + b"\0" * 16 + b"PAR1")
    with pytest.raises(ParameterError, match="is a Parquet file, whose rows are already"):
        write_dataset([write(tmp_path, "a.txt", "x"), path], tmp_path / "t.bin", tokenizer,
                      doc_delimiter=EOT)  # fmt: skip
    assert not (tmp_path / "t.bin").exists()


# --------------------------------------------------------------------------- counting and training


def reference_counts(documents: Sequence[str], pattern: str = "gpt2") -> Counter[bytes]:
    """The chunks of each document apart, by the reference's split."""
    return Counter(
        chunk.encode("utf-8")
        for document in documents
        for chunk in reference.split(document, PRESETS[pattern])
    )


def budgeted(
    texts: Sequence[str], delimiter: str, doc_cap: int | None, max_chars: int | None
) -> list[str]:
    """The documents nanochat's loop takes from the texts cut by str.split."""
    taken, total = [], 0
    for document in (d for text in texts for d in text.split(delimiter) if d.strip()):
        document = document if doc_cap is None else document[:doc_cap]
        taken.append(document)
        total += len(document)
        if max_chars is not None and total > max_chars:
            break
    return taken


@pytest.mark.parametrize(("doc_cap", "max_chars"), [(None, None), (7, None), (None, 90), (20, 60)])
@pytest.mark.parametrize(
    ("workers", "block_size", "piece_bytes"), [(1, 1 << 20, None), (1, 3, 1), (2, 5, 23)]
)
def test_count_files_counts_each_document_apart(
    tmp_path: Path,
    doc_cap: int | None,
    max_chars: int | None,
    workers: int,
    block_size: int,
    piece_bytes: int | None,
) -> None:
    """The delimiter's text is not counted, and no chunk spans two documents: "sat." then
    "\\nTom" would be one chunk "\\n" short of the whole text's split."""
    texts = [tinystories(), tinystories(STORIES[::-1]) * 2]
    paths = [write(tmp_path, f"{index}.txt", text) for index, text in enumerate(texts)]
    for pattern in ("gpt2", "o200k"):
        counts = count_files(paths, pattern=pattern, doc_delimiter=EOT, doc_cap=doc_cap,
                             max_chars=max_chars, workers=workers, block_size=block_size,
                             piece_bytes=piece_bytes)  # fmt: skip
        assert counts == reference_counts(budgeted(texts, EOT, doc_cap, max_chars), pattern)


@settings(deadline=None)
@given(
    documents=st.lists(texts, max_size=8),
    delimiter=st.sampled_from(["a", "aa", "\n\n", "\n", " ", EOT, "é"]),
    piece_bytes=st.integers(1, 64),
    block_size=st.integers(1, 16),
)
def test_count_files_on_random_documents(
    tmp_path_factory: pytest.TempPathFactory,
    documents: list[str],
    delimiter: str,
    piece_bytes: int,
    block_size: int,
) -> None:
    text = delimiter.join(documents)
    path = write(tmp_path_factory.mktemp("count"), "corpus.txt", text)
    counts = count_files([path], doc_delimiter=delimiter, workers=1, piece_bytes=piece_bytes,
                         block_size=block_size)  # fmt: skip
    assert counts == reference_counts([d for d in text.split(delimiter) if d.strip()])


def test_train_files_learns_from_the_documents(tmp_path: Path) -> None:
    text = tinystories() * 3
    path = write(tmp_path, "stories.txt", text)
    documents = [d for d in text.split(EOT) if d.strip()]
    trained = train_files([path], 320, doc_delimiter=EOT, workers=2, doc_cap=30)
    assert trained.merges == tuple(
        reference.train_counts(reference_counts([d[:30] for d in documents]), 320)
    )
    assert trained.merges != train_files([path], 320, workers=1).merges


def test_a_custom_pattern_counts_whole_documents_in_pieces(tmp_path: Path) -> None:
    custom = r"\w+|\s+|[^\w\s]+"
    text = tinystories() * 3
    path = write(tmp_path, "stories.txt", text)
    documents = [d for d in text.split(EOT) if d.strip()]
    expected = Counter(chunk.encode() for d in documents for chunk in reference.split(d, custom))
    for workers in (1, 2):
        assert count_files([path], pattern=custom, doc_delimiter=EOT, workers=workers,
                           piece_bytes=20) == expected  # fmt: skip


def test_counting_checks_every_byte_before_it_starts(tmp_path: Path) -> None:
    """With a delimiter every document is read to its end, so a bad byte past doc_cap is
    an error too, reported before any progress."""
    data = f"good{EOT}also good, and long".encode() + b"\xff" + EOT.encode()
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    events: list[Progress] = []
    with pytest.raises(InvalidUtf8Error) as caught:
        count_files([path], doc_delimiter=EOT, doc_cap=3, progress=events.append, workers=1)
    assert (caught.value.source, caught.value.offset, events) == (str(path), invalid_at(data), [])


def test_counting_refuses_parquet_and_a_bad_delimiter(tmp_path: Path) -> None:
    parquet = tmp_path / "shard.bin"
    parquet.write_bytes(b"PAR1" + b"\0" * 16 + b"PAR1")
    with pytest.raises(ParameterError, match="is a Parquet file, whose rows are already"):
        count_files([parquet], doc_delimiter=EOT)
    with pytest.raises(ParameterError, match="doc_delimiter must not be empty"):
        train_files([write(tmp_path, "a.txt", "x")], 300, doc_delimiter="")
