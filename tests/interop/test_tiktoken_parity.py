"""tiktoken's surface on Tokenizer, checked against tiktoken itself on its own vocabularies.

The same behaviours tiktoken's test suite covers (and the methods it has that the suite
does not), with tiktoken as the oracle: GPT-2 (``r50k_base``), ``cl100k_base`` and
``o200k_base``, each imported from the committed rank file on one side and built
offline by tiktoken's own constructor from the same file on the other. tiktoken's
defaults differ from the specification's in two places (``encode``'s
``allowed_special`` and ``decode``'s ``errors``); every call here passes both sides the
same keywords, so that difference is never what is compared.
"""

import functools
import os
from typing import Any

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpetite import Tokenizer
from bpetite.errors import DisallowedSpecialError, NotATokenError
from tests import datafiles
from tests.strategies import MULTILINGUAL, known_to_every_engine, texts, tricky_text

RANK_FILES = {
    "r50k_base": "gpt2.tiktoken",
    "cl100k_base": "cl100k_base.tiktoken",
    "o200k_base": "o200k_base.tiktoken",
}
EXAMPLES = int(os.environ.get("BPETITE_TIKTOKEN_EXAMPLES", "200"))


def pair(name: str) -> tuple[Tokenizer, Any]:
    """bpetite's import of a rank file and tiktoken's encoding of the same file, each built
    once per process (tests/datafiles.py) and shared with the other interop tests."""
    imported = datafiles.imported_rank_file(RANK_FILES[name])
    return imported.tokenizer, datafiles.tiktoken_encoding(name)


NAMES = pytest.mark.parametrize("name", list(RANK_FILES))
#: tiktoken's bytes encoding has no public name; its private method is the oracle.
_ENCODE_BYTES = "_encode_bytes"


def tiktoken_encode_bytes(encoding: Any, data: bytes) -> list[int]:
    result: list[int] = getattr(encoding, _ENCODE_BYTES)(data)
    return result


@functools.cache
def _ids(encoding: Any) -> st.SearchStrategy[list[int]]:
    """Any ids, gaps and specials included, and the ids of real text cut anywhere.

    One strategy per encoding, built once: hypothesis validates a strategy object on its
    first draw, which a fresh one per example would repeat.
    """
    every = st.lists(st.integers(0, encoding.n_vocab - 1), max_size=12)
    text = st.one_of(texts, tricky_text).map(lambda t: encoding.encode(t, disallowed_special=()))
    return st.one_of(every, text, st.tuples(text, every).map(lambda p: p[0] + p[1]))


def _outcome(call: Any) -> Any:
    """What a call gives, or the builtin family of what it raises (KeyError, ValueError)."""
    try:
        return ("ok", call())
    except UnicodeDecodeError:
        return ("raises", UnicodeDecodeError)
    except KeyError:
        return ("raises", KeyError)
    except ValueError:
        return ("raises", ValueError)


# ---------------------------------------------------------------------- decoding


@NAMES
@given(data=st.data())
@settings(max_examples=EXAMPLES, deadline=None)
def test_decode_with_each_errors_policy(name: str, data: st.DataObject) -> None:
    tokenizer, encoding = pair(name)
    ids = data.draw(_ids(encoding))
    for errors in ("strict", "replace", "ignore", "backslashreplace", "surrogateescape"):
        ours = _outcome(lambda: tokenizer.decode(ids, errors=errors))  # noqa: B023
        assert ours == _outcome(lambda: encoding.decode(ids, errors=errors))  # noqa: B023
    assert _outcome(lambda: tokenizer.decode_batch([ids, ids[:3]], errors="replace")) == (
        _outcome(lambda: encoding.decode_batch([ids, ids[:3]], errors="replace"))
    )
    assert _outcome(lambda: tokenizer.decode_tokens_bytes(ids)) == _outcome(
        lambda: encoding.decode_tokens_bytes(ids)
    )
    assert _outcome(lambda: tokenizer.decode_bytes_batch([ids, ids[:3]])) == (
        _outcome(lambda: encoding.decode_bytes_batch([ids, ids[:3]]))
    )
    as_numpy: Any = numpy.array(ids, dtype=numpy.uint32)  # encode_to_numpy's type, fed back
    assert _outcome(lambda: tokenizer.decode(as_numpy, errors="replace")) == (
        _outcome(lambda: encoding.decode(as_numpy, errors="replace"))
    )


