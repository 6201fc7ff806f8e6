"""Hypothesis strategies shared by the tests: texts that stress BPE and merge lists."""

import functools
import unicodedata
from typing import Any

from hypothesis import strategies as st


@functools.cache
def _unassigned() -> Any:
    """`regex`'s unassigned class, imported when first drawn: ``tests/without_regex.py``
    imports this module with `regex` blocked."""
    import regex

    return regex.compile(r"\p{Cn}")


def known_to_every_engine(text: str) -> bool:
    """Whether every character of `text` is one that each split engine classifies alike.

    Each engine classifies characters with its own Unicode tables: `regex` 2026 knows
    Unicode 17.0, tiktoken and tokenizers 16.0 (docs/interop.md), so a letter new in 17.0
    is a letter only to bpetite, and a text holding one can split, and encode, otherwise
    there. Those are the characters `regex` assigns and Python's older tables do not;
    characters unassigned in every table stay. The differences themselves are pinned
    down by ``test_characters_newer_than_an_engines_unicode_tables_can_split_differently``.
    """
    return all(
        unicodedata.category(char) != "Cn" or _unassigned().match(char) is not None for char in text
    )


# Few distinct characters make repeated pairs, ties and overlapping runs likely.
_ALPHABET = st.sampled_from(
    [
        "a", "b", "c", " ", "  ", "\n", "\r\n", "\t", "'", "'s", "'ll", "1", "23",
        "é", "ß", "中", "文", "😀", "👍🏽", "ا", "ل", "!", "?!", ".", "<|endoftext|>", "<|",
    ]
)  # fmt: skip

#: Short texts built from BPE-hostile pieces: runs, ties, contractions, specials, Unicode.
tricky_text = st.lists(_ALPHABET, max_size=40).map("".join)

#: Arbitrary Unicode text without lone surrogates (they are not valid text), of
#: characters every engine the tests compare classifies alike (:func:`known_to_every_engine`).
any_text = st.text(
    st.characters(exclude_categories=["Cs"]).filter(known_to_every_engine), max_size=200
)

#: Either kind.
texts = st.one_of(tricky_text, any_text)


@st.composite
def merge_lists(draw: st.DrawFn, max_merges: int = 24) -> list[tuple[int, int]]:
    """Valid but arbitrary merge lists over a small byte alphabet (not necessarily trained).

    Each merge may combine any earlier token, so duplicate-byte tokens and tokens that
    never encode to themselves occur: exactly what a hand-made artifact may contain.
    """
    alphabet = draw(st.lists(st.sampled_from(b"ab c"), min_size=1, max_size=4, unique=True))
    merges: list[tuple[int, int]] = []
    for rank in range(draw(st.integers(0, max_merges))):
        ids = st.sampled_from([*alphabet, *range(256, 256 + rank)])
        merges.append((draw(ids), draw(ids)))
    return merges


#: A text that stresses split patterns: many scripts, emoji sequences, combining marks,
#: CRLF, long digit and whitespace runs, and contractions in upper and lower case.
MULTILINGUAL = (
    "English: The quick brown fox doesn't jump; WE'LL SEE, I'M SURE. It's 3:45pm.\r\n"
    "Français : « Ça va ? » — l'été à Noël, où naïve cœur.\r\n"
    "Deutsch: Größenwahn, Straße, ÜBERMÄSSIG.\n"
    "Русский: Съешь же ещё этих мягких французских булок.\n"
    "Ελληνικά: Ξεσκεπάζω την ψυχοφθόρα βδελυγμία.\n"
    "العربية: نص حكيم له سر قاطع وذو شأن عظيم.\n"
    "עברית: דג סקרן שט בים מאוכזב ולפתע מצא חברה.\n"
    "हिन्दी: ऋषियों को सताने वाले दुष्ट राक्षसों के राजा रावण का सर्वनाश।\n"
    "中文：我能吞下玻璃而不伤身体。日本語：いろはにほへと ちりぬるを。한국어: 다람쥐 헌 쳇바퀴.\n"
    "ไทย: เป็นมนุษย์สุดประเสริฐเลิศคุณค่า\n"
    "Emoji: 😀👍🏽👨‍👩‍👧‍👦🏳️‍🌈 🇫🇷🇯🇵 ✔︎ ❤️\n"
    "Combining: e\u0301 a\u0308 n\u0303 \u1100\u1161\u11a8 Z\u0351\u0315a\u0352l\u0357g\u0358o\n"
    "Digits: 1234567890123456789 3.14159265358979 ١٢٣٤٥ ०१२३ 2024-11-23\n"
    "Spaces:          \t\t\t   \n\n\n   end   \r\n\r\n\u00a0\u2003\u3000x\n"
    "Code: def f(x):\n    return x**2  # comment // path/to/file ./a/b ../c\r\n"
    "Mixed: HTTPServer's URLs, camelCaseWords, snake_case_words, ALLCAPS'S, l'OBJET\n"
)


#: The specification's roundtrip matrix: every kind of text encode/decode must survive.
ROUNDTRIP_CASES = {
    "empty": "",
    "whitespace-only": " \t\n\r\n   \n",
    "ascii": "The quick brown fox jumps over the lazy dog.",
    "emoji": "I ❤️ BPE 😀👍🏽🧑‍🚀",
    "cjk": "東京は日本の首都です。我爱编程。",
    "arabic": "مرحبا بالعالم، كيف حالك؟",
    "mixed punctuation": "Wait... what?!? (yes) -- [no] {maybe}; 'quoted' \"double\" #1 @2 $3 %4",
    "single endoftext": "<|endoftext|>",
    "consecutive specials": "<|endoftext|><|endoftext|><|endoftext|>",
    "special in text": "end of one<|endoftext|>start of two",
    "partial special prefix": "<|endoftext",
    "partial special suffix": "endoftext|>",
    "partial special short": "<|endo",
    "nested partials": "<|<|endoftext|>|>",
    "crlf": "line one\r\nline two\r\n",
}
