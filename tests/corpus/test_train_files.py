"""train_files and train_counts give the artifact of training on each file's text."""

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

import bpetite
from bpetite import PRESETS, Progress, Tokenizer, count_chunks, reference, train_files
from bpetite.corpus import _counting as counting
from bpetite.corpus._counting import count_files, plan_pieces
from bpetite.corpus._counts_file import save_counts
from bpetite.corpus._train_files import train_counts


def _chunks(text: str) -> list[bytes]:
    """The chunks of `text` as the reference splits it, in UTF-8."""
    return [chunk.encode("utf-8") for chunk in reference.split(text)]


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
        counts.update(_chunks(path.read_bytes().decode("utf-8")))
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
        counts.update(_chunks(path.read_bytes().decode("utf-8")))
    assert list(train_files(files, 300, workers=2).merges) == reference.train_counts(counts, 300)


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


# --------------------------------------------------------------------------- split patterns

SPECIALS = ("<|endoftext|>", "<|user|>", "<|user|>!")

# Lines that end the ways the presets treat differently: after letters, digits and
# punctuation, before "/" (o200k's [\r\n/]* takes it), with CRLF, trailing spaces,
# indentation and blank lines, in several scripts.
_WORDS = [
    "it's", "WE'LL", "HTMLParser", "naïve", "café", "中文", "ǅemal", "ᵃb", "😀", "1234567",
    "x.", "a!", "/usr/bin", "http://x/y", "--", "<|user|>", "<|endoftext|>", "'re", "ok",
]  # fmt: skip
_BREAKS = ["\n", "\r\n", " \n", "\n\n", "\n  ", "  ", " ", "\t", "\n/"]


def synthetic_text(seed: int, words: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(_WORDS) + rng.choice(_BREAKS) for _ in range(words))


def read_text(path: Path) -> str:
    return path.read_bytes().decode("utf-8")  # read_text would turn "\r\n" into "\n"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Three files; the first large enough to be cut at safe points into many pieces."""
    root = tmp_path_factory.mktemp("mixed")
    paths = []
    for index, words in enumerate([6000, 700, 1]):
        path = root / f"{index}.txt"
        path.write_bytes(synthetic_text(index, words).encode("utf-8"))
        paths.append(path)
    return paths


def same_model(a: Tokenizer, b: Tokenizer) -> bool:
    return (a.merges, a.pattern, a.pattern_name, dict(a.special_tokens)) == (
        b.merges,
        b.pattern,
        b.pattern_name,
        dict(b.special_tokens),
    )


@pytest.mark.parametrize("name", list(PRESETS))
@pytest.mark.parametrize("workers", [1, 2])
def test_train_files_with_each_preset_equals_training_on_the_text(
    monkeypatch: pytest.MonkeyPatch, mixed: list[Path], name: str, workers: int
) -> None:
    """One file: Tokenizer.train on its text. Cut into 4 KiB pieces, in 5-byte blocks."""
    monkeypatch.setattr(counting, "MIN_PIECE_BYTES", 4096)
    text = read_text(mixed[0])
    assert len(plan_pieces([mixed[0]], 4096)) > 5
    expected = Tokenizer.train(text, VOCAB, pattern=name, special_tokens=SPECIALS)
    got = train_files(
        [mixed[0]], VOCAB, pattern=name, special_tokens=SPECIALS, workers=workers, block_size=5
    )
    assert same_model(got, expected)
    assert got.pattern_name == name
    assert list(got.special_tokens) == list(SPECIALS)


@pytest.mark.parametrize("name", list(PRESETS))
def test_several_files_with_each_preset_are_separate_documents(
    mixed: list[Path], name: str
) -> None:
    counts: Counter[bytes] = Counter()
    for path in mixed:
        counts.update(count_chunks([read_text(path)], pattern=name))
    expected = Tokenizer.train_from_counts(counts, VOCAB, pattern=name)
    for workers in (1, 2):
        got = train_files(mixed, VOCAB, pattern=name, workers=workers, block_size=3)
        assert same_model(got, expected), workers


def test_the_presets_give_different_models(mixed: list[Path]) -> None:
    """So the tests above would notice a pattern that was not passed along."""
    merges = {name: train_files(mixed, VOCAB, pattern=name, workers=1).merges for name in PRESETS}
    assert len(set(merges.values())) == len(PRESETS)


#: Whether "ab" is one chunk depends on a "!" anywhere later: no file may be cut for it.
LOOKAHEAD = r"[a-z]+(?=[^!]*!)|[\s\S]"


