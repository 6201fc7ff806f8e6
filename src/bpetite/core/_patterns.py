"""Split patterns: the regexes that cut text into the chunks BPE never merges across.

A pattern is a value (:class:`SplitPattern`): a preset name or ``"custom"``, its regex
source, and the compiled regex. Training, encoding, streaming and the artifact all
receive the same value, so they cannot disagree about where a chunk ends.

The presets are GPT-2's pattern as the specification gives it (the default) and
tiktoken's ``pat_str`` of ``cl100k_base`` (GPT-4) and ``o200k_base`` (GPT-4o), to the
character, possessive quantifiers included.

:meth:`SplitPattern.split` must equal ``bpetite.reference.split``: whichever of the
paths below it takes, the chunks are the ones the preset's regex finds.

Each preset also has an ASCII twin (:data:`ASCII_TWINS`): the same regex with every
Unicode class spelled as its ASCII members, compiled with the standard library's
``re``, which is faster than ``regex``. On ASCII text a twin finds exactly the chunks
of its preset (``tests/core/test_patterns.py`` proves it exhaustively on short strings
and with hypothesis on longer ones), and ``str.isascii`` is a flag lookup, so
:meth:`SplitPattern.split` uses the twin whenever it can. Other text goes to the
preset narrowed for ``re`` (:class:`_Narrowed`): the same template with each Unicode
class spelled as its members within the blocks of code points the text uses, which
finds the preset's chunks in that text without importing ``regex``; the same tests
prove it on text of any script.

Where ``regex`` cannot be imported (Pyodide offline), ``compiled`` is the same pattern
on the standard library's ``re`` with its Unicode classes spelled out
(``core/_regex.py``), which finds the same chunks.

Measurements: docs/design-notes.md#split-patterns
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from bpetite.core._constants import PRETOKENIZER_PATTERN
from bpetite.core._errors import PatternError
from bpetite.core._regex import compile_pattern, regex_errors, tables_are_the_engines

if TYPE_CHECKING:
    from bpetite.core._regex import Pattern

#: The presets by name: the spec's GPT-2 pattern, then tiktoken's GPT-4 and GPT-4o ones.
PRESETS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "gpt2": PRETOKENIZER_PATTERN,
        "cl100k": (
            r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
            r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
        ),
        "o200k": "|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
    }
)

# Each preset spelled with its Unicode classes as class text, for `re`: `L` is \p{L},
# `Lu` \p{Lu}, `Ll` \p{Ll}, `N` \p{N}, `S` regex's \s (White_Space), and o200k's
# `Upper` [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and `Lower` [\p{Ll}\p{Lm}\p{Lo}\p{M}]; \S
# is [^S]. Filled with a class's members among some characters, a template finds the
# preset's chunks in any text made of those characters: `re` only ever asks a class
# about the text's own characters.
_TEMPLATES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "gpt2": (
            r"""'(?:[sdmt]|ll|ve|re)| ?[{L}]+| ?[{N}]+| ?[^{S}{L}{N}]+"""
            r"""|[{S}]+(?![^{S}])|[{S}]+"""
        ),
        "cl100k": (
            r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n{L}{N}]?+[{L}]++|[{N}]{{1,3}}+"""
            r"""| ?[^{S}{L}{N}]++[\r\n]*+|[{S}]++$|[{S}]*[\r\n]|[{S}]+(?![^{S}])|[{S}]"""
        ),
        "o200k": "|".join(
            [
                r"""[^\r\n{L}{N}]?[{Upper}]*[{Lower}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n{L}{N}]?[{Upper}]+[{Lower}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[{N}]{{1,3}}""",
                r""" ?[^{S}{L}{N}]+[\r\n/]*""",
                r"""[{S}]*[\r\n]+""",
                r"""[{S}]+(?![^{S}])""",
                r"""[{S}]+""",
            ]
        ),
    }
)

# The ASCII members of the Unicode classes the presets use, as `regex` defines them
# (tests/core/test_patterns.py checks each against all 128 code points): \p{L} is the
# letters, \p{Lu} the capitals, \p{Ll} the small letters, \p{N} the digits, and \s
# is \t \n \v \f \r and space, but not \x1c-\x1f (which `str.isspace` counts).
# \p{Lt}, \p{Lm}, \p{Lo} and \p{M} have no ASCII members, so they drop out.
_L = "A-Za-z"
_LU = "A-Z"
_LL = "a-z"
_N = "0-9"
_S = r"\t\n\x0b\x0c\r "

# o200k's twin is written on its own: in ASCII its capitals and small letters are
# apart, so its two letter branches are one ("capitals, then small letters, or small
# letters alone") and no run needs to give back a character once taken (possessive);
# `re` backtracks less and splits prose and code about a tenth faster. In Unicode the
# branches' classes share \p{Lm}, \p{Lo} and \p{M}, so the narrowed patterns keep both.
_ASCII_O200K: Final = "|".join(
    [
        rf"""[^\r\n{_L}{_N}]?+(?:[{_LU}]++[{_LL}]*+|[{_LL}]++)(?:'(?i:[stmd]|re|ve|ll))?""",
        rf"""[{_N}]{{1,3}}""",
        rf""" ?[^{_S}{_L}{_N}]++[\r\n/]*+""",
        rf"""[{_S}]*[\r\n]+""",
        rf"""[{_S}]+(?![^{_S}])""",
        rf"""[{_S}]+""",
    ]
)

