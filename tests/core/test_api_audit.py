"""Library calls that gave a wrong answer or a misleading error, and now do not.

Threads sharing one tokenizer on its first use; the load keywords' types; the errors of
model names and of saving, each a BpetiteError and still the builtin it was; batch
errors naming their item; numpy's integers in merges; and the docs' claims.
"""

from __future__ import annotations

import pickle
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
import pytest

from bpetite import Tokenizer, encoding_for_model, encoding_name_for_model, get_encoding
from bpetite.core import _artifact
from bpetite.core._patterns import MAX_CUSTOM_PATTERN_CHARS
from bpetite.errors import (
    ArtifactError,
    BpetiteError,
    DisallowedSpecialError,
    OutputDirectoryMissingError,
    OutputIsADirectoryError,
    OutputParentNotADirectoryError,
    ParameterError,
    TokenIdTypeError,
    UnknownModelError,
    UnknownTokenError,
)
from tests.conftest import REPO_ROOT

SPECIAL = "<|endoftext|>"
CORPUS = "the cat sat on the mat; the hat's flat. café 中文 " * 20


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer.train(CORPUS, vocab_size=320)


# --------------------------------------------------------------------------- threads


def _paused_inside(
    function_name: str, after_lines: int, work: Callable[[], object]
) -> tuple[threading.Thread, threading.Event, threading.Event]:
    """Start a thread running `work` that stops `after_lines` lines into `function_name`
    (or at its return, if it has fewer) until the returned `resume` is set."""
    paused, resume = threading.Event(), threading.Event()
    lines = 0

    def local(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal lines
        lines += event == "line"
        if lines >= after_lines or event == "return":
            paused.set()
            resume.wait(30)
            return None  # no more tracing in this frame
        return local

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        if frame.f_code.co_name == function_name and not paused.is_set():
            return local
        return None

    def run() -> None:
        sys.settrace(tracer)
        try:
            work()
        finally:
            sys.settrace(None)

    thread = threading.Thread(target=run)
    thread.start()
    assert paused.wait(30)
    return thread, paused, resume


@pytest.mark.parametrize("first", ["encode_single_token", "token_byte_values"])
def test_a_thread_never_sees_the_table_of_tokens_half_built(first: str) -> None:
    """get_encoding gives every caller one instance: a thread that arrives while another
    builds the bytes -> id table must get a whole table, never a part of it."""
    tokenizer = Tokenizer.train(CORPUS, vocab_size=320)
    last_id = tokenizer.mergeable_vocab_size - 1  # the last merge: the table's last entry
    last = tokenizer.token_bytes(last_id)
    call: Callable[[], object] = (
        (lambda: tokenizer.encode_single_token(last))
        if first == "encode_single_token"
        else tokenizer.token_byte_values
    )
    thread, _, resume = _paused_inside("_mergeable_ids", 50, call)
    try:
        assert tokenizer.encode_single_token(last) == last_id
        assert len(tokenizer.token_byte_values()) == tokenizer.mergeable_vocab_size
    finally:
        resume.set()
        thread.join()
    assert len(tokenizer.token_byte_values()) == tokenizer.mergeable_vocab_size


# --------------------------------------------------------------------------- load's keywords


def _custom_artifact() -> bytes:
    return Tokenizer.train("ab ab", 257, pattern=r"\s?\w+|\s+|[^\s\w]+").dumps()


@pytest.mark.parametrize("trust", ["no", "", 1, 0, None])
def test_trust_custom_pattern_must_be_a_bool(tmp_path: Path, trust: object) -> None:
    data = _custom_artifact()
    path = tmp_path / "custom.json"
    path.write_bytes(data)
    calls: list[Callable[[], object]] = [
        lambda: Tokenizer.loads(data, trust_custom_pattern=trust),  # type: ignore[arg-type]
        lambda: Tokenizer.load(path, trust_custom_pattern=trust),  # type: ignore[arg-type]
        lambda: _artifact.loads(data, trust_custom_pattern=trust),  # type: ignore[arg-type]
        lambda: _artifact.load(path, trust_custom_pattern=trust),  # type: ignore[arg-type]
    ]
    for call in calls:
        with pytest.raises(TypeError, match="trust_custom_pattern must be True or False, got"):
            call()


def test_a_custom_pattern_loads_only_when_trusted() -> None:
    data = _custom_artifact()
    with pytest.raises(ArtifactError, match="trust_custom_pattern=True"):
        Tokenizer.loads(data, trust_custom_pattern=False)
    assert Tokenizer.loads(data, trust_custom_pattern=True).pattern_name == "custom"


@pytest.mark.parametrize("limit", [None, "100", True, False, 1.5])
def test_max_bytes_of_another_type_is_a_type_error(
    tokenizer: Tokenizer, tmp_path: Path, limit: object
) -> None:
    path = tmp_path / "tok.json"
    tokenizer.save(path)
    with pytest.raises(TypeError, match="max_bytes must be an int, got"):
        Tokenizer.loads(tokenizer.dumps(), max_bytes=limit)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="max_bytes must be an int, got"):
        Tokenizer.load(path, max_bytes=limit)  # type: ignore[arg-type]


