"""The artifact loader's checklist, step by step.

Each checklist test feeds an artifact that is valid except for one defect and asserts
the exact exception type and a message fragment that only that step produces, so
deleting any single check makes at least one test fail.
"""

import gc
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bpetite import reference
from bpetite.core._artifact import load, parse_artifact
from bpetite.core._constants import PRETOKENIZER_PATTERN
from tests.artifacts import (
    EOT,
    EOT_BYTES,
    assert_rejected,
    canonical,
    save,
    valid_document,
)

# --------------------------------------------------------------------------- checklist


def _with_document(mutate: Callable[[dict[str, Any]], None]) -> bytes:
    document = valid_document()
    mutate(document)
    return canonical(document)


def _raw(transform: Callable[[bytes], bytes]) -> bytes:
    return transform(canonical(valid_document()))


def test_step_1_rejects_invalid_utf8_as_value_error() -> None:
    """Wrapped: UnicodeDecodeError is a ValueError subclass, but the contract says ValueError."""
    valid = canonical(valid_document())
    anchor = b'"pretokenizer_pattern":"'
    for bad in (b"\xff", b"\xc3", b"\xed\xa0\x80"):  # stray byte, cut sequence, surrogate
        assert_rejected(valid.replace(anchor, anchor + bad), ValueError, "not valid UTF-8")


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
    assert_rejected(data, ValueError, "not valid JSON")


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
    assert_rejected(data, ValueError, f"duplicate object key {json.dumps(key)}")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_load_rejects_non_standard_json_constants(constant: str) -> None:
    data = _raw(lambda d: d.replace(b'"schema_version":1', f'"schema_version":{constant}'.encode()))
    assert_rejected(data, ValueError, f"non-standard JSON constant {constant}")
    data = _raw(lambda d: d.replace(b"[97,98]", f"[97,{constant}]".encode()))
    assert_rejected(data, ValueError, f"non-standard JSON constant {constant}")


def test_load_rejects_absurdly_nested_json_as_value_error() -> None:
    """json raises RecursionError here; the contract promises ValueError."""
    nested = b"[" * 100_000 + b"]" * 100_000
    data = _raw(lambda d: d.replace(b'"merges":[[97,98],', b'"merges":[' + nested + b","))
    assert_rejected(data, ValueError, "nested too deeply")


def test_load_rejects_integers_past_the_digit_limit() -> None:
    data = _raw(lambda d: d.replace(b'"schema_version":1', b'"schema_version":' + b"1" * 5000))
    assert_rejected(data, ValueError, "not valid JSON")


@pytest.mark.parametrize(
    "data",
    [b"[]", b"[1,2]", b'"artifact"', b"1", b"null", b"true"],
)
def test_step_3_rejects_a_top_level_value_that_is_not_an_object(data: bytes) -> None:
    assert_rejected(data, ValueError, "top-level JSON value must be an object")


def test_step_4_requires_schema_version_before_anything_else() -> None:
    data = _with_document(lambda doc: doc.pop("schema_version"))
    assert_rejected(data, KeyError, "missing required key 'schema_version'")
    assert_rejected(b"{}", KeyError, "missing required key 'schema_version'")


@pytest.mark.parametrize("version", [True, 1.0, "1", None, [1]])
def test_step_5_rejects_a_schema_version_that_is_not_an_integer(version: object) -> None:
    """True == 1 and 1.0 == 1 in Python, so without this step both would pass step 6."""
    data = _with_document(lambda doc: doc.update(schema_version=version))
    assert_rejected(data, ValueError, f"schema_version must be an integer, got {version!r}")


@pytest.mark.parametrize("version", [0, 3, -1, 10**30])
def test_load_rejects_wrong_schema_version(version: int) -> None:
    data = _with_document(lambda doc: doc.update(schema_version=version))
    assert_rejected(data, ValueError, f"schema_version {version} is not supported")


def test_schema_version_is_judged_before_the_other_keys() -> None:
    """A future schema may have other keys; its version is the error the user needs."""
    assert_rejected(b'{"schema_version":3}', ValueError, "schema_version 3 is not supported")


@pytest.mark.parametrize(
    "key", ["mergeable_vocab_size", "merges", "pretokenizer_pattern", "special_tokens", "vocab"]
)
def test_load_rejects_missing_required_key(key: str) -> None:
    data = _with_document(lambda doc: doc.pop(key))
    assert_rejected(data, KeyError, f"missing required key(s) {key}")


@pytest.mark.parametrize("extra", ["comment", "vocab_size", "Vocab", ""])
def test_step_8_rejects_extra_top_level_keys(extra: str) -> None:
    data = _with_document(lambda doc: doc.update({extra: 0}))
    assert_rejected(data, ValueError, f"unexpected top-level key(s) {json.dumps(extra)}")


@pytest.mark.parametrize("pattern", [5, None, [PRETOKENIZER_PATTERN], {}])
def test_step_9_rejects_a_pattern_that_is_not_a_string(pattern: object) -> None:
    data = _with_document(lambda doc: doc.update(pretokenizer_pattern=pattern))
    assert_rejected(data, ValueError, "pretokenizer_pattern must be a string")


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
    assert_rejected(data, ValueError, "does not match this bpetite's pre-tokenizer")


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
    assert_rejected(data, ValueError, fragment)


@pytest.mark.parametrize("size", [258.0, True, "258", None])
def test_step_12_rejects_a_mergeable_vocab_size_that_is_not_an_integer(size: object) -> None:
    data = _with_document(lambda doc: doc.update(mergeable_vocab_size=size))
    assert_rejected(data, ValueError, f"mergeable_vocab_size must be an integer, got {size!r}")