#: Each preset's ASCII twin: on ASCII text it splits exactly as the preset does.
ASCII_TWINS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "gpt2": _TEMPLATES["gpt2"].format(L=_L, N=_N, S=_S),
        "cl100k": _TEMPLATES["cl100k"].format(L=_L, N=_N, S=_S),
        "o200k": _ASCII_O200K,
    }
)

#: The Unicode classes a template names, as ``_unicode_classes.RANGES`` keys them.
_CLASS_KEYS: Final = {
    "L": (r"\p{L}",),
    "Lu": (r"\p{Lu}",),
    "Ll": (r"\p{Ll}",),
    "N": (r"\p{N}",),
    "S": (r"\s",),
    "Upper": (r"\p{Lu}", r"\p{Lt}", r"\p{Lm}", r"\p{Lo}", r"\p{M}"),
    "Lower": (r"\p{Ll}", r"\p{Lm}", r"\p{Lo}", r"\p{M}"),
}
#: A preset narrows its classes to the blocks of this many code points a text uses.
_BLOCK_BITS: Final = 8
#: After this many narrowings, a preset splits text outside its blocks with `regex`.
MAX_NARROWINGS: Final = 32


class _Narrowed:
    """A preset spelled for `re` with each Unicode class cut down to the blocks met so far.

    Importing and compiling `regex` costs more than most first splits (tens of
    milliseconds), and `re` is faster on narrow classes than `regex` on Unicode
    ones. A text wholly inside the blocks is split by the pattern as it stands; one
    with a character outside adds its blocks (of 256 code points) and compiles the
    template again, up to MAX_NARROWINGS times, after which such a text goes to
    `regex`. Chunks are the preset's either way: inside its blocks, a narrowed class
    holds exactly the characters the Unicode class does. Where the installed `regex` is
    not the one the tables come from (:func:`tables_are_the_engines`), every such text
    goes to `regex`.
    """

    __slots__ = ("_narrowings", "_state", "_template")

    def __init__(self, template: str) -> None:
        self._template = template
        # The blocks, the pattern, and a pattern that finds a character outside the
        # blocks: replaced together, so that a thread never sees a mix of two states.
        self._state: tuple[frozenset[int], re.Pattern[str], re.Pattern[str]] | None = None
        self._narrowings = 0

    def pattern_for(self, text: str) -> re.Pattern[str] | None:
        """The pattern that splits `text`, narrowed again if it must be; None once
        narrowing has stopped and `text` is outside the blocks."""
        state = self._state
        if state is not None and state[2].search(text) is None:
            return state[1]
        if self._narrowings >= MAX_NARROWINGS:
            return None
        if state is None and not tables_are_the_engines():
            self._narrowings = MAX_NARROWINGS  # another regex than the tables': it alone
            return None
        self._narrowings += 1
        blocks = _blocks(text) | ({0} if state is None else state[0])
        spans = _spans(blocks)
        members = {
            name: "".join(_members(key, spans) for key in keys)
            for name, keys in _CLASS_KEYS.items()
        }
        inside = "".join(_range(chr(low), chr(high)) for low, high in spans)
        state = (blocks, re.compile(self._template.format(**members)), re.compile(f"[^{inside}]"))
        self._state = state
        return state[1]


#: How many characters' blocks `_blocks` gathers before it deletes them from the rest.
_PEEK: Final = 4096
#: Characters beyond the Basic Multilingual Plane.
_ASTRAL: Final = re.compile("[\U00010000-\U0010ffff]")


