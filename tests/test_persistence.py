"""Artifact schema v1: exact bytes, the loader checklist step by step, and atomic save.

Each checklist test feeds an artifact that is valid except for one defect and asserts
the exact exception type and a message fragment that only that step produces, so
deleting any single check makes at least one test fail.
"""

import errno
import gc
import json
import os
import random
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpetite import ArtifactError, MissingKeyError
from bpetite._constants import END_OF_TEXT_TOKEN, PRETOKENIZER_PATTERN
from bpetite._patterns import PRESETS
from bpetite._persistence import Artifact, dumps_artifact, load, parse_artifact, save
from bpetite._tokenizer import Tokenizer
from tests.reference import naive_train, naive_vocab

EOT = END_OF_TEXT_TOKEN
EOT_BYTES = list(EOT.encode("utf-8"))
SOURCE = "art.json"

State = tuple[dict[int, bytes], list[tuple[int, int]], dict[str, int]]


# --------------------------------------------------------------------------- helpers


def _trained_state(corpus: str, vocab_size: int) -> State:
    merges = naive_train(corpus, vocab_size)
    return naive_vocab(merges), merges, {EOT: 256 + len(merges)}


def _canonical(document: object) -> bytes:
    """An independent serializer for hand-built documents: the spec's json.dumps call."""
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _valid_document() -> dict[str, Any]:
    """The worked example "ab ab ab" at 258 as a fresh, mutable JSON document.

    merges == [[97, 98], [32, 256]]: the second merge uses a merged id, so
    merge-on-merge checks have something to bite on.
    """
    document: dict[str, Any] = json.loads(dumps_artifact(*_trained_state("ab ab ab", 258)))
    return document


#: The spec's builtin for each defect, and the family class the loader raises for it.
_FAMILY: dict[type[Exception], type[Exception]] = {
    ValueError: ArtifactError,
    KeyError: MissingKeyError,
}


def _assert_rejected(data: bytes, exc_type: type[Exception], fragment: str) -> None:
    """The family class for the spec's `exc_type` exactly (not a UnicodeDecodeError)."""
    with pytest.raises(exc_type) as excinfo:
        parse_artifact(data, source=SOURCE)
    assert type(excinfo.value) is _FAMILY[exc_type]
    message = str(excinfo.value)
    assert fragment in message
    assert SOURCE in message


def _dir_listing(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


# --------------------------------------------------------------------------- exact bytes


def test_worked_example_ab_ab_ab_has_the_documented_bytes() -> None:
    """Built by hand from the spec's layout, not with json.dumps, so a serializer bug
    (wrong key order, spaces, numeric vocab order, trailing newline) cannot hide."""
    vocab, merges, special = _trained_state("ab ab ab", 258)
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
    vocab, merges, special = _trained_state("ab ab ab", 258)
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

_GATE_CORPUS = "the cat sat on the mat; the bat ate the rat.\nThe end, the end!  " * 5


def test_same_state_saved_twice_produces_identical_bytes(tmp_path: Path) -> None:
    """Catches a serializer that depends on dict order (a missing sort_keys)."""
    vocab, merges, special = _trained_state(_GATE_CORPUS, 300)
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
    save(first, *_trained_state(_GATE_CORPUS, 300))
    save(second, *_trained_state(_GATE_CORPUS, 300))
    assert first.read_bytes() == second.read_bytes()


def test_repeated_training_with_the_real_pipeline_gives_identical_artifacts(
    tmp_path: Path,
) -> None:
    """Gate 2 through Tokenizer.train and save, which must also match the naive trainer."""
    first, second, reference = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    Tokenizer.train(_GATE_CORPUS, 300).save(str(first))
    Tokenizer.train(_GATE_CORPUS, 300).save(str(second))
    save(reference, *_trained_state(_GATE_CORPUS, 300))
    assert first.read_bytes() == second.read_bytes() == reference.read_bytes()


def test_load_then_save_gives_back_the_input_bytes(tmp_path: Path) -> None:
    original, copy = tmp_path / "a.json", tmp_path / "b.json"
    save(original, *_trained_state(_GATE_CORPUS, 300))
    save(copy, *load(original).state)
    assert copy.read_bytes() == original.read_bytes()


def _random_state(rng: random.Random, merge_count: int) -> State:
    merges = [(rng.randrange(256 + rank), rng.randrange(256 + rank)) for rank in range(merge_count)]
    return naive_vocab(merges), merges, {EOT: 256 + merge_count}


@given(seed=st.integers(0, 2**32), merge_count=st.integers(0, 40))
def test_any_valid_state_round_trips_exactly(seed: int, merge_count: int) -> None:
    vocab, merges, special = _random_state(random.Random(seed), merge_count)
    data = dumps_artifact(vocab, merges, special)
    assert parse_artifact(data).state == (vocab, merges, special)
    assert dumps_artifact(*parse_artifact(data).state) == data


# --------------------------------------------------------------------------- checklist


def _with_document(mutate: Callable[[dict[str, Any]], None]) -> bytes:
    document = _valid_document()
    mutate(document)
    return _canonical(document)


def _raw(transform: Callable[[bytes], bytes]) -> bytes:
    return transform(_canonical(_valid_document()))


def test_step_1_rejects_invalid_utf8_as_value_error() -> None:
    """Wrapped: UnicodeDecodeError is a ValueError subclass, but the contract says ValueError."""
    valid = _canonical(_valid_document())
    anchor = b'"pretokenizer_pattern":"'
    for bad in (b"\xff", b"\xc3", b"\xed\xa0\x80"):  # stray byte, cut sequence, surrogate
        _assert_rejected(valid.replace(anchor, anchor + bad), ValueError, "not valid UTF-8")


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"", id="empty"),
        pytest.param(_raw(lambda d: d[:-1]), id="truncated"),
        pytest.param(_raw(lambda d: d + b"x"), id="trailing-garbage"),
        pytest.param(_raw(lambda d: d.replace(b"[97,98]", b"[97,98,]")), id="trailing-comma"),
        pytest.param(b"{'schema_version': 1}", id="python-literal"),
    ],
)
def test_load_rejects_malformed_json(data: bytes) -> None:
    _assert_rejected(data, ValueError, "not valid JSON")


