"""Each preset's ASCII twin and narrowed pattern must split text exactly as its regex does.

The templates are written by hand, so the twins are checked three ways: their character
sets against `regex`'s Unicode classes on all 128 code points, every short ASCII string
(all of them up to length 2; up to length 4 over one representative of each role a
character can play in the patterns), and hypothesis on longer and mixed text. The
narrowed patterns likewise: their classes against `regex`'s at every code point of
blocks of many scripts, every short string over representatives of the other roles
non-ASCII characters play, and hypothesis on text of any script.
"""

import itertools
import random
import re

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from bpetite import PRESETS, Tokenizer, reference
from bpetite.core._patterns import (
    _L,
    _LL,
    _LU,
    _N,
    _S,
    _TEMPLATES,
    ASCII_TWINS,
    MAX_NARROWINGS,
    _blocks,
    _members,
    _Narrowed,
    _spans,
    preset_pattern,
    resolve_pattern,
)
from tests.strategies import texts

ASCII = [chr(code) for code in range(128)]

# Every character role the presets distinguish: the apostrophe and the contraction
# letters in both cases (cl100k and o200k match them case-insensitively; s, d, m and t
# play the same part everywhere, so s stands for all four), another
# letter of each case, a digit, each whitespace character, "/" (o200k), other
# punctuation, a control character, and \x1c, which `str.isspace` calls a space but
# `regex`'s \s does not.
REPRESENTATIVES = "'sSlLvVeErRaA0 \t\n\r\x0b\x0c/!\x00\x1c"


@pytest.mark.parametrize(
    ("ascii_set", "unicode_class"),
    [
        (_L, r"\p{L}"),
        (_LU, r"\p{Lu}"),
        (_LL, r"\p{Ll}"),
        (_N, r"\p{N}"),
        (_S, r"\s"),
        ("", r"\p{Lt}"),
        ("", r"\p{Lm}"),
        ("", r"\p{Lo}"),
        ("", r"\p{M}"),
    ],
)
def test_ascii_sets_are_the_unicode_classes_on_ascii(ascii_set: str, unicode_class: str) -> None:
    expected = [char for char in ASCII if regex.fullmatch(unicode_class, char)]
    found = [char for char in ASCII if ascii_set and regex.fullmatch(f"[{ascii_set}]", char)]
    assert found == expected


def test_every_preset_has_a_twin() -> None:
    assert set(ASCII_TWINS) == set(PRESETS)
    for name in PRESETS:
        assert preset_pattern(name).ascii_twin is not None
    assert resolve_pattern(r"\w+|\W").ascii_twin is None


def _strings(alphabet: str, max_length: int) -> list[str]:
    return [
        "".join(chars)
        for length in range(1, max_length + 1)
        for chars in itertools.product(alphabet, repeat=length)
    ]


def _twin_and_preset_disagree(name: str, candidates: list[str]) -> list[str]:
    pattern = preset_pattern(name)
    twin = pattern.ascii_twin
    assert twin is not None
    return [text for text in candidates if twin.findall(text) != pattern.compiled.findall(text)][:5]


@pytest.mark.parametrize("name", list(PRESETS))
def test_twin_equals_preset_on_every_ascii_string_up_to_length_two(name: str) -> None:
    assert _twin_and_preset_disagree(name, _strings("".join(ASCII), 2)) == []


def test_representatives_cover_every_role() -> None:
    """Each ASCII character matches the same atoms of every preset as its representative."""
    atoms = [
        r"\p{L}", r"\p{Lu}", r"\p{Ll}", r"\p{N}", r"\s", r"[\r\n]", r"[\r\n/]", "'", " ",
        "(?i:[sdmt])", "(?i:l)", "(?i:v)", "(?i:e)", "(?i:r)",
    ]  # fmt: skip

    def role(char: str) -> tuple[bool, ...]:
        return tuple(bool(regex.fullmatch(atom, char)) for atom in atoms)

    roles = {role(char) for char in REPRESENTATIVES}
    assert {role(char) for char in ASCII} <= roles


@pytest.mark.parametrize("name", list(PRESETS))
def test_twin_equals_preset_on_every_representative_string_up_to_length_four(name: str) -> None:
    assert _twin_and_preset_disagree(name, _strings(REPRESENTATIVES, 4)) == []


ascii_texts = st.one_of(
    st.text(st.sampled_from(REPRESENTATIVES), max_size=80),
    st.text(st.characters(max_codepoint=127), max_size=80),
)