def _blocks(text: str) -> frozenset[int]:
    """The blocks that `text`'s characters lie in, found at C speed.

    In UTF-16 a character of the Basic Multilingual Plane is one unit, whose high
    byte is its block; one beyond it is two surrogates (blocks 0xD8 to 0xDB, then 0xDC
    to 0xDF), so those characters, rare, are looked for one by one. The high bytes
    are gathered from a short stretch at a time, each gathering deleting its bytes
    from the rest in one pass: ``set(text)`` or a set of every byte costs a step per
    character, longer than the rest of the narrowing.
    """
    rest = text.encode("utf-16-be", "surrogatepass")[::2]
    found: set[int] = set()
    while rest:
        found.update(rest[:_PEEK])
        rest = rest.translate(None, bytes(found))
    blocks = frozenset(found)
    if not found.isdisjoint(range(0xD8, 0xDC)):
        blocks |= {ord(char) >> _BLOCK_BITS for char in _ASTRAL.findall(text)}
    return blocks


def _spans(blocks: frozenset[int]) -> list[tuple[int, int]]:
    """The code points of `blocks` as runs ``(first, last)``, adjacent blocks joined."""
    spans: list[tuple[int, int]] = []
    for block in sorted(blocks):
        low, high = block << _BLOCK_BITS, ((block + 1) << _BLOCK_BITS) - 1
        if spans and spans[-1][1] + 1 == low:
            low = spans.pop()[0]
        spans.append((low, high))
    return spans


def _members(key: str, spans: list[tuple[int, int]]) -> str:
    """The members of the class `key` within `spans`, as `re` class text."""
    from bpetite.core._unicode_classes import RANGES  # the tables, read on first narrowing

    ranges = RANGES[key]  # characters 2k and 2k + 1: the first and last of a run
    out = []
    for low, high in spans:
        # Runs ending before `low` come in pairs, so the first run that may reach `low`
        # is the pair this index falls in.
        run = bisect_left(ranges, chr(low)) // 2 * 2
        while run < len(ranges) and ord(ranges[run]) <= high:
            first, last = max(ord(ranges[run]), low), min(ord(ranges[run + 1]), high)
            if first <= last:
                out.append(_range(chr(first), chr(last)))
            run += 2
    return "".join(out)


def _range(first: str, last: str) -> str:
    return re.escape(first) if first == last else f"{re.escape(first)}-{re.escape(last)}"


#: The longest custom pattern accepted, in characters: a pattern is code an artifact
#: carries, and a bound keeps a hostile one from being arbitrarily large.
MAX_CUSTOM_PATTERN_CHARS: Final = 4096


@dataclass(frozen=True, slots=True)
class SplitPattern:
    """A named split pattern and its compiled regex.

    `name` is a preset's name or ``"custom"``; `source` the regex text. Presets are
    known to cut every text into chunks that join back to it; a custom pattern is
    checked on every text it splits (:meth:`split` raises instead of dropping text).
    """

    name: str
    source: str
    #: The compiled `source`, or None until :attr:`compiled` first needs it.
    _compiled: Pattern | None = field(default=None, repr=False, compare=False)
    #: The preset's ASCII twin, used on ASCII text; None for a custom pattern.
    ascii_twin: re.Pattern[str] | None = field(default=None, repr=False, compare=False)
    #: The preset narrowed for `re`, used on other text (see _Narrowed); None for a custom pattern.
    narrowed: _Narrowed | None = field(default=None, repr=False, compare=False)

    @property
    def compiled(self) -> Pattern:
        """`source` compiled with `regex` (or, without it, `re`: ``core/_regex.py``), on first use.

        A preset's ASCII text is split by its twin, so ``import bpetite``, and any work on
        ASCII text, never imports `regex` (a large module); the regex is the same
        whenever it is compiled.
        """
        found = self._compiled
        if found is None:
            found = compile_pattern(self.source)
            object.__setattr__(self, "_compiled", found)  # frozen, but a cache
        return found

    @classmethod
    def resolve(cls, pattern: str | SplitPattern) -> SplitPattern:
        """The preset named `pattern`, or `pattern` itself as a custom regex.

        A :class:`SplitPattern` is returned as it is; every ``pattern=`` keyword of
        bpetite accepts what this accepts.

        >>> SplitPattern.resolve("o200k").name
        'o200k'
        """
        return resolve_pattern(pattern)

    @property
    def is_preset(self) -> bool:
        return self.name != "custom"

    def split(self, text: str) -> list[str]:
        """Return the chunks of `text`; they join back to `text` exactly.

        >>> resolve_pattern("gpt2").split("Hello world!!")
        ['Hello', ' world', '!!']
        """
        chunks: list[str] = self.finder(text).findall(text)
        if not self.is_preset:
            check_tiling(chunks, text)
        return chunks

    def finder(self, text: str) -> Pattern:
        """The compiled pattern that splits `text`: a preset's ASCII twin on ASCII text,
        the preset narrowed to the text's blocks on other text, else the pattern itself."""
        twin = self.ascii_twin
        if twin is not None:
            if text.isascii():
                return twin
            narrowed = self.narrowed.pattern_for(text) if self.narrowed is not None else None
            if narrowed is not None:
                return narrowed
        return self.compiled


