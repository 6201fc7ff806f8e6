"""Parquet shards as nanochat reads them, and nanochat's character budget over any input.

The oracle is ``count_chunks`` of the documents nanochat's own loop yields
(``scripts/tok_train.py``'s ``text_iterator``, written out in
tests/nanochat.py): the rows of each file's text column in order,
nulls skipped, each cut to ``doc_cap`` characters, up to the one that takes the total
past ``max_chars``. Every case is checked with one worker and with several, over
pieces small enough that the cut falls inside a row group another worker counts.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from bpetite import Progress, Tokenizer, count_chunks, train_files, write_dataset  # noqa: E402
from bpetite.corpus import count_files  # noqa: E402
from bpetite.errors import InvalidUtf8Error, ParameterError  # noqa: E402
from tests.nanochat import nanochat_text_iterator  # noqa: E402
from tests.strategies import texts  # noqa: E402

Row = str | None


def write_parquet(
    path: Path, rows: Sequence[Row], group_rows: int = 2, column: str = "text"
) -> Path:
    table = pa.table({"id": list(range(len(rows))), column: pa.array(rows, pa.string())})
    pq.write_table(table, path, row_group_size=max(group_rows, 1))
    return path


def documents(inputs: list[tuple[str, object]]) -> list[str]:
    """Every document of `inputs` (("text", str) or ("parquet", rows)) in order."""
    found: list[str] = []
    for kind, content in inputs:
        if kind == "text":
            assert isinstance(content, str)
            found.append(content)
        else:
            assert isinstance(content, list)
            found += [row for row in content if row is not None]
    return found


def write_inputs(folder: Path, inputs: list[tuple[str, object]], group_rows: int) -> list[Path]:
    paths = []
    for index, (kind, content) in enumerate(inputs):
        if kind == "text":
            assert isinstance(content, str)
            path = folder / f"{index:02}.txt"
            path.write_bytes(content.encode("utf-8"))
        else:
            assert isinstance(content, list)
            path = write_parquet(folder / f"{index:02}.parquet", content, group_rows)
        paths.append(path)
    return paths


inputs_strategy = st.lists(
    st.one_of(
        st.tuples(st.just("text"), texts),
        st.tuples(st.just("parquet"), st.lists(st.one_of(st.none(), texts), max_size=7)),
    ),
    min_size=1,
    max_size=4,
)
limits = st.one_of(st.none(), st.integers(1, 80))


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(inputs_strategy, limits, limits, st.integers(1, 3))
def test_counts_are_nanochats_documents(
    tmp_path_factory: pytest.TempPathFactory,
    inputs: list[tuple[str, object]],
    max_chars: int | None,
    doc_cap: int | None,
    group_rows: int,
) -> None:
    folder = tmp_path_factory.mktemp("inputs")
    paths = write_inputs(folder, inputs, group_rows)
    expected = count_chunks(nanochat_text_iterator(documents(inputs), max_chars, doc_cap))
    counted = count_files(paths, workers=1, piece_bytes=8, max_chars=max_chars, doc_cap=doc_cap)
    assert counted == expected


@pytest.mark.parametrize("max_chars", [1, 37, 120, 121, 500, 10_000])
@pytest.mark.parametrize("doc_cap", [None, 7])
def test_the_cut_is_the_same_for_any_number_of_workers(
    tmp_path: Path, max_chars: int, doc_cap: int | None
) -> None:
    """Many small pieces over three shards and a text file: the workers race for them,
    and the result must still be the sequential cut (it is planned before they start)."""
    rows = [f"row {n}: {'the cat sat. ' * (n % 5)}\n中文 {n}" for n in range(40)]
    paths = [
        write_parquet(tmp_path / "a.parquet", rows[:15], group_rows=2),
        tmp_path / "b.txt",
        write_parquet(tmp_path / "c.parquet", [*rows[15:], None], group_rows=3),
    ]
    paths[1].write_text("a text file between the shards\nit is one document\n" * 9, "utf-8")
    everything = [*rows[:15], paths[1].read_text("utf-8"), *rows[15:]]
    expected = count_chunks(nanochat_text_iterator(everything, max_chars, doc_cap))
    for workers in (1, 2, 3):
        counted = count_files(
            paths, workers=workers, piece_bytes=16, max_chars=max_chars, doc_cap=doc_cap
        )
        assert counted == expected, workers


def test_train_files_on_shards_is_train_from_iterator_on_their_rows(tmp_path: Path) -> None:
    rows = [f"document {n}: {'the hat, the mat ' * n}" for n in range(30)]
    shards = [
        write_parquet(tmp_path / "shard_00000.parquet", rows[:12], group_rows=5),
        write_parquet(tmp_path / "shard_00001.parquet", rows[12:], group_rows=5),
    ]
    for max_chars, doc_cap in [(None, None), (300, 40), (None, 10)]:
        from_files = train_files(shards, 300, workers=2, max_chars=max_chars, doc_cap=doc_cap)
        from_rows = Tokenizer.train_from_iterator(rows, 300, max_chars=max_chars, doc_cap=doc_cap)
        assert from_files.merges == from_rows.merges


def test_a_file_is_parquet_by_its_content_not_its_name(tmp_path: Path) -> None:
    shard = write_parquet(tmp_path / "shard.txt", ["ab ab", "cd"])
    text = tmp_path / "notes.parquet"
    text.write_text("ab ab", encoding="utf-8")
    assert count_files([shard], workers=1) == count_chunks(["ab ab", "cd"])
    assert count_files([text], workers=1) == count_chunks(["ab ab"])


def test_another_text_column(tmp_path: Path) -> None:
    shard = write_parquet(tmp_path / "s.parquet", ["ab ab"], column="content")
    assert count_files([shard], workers=1, text_column="content") == count_chunks(["ab ab"])


def test_a_missing_column_names_the_columns_there_are(tmp_path: Path) -> None:
    shard = write_parquet(tmp_path / "s.parquet", ["ab"], column="content")
    with pytest.raises(ParameterError) as raised:
        count_files([shard], workers=1)
    assert str(raised.value) == (
        f"'{shard}' has no column 'text' (its columns: 'id', 'content'); name the text "
        "column with text_column (--text-column)"
    )


def test_a_column_that_is_not_text_is_refused(tmp_path: Path) -> None:
    shard = tmp_path / "s.parquet"
    pq.write_table(pa.table({"text": [1, 2]}), shard)
    with pytest.raises(ParameterError, match=r"column 'text' of .* holds int64, not text"):
        count_files([shard], workers=1)


def test_a_damaged_parquet_file_is_named(tmp_path: Path) -> None:
    shard = tmp_path / "s.parquet"
    shard.write_bytes(b"PAR1" + bytes(range(256)) + b"PAR1")
    with pytest.raises(ParameterError, match="is not a readable Parquet file"):
        count_files([shard], workers=1)


def test_without_pyarrow_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shard = write_parquet(tmp_path / "s.parquet", ["ab"])
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError) as raised:
        count_files([shard], workers=1)
    assert str(raised.value) == (
        "reading Parquet files needs pyarrow: pip install 'bpetite[parquet]'"
    )


def test_budget_options_are_checked_before_reading(tmp_path: Path) -> None:
    missing = tmp_path / "missing.parquet"
    for options, error in [
        ({"max_chars": 0}, ParameterError),
        ({"doc_cap": -1}, ParameterError),
        ({"text_column": 3}, TypeError),
    ]:
        with pytest.raises(error):
            train_files([missing], 300, **options)  # type: ignore[arg-type]


def test_doc_cap_reads_a_text_file_only_that_far(tmp_path: Path) -> None:
    """Invalid UTF-8 past the cap is never read, so it is no error (nanochat crops first)."""
    path = tmp_path / "t.txt"
    path.write_bytes("héllo wörld".encode() + b"\xff tail")
    assert count_files([path], workers=1, doc_cap=11) == count_chunks(["héllo wörld"])
    assert count_files([path], workers=1, doc_cap=3, max_chars=1) == count_chunks(["hél"])


def not_utf8_rows(path: Path) -> Path:
    """A shard whose row 1 of row group 1 is ``a\xffb``: Parquet does not check UTF-8."""
    bad = pa.Array.from_buffers(
        pa.string(), 1, [None, pa.py_buffer(b"\0\0\0\0\3\0\0\0"), pa.py_buffer(b"a\xffb")]
    )
    rows = pa.concat_arrays([pa.array(["ok one", "ok two", "ok three"]), bad])
    pq.write_table(pa.table({"text": rows}), path, row_group_size=2)
    return path


@pytest.mark.parametrize(
    "call",
    [
        lambda path: count_files([path], workers=1),
        lambda path: count_files([path], workers=2, doc_cap=2),
        lambda path: count_files([path], workers=2, max_chars=100),
        lambda path: train_files([path], 260, workers=1),
        lambda path: write_dataset([path], path.with_name("o.bin"), Tokenizer(()), workers=1),
    ],
)
def test_invalid_utf8_in_a_row_names_the_file_row_group_and_row(
    tmp_path: Path, call: Callable[[Path], object]
) -> None:
    shard = not_utf8_rows(tmp_path / "s.parquet")
    with pytest.raises(InvalidUtf8Error) as raised:
        call(shard)
    assert (raised.value.source, raised.value.offset, raised.value.byte) == (str(shard), 1, 0xFF)
    assert str(raised.value) == (
        f"{shard}: invalid UTF-8 at byte offset 1 (byte 0xff: invalid start byte, in the "
        "text of row 1 of row group 1, column 'text')"
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["s.parquet"]


@pytest.mark.parametrize(
    "column",
    [
        pa.array(["ab ab", None, "cd ab"]).dictionary_encode(),  # a pandas categorical
        pa.array(["ab ab", None, "cd ab"], pa.large_string()),
        *(
            [pa.array(["ab ab", None, "cd ab"], pa.string_view())]
            if hasattr(pa, "string_view")
            else []
        ),
    ],
)
def test_a_dictionary_or_a_view_of_strings_is_text(tmp_path: Path, column: object) -> None:
    shard = tmp_path / "s.parquet"
    pq.write_table(pa.table({"text": column}), shard, row_group_size=2)
    for workers, budget in ((1, {}), (2, {"max_chars": 100})):
        counts = count_files([shard], workers=workers, **budget)  # type: ignore[arg-type]
        assert counts == count_chunks(["ab ab", "cd ab"])


@pytest.mark.parametrize(
    ("budget", "documents"),
    [
        ({}, ["héllo wörld", "naïve ☃", "x"]),
        ({"doc_cap": 3}, ["hél", "naï", "x"]),
        ({"max_chars": 12}, ["héllo wörld", "naïve ☃"]),
    ],
)
def test_a_row_groups_bytes_are_its_texts_in_utf8(
    tmp_path: Path, budget: dict[str, int], documents: list[str]
) -> None:
    """What progress (and the summaries' corpus_bytes) count: the text read, not the file."""
    shard = write_parquet(tmp_path / "s.parquet", ["héllo wörld", None, "naïve ☃", "x"])
    events: list[Progress] = []
    count_files([shard], workers=1, progress=events.append, **budget)  # type: ignore[arg-type]
    size = sum(len(text.encode("utf-8")) for text in documents)
    assert events[-1] == Progress("count", "done", size, size)