@pytest.mark.parametrize("name", list(PRESETS))
@given(text=ascii_texts)
def test_twin_equals_preset_on_longer_ascii_text(name: str, text: str) -> None:
    pattern = preset_pattern(name)
    assert pattern.ascii_twin is not None
    assert pattern.ascii_twin.findall(text) == pattern.compiled.findall(text)


@pytest.mark.parametrize("name", list(PRESETS))
@given(
    parts=st.lists(
        st.one_of(ascii_texts, texts, st.sampled_from(["é", "ſ", "\u212a", "\x85", "\u2028", "٣"])),
        max_size=6,
    )
)
def test_split_equals_the_unicode_regex_on_any_text(name: str, parts: list[str]) -> None:
    """ASCII or not, ``split`` gives the preset's chunks (ſ and K match s and k under (?i))."""
    text = "".join(parts)
    pattern = preset_pattern(name)
    assert pattern.split(text) == pattern.compiled.findall(text)


@given(text=st.text(st.sampled_from(REPRESENTATIVES + "é中"), max_size=60))
def test_encode_with_the_twin_matches_the_rank_pass_encoder(text: str) -> None:
    tokenizer = Tokenizer.train("it's a test, isn't it?\n\n  12345 ll 'LL 've\r\n", 300)
    assert tokenizer.encode(text) == reference.encode(reference.Model(tokenizer.merges), text)


_LINE_CHARS = REPRESENTATIVES + "é中ſ\u212a\x85\u2028\u3000😀"
# A line's own characters, and its first and last ones drawn apart so that the cases
# at a cut (punctuation or "/" on either side, ASCII or not) come up often.
_EDGE = st.sampled_from("!/'a0 é中\t")
mixed_lines = st.lists(
    st.tuples(
        _EDGE,
        st.text(st.sampled_from(_LINE_CHARS), max_size=10),
        _EDGE,
        st.sampled_from(["\n", "\r\n", "\n\n", "\r", " \n", ""]),
    ),
    max_size=14,
).map(lambda lines: "".join("".join(parts) for parts in lines))


@pytest.mark.parametrize("name", list(PRESETS))
@given(text=mixed_lines)
def test_mixed_lines_keep_the_chunks(name: str, text: str) -> None:
    pattern = preset_pattern(name)
    assert pattern.split(text) == pattern.compiled.findall(text)


@pytest.mark.parametrize("name", list(PRESETS))
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_long_mostly_ascii_text_with_a_few_other_characters_keeps_the_chunks(
    name: str, newline: str
) -> None:
    """Text long enough for many chunks: prose, code, "/" and punctuation at line ends,
    blank lines, and a non-ASCII character now and then."""
    rng = random.Random(name + newline)
    words = ["the", "King's", "said:", "/path", "x/y", "'ll", "42", "--", "  ", "\t"]
    lines = [
        "".join(rng.choice(words) + rng.choice(" ,.!/") for _ in range(rng.randint(0, 12)))
        + ("é" if rng.random() < 0.005 else "—" if rng.random() < 0.005 else "")
        for _ in range(3000)
    ]
    text = newline.join(lines)
    assert not text.isascii()
    pattern = preset_pattern(name)
    assert pattern.split(text) == pattern.compiled.findall(text)


@pytest.mark.parametrize("name", list(PRESETS))
def test_indented_code_with_a_few_other_characters_keeps_the_chunks(name: str) -> None:
    """Python source: class bodies, where every line starts indented, docstrings with a
    non-ASCII character now and then, CRLF in part."""
    rng = random.Random(name)
    lines = ["class Distribution:", '    """A distribution."""']
    for index in range(2000):
        indent = " " * rng.choice([4, 8, 12])
        line = rng.choice(["x = f(y)", "return x'", "if a:", "# note", "d['k'] = 1", "", "s/"])
        lines.append(indent + line if line else "")
        if index % 400 == 0:
            lines.append(indent + "# café \u2014 note")
        if index % 700 == 0:
            lines.append("def top_level(x):")
    text = "\n".join(lines[:1200]) + "\r\n".join(lines[1200:])
    assert not text.isascii()
    pattern = preset_pattern(name)
    assert pattern.split(text) == pattern.compiled.findall(text)


