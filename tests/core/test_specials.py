"""Several special tokens with tiktoken's policy, and the split-pattern presets.

The oracles are a plain scan written here (leftmost, then longest), the naive trainer
and encoder of :mod:`bpetite.reference` run on chunks cut by ``regex.findall`` directly, and
tiktoken's own ``Encoding`` built from the same merges.
"""

import functools
import itertools
import re
from collections import Counter
from collections.abc import Sequence

import pytest
import regex
import tiktoken
import tiktoken_ext.openai_public as openai_public
from hypothesis import given
from hypothesis import strategies as st

from bpetite import PRESETS, Tokenizer, reference
from bpetite.core import _specials as specials_module
from bpetite.core._specials import FEW_SPECIALS, MATCHERS_KEPT
from bpetite.errors import DisallowedSpecialError, ParameterError, PatternError
from tests.strategies import texts, tricky_text

CORPUS = (
    "Hello world! It's 2024, and we'LL SEE 12345 things.\r\n\n  x  y\t\tz ü中文 😀👍🏽 "
    "don't STOP/go <|user_start|>hi<|user_end|> " * 6
)
CHAT = ("<|endoftext|>", "<|user_start|>", "<|user_end|>", "<|user")


def naive_ordinary(text: str, source: str, merges: Sequence[tuple[int, int]]) -> list[int]:
    chunks = [chunk.encode() for chunk in regex.findall(source, text)]
    return [i for chunk in chunks for i in reference.encode_chunk(chunk, merges)]


def naive_with_specials(
    text: str, specials: dict[str, int], source: str, merges: Sequence[tuple[int, int]]
) -> list[int]:
    """At each position the longest special starting there; otherwise ordinary text."""
    ids: list[int] = []
    start = i = 0
    while i < len(text):
        found = max((s for s in specials if text.startswith(s, i)), key=len, default=None)
        if found is None:
            i += 1
            continue
        ids += naive_ordinary(text[start:i], source, merges)
        ids.append(specials[found])
        i = start = i + len(found)
    return ids + naive_ordinary(text[start:], source, merges)


@pytest.fixture(scope="module")
def chat() -> Tokenizer:
    return Tokenizer.train(CORPUS, 320, pattern="cl100k", special_tokens=CHAT)


def test_specials_take_the_ids_after_the_merges_in_order(chat: Tokenizer) -> None:
    size = chat.mergeable_vocab_size
    assert dict(chat.special_tokens) == {text: size + i for i, text in enumerate(CHAT)}
    assert list(chat.special_tokens) == list(CHAT)
    assert chat.n_vocab == size + len(CHAT)
    assert chat.decode([size + 1]) == "<|user_start|>"


@pytest.mark.parametrize(
    "bad", [("<|a|>", "<|a|>"), ("",), "<|endoftext|>", (b"<|a|>",), ("a\udc80",)]
)
def test_special_tokens_must_be_distinct_non_empty_texts(bad: object) -> None:
    with pytest.raises((ParameterError, TypeError, UnicodeEncodeError)):
        Tokenizer([], special_tokens=bad)  # type: ignore[arg-type]


def test_explicit_special_ids_may_leave_gaps() -> None:
    tokenizer = Tokenizer([], special_tokens={"<|a|>": 300, "<|b|>": 256})
    assert tokenizer.encode("x<|a|><|b|>") == [120, 300, 256]
    assert tokenizer.n_vocab == 301
    with pytest.raises(KeyError, match="unknown token id 280"):
        tokenizer.decode([280])
    with pytest.raises(ParameterError, match=r"id of at least 256 \(ids 0..255 are the bytes\)"):
        Tokenizer([], special_tokens={"<|a|>": 255})


_SPECIAL_SOUP = st.lists(
    st.sampled_from(["<|user", "_start|>", "<|user_start|>", "<|user_end|>", "<|", "|>", "a b"]),
    max_size=12,
).map("".join)


@given(st.one_of(_SPECIAL_SOUP, tricky_text))
def test_overlapping_specials_leftmost_then_longest(text: str) -> None:
    tokenizer = Tokenizer.train(CORPUS, 280, special_tokens=CHAT)
    expected = naive_with_specials(
        text, dict(tokenizer.special_tokens), PRESETS["gpt2"], tokenizer.merges
    )
    assert tokenizer.encode(text) == expected


#: More specials than FEW_SPECIALS, so that whether one occurs is their regex's search:
#: prefixes of each other, with and without the usual "<|".
MANY = (*CHAT, "<|a|>", "<|ab|>", "<|a", "ab", "b|>", "[X]", "[XY]", "é<|", "<|é")
_MANY_SOUP = st.lists(st.sampled_from([*MANY, "<", "|", ">", "a", " b", "[", "X"]), max_size=10)


