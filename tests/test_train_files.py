"""train_files and train_counts give the artifact of training on each file's text."""

import random
from collections import Counter
from pathlib import Path

import pytest

import bpetite
from bpetite import Progress, Tokenizer, train_files
from bpetite._counting import count_files
from bpetite._counts_file import save_counts
from bpetite._train_files import train_counts
from tests.reference import naive_pretokenize, naive_train_chunks

VOCAB = 420


def artifact(tokenizer: Tokenizer, path: Path) -> bytes:
    tokenizer.save(str(path), overwrite=True)
    return path.read_bytes()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, shakespeare_text: str) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    (root / "plays").mkdir()
    text = shakespeare_text[:60_000]
    for index in range(4):
        part = text[index * 15_000 : (index + 1) * 15_000]
        (root / "plays" / f"{index}.txt").write_bytes(part.encode("utf-8"))
    (root / "notes.txt").write_bytes("naïve café 中文 😀 it's 123\r\n".encode() * 200)
    return root


@pytest.fixture(scope="module")
def expected(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The simple way: every file read whole, its chunks counted, the counts added."""
    counts: Counter[bytes] = Counter()
    for path in corpus.rglob("*.txt"):
        counts.update(naive_pretokenize(path.read_bytes().decode("utf-8")))
    tokenizer = Tokenizer.train_from_counts(counts, VOCAB)
    return artifact(tokenizer, tmp_path_factory.mktemp("expected") / "t.json")


def test_train_files_is_exported() -> None:
    assert "train_files" in bpetite.__all__
    assert bpetite.train_files is train_files


def test_one_file_equals_tokenizer_train(tmp_path: Path, shakespeare_text: str) -> None:
    text = shakespeare_text[:100_000]
    path = tmp_path / "s.txt"
    path.write_bytes(text.encode("utf-8"))
    assert artifact(train_files([path], VOCAB), tmp_path / "a.json") == artifact(
        Tokenizer.train(text, VOCAB), tmp_path / "b.json"
    )


@pytest.mark.parametrize(("workers", "block_size"), [(1, 7), (2, 1), (3, 1 << 20), (2, 7)])
def test_the_artifact_never_depends_on_workers_or_block_size(
    corpus: Path, expected: bytes, tmp_path: Path, workers: int, block_size: int
) -> None:
    tokenizer = train_files([corpus], VOCAB, workers=workers, block_size=block_size)
    assert artifact(tokenizer, tmp_path / "t.json") == expected


def test_the_artifact_never_depends_on_file_order(
    corpus: Path, expected: bytes, tmp_path: Path
) -> None:
    files = sorted(corpus.rglob("*.txt"))
    for seed in range(3):
        random.Random(seed).shuffle(files)
        assert artifact(train_files(files, VOCAB, workers=2), tmp_path / "t.json") == expected


def test_the_naive_trainer_agrees(corpus: Path) -> None:
    files = sorted(corpus.rglob("*.txt"))[:2]
    counts: Counter[bytes] = Counter()
    for path in files:
        counts.update(naive_pretokenize(path.read_bytes().decode("utf-8")))
    assert list(train_files(files, 300, workers=2).merges) == naive_train_chunks(counts, 300)


def test_files_are_separate_documents(tmp_path: Path) -> None:
    """Concatenated, "ab" + "c" would be the chunk "abc" and learn a second merge."""
    (tmp_path / "1.txt").write_text("ab", encoding="utf-8")
    (tmp_path / "2.txt").write_text("c", encoding="utf-8")
    separate = train_files([tmp_path], 258, workers=2)
    assert list(separate.merges) == [(97, 98)]
    assert list(Tokenizer.train("abc", 258).merges) == [(97, 98), (256, 99)]


def test_counts_files_merge_to_the_same_artifact(
    corpus: Path, expected: bytes, tmp_path: Path
) -> None:
    parts = [corpus / "plays", corpus / "notes.txt"]
    paths = []
    for index, part in enumerate(parts):
        paths.append(tmp_path / f"{index}.counts.json")
        save_counts(paths[-1], count_files([part], workers=1))
    assert artifact(train_counts(paths, VOCAB), tmp_path / "t.json") == expected


def test_progress_reports_counting_then_merges(corpus: Path) -> None:
    events: list[Progress] = []
    train_files([corpus], 300, workers=1, progress=events.append)
    tasks = [event.task for event in events]
    assert tasks[0] == "count"
    assert tasks[-1] == "merge"
    switch = tasks.index("merge")
    assert set(tasks[:switch]) == {"count"}
    assert set(tasks[switch:]) == {"merge"}


def test_vocab_size_is_checked_before_any_file_is_read(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="vocab_size must be at least 256"):
        train_files([tmp_path / "missing.txt"], 255)
    with pytest.raises(ValueError, match="vocab_size"):
        train_counts([tmp_path / "missing.json"], 10)