# Blocks of 256 code points: Latin-1, Latin Extended, Greek and combining marks,
# Cyrillic, Arabic, Devanagari, Thai, Hangul Jamo, general punctuation (with U+2028),
# letterlike symbols (the Kelvin sign), CJK, Hangul syllables, surrogates, fullwidth
# forms, and emoji beyond U+FFFF.
_BLOCKS = [0x00, 0x01, 0x03, 0x04, 0x06, 0x09, 0x0E, 0x11, 0x20, 0x21, 0x4E, 0xAC, 0xD8, 0xFF,
           0x1F6, 0x1D4]  # fmt: skip
_CLASSES = [r"\p{L}", r"\p{Lu}", r"\p{Ll}", r"\p{Lt}", r"\p{Lm}", r"\p{Lo}", r"\p{M}",
            r"\p{N}", r"\s"]  # fmt: skip


@pytest.mark.parametrize("unicode_class", _CLASSES)
def test_narrowed_classes_are_the_unicode_classes_in_their_blocks(unicode_class: str) -> None:
    spans = _spans(frozenset(_BLOCKS))
    members = re.compile(f"[{_members(unicode_class, spans)}]")
    wrong = [
        hex(code)
        for block in _BLOCKS
        for code in range(block << 8, (block + 1) << 8)
        if bool(members.fullmatch(chr(code))) != bool(regex.fullmatch(unicode_class, chr(code)))
    ]
    assert wrong == []


# A representative of each role a non-ASCII character plays: a small and a capital
# letter (and one of Latin-1), a titlecase letter, a modifier letter, another letter
# (CJK), a combining mark, a digit, ſ and the Kelvin sign (which `(?i:...)` matches as s
# and k), white space (NEL, no-break space, U+2028), punctuation, and an emoji beyond
# U+FFFF; with the ASCII roles around them.
NON_ASCII = "éÉªǅʰ中\u0301٣ſ\u212a\x85\xa0\u2028—😀"


def _narrowed_and_preset_disagree(name: str, candidates: list[str]) -> list[str]:
    narrowed = _Narrowed(_TEMPLATES[name])
    compiled = preset_pattern(name).compiled
    found = narrowed.pattern_for("".join(candidates))
    assert found is not None
    return [text for text in candidates if found.findall(text) != compiled.findall(text)][:5]


@pytest.mark.parametrize("name", list(PRESETS))
def test_narrowed_equals_preset_on_every_short_string_of_other_roles(name: str) -> None:
    strings = _strings(NON_ASCII + "'sSa0 \n/!", 3)
    assert _narrowed_and_preset_disagree(name, strings) == []


@pytest.mark.parametrize("name", list(PRESETS))
@given(parts=st.lists(st.one_of(texts, st.text(st.sampled_from(NON_ASCII + REPRESENTATIVES))),
                      min_size=1, max_size=4))  # fmt: skip
def test_narrowed_equals_preset_as_it_narrows_text_after_text(name: str, parts: list[str]) -> None:
    """One narrowed pattern, met by text after text: each is split as the preset does,
    and each narrowing still splits the texts before it."""
    narrowed = _Narrowed(_TEMPLATES[name])
    compiled = preset_pattern(name).compiled
    for index, text in enumerate(parts):
        found = narrowed.pattern_for(text)
        assert found is not None
        for earlier in parts[: index + 1]:
            assert found.findall(earlier) == compiled.findall(earlier)


def test_narrowing_stops_after_its_limit_and_regex_splits_the_rest() -> None:
    narrowed = _Narrowed(_TEMPLATES["o200k"])
    for block in range(1, MAX_NARROWINGS + 1):
        assert narrowed.pattern_for(chr(block << 8) + " a") is not None
    assert narrowed.pattern_for(chr(0x4E00)) is None
    assert narrowed.pattern_for(chr(1 << 8)) is not None  # inside the blocks met
    pattern = preset_pattern("o200k")
    text = "".join(chr(block << 8) + "x" for block in range(1, 2 * MAX_NARROWINGS))
    assert pattern.split(text) == pattern.compiled.findall(text)


_ANY_CHARACTER = st.one_of(st.characters(), st.sampled_from("\ud800\udbff\udc00😀\U0010ffff"))


@given(text=st.text(_ANY_CHARACTER, max_size=40), late=st.text(_ANY_CHARACTER, max_size=5))
def test_the_blocks_found_hold_every_character(text: str, late: str) -> None:
    """Surrogates and characters beyond U+FFFF included, and blocks first met far
    past the stretch gathered at first."""
    text = text + "a" * 5000 + late
    assert {ord(char) >> 8 for char in text} <= _blocks(text)