@pytest.mark.parametrize(
    ("anchor", "duplicate", "key"),
    [
        (b"{", b'"schema_version":1,', "schema_version"),
        (b"{", b'"schema_version":2,', "schema_version"),
        (b'"vocab":{', b'"0":[0],', "0"),
        (b'"vocab":{', b'"256":[98,97],', "256"),
        (b'"special_tokens":{', b'"<|endoftext|>":258,', "<|endoftext|>"),
    ],
)
def test_load_rejects_duplicate_json_object_keys(anchor: bytes, duplicate: bytes, key: str) -> None:
    """json.loads would keep the last value; these would otherwise load silently."""
    data = _raw(lambda d: d.replace(anchor, anchor + duplicate, 1))
    _assert_rejected(data, ValueError, f"duplicate object key {json.dumps(key)}")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_load_rejects_non_standard_json_constants(constant: str) -> None:
    data = _raw(lambda d: d.replace(b'"schema_version":1', f'"schema_version":{constant}'.encode()))
    _assert_rejected(data, ValueError, f"non-standard JSON constant {constant}")
    data = _raw(lambda d: d.replace(b"[97,98]", f"[97,{constant}]".encode()))
    _assert_rejected(data, ValueError, f"non-standard JSON constant {constant}")


def test_load_rejects_absurdly_nested_json_as_value_error() -> None:
    """json raises RecursionError here; the contract promises ValueError."""
    nested = b"[" * 100_000 + b"]" * 100_000
    data = _raw(lambda d: d.replace(b'"merges":[[97,98],', b'"merges":[' + nested + b","))
    _assert_rejected(data, ValueError, "nested too deeply")


def test_load_rejects_integers_past_the_digit_limit() -> None:
    data = _raw(lambda d: d.replace(b'"schema_version":1', b'"schema_version":' + b"1" * 5000))
    _assert_rejected(data, ValueError, "not valid JSON")


@pytest.mark.parametrize(
    "data",
    [b"[]", b"[1,2]", b'"artifact"', b"1", b"null", b"true"],
)
def test_step_3_rejects_a_top_level_value_that_is_not_an_object(data: bytes) -> None:
    _assert_rejected(data, ValueError, "top-level JSON value must be an object")


def test_step_4_requires_schema_version_before_anything_else() -> None:
    data = _with_document(lambda doc: doc.pop("schema_version"))
    _assert_rejected(data, KeyError, "missing required key 'schema_version'")
    _assert_rejected(b"{}", KeyError, "missing required key 'schema_version'")


@pytest.mark.parametrize("version", [True, 1.0, "1", None, [1]])
def test_step_5_rejects_a_schema_version_that_is_not_an_integer(version: object) -> None:
    """True == 1 and 1.0 == 1 in Python, so without this step both would pass step 6."""
    data = _with_document(lambda doc: doc.update(schema_version=version))
    _assert_rejected(data, ValueError, f"schema_version must be an integer, got {version!r}")


@pytest.mark.parametrize("version", [0, 3, -1, 10**30])
def test_load_rejects_wrong_schema_version(version: int) -> None:
    data = _with_document(lambda doc: doc.update(schema_version=version))
    _assert_rejected(data, ValueError, f"schema_version {version} is not supported")


def test_schema_version_is_judged_before_the_other_keys() -> None:
    """A future schema may have other keys; its version is the error the user needs."""
    _assert_rejected(b'{"schema_version":3}', ValueError, "schema_version 3 is not supported")


@pytest.mark.parametrize(
    "key", ["mergeable_vocab_size", "merges", "pretokenizer_pattern", "special_tokens", "vocab"]
)
def test_load_rejects_missing_required_key(key: str) -> None:
    data = _with_document(lambda doc: doc.pop(key))
    _assert_rejected(data, KeyError, f"missing required key(s) {key}")


@pytest.mark.parametrize("extra", ["comment", "vocab_size", "Vocab", ""])
def test_step_8_rejects_extra_top_level_keys(extra: str) -> None:
    data = _with_document(lambda doc: doc.update({extra: 0}))
    _assert_rejected(data, ValueError, f"unexpected top-level key(s) {json.dumps(extra)}")


@pytest.mark.parametrize("pattern", [5, None, [PRETOKENIZER_PATTERN], {}])
def test_step_9_rejects_a_pattern_that_is_not_a_string(pattern: object) -> None:
    data = _with_document(lambda doc: doc.update(pretokenizer_pattern=pattern))
    _assert_rejected(data, ValueError, "pretokenizer_pattern must be a string")