def test_a_negative_max_bytes_is_named_not_blamed_on_the_artifact(
    tokenizer: Tokenizer, tmp_path: Path
) -> None:
    path = tmp_path / "tok.json"
    tokenizer.save(path)
    with pytest.raises(ParameterError, match="max_bytes must be at least 0, got -1"):
        Tokenizer.loads(tokenizer.dumps(), max_bytes=-1)
    with pytest.raises(ParameterError, match="max_bytes must be at least 0, got -1"):
        Tokenizer.load(path, max_bytes=-1)
    with pytest.raises(ArtifactError, match="over the limit of 10 bytes"):
        Tokenizer.loads(tokenizer.dumps(), max_bytes=10)


# --------------------------------------------------------------------------- model names


@pytest.mark.parametrize("function", [encoding_name_for_model, encoding_for_model])
def test_an_unknown_model_is_a_bpetite_error_and_a_key_error(
    function: Callable[[str], object],
) -> None:
    with pytest.raises(UnknownModelError) as caught:
        function("claude")
    assert isinstance(caught.value, KeyError)
    assert isinstance(caught.value, BpetiteError)
    assert str(caught.value) == (
        "Could not automatically map claude to a tokeniser. Please use "
        "`bpetite.get_encoding` to explicitly get the tokeniser you expect."
    )


# --------------------------------------------------------------------------- __len__


def test_len_is_n_vocab_which_hugging_face_does_not_count() -> None:
    """The docstring's figures: tiktoken's n_vocab, against the tokens Hugging Face counts."""
    cl100k = get_encoding("cl100k_base")
    assert len(cl100k) == cl100k.n_vocab == 100_277
    assert len(cl100k.vocab) == 100_261  # what Hugging Face's len counts
    doc = Tokenizer.__len__.__doc__ or ""
    assert "as tiktoken and Hugging Face count" not in doc
    assert "100,261 tokens" in doc and "100,277" in doc


# --------------------------------------------------------------------------- special policy


def test_disallowed_special_none_checks_nothing_as_in_tiktoken(tokenizer: Tokenizer) -> None:
    text = f"the cat{SPECIAL} sat"
    for allowed in ("all", set(), {SPECIAL}):
        expected = tokenizer.encode(text, allowed_special=allowed, disallowed_special=())
        assert tokenizer.encode(text, allowed_special=allowed, disallowed_special=None) == (  # type: ignore[arg-type]
            expected
        )
    assert tokenizer.count_tokens(text, allowed_special=set(), disallowed_special=None) == len(  # type: ignore[arg-type]
        tokenizer.encode_ordinary(text)
    )
    assert tokenizer.encode_batch(
        [text],
        allowed_special=set(),
        disallowed_special=None,  # type: ignore[arg-type]
    ) == [tokenizer.encode_ordinary(text)]
    assert tokenizer.truncate(text, 100, allowed_special=set(), disallowed_special=None) == text  # type: ignore[arg-type]