@pytest.mark.parametrize("size", [257, 259, 256, 0, -258, 10**40])
def test_load_rejects_mergeable_vocab_size_mismatch(size: int) -> None:
    data = _with_document(lambda doc: doc.update(mergeable_vocab_size=size))
    assert_rejected(data, ValueError, f"mergeable_vocab_size is {size}, but 2 merges + 256")


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
    assert_rejected(data, ValueError, f"vocab key {json.dumps(new)} is not a canonical decimal")


def test_step_14_rejects_an_absurdly_long_vocab_key() -> None:
    data = _with_document(lambda doc: doc["vocab"].update({"9" * 5000: [1]}))
    assert_rejected(data, ValueError, "is too long to be a token id")


def test_step_14_rejects_a_vocab_that_is_not_an_object() -> None:
    for vocab in ([[0]], "0", None):
        document = valid_document()
        document["vocab"] = vocab
        assert_rejected(canonical(document), ValueError, "vocab must be an object")


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
    assert_rejected(data, ValueError, fragment)


@pytest.mark.parametrize("missing", ["0", "100", "255", "256", "257"])
def test_step_15_rejects_a_vocab_with_a_gap(missing: str) -> None:
    data = _with_document(lambda doc: doc["vocab"].pop(missing))
    assert_rejected(data, ValueError, f'vocab has no entry "{missing}"')


@pytest.mark.parametrize(
    ("key", "value"),
    [("65", [66]), ("0", []), ("200", [200, 200]), ("255", [0]), ("32", [32, 32])],
)
def test_step_16_requires_base_tokens_to_be_their_own_byte(key: str, value: list[int]) -> None:
    data = _with_document(lambda doc: doc["vocab"].update({key: value}))
    assert_rejected(data, ValueError, f'vocab["{key}"] must be [{key}]')


@pytest.mark.parametrize(
    ("key", "value", "rank"),
    [("256", [98, 97], 0), ("256", [], 0), ("257", [32, 97], 1), ("257", [97, 98, 32], 1)],
)
def test_step_17_requires_merged_tokens_to_spell_their_merge(
    key: str, value: list[int], rank: int
) -> None:
    data = _with_document(lambda doc: doc["vocab"].update({key: value}))
    assert_rejected(data, ValueError, f'vocab["{key}"] must be the bytes of merges[{rank}]')


def test_step_17_rejects_a_consistent_forward_reference() -> None:
    """Everything but the order is right here: merge 0 uses token 257, made by merge 1.

    The bytes all agree, so only the "strictly below its own id" rule can catch it.
    """

    def mutate(doc: dict[str, Any]) -> None:
        doc["merges"] = [[97, 257], [32, 98]]
        doc["vocab"]["256"] = list(b"a b")
        doc["vocab"]["257"] = list(b" b")

    assert_rejected(
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
    assert_rejected(data, ValueError, fragment)


@pytest.mark.parametrize("special_tokens", [[258], "<|endoftext|>", None, 258])
def test_step_18_rejects_special_tokens_that_are_not_an_object(special_tokens: object) -> None:
    data = _with_document(lambda doc: doc.update(special_tokens=special_tokens))
    assert_rejected(data, ValueError, "special_tokens must be an object")


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
    assert_rejected(data, ValueError, 'special_tokens must have exactly the key "<|endoftext|>"')


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
    assert_rejected(data, ValueError, f'special_tokens["<|endoftext|>"] {fragment}')


@pytest.mark.parametrize(
    "value", [EOT_BYTES[:-1], [*EOT_BYTES, 0], list(b"<|ENDOFTEXT|>"), [], list(b"<|endoftext|>\n")]
)
def test_load_rejects_special_token_with_wrong_bytes(value: list[int]) -> None:
    data = _with_document(lambda doc: doc["vocab"].update({"258": value}))
    assert_rejected(data, ValueError, 'vocab["258"] must be the UTF-8 bytes of <|endoftext|>')


def test_step_18_rejects_a_vocab_without_the_special_token_entry() -> None:
    data = _with_document(lambda doc: doc["vocab"].pop("258"))
    assert_rejected(data, ValueError, 'vocab has no entry "258" for the special token')


@pytest.mark.parametrize("extra", ["259", "300", "1000000", "9" * 200])
def test_step_19_rejects_vocab_ids_past_the_special_token(extra: str) -> None:
    data = _with_document(lambda doc: doc["vocab"].update({extra: [1]}))
    assert_rejected(data, ValueError, f'vocab["{extra}"] is outside the vocabulary')


def test_the_first_failing_step_is_the_one_reported() -> None:
    """Defects at steps 8, 10, 17 and 19 together: each fix reveals the next one."""
    defects: list[tuple[Callable[[dict[str, Any]], None], str]] = [
        (lambda doc: doc.update(extra=1), "unexpected top-level key(s)"),
        (lambda doc: doc.update(pretokenizer_pattern="x"), "does not match"),
        (lambda doc: doc["merges"].__setitem__(0, [97, 257]), "merges[0][1] is 257"),
        (lambda doc: doc["vocab"].update({"300": [1]}), 'vocab["300"] is outside'),
    ]
    for first in range(len(defects)):
        document = valid_document()
        for mutate, _ in defects[first:]:
            mutate(document)
        assert_rejected(canonical(document), ValueError, defects[first][1])


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
    assert_rejected(b"[]", ValueError, "must be an object")
    assert gc.isenabled()
    gc.disable()
    try:
        parse_artifact(canonical(valid_document()))
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
    state = reference.vocab(merges), merges, {EOT: 32000}
    path = tmp_path / "big.json"
    save(path, *state)
    assert load(path).state == state