@NAMES
@given(data=st.data())
@settings(max_examples=EXAMPLES, deadline=None)
def test_a_stream_joins_to_tiktokens_decode(name: str, data: st.DataObject) -> None:
    tokenizer, encoding = pair(name)
    ids = [token for token in data.draw(_ids(encoding)) if token in tokenizer.vocab]
    stream = tokenizer.stream_decoder(errors="replace")
    streamed = "".join(map(stream.step, ids)) + stream.flush()
    assert streamed == encoding.decode(ids, errors="replace")


@NAMES
@given(data=st.data())
@settings(max_examples=EXAMPLES, deadline=None)
def test_decode_with_offsets_for_every_id_list(name: str, data: st.DataObject) -> None:
    """Equal for every list tiktoken accepts, and a refusal of the same family otherwise."""
    tokenizer, encoding = pair(name)
    ids = data.draw(_ids(encoding))
    expected = _outcome(lambda: encoding.decode_with_offsets(ids))
    assert _outcome(lambda: tokenizer.decode_with_offsets(ids)) == expected
    # tiktoken's own property: valid text's ids, made by re-encoding what they decode to.
    valid = encoding.encode(
        encoding.decode([t for t in ids if t in tokenizer.vocab], errors="ignore"),
        allowed_special="all",
    )
    assert tokenizer.decode_with_offsets(valid) == encoding.decode_with_offsets(valid)


def test_tiktokens_offset_examples() -> None:
    """tiktoken's hand-picked cases: tokens that start inside a Tamil and a CJK character."""
    tokenizer, encoding = pair("cl100k_base")
    for prompt in (
        "hello world<|endoftext|> green cow",
        "我非常渴望与人工智能一起工作",
        "நடிகர் சூர்யா",
        " Ġ除",
    ):
        ids = tokenizer.encode(prompt)
        assert ids == encoding.encode(prompt, allowed_special="all")
        assert tokenizer.decode_with_offsets(ids) == encoding.decode_with_offsets(ids)
        assert tokenizer.decode_with_offsets(ids)[0] == prompt


# ---------------------------------------------------------------------- single tokens


@NAMES
def test_single_tokens_and_the_vocabulary_listing(name: str) -> None:
    tokenizer, encoding = pair(name)
    assert tokenizer.token_byte_values() == encoding.token_byte_values()
    assert tokenizer.eot_token == encoding.eot_token
    assert tokenizer.special_tokens_set == encoding.special_tokens_set
    for token in [*range(0, encoding.n_vocab + 3, 997), *tokenizer.special_tokens.values()]:
        assert tokenizer.is_special_token(token) == encoding.is_special_token(token)
    assert tokenizer.max_token_value == encoding.max_token_value
    assert len(tokenizer) == tokenizer.n_vocab == encoding.n_vocab
    for token in range(0, encoding.n_vocab, 7):
        expected = _outcome(lambda: encoding.decode_single_token_bytes(token))  # noqa: B023
        assert _outcome(lambda: tokenizer.decode_single_token_bytes(token)) == expected  # noqa: B023
        if expected[0] == "ok":
            assert tokenizer.encode_single_token(expected[1]) == token
    for special, token in tokenizer.special_tokens.items():
        # tiktoken finds a special by its bytes too: the inverse of decode_single_token_bytes.
        assert encoding.encode_single_token(special.encode()) == token
        assert tokenizer.encode_single_token(special.encode()) == token
        assert tokenizer.encode_single_token(special) == token
    with pytest.raises(KeyError):
        encoding.encode_single_token(b"<|endoftext|> no")
    with pytest.raises(NotATokenError):
        tokenizer.encode_single_token(b"<|endoftext|> no")