def test_allowed_special_none_is_a_type_error_naming_it(tokenizer: Tokenizer) -> None:
    """tiktoken raises a TypeError too (an operation on None)."""
    for disallowed in ("all", (), None):
        with pytest.raises(TypeError, match="allowed_special must be 'all' or a collection"):
            tokenizer.encode("hi", allowed_special=None, disallowed_special=disallowed)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="disallowed_special must be 'all' or a collection"):
        tokenizer.encode("hi", disallowed_special=5)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- batches


def test_batch_errors_name_the_item(tokenizer: Tokenizer) -> None:
    top = max(tokenizer.vocab)
    with pytest.raises(UnknownTokenError) as caught:
        tokenizer.decode_batch([[97], [2**40]])
    assert str(caught.value) == (
        f"item 1: unknown token id {2**40} at position 0: valid ids are 0..{top}"
    )
    with pytest.raises(UnknownTokenError, match=r"^item 2: unknown token id -1 at position 1"):
        tokenizer.decode_bytes_batch([[97], [98], [97, -1]])
    with pytest.raises(TokenIdTypeError, match=r"^item 1: token id at position 0 must be an int"):
        tokenizer.decode_batch([[97], [1.0]])  # type: ignore[list-item]
    with pytest.raises(UnicodeDecodeError, match="item 1: "):
        tokenizer.decode_batch([[97], [195]])
    with pytest.raises(
        DisallowedSpecialError, match=f"^item 1: the text contains .*{re.escape(SPECIAL)}"
    ):
        tokenizer.encode_batch(["a", f"b {SPECIAL}"], allowed_special=set())
    with pytest.raises(UnicodeEncodeError, match="item 1: text has a lone surrogate"):
        tokenizer.encode_batch(["a", "b\ud800"])
    with pytest.raises(TypeError, match="but item 1 is int"):
        tokenizer.encode_batch(["a", 5])  # type: ignore[list-item]


# --------------------------------------------------------------------------- merges


def test_merges_of_numpy_integers_are_read_as_ints(tokenizer: Tokenizer) -> None:
    merges = np.array(tokenizer.merges, dtype=np.int64)
    pairs: list[Any] = [(left, right) for left, right in merges]  # numpy integers, not ints
    rebuilt = Tokenizer(pairs)
    assert rebuilt == tokenizer
    assert {type(part) for merge in rebuilt.merges for part in merge} == {int}
    text = "the cat sat on the mat"
    assert rebuilt.encode(text) == tokenizer.encode(text)
    # With a special token among the merged ids, the merges are read through check_ids.
    one: list[Any] = [(np.int64(97), np.int64(98))]
    interleaved = Tokenizer(one, special_tokens={SPECIAL: 256})
    assert interleaved.merges == ((97, 98),)
    assert interleaved.encode(f"ab{SPECIAL}") == [257, 256]


def test_bad_merges_of_numpy_integers_still_name_the_merge() -> None:
    with pytest.raises(ParameterError, match=r"merges\[0\] must be two token ids below 256"):
        Tokenizer([(np.int64(300), np.int64(98))])  # type: ignore[list-item]
    with pytest.raises(ParameterError, match=r"merges\[0\] must be two token ids below 256"):
        Tokenizer([(True, 98)])  # a bool is no id
    with pytest.raises(ParameterError, match="a special token holds one of those ids"):
        Tokenizer(
            [(np.int64(97), np.int64(98)), (np.int64(256), np.int64(97))],  # type: ignore[list-item]
            special_tokens={SPECIAL: 256},
        )