@pytest.mark.parametrize(
    "pattern",
    [
        PRETOKENIZER_PATTERN + "|x",
        PRETOKENIZER_PATTERN[:-1],
        "",
        r"\w+|\s+",
        PRETOKENIZER_PATTERN.upper(),
    ],
)
def test_load_rejects_pretokenizer_pattern_mismatch(pattern: str) -> None:
    data = _with_document(lambda doc: doc.update(pretokenizer_pattern=pattern))
    _assert_rejected(data, ValueError, "does not match this bpetite's pre-tokenizer")


@pytest.mark.parametrize(
    ("merges", "fragment"),
    [
        ({"0": [97, 98]}, "merges must be a list"),
        ("[[97,98]]", "merges must be a list"),
        ([[97, 98], [32]], "merges[1] must be a list of two token ids"),
        ([[97, 98], [32, 256, 1]], "merges[1] must be a list of two token ids"),
        ([[97, 98], []], "merges[1] must be a list of two token ids"),
        ([[97, 98], "32,256"], "merges[1] must be a list of two token ids"),
        ([[97, 98], {"0": 32, "1": 256}], "merges[1] must be a list of two token ids"),
        ([["97", 98], [32, 256]], "merges[0][0] must be an integer, got '97'"),
        ([[97, 98.0], [32, 256]], "merges[0][1] must be an integer, got 98.0"),
        ([[97, 98], [True, 256]], "merges[1][0] must be an integer, got True"),
        ([[97, 98], [32, None]], "merges[1][1] must be an integer, got None"),
        ([[97, 98], [32, [256]]], "merges[1][1] must be an integer, got [256]"),
        ([[97, 98], [-1, 256]], "merges[1][0] must be non-negative, got -1"),
    ],
)
def test_load_rejects_malformed_merges(merges: object, fragment: str) -> None:
    """98.0 and True would look up vocab[98] and vocab[1] and load fine without this step."""
    data = _with_document(lambda doc: doc.update(merges=merges))
    _assert_rejected(data, ValueError, fragment)


@pytest.mark.parametrize("size", [258.0, True, "258", None])
def test_step_12_rejects_a_mergeable_vocab_size_that_is_not_an_integer(size: object) -> None:
    data = _with_document(lambda doc: doc.update(mergeable_vocab_size=size))
    _assert_rejected(data, ValueError, f"mergeable_vocab_size must be an integer, got {size!r}")


@pytest.mark.parametrize("size", [257, 259, 256, 0, -258, 10**40])
def test_load_rejects_mergeable_vocab_size_mismatch(size: int) -> None:
    data = _with_document(lambda doc: doc.update(mergeable_vocab_size=size))
    _assert_rejected(data, ValueError, f"mergeable_vocab_size is {size}, but 2 merges + 256")


def _rename_vocab_key(old: str, new: str) -> Callable[[dict[str, Any]], None]:
    def mutate(doc: dict[str, Any]) -> None:
        doc["vocab"][new] = doc["vocab"].pop(old)

    return mutate


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("1", "01"),
        ("1", "+1"),
        ("1", " 1"),
        ("1", "1 "),
        ("1", "\t1"),
        ("1", "-1"),
        ("0", "-0"),
        ("0", "00"),
        ("1", ""),
        ("1", "\u0661"),  # ARABIC-INDIC DIGIT ONE: int() and str.isdigit accept it
        ("1", "\uff11"),  # FULLWIDTH DIGIT ONE
        ("1", "\u00b9"),  # SUPERSCRIPT ONE: str.isdigit accepts it
        ("1", "1.0"),
        ("1", "1e0"),
        ("1", "0x1"),
        ("10", "1_0"),  # int() accepts underscores
        ("1", "one"),
    ],
)
def test_step_14_rejects_non_canonical_vocab_keys(old: str, new: str) -> None:
    """Most of these spell a real id to int(); without this step they would load."""
    data = _with_document(_rename_vocab_key(old, new))
    _assert_rejected(data, ValueError, f"vocab key {json.dumps(new)} is not a canonical decimal")


def test_step_14_rejects_an_absurdly_long_vocab_key() -> None:
    data = _with_document(lambda doc: doc["vocab"].update({"9" * 5000: [1]}))
    _assert_rejected(data, ValueError, "is too long to be a token id")


def test_step_14_rejects_a_vocab_that_is_not_an_object() -> None:
    for vocab in ([[0]], "0", None):
        document = _valid_document()
        document["vocab"] = vocab
        _assert_rejected(_canonical(document), ValueError, "vocab must be an object")