# ---------------------------------------------------------------------- encoding


@functools.cache
def _policies(encoding: Any) -> st.SearchStrategy[Any]:
    """allowed_special and disallowed_special: "all", (), or a few names, some unknown."""
    names = [*sorted(encoding.special_tokens_set), "<|nope|>", "hello"]
    subsets = st.sets(st.sampled_from(names), max_size=3)
    return st.tuples(
        st.one_of(st.just("all"), subsets), st.one_of(st.just("all"), st.just(()), subsets)
    )


@functools.cache
def _special_texts(encoding: Any) -> st.SearchStrategy[str]:
    """Up to six pieces: every special text, an unknown one, and plain words."""
    pieces = [*sorted(encoding.special_tokens_set), "<|nope|>", "hello", " world", "é"]
    return st.lists(st.sampled_from(pieces), max_size=6).map("".join)


@NAMES
@given(data=st.data())
@settings(max_examples=EXAMPLES, deadline=None)
def test_the_special_policy_is_tiktokens(name: str, data: st.DataObject) -> None:
    """Overlapping sets raise, unknown allowed names are ignored, unknown disallowed texts
    raise where they occur, and allowed_special=set() alone raises on a special."""
    tokenizer, encoding = pair(name)
    text = data.draw(_special_texts(encoding))
    allowed, disallowed = data.draw(_policies(encoding))
    expected = _outcome(
        lambda: encoding.encode(text, allowed_special=allowed, disallowed_special=disallowed)
    )
    ours = _outcome(
        lambda: tokenizer.encode(text, allowed_special=allowed, disallowed_special=disallowed)
    )
    assert ours == expected
    if expected[0] == "ok":
        assert tokenizer.count_tokens(
            text, allowed_special=allowed, disallowed_special=disallowed
        ) == len(expected[1])
        assert numpy.array_equal(
            tokenizer.encode_to_numpy(text, allowed_special=allowed, disallowed_special=disallowed),
            encoding.encode_to_numpy(text, allowed_special=allowed, disallowed_special=disallowed),
        )
    # With only allowed_special given, both take disallowed_special="all".
    assert _outcome(lambda: tokenizer.encode(text, allowed_special=set())) == _outcome(
        lambda: encoding.encode(text)
    )
    with pytest.raises(DisallowedSpecialError):
        tokenizer.encode(
            "<|endoftext|>", allowed_special="all", disallowed_special={"<|endoftext|>"}
        )


#: Lone surrogates, the subject here, among characters every engine classifies alike.
_with_surrogates = st.text(
    st.one_of(st.characters().filter(known_to_every_engine), st.characters(categories=["Cs"])),
    max_size=20,
)


@NAMES
@given(
    text=st.one_of(
        _with_surrogates,
        st.lists(st.sampled_from(["\ud83d", "\udc4d", "a", " ", "😀"])).map("".join),
    )
)
@settings(max_examples=EXAMPLES, deadline=None)
def test_lone_surrogates_are_repaired_as_tiktoken_repairs_them(name: str, text: str) -> None:
    tokenizer, encoding = pair(name)
    assert tokenizer.encode(text, errors="replace") == encoding.encode(text, disallowed_special=())
    assert tokenizer.encode_ordinary(text, errors="replace") == encoding.encode_ordinary(text)
    assert tokenizer.encode_batch([text], errors="replace") == encoding.encode_batch(
        [text], disallowed_special=()
    )


