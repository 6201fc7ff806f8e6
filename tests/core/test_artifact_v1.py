"""Artifact schema v1: exact bytes, round trips, and the two determinism gates.

The loader checklist is in test_artifact_loader.py, the mutation fuzz in
test_artifact_fuzz.py, atomic saving in test_artifact_save.py.
"""

import random
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from bpetite import reference
from bpetite.core._artifact import dumps_artifact, load, parse_artifact
from bpetite.core._tokenizer import Tokenizer
from tests.artifacts import (
    EOT,
    GATE_CORPUS,
    State,
    save,
    trained_state,
)

# --------------------------------------------------------------------------- exact bytes


def test_worked_example_ab_ab_ab_has_the_documented_bytes() -> None:
    """Built by hand from the spec's layout, not with json.dumps, so a serializer bug
    (wrong key order, spaces, numeric vocab order, trailing newline) cannot hide."""
    vocab, merges, special = trained_state("ab ab ab", 258)
    assert merges == [(97, 98), (32, 256)]
    assert special == {EOT: 258}

    # The pattern as JSON-escaped in the PRD's schema example.
    pattern = (
        r'''"'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"'''
    )
    values = {str(i): str(i) for i in range(256)}
    values |= {
        "256": "97,98",
        "257": "32,97,98",
        "258": "60,124,101,110,100,111,102,116,101,120,116,124,62",
    }
    # Sorted as strings: "10" follows "1", not "9".
    entries = ",".join(f'"{key}":[{values[key]}]' for key in sorted(values))
    expected = (
        '{"mergeable_vocab_size":258,'
        '"merges":[[97,98],[32,256]],'
        f'"pretokenizer_pattern":{pattern},'
        '"schema_version":1,'
        '"special_tokens":{"<|endoftext|>":258},'
        f'"vocab":{{{entries}}}}}'
    ).encode("ascii")

    assert b'"vocab":{"0":[0],"1":[1],"10":[10],"100":[100],"101":[101]' in expected
    assert dumps_artifact(vocab, merges, special) == expected
    assert not expected.endswith(b"\n")


def test_worked_example_round_trips_through_save_and_load(tmp_path: Path) -> None:
    vocab, merges, special = trained_state("ab ab ab", 258)
    path = tmp_path / "tok.json"
    save(str(path), vocab, merges, special)
    loaded_vocab, loaded_merges, loaded_special = load(str(path)).state
    assert loaded_merges == [(97, 98), (32, 256)]
    assert loaded_special == {EOT: 258}
    assert loaded_vocab == vocab
    assert loaded_vocab[258] == EOT.encode("utf-8")
    assert all(type(merge) is tuple for merge in loaded_merges)
    assert all(type(token) is bytes for token in loaded_vocab.values())


# --------------------------------------------------------------------------- determinism


def test_same_state_saved_twice_produces_identical_bytes(tmp_path: Path) -> None:
    """Catches a serializer that depends on dict order (a missing sort_keys)."""
    vocab, merges, special = trained_state(GATE_CORPUS, 300)
    first, second, shuffled = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    save(first, vocab, merges, special)
    save(second, vocab, merges, special)
    items = list(vocab.items())
    random.Random(1).shuffle(items)
    save(shuffled, dict(reversed(items)), tuple(merges), dict(special))
    assert first.read_bytes() == second.read_bytes() == shuffled.read_bytes()


def test_repeated_training_then_saving_produces_identical_artifacts(tmp_path: Path) -> None:
    """Training twice and saving gives identical bytes: the whole pipeline is deterministic."""
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    save(first, *trained_state(GATE_CORPUS, 300))
    save(second, *trained_state(GATE_CORPUS, 300))
    assert first.read_bytes() == second.read_bytes()


def test_repeated_training_with_the_real_pipeline_gives_identical_artifacts(
    tmp_path: Path,
) -> None:
    """Gate 2 through Tokenizer.train and save, which must also match the naive trainer."""
    first, second, naive = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    Tokenizer.train(GATE_CORPUS, 300).save(str(first))
    Tokenizer.train(GATE_CORPUS, 300).save(str(second))
    save(naive, *trained_state(GATE_CORPUS, 300))
    assert first.read_bytes() == second.read_bytes() == naive.read_bytes()


def test_load_then_save_gives_back_the_input_bytes(tmp_path: Path) -> None:
    original, copy = tmp_path / "a.json", tmp_path / "b.json"
    save(original, *trained_state(GATE_CORPUS, 300))
    save(copy, *load(original).state)
    assert copy.read_bytes() == original.read_bytes()


def _random_state(rng: random.Random, merge_count: int) -> State:
    merges = [(rng.randrange(256 + rank), rng.randrange(256 + rank)) for rank in range(merge_count)]
    return reference.vocab(merges), merges, {EOT: 256 + merge_count}


@given(seed=st.integers(0, 2**32), merge_count=st.integers(0, 40))
def test_any_valid_state_round_trips_exactly(seed: int, merge_count: int) -> None:
    vocab, merges, special = _random_state(random.Random(seed), merge_count)
    data = dumps_artifact(vocab, merges, special)
    assert parse_artifact(data).state == (vocab, merges, special)
    assert dumps_artifact(*parse_artifact(data).state) == data