@given(_MANY_SOUP.map("".join), st.sets(st.sampled_from(MANY)))
def test_many_overlapping_specials_leftmost_then_longest(text: str, allowed: set[str]) -> None:
    assert len(MANY) > FEW_SPECIALS
    tokenizer = _many_specials()
    specials = dict(tokenizer.special_tokens)
    expected = naive_with_specials(text, specials, PRESETS["gpt2"], tokenizer.merges)
    assert tokenizer.encode(text) == expected
    assert tokenizer.count_tokens(text) == len(expected)
    some = {name: specials[name] for name in allowed}
    expected_some = naive_with_specials(text, some, PRESETS["gpt2"], tokenizer.merges)
    assert tokenizer.encode(text, allowed_special=allowed, disallowed_special=()) == expected_some
    if any(name in text for name in MANY if name not in allowed):
        with pytest.raises(DisallowedSpecialError):
            tokenizer.encode(text, allowed_special=allowed)
    else:
        assert tokenizer.encode(text, allowed_special=allowed) == expected_some


@functools.cache
def _many_specials() -> Tokenizer:
    return Tokenizer.train(CORPUS, 280, special_tokens=MANY)


def test_the_regexes_of_policies_are_kept_to_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A policy per call (a server's) keeps at most MATCHERS_KEPT regexes, the least
    recently used dropped first, and a set whose regex was dropped is found as before."""
    compiled: list[str] = []
    real = re.compile

    def counted(source: str) -> re.Pattern[str]:
        compiled.append(source)
        return real(source)

    monkeypatch.setattr(re, "compile", counted)  # the module _specials compiles with
    table = specials_module.SpecialTokens({text: 300 + index for index, text in enumerate(MANY)})
    sets = [frozenset(pair) for pair in itertools.combinations(MANY, 2)][: MATCHERS_KEPT + 1]
    for specials in sets[:MATCHERS_KEPT]:
        table.matcher(specials)
    assert len(compiled) == MATCHERS_KEPT
    table.matcher(sets[0])  # kept, and now the most recently used
    assert len(compiled) == MATCHERS_KEPT
    table.matcher(sets[MATCHERS_KEPT])  # one too many: the least recently used goes
    table.matcher(sets[0])
    assert len(compiled) == MATCHERS_KEPT + 1
    table.matcher(sets[1])  # it was the one dropped
    assert len(compiled) == MATCHERS_KEPT + 2
    tokenizer = _many_specials()
    text = "x<|ab|>y[XY]<|user_start|>"
    for specials in sets:  # found as before, whatever was dropped on the way
        ids = tokenizer.encode(text, allowed_special=specials, disallowed_special=())
        some = {name: tokenizer.special_tokens[name] for name in specials}
        assert ids == naive_with_specials(text, some, PRESETS["gpt2"], tokenizer.merges)


def test_prefix_special_loses_to_the_longer_one_at_the_same_place(chat: Tokenizer) -> None:
    ids = chat.encode("<|user_start|><|user")
    assert ids == [chat.special_tokens["<|user_start|>"], chat.special_tokens["<|user"]]


def test_policy_allowed_subset_leaves_the_others_as_text(chat: Tokenizer) -> None:
    text = "a<|user_start|>b<|endoftext|>"
    ids = chat.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=())
    expected = naive_ordinary("a<|user_start|>b", chat.pattern, chat.merges)
    assert ids == [*expected, chat.special_tokens["<|endoftext|>"]]
    assert chat.encode(text, allowed_special=set(), disallowed_special=()) == (
        chat.encode_ordinary(text)
    )


def test_safe_mode_raises_naming_the_token_and_the_keyword(chat: Tokenizer) -> None:
    with pytest.raises(DisallowedSpecialError) as caught:
        chat.encode("hi <|user_end|>", allowed_special=set(), disallowed_special="all")
    message = str(caught.value)
    assert "'<|user_end|>'" in message and "allowed_special" in message
    assert isinstance(caught.value, ValueError)
    assert chat.encode("hi there", allowed_special=set(), disallowed_special="all") == (
        chat.encode_ordinary("hi there")
    )


def test_policy_names_that_are_not_specials_follow_tiktoken(chat: Tokenizer) -> None:
    """tiktoken ignores an allowed name that is no special token, and refuses any text a
    disallowed_special collection names (tests/interop/test_tiktoken_parity.py checks
    both against tiktoken itself)."""
    assert chat.encode("x<|nope|>", allowed_special={"<|nope|>"}) == chat.encode_ordinary(
        "x<|nope|>"
    )
    with pytest.raises(DisallowedSpecialError, match=r"'<\|nope\|>' at position 1"):
        chat.encode("x<|nope|>", disallowed_special={"<|nope|>"})
    with pytest.raises(TypeError):
        chat.encode("x", allowed_special="none")


def _tiktoken_twin(tokenizer: Tokenizer) -> tiktoken.Encoding:
    ranks = {tokenizer.vocab[i]: i for i in range(tokenizer.mergeable_vocab_size)}
    return tiktoken.Encoding(
        name=f"twin-{tokenizer.pattern_name}",
        pat_str=tokenizer.pattern,
        mergeable_ranks=ranks,
        special_tokens=dict(tokenizer.special_tokens),
    )


def test_specials_match_tiktoken_in_both_policies() -> None:
    # Without specials that are prefixes of each other: tiktoken picks among those by its
    # hash map's order, bpetite by length (the test above).
    chat = Tokenizer.train(CORPUS, 320, pattern="cl100k", special_tokens=CHAT[:3])
    twin = _tiktoken_twin(chat)
    text = "x<|user_start|>Hi! <|user_end|><|endoftext|>tail<|user"
    assert chat.encode(text) == twin.encode(text, allowed_special="all")
    with pytest.raises(ValueError):
        twin.encode(text)
    with pytest.raises(DisallowedSpecialError):
        chat.encode(text, allowed_special=set(), disallowed_special="all")


def test_presets_are_tiktokens_patterns_to_the_character(monkeypatch: pytest.MonkeyPatch) -> None:
    # The constructors would download the rank files; only their patterns matter here.
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *_, **__: {})
    assert PRESETS["cl100k"] == openai_public.cl100k_base()["pat_str"]
    assert PRESETS["o200k"] == openai_public.o200k_base()["pat_str"]


@pytest.mark.parametrize("preset", ["gpt2", "cl100k", "o200k"])
def test_training_with_each_preset_matches_the_naive_trainer(preset: str) -> None:
    chunks = Counter(chunk.encode() for chunk in regex.findall(PRESETS[preset], CORPUS))
    expected = reference.train_counts(dict(chunks), 330)
    assert Tokenizer.train(CORPUS, 330, pattern=preset).merges == tuple(expected)


@pytest.mark.parametrize("preset", ["gpt2", "cl100k", "o200k"])
@given(text=st.one_of(texts, tricky_text.map(lambda t: t.upper())))
def test_encoding_with_each_preset_matches_tiktoken(preset: str, text: str) -> None:
    tokenizer = _trained(preset)
    assert tokenizer.encode_ordinary(text) == _twin(preset).encode_ordinary(text)
    assert tokenizer.encode_ordinary(text) == naive_ordinary(
        text, tokenizer.pattern, tokenizer.merges
    )


_TRAINED: dict[str, Tokenizer] = {}
_TWINS: dict[str, tiktoken.Encoding] = {}


def _trained(preset: str) -> Tokenizer:
    if preset not in _TRAINED:
        _TRAINED[preset] = Tokenizer.train(CORPUS * 2, 400, pattern=preset)
    return _TRAINED[preset]


def _twin(preset: str) -> tiktoken.Encoding:
    if preset not in _TWINS:
        _TWINS[preset] = _tiktoken_twin(_trained(preset))
    return _TWINS[preset]


def test_a_custom_pattern_is_used_and_reported() -> None:
    source = r"\s+|\S+"
    tokenizer = Tokenizer.train("aa bb aa bb", 258, pattern=source)
    assert tokenizer.pattern == source and tokenizer.pattern_name == "custom"
    assert tokenizer.encode_ordinary("aa  bb") == naive_ordinary("aa  bb", source, tokenizer.merges)


def test_a_preset_given_by_its_source_is_that_preset() -> None:
    assert Tokenizer([], pattern=PRESETS["o200k"]).pattern_name == "o200k"


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        (r"a*", "empty string"),
        (r"(\w+)|\s+", "capturing groups"),
        (r"[a-", "not a valid regex"),
        ("x" * 5000, "characters long"),
        ("", "empty"),
        ("cl100k_base", "'cl100k_base' is a plain word, a regex that matches only itself"),
        ("GPT2", "plain word"),
    ],
)
def test_unusable_custom_patterns_are_refused(source: str, problem: str) -> None:
    with pytest.raises(PatternError, match=problem):
        Tokenizer([], pattern=source)


def test_a_pattern_that_drops_text_fails_instead_of_losing_it() -> None:
    tokenizer = Tokenizer([], pattern=r"\w+")
    with pytest.raises(PatternError, match=r"leaves the character ' ' at position 2"):
        tokenizer.encode("ab cd")
    with pytest.raises(PatternError, match="unmatched"):
        Tokenizer.train("ab cd", 260, pattern=r"\w+")
    with pytest.raises(PatternError, match="empty string"):
        Tokenizer([], pattern=r"(?=a)|a|b").encode("ab")
