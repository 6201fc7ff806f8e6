r"""Without `regex`, patterns translated for `re` split exactly as `regex` splits.

``core/_regex.py`` rewrites a pattern for the standard library's `re` when `regex`
cannot be imported. Here both engines run side by side in one process: the presets'
``findall`` on random text from all of Unicode (surrogates included, which both
engines accept in a `str`) and on the shared test texts, custom patterns that use the
spelled-out classes, and the clear refusal of what `re` would read differently.
The library as a whole without `regex` is tested in ``test_without_regex.py``.
"""

from __future__ import annotations

import re
from functools import cache

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from bpetite.core._patterns import PRESETS
from bpetite.core._regex import compile_for_re, translate
from bpetite.errors import PatternError
from tests.strategies import MULTILINGUAL, ROUNDTRIP_CASES

#: Characters whose class or folding a translation could get wrong: each kind of
#: space (U+001C..U+001F are `re`'s but not `regex`'s), line breaks, the contraction
#: letters and their Unicode case partners, letters of every category the presets
#: name, marks, numbers that are not digits, "/" (o200k joins it to a line end), class
#: syntax, and characters beyond U+FFFF (a capital and a small Deseret letter, a math
#: digit, a variation selector, emoji), whose members `re` tests apart.
_EDGES = (
    " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2028\u2029\u202f\u3000"
    "'sSdDmMtTlLvVeErRiI\u017f\u212a\u0130\u0131"
    "aZ\u01c5\u02b0\u4e2d\u0301\u0903\u20dd0\u0663\u2167\u00bd/!.\ud800"
    "]^-\\\u2022\U0001f600\U0001f601\U00010400\U00010428\U0001d7ce\U000e0100"
)
_PIECES = ["\r\n", "'s", "'LL", "'Re", "\u017f", "   ", "\n\n", "x\r\n/", "123456"]

#: Text from all of Unicode, with the edge characters and pieces mixed in often.
unicode_text = st.lists(
    st.one_of(
        st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()),
        st.sampled_from(_EDGES),
        st.sampled_from(_PIECES),
    ),
    max_size=60,
).map("".join)

PRESET_NAMES = list(PRESETS)

#: Custom patterns a user might write with the classes that are spelled out.
CUSTOM = [
    r"\p{L}+|\P{L}+",
    r"\S+|\s+",
    r"[\p{N}\s]+|[^\p{N}\s]+",
    r"(?m)^\s*$\n?|.+\n?|\n",
    r"(?s) ?[\p{Lu}\p{Lt}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|.",
    r"(?i:'s|'t|'re)|\p{Lo}|(?#a comment with \p{L})[^'\p{Lo}]+|'",
    r"(?: ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+|'(?:[sdmt]|ll?|ve?|re?))",
    # Class syntax around the spelled classes: a first ], ^ and -, astral literals.
    r"[]a\p{N}]+|[^]a\p{N}]+",
    r"[-\p{L}]+|[^-\p{L}]+",
    r"[\p{L}-]+|[^\p{L}-]+",
    r"[^^\p{N}]+|\^+",
    r"[x\p{Lo}\]]+|[\U0001f600-\U0001f602\p{N}]+|[^\U0001f600\p{L}]+|.",
    r"\N{BULLET}|\\p|\P{L}",
]


@cache  # translated once per pattern, not once per example
def _both(source: str) -> tuple[regex.Pattern[str], re.Pattern[str]]:
    return regex.compile(source), compile_for_re(source)


@pytest.mark.parametrize("name", PRESET_NAMES)
@given(text=unicode_text)
def test_each_preset_on_re_splits_any_text_as_regex_does(name: str, text: str) -> None:
    with_regex, with_re = _both(PRESETS[name])
    assert with_re.findall(text) == with_regex.findall(text)


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_each_preset_on_re_splits_the_shared_texts_as_regex_does(
    name: str, shakespeare_text: str
) -> None:
    with_regex, with_re = _both(PRESETS[name])
    texts = [MULTILINGUAL, *ROUNDTRIP_CASES.values(), shakespeare_text[:200_000]]
    for text in texts:
        assert with_re.findall(text) == with_regex.findall(text)