@pytest.mark.parametrize("workers", [1, 2])
def test_a_custom_pattern_counts_each_file_whole(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, workers: int
) -> None:
    monkeypatch.setattr(counting, "MIN_PIECE_BYTES", 64)
    text = "ab cd\nef\n" * 100 + "!"
    path = tmp_path / "f.txt"
    path.write_text(text, encoding="utf-8")
    assert count_files([path], pattern=LOOKAHEAD, workers=workers, block_size=7) == count_chunks(
        [text], pattern=LOOKAHEAD
    )
    # Cut at the safe points that serve the presets, the pieces would count differently.
    pieces = plan_pieces([path], 64)
    assert len(pieces) > 1
    cut = Counter[bytes]()
    for piece in pieces:
        cut += count_chunks([text[piece.start : piece.end]], pattern=LOOKAHEAD)
    assert cut != count_chunks([text], pattern=LOOKAHEAD)
    tokenizer = train_files([path], 270, pattern=LOOKAHEAD, workers=workers)
    assert same_model(tokenizer, Tokenizer.train(text, 270, pattern=LOOKAHEAD))


def test_counts_files_record_their_pattern(mixed: list[Path], tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    save_counts(path, count_files(mixed, pattern="o200k", workers=1), pattern="o200k")
    direct = train_files(mixed, VOCAB, pattern="o200k", special_tokens=SPECIALS, workers=1)
    via_counts = train_counts([path], VOCAB, pattern="o200k", special_tokens=SPECIALS)
    assert same_model(via_counts, direct)
    with pytest.raises(ValueError, match=r"differs from the 'gpt2' preset .* got 'o200k' preset"):
        train_counts([path], VOCAB)


# --------------------------------------------------------------------------- safe split points

#: The safe points count_files cuts a large file at, written out independently: just
#: after the "\n" of X\nY, X and Y printable non-space ASCII and Y not "/".
SAFE_POINT = regex.compile(r"(?<=[\x21-\x7e]\n)(?=[\x21-\x2e\x30-\x7e])")

_LINE_PIECES = st.sampled_from(
    [*_WORDS, *_BREAKS, "a\nb", "!\n!", "1\n2", "'\nx", "x\n'", "!\n/", "a\n/", "'l\nl"]
)


@pytest.mark.parametrize("name", list(PRESETS))
@given(text=st.lists(_LINE_PIECES, max_size=30).map("".join))
def test_every_preset_splits_the_same_on_both_sides_of_a_safe_point(name: str, text: str) -> None:
    pattern = regex.compile(PRESETS[name])
    for point in SAFE_POINT.finditer(text):
        cut = point.start()
        assert pattern.findall(text[:cut]) + pattern.findall(text[cut:]) == pattern.findall(text)


def test_a_slash_after_the_newline_is_not_a_safe_point() -> None:
    """o200k's punctuation branch ends in [\\r\\n/]*: "!\\n/" is one chunk."""
    assert regex.findall(PRESETS["o200k"], "a!\n/b") == ["a", "!\n/", "b"]
    assert SAFE_POINT.search("a!\n/b") is None
    assert SAFE_POINT.search("a!\nb") is not None


@pytest.mark.parametrize("options", [{"max_token_bytes": 3}, {"min_frequency": 40}])
def test_trainer_options_reach_the_merge_loop(mixed: list[Path], options: dict[str, Any]) -> None:
    text = read_text(mixed[1])
    expected = Tokenizer.train(text, VOCAB, pattern="cl100k", **options)
    assert expected.merges != Tokenizer.train(text, VOCAB, pattern="cl100k").merges
    got = train_files([mixed[1]], VOCAB, pattern="cl100k", workers=1, **options)
    assert same_model(got, expected)
    path = mixed[1].parent / "c.json"
    save_counts(
        path, count_files([mixed[1]], pattern="cl100k", workers=1), overwrite=True, pattern="cl100k"
    )
    assert same_model(train_counts([path], VOCAB, pattern="cl100k", **options), expected)


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"max_token_bytes": 1}, "max_token_bytes must be at least 2"),
        ({"min_frequency": 0}, "min_frequency must be at least 1"),
        ({"special_tokens": ("<|a|>", "<|a|>")}, "given twice"),
        ({"special_tokens": ("",)}, "non-empty"),
        ({"pattern": "a*"}, "matches the empty string"),
        ({"pattern": "(a)|b"}, "capturing groups"),
    ],
)
def test_options_are_checked_before_any_file_is_read(
    tmp_path: Path, options: dict[str, Any], error: str
) -> None:
    """The same errors training gives, before counting a corpus that may take hours."""
    with pytest.raises(ValueError, match=error):
        Tokenizer.train("ab ab", 300, **options)
    with pytest.raises(ValueError, match=error):
        train_files([tmp_path / "missing.txt"], 300, **options)
    with pytest.raises(ValueError, match=error):
        train_counts([tmp_path / "missing.json"], 300, **options)


def test_one_path_as_a_string_is_one_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not an iterable of its characters: train_files("c.txt") reads c.txt."""
    (tmp_path / "c.txt").write_text("ab ab ab", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    expected = Tokenizer.train("ab ab ab", 258).merges
    assert train_files("c.txt", 258, workers=1).merges == expected
    assert train_files(tmp_path / "c.txt", 258, workers=1).merges == expected