@pytest.mark.parametrize(
    ("key", "value", "fragment"),
    [
        ("97", "a", "vocab[\"97\"] must be a list of byte values, got 'a'"),
        ("97", 97, 'vocab["97"] must be a list of byte values, got 97'),
        ("97", {"0": 97}, 'vocab["97"] must be a list of byte values'),
        ("97", [256], 'vocab["97"][0] must be an integer in 0..255, got 256'),
        ("97", [-1], 'vocab["97"][0] must be an integer in 0..255, got -1'),
        ("257", [32, 97, 1000], 'vocab["257"][2] must be an integer in 0..255, got 1000'),
        ("1", [True], 'vocab["1"][0] must be an integer in 0..255, got True'),
        ("1", [1.0], 'vocab["1"][0] must be an integer in 0..255, got 1.0'),
        ("1", ["1"], "vocab[\"1\"][0] must be an integer in 0..255, got '1'"),
        ("1", [None], 'vocab["1"][0] must be an integer in 0..255, got None'),
        ("1", [[1]], 'vocab["1"][0] must be an integer in 0..255, got [1]'),
    ],
)
def test_load_rejects_invalid_byte_values_in_vocab(key: str, value: object, fragment: str) -> None:
    """[True] and [1.0] are the byte 1 to bytes()/==, so they would load without this step."""
    data = _with_document(lambda doc: doc["vocab"].update({key: value}))
    _assert_rejected(data, ValueError, fragment)


@pytest.mark.parametrize("missing", ["0", "100", "255", "256", "257"])
def test_step_15_rejects_a_vocab_with_a_gap(missing: str) -> None:
    data = _with_document(lambda doc: doc["vocab"].pop(missing))
    _assert_rejected(data, ValueError, f'vocab has no entry "{missing}"')


@pytest.mark.parametrize(
    ("key", "value"),
    [("65", [66]), ("0", []), ("200", [200, 200]), ("255", [0]), ("32", [32, 32])],
)
def test_step_16_requires_base_tokens_to_be_their_own_byte(key: str, value: list[int]) -> None:
    data = _with_document(lambda doc: doc["vocab"].update({key: value}))
    _assert_rejected(data, ValueError, f'vocab["{key}"] must be [{key}]')


@pytest.mark.parametrize(
    ("key", "value", "rank"),
    [("256", [98, 97], 0), ("256", [], 0), ("257", [32, 97], 1), ("257", [97, 98, 32], 1)],
)
def test_step_17_requires_merged_tokens_to_spell_their_merge(
    key: str, value: list[int], rank: int
) -> None:
    data = _with_document(lambda doc: doc["vocab"].update({key: value}))
    _assert_rejected(data, ValueError, f'vocab["{key}"] must be the bytes of merges[{rank}]')


def test_step_17_rejects_a_consistent_forward_reference() -> None:
    """Everything but the order is right here: merge 0 uses token 257, made by merge 1.

    The bytes all agree, so only the "strictly below its own id" rule can catch it.
    """

    def mutate(doc: dict[str, Any]) -> None:
        doc["merges"] = [[97, 257], [32, 98]]
        doc["vocab"]["256"] = list(b"a b")
        doc["vocab"]["257"] = list(b" b")

    _assert_rejected(
        _with_document(mutate), ValueError, "merges[0][1] is 257, but merge 0 creates id 256"
    )


@pytest.mark.parametrize(
    ("merges", "fragment"),
    [
        ([[256, 97], [32, 256]], "merges[0][0] is 256, but merge 0 creates id 256"),
        ([[97, 98], [32, 257]], "merges[1][1] is 257, but merge 1 creates id 257"),
        ([[97, 98], [258, 256]], "merges[1][0] is 258, but merge 1 creates id 257"),
        ([[97, 98], [32, 10**30]], f"merges[1][1] is {10**30}, but merge 1"),
    ],
)
def test_step_17_rejects_merges_that_use_their_own_or_later_ids(
    merges: list[list[int]], fragment: str
) -> None:
    data = _with_document(lambda doc: doc.update(merges=merges))
    _assert_rejected(data, ValueError, fragment)


@pytest.mark.parametrize("special_tokens", [[258], "<|endoftext|>", None, 258])
def test_step_18_rejects_special_tokens_that_are_not_an_object(special_tokens: object) -> None:
    data = _with_document(lambda doc: doc.update(special_tokens=special_tokens))
    _assert_rejected(data, ValueError, "special_tokens must be an object")


@pytest.mark.parametrize(
    "special_tokens",
    [
        {},
        {"<|eot|>": 258},
        {"<|endoftext|> ": 258},
        {EOT: 258, "<|injected|>": 259},
        {"<|injected|>": 258, EOT: 258},
    ],
)
def test_load_rejects_special_token_with_wrong_key(special_tokens: dict[str, int]) -> None:
    """Set equality, not presence: an extra injected token is as wrong as a missing one."""
    data = _with_document(lambda doc: doc.update(special_tokens=special_tokens))
    _assert_rejected(data, ValueError, 'special_tokens must have exactly the key "<|endoftext|>"')


@pytest.mark.parametrize(
    ("special_id", "fragment"),
    [
        (258.0, "must be an integer, got 258.0"),
        (True, "must be an integer, got True"),
        ("258", "must be an integer, got '258'"),
        (257, "is 257, but must equal mergeable_vocab_size 258"),
        (259, "is 259, but must equal mergeable_vocab_size 258"),
        (0, "is 0, but must equal mergeable_vocab_size 258"),
    ],
)
def test_load_rejects_special_token_with_wrong_id(special_id: object, fragment: str) -> None:
    data = _with_document(lambda doc: doc.update(special_tokens={EOT: special_id}))
    _assert_rejected(data, ValueError, f'special_tokens["<|endoftext|>"] {fragment}')