def check_tiling(chunks: list[str], text: str) -> None:
    """Raise unless `chunks` are non-empty and join to `text`: no text may be dropped."""
    if "" in chunks:
        raise PatternError("the split pattern matched the empty string; it must match text")
    joined = "".join(chunks)
    if joined != text:
        position = next(
            (i for i, (a, b) in enumerate(zip(joined, text, strict=False)) if a != b),
            min(len(joined), len(text)),
        )
        raise PatternError(
            f"the split pattern leaves the character {text[position]!r} at position "
            f"{position} unmatched; a pattern must match every character of the text"
        )


def resolve_pattern(pattern: str | SplitPattern) -> SplitPattern:
    """Return the :class:`SplitPattern` for a preset name, a regex source, or a value.

    A string that names a preset is that preset; a string equal to a preset's source
    is that preset too (so a saved custom copy of GPT-2's pattern stays ``gpt2``);
    anything else is a custom regex, compiled and checked.
    """
    if isinstance(pattern, SplitPattern):
        return pattern
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a preset name or a regex string, got {pattern!r}")
    if pattern in PRESETS:
        return _preset(pattern)
    for name, source in PRESETS.items():
        if pattern == source:
            return _preset(name)
    return custom_pattern(pattern)


def preset_pattern(name: str) -> SplitPattern:
    """Return a preset by name; an unknown name raises ValueError listing the presets."""
    if name not in PRESETS:
        raise PatternError(f"unknown pattern preset {name!r}: choose one of {', '.join(PRESETS)}")
    return _preset(name)


_compiled_presets: dict[str, SplitPattern] = {}


def _preset(name: str) -> SplitPattern:
    found = _compiled_presets.get(name)
    if found is None:
        found = _compiled_presets[name] = SplitPattern(
            name,
            PRESETS[name],
            ascii_twin=re.compile(ASCII_TWINS[name], re.ASCII),
            narrowed=_Narrowed(_TEMPLATES[name]),
        )
    return found


def custom_pattern(source: str) -> SplitPattern:
    """Compile a custom pattern, refusing one that is too long, invalid, or matches ""."""
    if not source:
        raise PatternError("the split pattern is empty")
    if len(source) > MAX_CUSTOM_PATTERN_CHARS:
        raise PatternError(
            f"the split pattern is {len(source):,} characters long; "
            f"at most {MAX_CUSTOM_PATTERN_CHARS:,} are accepted"
        )
    if source.isascii() and (source.replace("_", "a")).isalnum():
        # A regex of letters and digits matches only itself, so it would leave every
        # other character of a text unmatched: a name was meant (``cl100k_base``).
        raise PatternError(
            f"the split pattern {source!r} is a plain word, a regex that matches only "
            f"itself; the presets are {', '.join(PRESETS)} (gpt2 is also r50k_base's and "
            "p50k_base's pattern, cl100k is cl100k_base's, o200k is o200k_base's)"
        )
    try:  # a custom pattern is compiled at once, a preset on first use
        compiled = compile_pattern(source)
    except regex_errors() as error:
        raise PatternError(f"the split pattern is not a valid regex: {error}") from None
    if compiled.groups:
        raise PatternError(
            "the split pattern has capturing groups, which change what findall returns; "
            "use (?:...) instead"
        )
    if compiled.fullmatch("") is not None:
        raise PatternError("the split pattern matches the empty string; it must match text")
    return SplitPattern("custom", source, compiled)
