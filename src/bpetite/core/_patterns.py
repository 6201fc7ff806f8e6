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
:meth:`SplitPattern.split` uses the twin whenever it can. A text that is mostly but not
all ASCII is cut at places no chunk spans (``_CUTS``): its long ASCII stretches go to
the twin and the rest to ``regex``, and the chunks are the same.

Where ``regex`` cannot be imported (Pyodide offline), ``compiled`` is the same pattern
on the standard library's ``re`` with its Unicode classes spelled out
(``core/_regex.py``), which finds the same chunks.

Measurements: docs/design-notes.md#split-patterns
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import accumulate
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from bpetite.core._constants import PRETOKENIZER_PATTERN
from bpetite.core._errors import PatternError
from bpetite.core._regex import compile_pattern, regex_errors

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

#: Each preset's ASCII twin: on ASCII text it splits exactly as the preset does.
ASCII_TWINS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "gpt2": (
            rf"""'(?:[sdmt]|ll|ve|re)| ?[{_L}]+| ?[{_N}]+| ?[^{_S}{_L}{_N}]+"""
            rf"""|[{_S}]+(?![^{_S}])|[{_S}]+"""
        ),
        "cl100k": (
            rf"""'(?i:[sdmt]|ll|ve|re)|[^\r\n{_L}{_N}]?+[{_L}]++|[{_N}]{{1,3}}+"""
            rf"""| ?[^{_S}{_L}{_N}]++[\r\n]*+|[{_S}]++$|[{_S}]*[\r\n]|[{_S}]+(?![^{_S}])|[{_S}]"""
        ),
        "o200k": "|".join(
            [
                rf"""[^\r\n{_L}{_N}]?[{_LU}]*[{_LL}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                rf"""[^\r\n{_L}{_N}]?[{_LU}]+[{_LL}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                rf"""[{_N}]{{1,3}}""",
                rf""" ?[^{_S}{_L}{_N}]+[\r\n/]*""",
                rf"""[{_S}]*[\r\n]+""",
                rf"""[{_S}]+(?![^{_S}])""",
                rf"""[{_S}]+""",
            ]
        ),
    }
)

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
        twin = self.ascii_twin
        if twin is not None:
            if text.isascii():
                ascii_chunks: list[str] = twin.findall(text)
                return ascii_chunks
            cut = _CUTS.get(self.name)
            if cut is not None and _mostly_ascii(text):
                return _split_mixed(text, self.compiled, twin, cut)
        chunks: list[str] = self.compiled.findall(text)
        if not self.is_preset:
            check_tiling(chunks, text)
        return chunks


# A cut: a place where a preset's chunks of a text can be found by splitting the part
# before it and the part after it on their own. A cl100k or o200k cut is after a line
# that ends in an ASCII non-space character X ("X\n" or "X\r\n") and before an ASCII
# non-space character Y other than "/" (o200k joins "/" to a punctuation line end).
# No chunk spans one: the newline is a chunk of its own or ends X's chunk. And neither
# side depends on the other: the presets look behind nothing, and where a chunk ends
# at the cut, its one-character lookahead or "$" gives the same chunk whether Y or the
# end of the text follows. GPT-2's pattern allows many more cuts: none of its chunks
# holds both a non-space character and whitespace, so X's chunk ends at X whatever
# follows, and the whitespace after X is matched from its own start; so the place
# between X and the line break after it is a cut, in indented code too, where lines
# seldom start with a non-space Y. tests/core/test_patterns.py checks these against the
# Unicode patterns on mixed text.
_Y = "[!-.0-~]"
_CUTS: Final[Mapping[str, re.Pattern[str]]] = MappingProxyType(
    {
        "gpt2": re.compile(r"[!-~](?=[\r\n])"),
        "cl100k": re.compile(rf"[!-~]\r?\n(?={_Y})"),
        "o200k": re.compile(rf"[!-~]\r?\n(?={_Y})"),
    }
)
#: Runs of at least this many ASCII lines, and this many characters between their
#: cuts, are split with the twin; shorter ones would not repay the few calls they cost.
MIN_ASCII_LINES: Final = 4
MIN_ASCII_CHARS: Final = 512
_ASCII_LINE_RUN = re.compile(rb"\x01{%d,}" % MIN_ASCII_LINES)


#: Samples of this many characters decide whether a text is mostly ASCII.
_SAMPLE_CHARS: Final = 1024
_SAMPLES: Final = 32


def _mostly_ascii(text: str) -> bool:
    """Whether at least half of some evenly spread samples of `text` are all ASCII.

    Cutting a text into ASCII and other stretches costs a pass over its lines, which
    only pays when the ASCII stretches are long; text in other scripts (where every
    few lines hold a non-ASCII character) goes to `regex` whole. Each sample costs a
    small copy, and ``str.isascii`` of a string is a flag lookup.
    """
    if len(text) < 4 * _SAMPLE_CHARS:
        return False
    step = max(len(text) // _SAMPLES, _SAMPLE_CHARS)
    starts = range(0, len(text) - _SAMPLE_CHARS + 1, step)
    ascii_samples = sum(text[start : start + _SAMPLE_CHARS].isascii() for start in starts)
    return 2 * ascii_samples >= len(starts)


def _split_mixed(
    text: str, compiled: Pattern, twin: re.Pattern[str], cut: re.Pattern[str]
) -> list[str]:
    """The preset's chunks of a text that is not all ASCII: long ASCII stretches by the twin.

    Lines are told apart by one ``str.isascii`` each and runs of ASCII lines found by a
    byte regex over those flags, all at C speed; each run long enough is trimmed to
    its first and last cut and split with the twin, the rest with `regex`.
    """
    lines = text.split("\n")
    runs = list(_ASCII_LINE_RUN.finditer(bytes(map(str.isascii, lines))))
    if not runs:
        chunks: list[str] = compiled.findall(text)
        return chunks
    # Line k starts after the k lines before it and their k newlines.
    lengths_before = [0, *accumulate(map(len, lines))]
    chunks = []
    done = 0  # the chunks before this cut are in `chunks`
    for run in runs:
        first_line, end_line = run.span()
        start = lengths_before[first_line] + first_line
        end = lengths_before[end_line] + end_line  # just past the run's last newline
        opening = cut.search(text, start, end)
        if opening is None:
            continue
        # The last cut in the run, looked for in ever longer tails of it: in code most
        # lines start indented, and a cut needs a line that does not, so the last few
        # lines often hold none (looking only there would send whole files to `regex`).
        closing = opening
        tail_lines = 4
        while closing is opening:
            tail = max(first_line, end_line - tail_lines)
            for found in cut.finditer(text, lengths_before[tail] + tail, end + 1):
                closing = found
            if tail == first_line:
                break
            tail_lines *= 16
        if closing.end() - opening.end() < MIN_ASCII_CHARS:
            continue
        chunks += compiled.findall(text, done, opening.end())
        chunks += twin.findall(text, opening.end(), closing.end())
        done = closing.end()
    chunks += compiled.findall(text, done)
    return chunks


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
            name, PRESETS[name], ascii_twin=re.compile(ASCII_TWINS[name], re.ASCII)
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