@pytest.mark.parametrize(
    "value", [EOT_BYTES[:-1], [*EOT_BYTES, 0], list(b"<|ENDOFTEXT|>"), [], list(b"<|endoftext|>\n")]
)
def test_load_rejects_special_token_with_wrong_bytes(value: list[int]) -> None:
    data = _with_document(lambda doc: doc["vocab"].update({"258": value}))
    _assert_rejected(data, ValueError, 'vocab["258"] must be the UTF-8 bytes of <|endoftext|>')


def test_step_18_rejects_a_vocab_without_the_special_token_entry() -> None:
    data = _with_document(lambda doc: doc["vocab"].pop("258"))
    _assert_rejected(data, ValueError, 'vocab has no entry "258" for the special token')


@pytest.mark.parametrize("extra", ["259", "300", "1000000", "9" * 200])
def test_step_19_rejects_vocab_ids_past_the_special_token(extra: str) -> None:
    data = _with_document(lambda doc: doc["vocab"].update({extra: [1]}))
    _assert_rejected(data, ValueError, f'vocab["{extra}"] is outside the vocabulary')


def test_the_first_failing_step_is_the_one_reported() -> None:
    """Defects at steps 8, 10, 17 and 19 together: each fix reveals the next one."""
    defects: list[tuple[Callable[[dict[str, Any]], None], str]] = [
        (lambda doc: doc.update(extra=1), "unexpected top-level key(s)"),
        (lambda doc: doc.update(pretokenizer_pattern="x"), "does not match"),
        (lambda doc: doc["merges"].__setitem__(0, [97, 257]), "merges[0][1] is 257"),
        (lambda doc: doc["vocab"].update({"300": [1]}), 'vocab["300"] is outside'),
    ]
    for first in range(len(defects)):
        document = _valid_document()
        for mutate, _ in defects[first:]:
            mutate(document)
        _assert_rejected(_canonical(document), ValueError, defects[first][1])


def test_load_names_the_file_in_its_errors(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_bytes(_with_document(lambda doc: doc.update(schema_version=3)))
    with pytest.raises(ValueError, match="schema_version 3") as excinfo:
        load(path)
    assert str(path) in str(excinfo.value)


def test_load_lets_os_errors_through(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.json")
    with pytest.raises(IsADirectoryError):
        load(tmp_path)


def test_parsing_restores_the_garbage_collector_state() -> None:
    """The parser pauses gc for speed; it must neither leak the pause nor undo the caller's."""
    assert gc.isenabled()
    _assert_rejected(b"[]", ValueError, "must be an object")
    assert gc.isenabled()
    gc.disable()
    try:
        parse_artifact(_canonical(_valid_document()))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_32000_token_artifact_roundtrips(tmp_path: Path) -> None:
    """A full-size artifact with deep, word-sized tokens loads back to the same state.

    Load speed is measured in benchmarks/, never asserted here."""
    rng = random.Random(0)
    merges: list[tuple[int, int]] = []
    lengths = [1] * 256
    for rank in range(32000 - 256):
        left, right = rng.randrange(256 + rank), rng.randrange(256 + rank)
        while lengths[left] + lengths[right] > 16:  # keep tokens word-sized
            left, right = rng.randrange(256 + rank), rng.randrange(256)
        merges.append((left, right))
        lengths.append(lengths[left] + lengths[right])
    state = naive_vocab(merges), merges, {EOT: 32000}
    path = tmp_path / "big.json"
    save(path, *state)
    assert load(path).state == state


# --------------------------------------------------------------------------- mutation fuzz

_JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 300),
    st.integers(min_value=2**63, max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
    st.sampled_from(["1", "97", "256", EOT, PRETOKENIZER_PATTERN]),
)
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=2)
    ),
    max_leaves=5,
)

JsonPath = tuple[str | int, ...]
# A mutated artifact, and whether it must load (True), must fail (False), or either (None).
Mutant = tuple[bytes, bool | None]


def _paths(node: object, prefix: JsonPath = ()) -> list[JsonPath]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


def _container(document: Any, path: JsonPath) -> Any:
    for step in path[:-1]:
        document = document[step]
    return document


def _draw_path(draw: st.DrawFn, document: dict[str, Any]) -> JsonPath:
    """A region first, so the small top-level fields are hit as often as the big vocab."""
    region = draw(st.sampled_from(sorted(document)))
    return draw(st.sampled_from(_paths(document[region], (region,))))