@NAMES
@given(
    data=st.one_of(
        st.binary(max_size=40),
        st.tuples(st.sampled_from(MULTILINGUAL.splitlines()), st.integers(0, 200)).map(
            lambda p: p[0].encode()[: p[1]]
        ),
        st.tuples(texts, st.binary(max_size=4)).map(lambda p: p[0].encode() + p[1]),
    ).filter(lambda data: known_to_every_engine(data.decode("utf-8", "replace")))
)
@settings(max_examples=EXAMPLES, deadline=None)
def test_bytes_encode_as_tiktokens_encode_bytes(name: str, data: bytes) -> None:
    tokenizer, encoding = pair(name)
    ids = tokenizer.encode_bytes(data)
    assert ids == tiktoken_encode_bytes(encoding, data)
    assert tokenizer.decode_bytes(ids) == data


def test_tiktokens_encode_bytes_examples() -> None:
    tokenizer, encoding = pair("cl100k_base")
    assert tokenizer.encode_bytes(b" \xec\x8b\xa4\xed") == [62085]
    for size in range(10):
        assert tokenizer.encode_bytes(b"\x80" * size) == tiktoken_encode_bytes(
            encoding, b"\x80" * size
        )
    for text in ("today\n \n", "today\n  \n", "x \n\t"):
        data = text.encode() + b"\xe2"
        assert tokenizer.encode_bytes(data) == tiktoken_encode_bytes(encoding, data)


# ---------------------------------------------------------------------- the unstable end


def unstable_of(encoder: Any, text: str, **policy: Any) -> tuple[list[int], set[tuple[int, ...]]]:
    """``encode_with_unstable``'s stable ids and its sequences as a set (tiktoken's order
    is a hash set's)."""
    stable, sequences = encoder.encode_with_unstable(text, **policy)
    return stable, set(map(tuple, sequences))


#: Ends of every kind tiktoken's rules tell apart: a word cut short, whitespace-only
#: tokens before the last chunk, a trailing Unicode space (U+3000, U+0085) and one
#: that is not (U+001C), a character of several tokens, nothing at all, and last
#: chunks far longer than any token (each cut of those is tried only near the end).
UNSTABLE_ENDS = [
    "hello fanta", "hello wor", "def f(x):\n    ", "a\n\n", " \n\n ", "ab \n", "  !", "x  ",
    "日本", "hé", "😀", "\u3000a\u3000", "ab\u3000", "abc\u0085", "x\x1c", "it'", 'he said "',
    "", "a b c d e f ", "abc" * 200, "zq" * 2000,
]  # fmt: skip


@NAMES
@pytest.mark.parametrize("text", UNSTABLE_ENDS)
def test_the_unstable_end_is_tiktokens_on_chosen_texts(name: str, text: str) -> None:
    tokenizer, encoding = pair(name)
    assert unstable_of(tokenizer, text) == unstable_of(encoding, text)


@NAMES
@given(text=st.one_of(texts, tricky_text, st.sampled_from(MULTILINGUAL.split(" "))))
@settings(max_examples=EXAMPLES // 4, deadline=None)
def test_the_unstable_end_is_tiktokens(name: str, text: str) -> None:
    tokenizer, encoding = pair(name)
    stable, sequences = tokenizer.encode_with_unstable(text, disallowed_special=())
    assert (stable, set(map(tuple, sequences))) == unstable_of(
        encoding, text, disallowed_special=()
    )
    assert sequences == sorted(sequences)
    # The stable ids are the start of the text's own encoding.
    assert tokenizer.encode_ordinary(text)[: len(stable)] == stable


def test_the_unstable_end_after_a_special_token_and_its_policy() -> None:
    tokenizer, encoding = pair("cl100k_base")
    end = "<|endoftext|>"
    for text in (f"x{end}", f"x{end} ab", f"{end}\n"):
        assert unstable_of(tokenizer, text, allowed_special="all") == unstable_of(
            encoding, text, allowed_special="all"
        )
    # tiktoken's defaults: a special token's text is refused unless allowed.
    with pytest.raises(DisallowedSpecialError):
        tokenizer.encode_with_unstable(f"x{end}")
    with pytest.raises(ValueError):
        encoding.encode_with_unstable(f"x{end}")
