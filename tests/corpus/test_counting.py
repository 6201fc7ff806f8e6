"""Counting files in parallel gives exactly the per-file counts of the simple computation.

The reference: read each file whole, decode it, ``Counter`` its chunks, add up.
"""

import io
import os
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from bpetite import Progress, Tokenizer, reference, train_counts, train_files, write_dataset
from bpetite.corpus import _counting as counting
from bpetite.corpus._counting import (
    Piece,
    count_files,
    count_piece,
    expand_inputs,
    plan_pieces,
)
from bpetite.errors import InvalidUtf8Error, ParameterError


def _chunks(text: str) -> list[bytes]:
    """The chunks of `text` as the reference splits it, in UTF-8."""
    return [chunk.encode("utf-8") for chunk in reference.split(text)]


SAFE_SPLIT = regex.compile(rb"[\x21-\x7e]\n[\x21-\x7e]")


def simple_counts(paths: list[Path]) -> Counter[bytes]:
    """Whole files, one at a time: what streaming and workers must reproduce."""
    counts: Counter[bytes] = Counter()
    for path in paths:
        counts.update(_chunks(path.read_bytes().decode("utf-8")))
    return counts


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, shakespeare_text: str) -> Path:
    """A small tree: nested directories, CRLF, multi-byte text, an empty file."""
    root = tmp_path_factory.mktemp("corpus")
    (root / "b").mkdir()
    (root / "a" / "deep").mkdir(parents=True)
    (root / "b" / "one.txt").write_bytes(shakespeare_text[:30_000].encode())
    (root / "a" / "two.txt").write_bytes(
        shakespeare_text[30_000:50_000].replace("\n", "\r\n").encode()
    )
    (root / "a" / "deep" / "three.txt").write_bytes(
        ("naïve café 中文 😀 it's 123\n" * 300).encode()
    )
    (root / "empty.txt").write_bytes(b"")
    return root


def files_of(root: Path) -> list[Path]:
    return sorted((path for path in root.rglob("*") if path.is_file()), key=lambda p: p.parts)


# --------------------------------------------------------------------------- inputs


def test_a_directory_expands_to_its_regular_files_sorted(corpus: Path) -> None:
    assert expand_inputs([corpus]) == [
        corpus / "a" / "deep" / "three.txt",
        corpus / "a" / "two.txt",
        corpus / "b" / "one.txt",
        corpus / "empty.txt",
    ]