def _replace_value(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    path = _draw_path(draw, document)
    _container(document, path)[path[-1]] = draw(_JSON_VALUES)
    return _canonical(document), None


def _perturb_int(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    paths = [
        path for path in _paths(document)[1:] if type(_container(document, path)[path[-1]]) is int
    ]
    path = draw(st.sampled_from(paths))
    _container(document, path)[path[-1]] += draw(st.integers(-300, 300))
    return _canonical(document), None


def _drop_entry(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    path = _draw_path(draw, document)
    del _container(document, path)[path[-1]]
    return _canonical(document), None


def _add_entry(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    target = draw(st.sampled_from([document, document["vocab"], document["special_tokens"]]))
    key = draw(
        st.text(max_size=5) | st.integers(0, 400).map(str) | st.sampled_from(sorted(document))
    )
    target[key] = draw(_JSON_VALUES | st.lists(st.integers(0, 255), max_size=3))
    return _canonical(document), None


def _swap_merges(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    merges = document["merges"]
    if merges:
        i = draw(st.integers(0, len(merges) - 1))
        j = draw(st.integers(0, len(merges) - 1))
        merges[i], merges[j] = merges[j], merges[i]
    return _canonical(document), None


def _respell_vocab_key(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    vocab = document["vocab"]
    key = draw(st.sampled_from(sorted(vocab)))
    arabic = key.translate(
        str.maketrans("0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669")
    )
    new = draw(
        st.sampled_from(
            ["0" + key, "+" + key, "-" + key, " " + key, key + " ", arabic, key + ".0", ""]
        )
    )
    vocab[new] = vocab.pop(key)
    return _canonical(document), False


def _consistent_edit(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    """A different but valid state: must load and re-serialize to the same bytes."""
    merges = [tuple(merge) for merge in document["merges"]]
    if merges:
        rank = draw(st.integers(0, len(merges) - 1))
        ids = st.integers(0, 255 + rank)
        merges[rank] = (draw(ids), draw(ids))
    vocab = {i: token for i, token in naive_vocab(merges).items() if i < 256 + len(merges)}
    for text, token_id in document["special_tokens"].items():
        vocab[token_id] = text.encode("utf-8")
    document["merges"] = [list(merge) for merge in merges]
    document["vocab"] = {str(token_id): list(token) for token_id, token in vocab.items()}
    return _canonical(document), True


def _switch_pattern(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    """Another preset's name or regex, or a schema change: consistent only by accident."""
    name = draw(st.sampled_from([*PRESETS, "custom"]))
    if draw(st.booleans()):
        document["pattern_name"] = name
    else:
        document["pretokenizer_pattern"] = PRESETS.get(name, "[a-z]+|[^a-z]")
    if draw(st.booleans()):
        document["schema_version"] = 3 - document["schema_version"]
    return _canonical(document), None


def _duplicate_key(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    anchor = draw(st.sampled_from(["{", '"vocab":{', '"special_tokens":{']))
    target = {
        "{": document,
        '"vocab":{': document["vocab"],
        '"special_tokens":{': document["special_tokens"],
    }[anchor]
    if not target:
        return _canonical(document), None
    key = draw(st.sampled_from(sorted(target)))
    value = draw(st.just(target[key]) | _JSON_VALUES)
    text = _canonical(document).decode("utf-8")
    duplicated = text.replace(anchor, anchor + json.dumps(key) + ":" + json.dumps(value) + ",", 1)
    return duplicated.encode("utf-8"), False


def _truncate(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    data = _canonical(document)
    return data[: draw(st.integers(0, len(data) - 1))], False


def _corrupt_encoding(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    data = _canonical(document)
    at = draw(st.integers(0, len(data)))
    bad = draw(
        st.sampled_from([b"\xff", b"\x80", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"])
    )
    return data[:at] + bad + data[at:], False


def _plant_constant(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    path = _draw_path(draw, document)
    _container(document, path)[path[-1]] = draw(
        st.sampled_from([float("nan"), float("inf"), -float("inf")])
    )
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode("utf-8"), False


def _unchanged(draw: st.DrawFn, document: dict[str, Any]) -> Mutant:
    return _canonical(document), True


_MUTATIONS = [
    _replace_value,
    _perturb_int,
    _drop_entry,
    _add_entry,
    _swap_merges,
    _respell_vocab_key,
    _consistent_edit,
    _switch_pattern,
    _duplicate_key,
    _truncate,
    _corrupt_encoding,
    _plant_constant,
    _unchanged,
]


#: Special tokens for the fuzzed artifacts: the spec's, none, several, and ids with gaps.
_SPECIALS: list[Callable[[int], dict[str, int]]] = [
    lambda size: {EOT: size},
    lambda size: {},
    lambda size: {EOT: size, "<|user|>": size + 1, "<|u|>": size + 2},
    lambda size: {"<|a|>": size + 3, EOT: size + 1},
]


@st.composite
def _valid_artifacts(draw: st.DrawFn) -> dict[str, Any]:
    """Schema v1 (GPT-2's pattern, only <|endoftext|>) or v2 (any other configuration)."""
    corpus = draw(st.text(alphabet="ab c\n\u00e9", max_size=40))
    _, merges, _ = _trained_state(corpus, draw(st.integers(256, 266)))
    size = 256 + len(merges)
    specials = draw(st.sampled_from(_SPECIALS))(size)
    vocab = {i: token for i, token in naive_vocab(merges).items() if i < size}
    vocab.update((token_id, text.encode()) for text, token_id in specials.items())
    training = draw(st.sampled_from([None, {"min_frequency": 2}]))
    data = dumps_artifact(
        vocab, merges, specials, pattern=draw(st.sampled_from(list(PRESETS))), training=training
    )
    document: dict[str, Any] = json.loads(data)
    return document


@st.composite
def _mutants(draw: st.DrawFn) -> Mutant:
    document = draw(_valid_artifacts())
    mutate: Callable[[st.DrawFn, dict[str, Any]], Mutant] = draw(st.sampled_from(_MUTATIONS))
    return mutate(draw, document)


def _parse_or_none(data: bytes) -> Artifact | None:
    """None for a rejected artifact; any exception other than the documented two escapes."""
    try:
        return parse_artifact(data)
    except (ValueError, KeyError):
        return None


def _dumps(artifact: Artifact) -> bytes:
    return dumps_artifact(
        *artifact.state, pattern=artifact.pattern, training=artifact.training or None
    )


@given(_mutants())
def test_mutated_artifacts_are_rejected_or_reproduced_exactly(mutant: Mutant) -> None:
    """Whatever loads must be exactly what was written: nothing is dropped, coerced or
    defaulted on the way in."""
    data, must_load = mutant
    artifact = _parse_or_none(data)
    if must_load is not None:
        assert (artifact is not None) == must_load
    if artifact is not None:
        assert all(type(merge) is tuple and len(merge) == 2 for merge in artifact.merges)
        assert all(type(token_id) is int for token_id in artifact.vocab)
        assert _dumps(artifact) == data


@given(
    _valid_artifacts(),
    st.lists(
        st.tuples(st.integers(0, 10**6), st.integers(0, 255), st.sampled_from("rid")), max_size=3
    ),
)
def test_byte_noise_is_rejected_or_reproduces_the_canonical_form(
    document: dict[str, Any], edits: list[tuple[int, int, str]]
) -> None:
    """Raw byte flips can make valid JSON with extra whitespace; then the state loaded is
    the one the JSON spells, and saving it gives that JSON's canonical bytes."""
    data = bytearray(_canonical(document))
    for position, byte, kind in edits:
        at = position % (len(data) + 1)
        if kind == "r" and at < len(data):
            data[at] = byte
        elif kind == "i":
            data[at:at] = bytes([byte])
        elif at < len(data):
            del data[at]
    artifact = _parse_or_none(bytes(data))
    if artifact is not None:
        assert _dumps(artifact) == _canonical(json.loads(bytes(data)))


# --------------------------------------------------------------------------- save


@pytest.fixture
def state() -> State:
    return _trained_state("ab ab ab", 258)


@pytest.fixture
def umask() -> Iterator[Callable[[int], int]]:
    """Set the process umask for one test and always put the old one back."""
    original = os.umask(0o022)
    os.umask(original)
    yield os.umask
    os.umask(original)


def test_save_refuses_to_overwrite_existing_file_by_default(
    tmp_path: Path, state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused up front, before any temp file is written."""
    path = tmp_path / "tok.json"
    path.write_bytes(b"precious")
    monkeypatch.setattr(tempfile, "mkstemp", lambda *a, **k: pytest.fail("wrote a temp file"))
    with pytest.raises(FileExistsError, match="overwrite=True"):
        save(path, *state)
    assert path.read_bytes() == b"precious"
    assert _dir_listing(tmp_path) == ["tok.json"]


def test_save_refuses_a_dangling_symlink_without_overwrite(tmp_path: Path, state: State) -> None:
    path = tmp_path / "tok.json"
    path.symlink_to(tmp_path / "nowhere.json")
    with pytest.raises(FileExistsError):
        save(path, *state)
    assert not (tmp_path / "nowhere.json").exists()


def test_save_overwrites_when_asked(tmp_path: Path, state: State) -> None:
    path = tmp_path / "tok.json"
    path.write_bytes(b"old")
    save(path, *state, overwrite=True)
    assert path.read_bytes() == dumps_artifact(*state)
    assert _dir_listing(tmp_path) == ["tok.json"]


def test_save_accepts_str_paths_and_relative_names(
    tmp_path: Path, state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    save("tok.json", *state)
    assert load("tok.json").state == state


def test_save_raises_file_not_found_when_parent_directory_missing(
    tmp_path: Path, state: State
) -> None:
    path = tmp_path / "missing" / "tok.json"
    with pytest.raises(FileNotFoundError, match="does not exist"):
        save(path, *state)
    assert _dir_listing(tmp_path) == []


def test_save_rejects_a_parent_that_is_a_file(tmp_path: Path, state: State) -> None:
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        save(tmp_path / "file" / "tok.json", *state)


def test_save_rejects_a_destination_that_is_a_directory(tmp_path: Path, state: State) -> None:
    (tmp_path / "tok.json").mkdir()
    for overwrite in (False, True):
        with pytest.raises(IsADirectoryError, match="it is a directory"):
            save(tmp_path / "tok.json", *state, overwrite=overwrite)
    assert _dir_listing(tmp_path) == ["tok.json"]


def test_save_refuses_an_invalid_state_and_writes_nothing(tmp_path: Path, state: State) -> None:
    """dumps_artifact validates its own output, so no file load() would reject is written."""
    vocab, merges, special = state
    broken_vocab = dict(vocab)
    del broken_vocab[258]
    with pytest.raises(ValueError, match='no entry "258" for the special token'):
        save(tmp_path / "tok.json", broken_vocab, merges, special)
    with pytest.raises(ValueError, match=r'vocab\["256"\] must be the bytes of merges\[0\]'):
        save(tmp_path / "tok.json", vocab | {256: b"ba"}, merges, special)
    with pytest.raises(ValueError, match="must be an integer"):
        save(tmp_path / "tok.json", vocab, [(97, 98), (32, True)], special)
    assert _dir_listing(tmp_path) == []


@pytest.mark.skipif(os.name == "nt", reason="platform limit: POSIX permission bits")
@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002, 0o027])
@pytest.mark.parametrize("overwrite", [False, True])
def test_saved_file_gets_ordinary_permissions_not_mkstemps(
    tmp_path: Path, state: State, umask: Callable[[int], int], mask: int, overwrite: bool
) -> None:
    path = tmp_path / "tok.json"
    if overwrite:
        path.write_bytes(b"old")
    umask(mask)
    save(path, *state, overwrite=overwrite)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask


def test_save_writes_its_temp_file_beside_the_destination_and_syncs_both(
    tmp_path: Path, state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same directory, so the final rename is atomic; fsync of file and directory."""
    real_mkstemp, real_fsync = tempfile.mkstemp, os.fsync
    temp_dirs: list[str] = []
    synced: list[bool] = []

    def recording_mkstemp(*args: Any, **kwargs: Any) -> tuple[int, str]:
        fd, name = real_mkstemp(*args, **kwargs)
        temp_dirs.append(str(Path(name).parent))
        return fd, name

    def recording_fsync(fd: int) -> None:
        synced.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        real_fsync(fd)

    monkeypatch.setattr(tempfile, "mkstemp", recording_mkstemp)
    monkeypatch.setattr(os, "fsync", recording_fsync)
    save(tmp_path / "tok.json", *state)
    assert temp_dirs == [str(tmp_path)]
    if os.name != "nt":
        assert synced == [False, True]


_REAL_FDOPEN = os.fdopen  # captured before tests replace os.fdopen


class _HalfWriter:
    """A file object that writes half the data and then fails, like a full disk."""

    def __init__(self, fd: int, failure: BaseException) -> None:
        self._handle = _REAL_FDOPEN(fd, "wb")  # closed in __exit__
        self._failure = failure

    def __enter__(self) -> "_HalfWriter":
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._handle.close()

    def write(self, data: bytes) -> int:
        self._handle.write(data[: len(data) // 2])
        self._handle.flush()
        raise self._failure


def _inject(monkeypatch: pytest.MonkeyPatch, where: str, failure: BaseException) -> None:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise failure

    if where == "write":
        monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: _HalfWriter(fd, failure))
    else:
        monkeypatch.setattr(os, where, fail)


_FAILURES = [
    pytest.param(OSError(errno.ENOSPC, "No space left on device"), id="OSError"),
    pytest.param(KeyboardInterrupt(), id="KeyboardInterrupt"),
]


@pytest.mark.parametrize("failure", _FAILURES)
@pytest.mark.parametrize("where", ["write", "fsync", "replace"])
def test_a_failed_overwrite_keeps_the_previous_artifact_and_leaves_no_temp_file(
    tmp_path: Path,
    state: State,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    failure: BaseException,
) -> None:
    path = tmp_path / "tok.json"
    save(path, *_trained_state(_GATE_CORPUS, 270))
    previous = path.read_bytes()
    _inject(monkeypatch, where, failure)
    with pytest.raises(type(failure)):
        save(path, *state, overwrite=True)
    monkeypatch.undo()
    assert path.read_bytes() == previous
    assert _dir_listing(tmp_path) == ["tok.json"]


@pytest.mark.parametrize(
    ("where", "failure"),
    [
        ("write", OSError(errno.ENOSPC, "No space left on device")),
        ("write", KeyboardInterrupt()),
        ("fsync", OSError(errno.EIO, "Input/output error")),
        ("fsync", KeyboardInterrupt()),
        ("link", KeyboardInterrupt()),  # an OSError from link means "try replace" instead
    ],
)
def test_a_failed_new_save_leaves_nothing_behind(
    tmp_path: Path,
    state: State,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    failure: BaseException,
) -> None:
    (tmp_path / "other.json").write_bytes(b"unrelated")
    _inject(monkeypatch, where, failure)
    with pytest.raises(type(failure)):
        save(tmp_path / "tok.json", *state)
    monkeypatch.undo()
    assert _dir_listing(tmp_path) == ["other.json"]


def test_a_file_that_appears_during_the_save_is_not_clobbered(
    tmp_path: Path, state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The existence check runs before writing; another process may win the race."""
    path = tmp_path / "tok.json"
    real_fsync = os.fsync

    def fsync_while_someone_else_saves(fd: int) -> None:
        if not path.exists():
            path.write_bytes(b"theirs")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_while_someone_else_saves)
    with pytest.raises(FileExistsError):
        save(path, *state)
    assert path.read_bytes() == b"theirs"
    assert _dir_listing(tmp_path) == ["tok.json"]


@pytest.mark.parametrize("someone_else_wins", [False, True])
def test_save_without_hard_links_falls_back_to_replace(
    tmp_path: Path, state: State, monkeypatch: pytest.MonkeyPatch, someone_else_wins: bool
) -> None:
    """Filesystems such as FAT refuse hard links; saving must still work there."""
    path = tmp_path / "tok.json"

    def no_hard_links(source: Any, destination: Any) -> None:
        if someone_else_wins:
            path.write_bytes(b"theirs")
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_hard_links)
    if someone_else_wins:
        with pytest.raises(FileExistsError):
            save(path, *state)
        assert path.read_bytes() == b"theirs"
    else:
        save(path, *state)
        assert path.read_bytes() == dumps_artifact(*state)
    assert _dir_listing(tmp_path) == ["tok.json"]


def test_a_failed_fallback_replace_leaves_nothing_behind(
    tmp_path: Path, state: State, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", refuse)
    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(PermissionError):
        save(tmp_path / "tok.json", *state)
    monkeypatch.undo()
    assert _dir_listing(tmp_path) == []