@pytest.mark.parametrize("name", PRESET_NAMES)
@given(text=unicode_text, start=st.integers(0, 60), length=st.integers(0, 60))
def test_each_preset_on_re_splits_a_slice_as_regex_does(
    name: str, text: str, start: int, length: int
) -> None:
    """The mostly-ASCII path splits between positions (``findall(text, pos, endpos)``)."""
    with_regex, with_re = _both(PRESETS[name])
    end = start + length
    assert with_re.findall(text, start, end) == with_regex.findall(text, start, end)


@pytest.mark.parametrize("source", CUSTOM)
@given(text=unicode_text)
def test_custom_patterns_with_spelled_classes_split_as_regex_does(source: str, text: str) -> None:
    with_regex, with_re = _both(source)
    assert with_re.findall(text) == with_regex.findall(text)


def test_a_translation_copies_all_but_the_classes_as_written() -> None:
    r"""Escapes, ranges and lookarounds are copied; \p{..}, \s and their classes change."""
    source = r"a\]|\\p|\.(?=x)|(?<!a)b|\N{BULLET}|[a-z\]\-]+?|(?:x){1,3}+"
    assert translate(source) == source
    assert translate(r"[\s]") == translate(r"\s")
    assert translate(r"\S").startswith("[^")


REFUSED = {
    r"\w+": r"\w",
    r"a\d": r"\d",
    r"\bx": r"\b",
    r"\p{Greek}+": r"\p{Greek}",
    r"\pL": r"\pL",
    r"\p{L": r"\p{",
    r"[^\S\n]": r"\S inside a character class",
    r"[\P{L}]": r"\P{L} inside a character class",
    r"(?i)abc": "the inline flags (?i)",
    r"(?i:[a-z])": "the inline flags (?i:",
    r"(?i:it)": "the inline flags (?i:",
    r"(?x) a b": "the inline flags (?x)",
    r"(?-i:a)": "the inline flags (?-i:",
    r"[[:alpha:]]": "an unescaped [ inside a character class",
    r"[a-\p{L}]": r"a range to or from \p{L}",
    r"[\p{L}-z]": r"a range to or from \p{L}",
}


@pytest.mark.parametrize(("source", "named"), REFUSED.items())
def test_what_re_reads_differently_is_refused_naming_it(source: str, named: str) -> None:
    with pytest.raises(PatternError) as raised:
        compile_for_re(source)
    message = str(raised.value)
    assert f"uses {named}" in message
    assert "the regex package cannot be imported here: install regex" in message


@pytest.mark.parametrize("source", [r"\X", "[a", "(", r"\G"])
def test_what_re_rejects_is_a_pattern_error_saying_why(source: str) -> None:
    with pytest.raises(PatternError, match=r"re accepts .*install regex"):
        compile_for_re(source)


def test_the_tables_are_used_only_with_the_regex_they_come_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another version of `regex` may follow another Unicode: then the presets' narrowed
    patterns are not used, and every text outside ASCII is split by `regex` itself."""
    from bpetite.core import _patterns
    from bpetite.core import _regex as engine
    from bpetite.core._unicode_classes import REGEX_VERSION

    engine.tables_are_the_engines.cache_clear()
    assert engine.tables_are_the_engines() is (regex.__version__ == REGEX_VERSION)
    monkeypatch.setattr(regex, "__version__", "1.0.0")
    engine.tables_are_the_engines.cache_clear()
    assert engine.tables_are_the_engines() is False
    monkeypatch.undo()
    engine.tables_are_the_engines.cache_clear()

    text = "x\u0558y héllo wörld 中文"
    for verdict in (True, False):
        monkeypatch.setattr(_patterns, "tables_are_the_engines", lambda v=verdict: v)
        narrowed = _patterns._Narrowed(_patterns._TEMPLATES["cl100k"])
        preset = _patterns.SplitPattern(
            "cl100k", PRESETS["cl100k"], ascii_twin=re.compile("x"), narrowed=narrowed
        )
        finder = preset.finder(text)
        assert (finder is preset.compiled) is not verdict  # regex itself when they differ
        assert preset.split(text) == regex.findall(PRESETS["cl100k"], text)