def test_symlinks_inside_a_directory_are_skipped_but_a_named_link_is_followed(
    tmp_path: Path,
) -> None:
    (tmp_path / "real.txt").write_text("x", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    assert expand_inputs([tmp_path]) == [tmp_path / "real.txt"]
    assert expand_inputs([tmp_path / "link.txt"]) == [tmp_path / "link.txt"]


def test_a_file_named_twice_is_two_documents(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("ab ab", encoding="utf-8")
    assert expand_inputs([path, tmp_path]) == [path, path]
    assert count_files([path, path], workers=1) == Counter({b"ab": 2, b" ab": 2})


def test_no_paths_at_all_is_refused_as_a_dataset_refuses_it(tmp_path: Path) -> None:
    """An empty list (a glob that matched nothing) is a mistake, not an empty corpus."""
    calls: list[Callable[[], object]] = [
        lambda: count_files([], workers=1),
        lambda: train_files([], 300, workers=1),
        lambda: train_files([], 300, dask=object()),  # refused before the cluster is asked
        lambda: write_dataset([], tmp_path / "t.bin", Tokenizer.train("ab", 257)),
    ]
    for call in calls:
        with pytest.raises(ParameterError, match="no input paths were given"):
            call()
    with pytest.raises(ParameterError, match="no counts files were given"):
        train_counts([], 300)
    assert not list(tmp_path.iterdir())


def test_missing_path_empty_directory_and_special_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        expand_inputs([tmp_path / "missing"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="is a directory with no regular files"):
        expand_inputs([tmp_path / "empty"])
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="neither a regular file nor a directory"):
        expand_inputs([fifo])
    (tmp_path / "real.txt").write_text("x", encoding="utf-8")
    assert expand_inputs([tmp_path]) == [tmp_path / "real.txt"]  # the fifo is skipped


# --------------------------------------------------------------------------- pieces


@given(
    st.lists(
        st.sampled_from(["word", "x", "  indented", "\tt", "", "é", "it's", "1", "!", " "]),
        max_size=30,
    ),
    st.integers(1, 40),
    st.sampled_from([1, 4, 1 << 20]),
)
def test_splitting_a_file_at_safe_points_keeps_its_chunks(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], piece_bytes: int, window: int
) -> None:
    """Each piece counted alone, all added up: the chunks of the whole file."""
    path = tmp_path_factory.mktemp("split") / "f.txt"
    path.write_bytes("\n".join(lines).encode())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(counting, "SPLIT_SEARCH_BYTES", window)  # small: search window by window
        pieces = plan_pieces([path], piece_bytes)
    data = path.read_bytes()
    assert pieces[0].start == 0
    assert [piece.end for piece in pieces[:-1]] == [piece.start for piece in pieces[1:]]
    assert pieces[-1].end is None
    assert sum(piece.size for piece in pieces) == len(data)
    for piece in pieces[1:]:
        assert SAFE_SPLIT.fullmatch(data, piece.start - 2, piece.start + 1)
    counts: Counter[str] = Counter()
    for piece in pieces:
        count_piece(piece, 5, counts)
    assert Counter({k.encode(): v for k, v in counts.items()}) == simple_counts([path])


@given(
    st.lists(st.sampled_from([b"x", b"\n", b" ", b"/", b"ab"]), max_size=60).map(b"".join),
    st.integers(0, 70),
    st.sampled_from([1, 2, 3, 8]),
    st.sampled_from([4, 16, 1 << 20]),
)
def test_the_short_look_finds_the_windows_first_safe_point(
    data: bytes, offset: int, first_look: int, window: int
) -> None:
    """Looking a few bytes ahead first, then at the whole window, finds what one search
    of the whole window finds, whichever edge a point or the file's end falls on."""
    start = max(offset - 2, 0)
    match = regex.search(
        rb"[\x21-\x7e]\n(?=[\x21-\x2e\x30-\x7e])", data[start : start + window + 3]
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(counting, "FIRST_LOOK_BYTES", first_look)
        patch.setattr(counting, "SPLIT_SEARCH_BYTES", window)
        found = counting._find_safe_point(io.BytesIO(data), offset)
    assert found == (None if match is None else start + match.end())


def test_a_large_file_splits_into_pieces(corpus: Path) -> None:
    pieces = plan_pieces([corpus / "b" / "one.txt"], 4096)
    assert len(pieces) > 5
    assert all(piece.size >= 4096 for piece in pieces[:-1])


def test_a_safe_point_beyond_the_search_window_is_still_found(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(counting, "SPLIT_SEARCH_BYTES", 16)
    path = tmp_path / "f.txt"
    path.write_bytes(b"    x\n" * 50 + b"end\nnext\n" + b"    y\n" * 50)
    pieces = plan_pieces([path], 10)
    assert [piece.start for piece in pieces] == [0, 300]  # after "x\n", before "end"
    assert path.read_bytes()[298:301] == b"x\ne"


def test_a_file_without_safe_points_stays_whole(tmp_path: Path) -> None:
    path = tmp_path / "indented.txt"
    path.write_bytes(b"    x\n    y\n" * 100)  # every line starts with a space
    assert len(plan_pieces([path], 10)) == 1


# --------------------------------------------------------------------------- counting


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("block_size", [1, 7, None])
def test_counts_equal_the_simple_per_file_counts(
    corpus: Path, workers: int, block_size: int | None
) -> None:
    if block_size is None:
        counts = count_files([corpus], workers=workers, piece_bytes=8192)  # the default size
    else:
        counts = count_files([corpus], workers=workers, piece_bytes=8192, block_size=block_size)
    assert counts == simple_counts(files_of(corpus))


@pytest.mark.parametrize("workers", [2, 3, 5])
def test_workers_adding_their_counts_up_between_them_count_the_same(
    corpus: Path, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However small the corpus, once the workers sum their parts (add_parts)."""
    monkeypatch.setattr(counting, "PARTED_BYTES", 0)
    counts = count_files([corpus], workers=workers, piece_bytes=4096, block_size=7)
    assert counts == simple_counts(files_of(corpus))


def test_file_order_does_not_matter(corpus: Path) -> None:
    files = files_of(corpus)
    expected = simple_counts(files)
    for seed in range(3):
        shuffled = files[:]
        random.Random(seed).shuffle(shuffled)
        assert count_files(shuffled, workers=2, piece_bytes=10_000) == expected


def test_chunks_never_span_two_files(tmp_path: Path) -> None:
    (tmp_path / "1.txt").write_text("ab", encoding="utf-8")
    (tmp_path / "2.txt").write_text("c  ", encoding="utf-8")
    (tmp_path / "3.txt").write_text("d", encoding="utf-8")
    counts = count_files([tmp_path], workers=2, piece_bytes=1)
    assert counts == Counter({b"ab": 1, b"c": 1, b"  ": 1, b"d": 1})
    assert counts != Counter(_chunks("abc  d"))


@pytest.mark.parametrize("workers", [1, 2])
def test_invalid_utf8_names_the_file_and_the_offset(tmp_path: Path, workers: int) -> None:
    (tmp_path / "a.txt").write_text("fine text\n" * 100, encoding="utf-8")
    bad = tmp_path / "b.txt"
    bad.write_bytes(b"ok\nline\n" * 50 + b"caf\xe9\n")
    with pytest.raises(InvalidUtf8Error) as caught:
        count_files([tmp_path], workers=workers, block_size=3, piece_bytes=16)
    assert str(caught.value).startswith(f"{bad}: invalid UTF-8 at byte offset 403 (byte 0xe9")


def test_a_worker_reports_offsets_in_the_whole_file(tmp_path: Path) -> None:
    """A piece in the middle of a file still names the file and the absolute offset."""
    path = tmp_path / "f.txt"
    path.write_bytes(b"abc\ndef\n\xff\n")
    with pytest.raises(InvalidUtf8Error, match="byte offset 8"):
        count_piece(Piece(str(path), 4, None, 6), 2, Counter())


def test_progress_counts_every_byte(corpus: Path) -> None:
    total = sum(path.stat().st_size for path in files_of(corpus))
    for workers in (1, 2):
        events: list[Progress] = []
        count_files([corpus], workers=workers, block_size=4096, progress=events.append)
        assert events[0] == Progress("count", "start", 0, total)
        assert events[-1] == Progress("count", "done", total, total)
        done = [event.done for event in events]
        assert done == sorted(done)
        assert {event.total for event in events} == {total}
        if workers == 1:
            assert len(events) >= total // 4096  # a report per block


def test_no_worker_processes_for_a_single_piece(
    monkeypatch: pytest.MonkeyPatch, corpus: Path
) -> None:
    def no_pool(*args: object, **kwargs: object) -> Counter[str]:
        raise AssertionError("a single piece is counted in this process")

    monkeypatch.setattr(counting, "run_in_workers", no_pool)
    path = corpus / "b" / "one.txt"
    assert count_files([path], workers=4) == simple_counts([path])


@pytest.mark.parametrize("bad", [0, -2, True, 1.0])
def test_workers_must_be_a_positive_int(corpus: Path, bad: object) -> None:
    with pytest.raises((TypeError, ValueError), match="workers"):
        count_files([corpus], workers=bad)  # type: ignore[arg-type]


def _many_files(root: Path, count: int) -> list[Path]:
    """`count` text files in order, several surveys' worth: most short, every tenth long
    enough to be cut into pieces, one empty."""
    files = []
    for number in range(count):
        path = root / f"{number:04}.txt"
        line = f"file {number}: it's naïve x{number}\n"
        path.write_text(line * (40 if number % 10 == 0 else 1) if number != 7 else "")
        files.append(path)
    return files


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_surveying_plans_the_pieces_planning_alone_plans(tmp_path: Path, workers: int) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    files = _many_files(tmp_path, 3 * counting.SURVEY_FILES + 5)
    shard = tmp_path / "shard.parquet"
    pq.write_table(pa.table({"text": ["a b", "c", "d e f"]}), shard, row_group_size=2)
    files.insert(70, shard)
    surveyed = counting.survey_files(files, workers, "text", 4096)
    assert [size for size, _ in surveyed] == [path.stat().st_size for path in files]
    for piece_bytes in (1, 64, 10_000):
        expected = counting.plan_inputs(files, piece_bytes)
        assert counting.plan_surveyed(files, surveyed, piece_bytes, True, None) == expected
        whole = counting.plan_inputs(files, piece_bytes, split_files=False)
        assert counting.plan_surveyed(files, surveyed, piece_bytes, False, None) == whole
    text_files = [path for path in files if path != shard]
    surveyed = counting.survey_files(text_files, workers, "text", 4096, "\n")
    expected = counting.plan_inputs(text_files, 64, doc_delimiter="\n")
    assert counting.plan_surveyed(text_files, surveyed, 64, True, "\n") == expected


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_the_first_bad_file_in_order_is_named_before_any_counting(
    tmp_path: Path, workers: int
) -> None:
    files = _many_files(tmp_path, 3 * counting.SURVEY_FILES)
    files[2 * counting.SURVEY_FILES + 3].write_bytes(b"late \xff")  # in a later survey piece
    first = files[counting.SURVEY_FILES + 1]
    first.write_bytes(b"ok\n\xc3(")
    events: list[Progress] = []
    with pytest.raises(InvalidUtf8Error) as caught:
        count_files(files, workers=workers, progress=events.append)
    assert str(caught.value).startswith(f"{first}: invalid UTF-8 at byte offset 3 (byte 0xc3")
    assert events == []  # nothing counted, no progress started


@given(
    st.lists(
        st.dictionaries(st.text(min_size=1, max_size=4), st.integers(1, 5), max_size=30),
        min_size=1,
        max_size=4,
    ),
    st.integers(1, 5),
)
def test_counts_dealt_into_parts_add_up_to_the_sum(
    counters: list[dict[str, int]], parts: int
) -> None:
    """Every worker deals its counts into the same parts; the parts' sums are the sum."""
    expected: Counter[bytes] = Counter()
    for counts in counters:
        expected.update({chunk.encode("utf-8"): n for chunk, n in counts.items()})
    summaries = [counting.deal_parts(Counter(counts), parts) for counts in counters]
    assert all(len(summary) == parts for summary in summaries)
    task = counting.SumJob(summaries).task(0)  # what each worker of add_parts runs
    sums = [task.run(part, lambda size: None) for part in range(parts)]
    assert sum(map(len, sums)) == len(expected)  # no chunk in two parts
    assert Counter({chunk: n for part in sums for chunk, n in part.items()}) == expected


def test_workers_add_up_the_parts_of_every_workers_counts() -> None:
    counters = [Counter({"a": 1, " b": 2, "é": 3}), Counter({"a": 4, "中": 5}), Counter()]
    summaries = [counting.deal_parts(counts, 3) for counts in counters]
    expected = Counter({b"a": 5, b" b": 2, "é".encode(): 3, "中".encode(): 5})
    assert counting.add_parts(summaries, 2) == expected
