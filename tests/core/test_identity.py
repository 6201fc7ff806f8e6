"""``==``, ``hash`` and ``len``: a tokenizer is its definition.

The definition is what decides every id: merges, split pattern, special tokens (text and
id) and byte order. The name and the training record are provenance and are ignored.
"""

import pickle
from pathlib import Path

import pytest

from bpetite import Tokenizer

CORPUS = "the cat sat on the mat; the dog ate the cat's hat. " * 20


@pytest.fixture(scope="module")
def trained() -> Tokenizer:
    return Tokenizer.train(CORPUS, 300)


def test_two_loads_of_one_file_are_equal_and_hash_alike(trained: Tokenizer, tmp_path: Path) -> None:
    path = tmp_path / "tok.json"
    trained.save(path)
    first, second = Tokenizer.load(path), Tokenizer.load(path)
    assert first is not second
    assert first == second == trained
    assert hash(first) == hash(second) == hash(trained)
    assert len({first, second, trained}) == 1
    assert pickle.loads(pickle.dumps(trained)) == trained


@pytest.mark.parametrize(
    "change",
    [
        {"merges": "drop the last"},
        {"pattern": "cl100k"},
        {"special_tokens": ["<|endoftext|>", "<|pad|>"]},
        {"special_tokens": {"<|endoftext|>": 400}},
        {"special_tokens": ["<|eot|>"]},
        {"byte_order": tuple(reversed(range(256)))},
    ],
)
def test_each_part_of_the_definition_counts(trained: Tokenizer, change: dict[str, object]) -> None:
    keywords: dict[str, object] = {
        "pattern": trained.pattern_name,
        "special_tokens": dict(trained.special_tokens),
    }
    merges = trained.merges
    if change.get("merges"):
        merges = merges[:-1]
        keywords["special_tokens"] = ["<|endoftext|>"]
    else:
        keywords.update(change)
    other = Tokenizer(merges, **keywords)  # type: ignore[arg-type]
    assert other != trained
    assert Tokenizer(merges, **keywords) == other  # type: ignore[arg-type]


def test_name_and_training_record_are_not_compared(trained: Tokenizer) -> None:
    named = Tokenizer(trained.merges, name="mine", training={"min_frequency": 1})
    assert named == trained and hash(named) == hash(trained)
    assert named.name == "mine" and trained.name is None
    # Special tokens given as a list or as the same mapping are the same definition.
    at = trained.mergeable_vocab_size
    assert Tokenizer(trained.merges, special_tokens={"<|endoftext|>": at}) == trained
    assert trained != "not a tokenizer"
    assert trained != Tokenizer(trained.merges, pattern=r"\S+|\s+")


def test_len_is_n_vocab(trained: Tokenizer) -> None:
    assert len(trained) == trained.n_vocab == trained.mergeable_vocab_size + 1
    sparse = Tokenizer([], special_tokens={"<|endoftext|>": 1000})
    assert len(sparse) == sparse.n_vocab == 1001 == sparse.max_token_value + 1