# --------------------------------------------------------------------------- surgery


def test_dropping_a_special_twice_says_so(tokenizer: Tokenizer) -> None:
    with pytest.raises(ParameterError) as caught:
        tokenizer.with_special_tokens({}, drop=[SPECIAL, SPECIAL])
    assert str(caught.value) == f"drop names {SPECIAL!r} twice"
    with pytest.raises(ParameterError, match="it is not a special token"):
        tokenizer.with_special_tokens({}, drop=["<|nope|>"])


# --------------------------------------------------------------------------- saving


@pytest.mark.parametrize(
    ("where", "error", "builtin", "problem"),
    [
        ("d", OutputIsADirectoryError, IsADirectoryError, "it is a directory"),
        ("new/", OutputIsADirectoryError, IsADirectoryError, "it ends in a separator"),
        (
            "nope/x.json",
            OutputDirectoryMissingError,
            FileNotFoundError,
            "directory 'nope' does not exist",
        ),
        ("f/x.json", OutputParentNotADirectoryError, NotADirectoryError, "'f' is not a directory"),
    ],
)
def test_a_refused_destination_is_a_bpetite_error_and_its_os_error(
    tokenizer: Tokenizer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    error: type[OSError],
    builtin: type[OSError],
    problem: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("a file", encoding="utf-8")
    with pytest.raises(error) as caught:
        tokenizer.save(where)
    refused = caught.value
    assert isinstance(refused, BpetiteError) and isinstance(refused, builtin)
    assert str(refused) == f"cannot write '{where}': {refused.strerror}"
    assert problem in str(refused.strerror)
    again = pickle.loads(pickle.dumps(refused))
    assert type(again) is error and str(again) == str(refused)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["d", "f"]


def test_a_bytes_path_is_refused_by_name(
    tokenizer: Tokenizer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError, match=r"^path must be a str or os\.PathLike, got bytes$"):
        tokenizer.save(b"bytes.json")  # type: ignore[arg-type]
    assert not list(tmp_path.iterdir())


# --------------------------------------------------------------------------- the docs' claims


def _prose(page: str) -> str:
    return " ".join((REPO_ROOT / "docs" / page).read_text(encoding="utf-8").split())


def test_equal_tokenizers_dump_equal_bytes_only_with_the_same_training_record() -> None:
    corpus = "aaaa bbbb aaaa " * 8
    plain = Tokenizer.train(corpus, 262)
    capped = Tokenizer.train(corpus, 262, max_token_bytes=8)
    assert plain == capped and plain.dumps() != capped.dumps()
    assert plain.dumps() == Tokenizer.train(corpus, 262).dumps()
    assert "equal tokenizers give equal bytes" not in _prose("api.md")


def test_the_schema_states_the_training_options_least_values() -> None:
    prose = _prose("schema.md")
    assert "`max_token_bytes` (an integer of at least 2)" in prose
    assert "`min_frequency` (an integer of at least 1)" in prose
    with pytest.raises(ArtifactError, match="must be an integer of at least 2, got 1"):
        Tokenizer.loads(
            Tokenizer.train("ab ab", 257, max_token_bytes=2)
            .dumps()
            .replace(b'"max_token_bytes":2', b'"max_token_bytes":1')
        )


def test_the_schema_states_the_pattern_limit_without_a_private_name() -> None:
    prose = _prose("schema.md")
    assert "MAX_CUSTOM_PATTERN_CHARS" not in prose
    assert f"limited to {MAX_CUSTOM_PATTERN_CHARS:,} characters" in prose


def test_a_merge_that_is_no_tuple_or_list_is_told_what_a_merge_is() -> None:
    """A numpy row is not a pair (it is neither tuple nor list): the message says what is."""
    with pytest.raises(ParameterError, match=r"\(a tuple or list of two integers\), got array"):
        Tokenizer([np.array([97, 98])])  # type: ignore[list-item]
